import { expect } from 'chai';
import { FlowController, mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas, suggestedPriorityLevels, type Admission, type FlowSchema, type PriorityLevelConfiguration, type RequestDigest } from '../../../../src/flowcontrol';

const alice = { name: 'alice', groups: ['system:authenticated'] };
const admin = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };

function get(user: { name: string; groups: string[] }): RequestDigest {
  return { isResourceRequest: true, verb: 'get', path: '', group: '', version: 'v1', namespace: 'default', resource: 'pods', subresource: '', name: 'p', user };
}

function v125(limit = 600): FlowController {
  const controller = new FlowController({ serverConcurrencyLimit: limit, requestWaitLimitSeconds: 15 });
  controller.replaceAll([...mandatoryFlowSchemas(), ...suggestedFlowSchemas()], [...mandatoryPriorityLevels(), ...suggestedPriorityLevels()]);
  return controller;
}

function executed(admission: Admission | Promise<Admission>): Admission & { kind: 'execute' } {
  if (admission instanceof Promise || admission.kind !== 'execute') throw new Error('expected an immediate execution');
  return admission;
}

describe('flowcontrol: the flow controller', () => {
  it('splits 600 seats over v1.25\'s levels by their shares', () => {
    const limits = Object.fromEntries(v125().levelStats().filter((l) => !l.exempt).map((l) => [l.name, l.concurrencyLimit]));
    // ceil(600 x shares / 245)
    expect(limits).to.deep.equal({ 'catch-all': 13, system: 74, 'node-high': 98, 'leader-election': 25, 'workload-high': 98, 'workload-low': 245, 'global-default': 49 });
  });

  it('imagines the mandatory objects while the store has none', () => {
    const controller = new FlowController({ serverConcurrencyLimit: 10, requestWaitLimitSeconds: 15 });
    expect(controller.classify(get(alice)).flowSchema.metadata.name).to.equal('catch-all');
    expect(controller.classify(get(admin)).priorityLevel.metadata.name).to.equal('exempt');
    expect(controller.levelStats().find((l) => l.name === 'catch-all')?.concurrencyLimit).to.equal(10);
  });

  it('leaves out a FlowSchema whose level does not exist (dangling), and uses it once the level appears', () => {
    const controller = v125();
    const custom: FlowSchema = {
      metadata: { name: 'alice-first', uid: 'u1' },
      spec: { priorityLevelConfiguration: { name: 'alice-level' }, matchingPrecedence: 10, rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }] },
    };
    controller.upsertFlowSchema(custom);
    expect(controller.isDangling(custom)).to.equal(true);
    expect(controller.classify(get(alice)).flowSchema.metadata.name).to.equal('global-default');
    const level: PriorityLevelConfiguration = { metadata: { name: 'alice-level' }, spec: { type: 'Limited', limited: { assuredConcurrencyShares: 1, limitResponse: { type: 'Reject' } } } };
    controller.upsertPriorityLevel(level);
    expect(controller.isDangling(custom)).to.equal(false);
    expect(controller.classify(get(alice)).flowSchema.metadata.name).to.equal('alice-first');
  });

  it('refuses at once a request to a full Reject level, and counts it', () => {
    const rejected: string[] = [];
    const controller = new FlowController({
      serverConcurrencyLimit: 2,
      requestWaitLimitSeconds: 15,
      observer: { dispatched: () => {}, waited: () => {}, rejected: (pl, fs, reason) => rejected.push(`${pl}/${fs}/${reason}`) },
    });
    controller.replaceAll([
      ...mandatoryFlowSchemas(),
      { metadata: { name: 'alice' }, spec: { priorityLevelConfiguration: { name: 'tiny' }, matchingPrecedence: 10, rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }] }] } },
    ], [...mandatoryPriorityLevels(), { metadata: { name: 'tiny' }, spec: { type: 'Limited', limited: { assuredConcurrencyShares: 1, limitResponse: { type: 'Reject' } } } }]);
    const first = executed(controller.handle(get(alice)));
    const second = controller.handle(get(alice));
    expect(second).to.deep.include({ kind: 'reject', reason: 'concurrency-limit' });
    expect(rejected).to.deep.equal(['tiny/alice/concurrency-limit']);
    first.finish();
    executed(controller.handle(get(alice))).finish();
  });

  it('queues past the limit, then dispatches when a seat frees', async () => {
    const controller = v125(2);
    const running = [executed(controller.handle(get(alice)))];
    // global-default has ceil(2 x 20 / 245) = 1 seat.
    const waiting = controller.handle(get({ name: 'bob', groups: ['system:authenticated'] }));
    expect(waiting).to.be.instanceOf(Promise);
    expect(controller.levelStats().find((l) => l.name === 'global-default')?.requestsWaiting).to.equal(1);
    running[0].finish();
    const admission = await waiting;
    expect(admission.kind).to.equal('execute');
    if (admission.kind === 'execute') admission.finish();
    const level = controller.levelStats().find((l) => l.name === 'global-default');
    expect(level?.seatsInUse).to.equal(0);
    expect(level?.requestsExecuting).to.equal(0);
  });

  it('takes a cancelled request out of its queue at once, refused as cancelled, and leaves the seat to the next', async () => {
    const rejected: string[] = [];
    const controller = new FlowController({
      serverConcurrencyLimit: 2,
      requestWaitLimitSeconds: 15,
      observer: { dispatched: () => {}, waited: () => {}, rejected: (pl, fs, reason) => rejected.push(`${pl}/${fs}/${reason}`) },
    });
    controller.replaceAll([...mandatoryFlowSchemas(), ...suggestedFlowSchemas()], [...mandatoryPriorityLevels(), ...suggestedPriorityLevels()]);
    const bob = { name: 'bob', groups: ['system:authenticated'] };
    const carol = { name: 'carol', groups: ['system:authenticated'] };
    // global-default has one seat: alice holds it, bob and carol wait.
    const running = executed(controller.handle(get(alice)));
    const bobWaits = controller.handle(get(bob));
    const carolWaits = controller.handle(get(carol));
    if (!(bobWaits instanceof Promise) || !(carolWaits instanceof Promise)) throw new Error('expected both to wait');
    const level = () => controller.levelStats().find((l) => l.name === 'global-default');
    expect(level()?.requestsWaiting).to.equal(2);
    bobWaits.cancel();
    expect(level()?.requestsWaiting).to.equal(1);
    expect(level()?.waiting.get('global-default')).to.equal(1);
    expect(await bobWaits).to.deep.include({ kind: 'reject', reason: 'cancelled' });
    expect(rejected).to.deep.equal(['global-default/global-default/cancelled']);
    running.finish();
    const carolRuns = await carolWaits;
    expect(carolRuns.kind).to.equal('execute');
    // Cancelling once dispatched changes nothing.
    carolWaits.cancel();
    expect(level()?.requestsExecuting).to.equal(1);
    if (carolRuns.kind === 'execute') carolRuns.finish();
    expect(level()?.seatsInUse).to.equal(0);
    expect(level()?.requestsWaiting).to.equal(0);
  });

  it('lets exempt requests through whatever the load', () => {
    const controller = v125(2);
    const admissions = Array.from({ length: 100 }, () => executed(controller.handle(get(admin))));
    for (const a of admissions) a.finish();
  });

  it('keeps a deleted level serving what it holds, then forgets it', () => {
    const controller = v125();
    const held = executed(controller.handle(get(alice)));
    controller.replaceAll([...mandatoryFlowSchemas(), ...suggestedFlowSchemas().filter((fs) => fs.metadata.name !== 'global-default')], [...mandatoryPriorityLevels(), ...suggestedPriorityLevels().filter((pl) => pl.metadata.name !== 'global-default')]);
    expect(controller.levelStats().find((l) => l.name === 'global-default')?.quiescing).to.equal(true);
    expect(controller.classify(get(alice)).flowSchema.metadata.name).to.equal('catch-all');
    held.finish();
    expect(controller.levelStats().find((l) => l.name === 'global-default')).to.equal(undefined);
  });
});
