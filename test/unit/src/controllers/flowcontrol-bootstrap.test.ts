import { expect } from 'chai';
import { Catalogue } from '../../../../src/apis/catalogue';
import { FlowControlBootstrap, shouldUpdateSpec } from '../../../../src/controllers/flowcontrol-bootstrap';
import { suggestedFlowSchemas, suggestedPriorityLevels } from '../../../../src/flowcontrol';
import type { ServedResource } from '../../../../src/registry';
import { controllerStack, type ControllerStack } from './controller-stack';
import type { JsonObject } from '../../../../src/apis/object';

describe('flowcontrol bootstrap: v1.25\'s autoupdate-spec rule', () => {
  it('follows a boolean annotation, else updates only what the server alone wrote (generation 1)', () => {
    const annotated = (value: string, generation = 5) => ({ annotations: { 'apf.kubernetes.io/autoupdate-spec': value }, generation });
    expect(shouldUpdateSpec(annotated('true'))).to.equal(true);
    expect(shouldUpdateSpec(annotated('T'))).to.equal(true);
    expect(shouldUpdateSpec(annotated('false', 1))).to.equal(false);
    expect(shouldUpdateSpec(annotated('maybe', 1))).to.equal(true);
    expect(shouldUpdateSpec(annotated('maybe', 2))).to.equal(false);
    expect(shouldUpdateSpec({ generation: 1 })).to.equal(true);
    expect(shouldUpdateSpec({ generation: 3 })).to.equal(false);
  });
});

describe('flowcontrol bootstrap: objects an older version shipped', () => {
  let stack: ControllerStack;
  let controller: FlowControlBootstrap | undefined;
  const catalogue = Catalogue.load();
  const served = (resource: string): ServedResource => {
    const found = catalogue.lookup('flowcontrol.apiserver.k8s.io', 'v1beta2', resource);
    if (found === undefined) throw new Error(`no ${resource}`);
    return found;
  };
  const flowSchemas = served('flowschemas');
  const priorityLevels = served('prioritylevelconfigurations');

  beforeEach(async () => {
    stack = await controllerStack();
  });
  afterEach(() => {
    controller?.stop();
    controller = undefined;
    stack.stop();
  });

  const annotations = (value: string | undefined): Record<string, string> => (value === undefined ? {} : { 'apf.kubernetes.io/autoupdate-spec': value });
  const level = (name: string, annotation: string | undefined): JsonObject => ({
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2', kind: 'PriorityLevelConfiguration', metadata: { name, annotations: annotations(annotation) },
    spec: { type: 'Limited', limited: { assuredConcurrencyShares: 3, limitResponse: { type: 'Reject' } } },
  });
  const schema = (name: string, annotation: string | undefined): JsonObject => ({
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2', kind: 'FlowSchema', metadata: { name, annotations: annotations(annotation) },
    spec: { priorityLevelConfiguration: { name: 'workload-low' }, matchingPrecedence: 7000, rules: [{ subjects: [{ kind: 'Group', group: { name: 'system:nodes' } }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }] }] },
  });
  const write = { dryRun: false, subresource: '' as const };
  const stored = async (resource: ServedResource, name: string) => {
    try {
      return await stack.registry.get(resource, '', name, null);
    } catch {
      return undefined;
    }
  };

  it('deletes those annotated autoupdate-spec true, keeps those an operator took over and users\' own', async () => {
    // As an older version would have left them: its own objects, annotated; then the same kinds of objects of others.
    await stack.registry.create(priorityLevels, '', level('retired-level', 'true'), write);
    await stack.registry.create(priorityLevels, '', level('kept-level', 'false'), write);
    await stack.registry.create(priorityLevels, '', level('users-level', undefined), write);
    await stack.registry.create(flowSchemas, '', schema('retired-schema', 'true'), write);
    await stack.registry.create(flowSchemas, '', schema('kept-schema', 'false'), write);
    await stack.registry.create(flowSchemas, '', schema('odd-schema', 'perhaps'), write);
    await stack.registry.create(flowSchemas, '', schema('users-schema', undefined), write);
    controller = new FlowControlBootstrap({ registry: stack.registry, cache: stack.cache, flowSchemas, priorityLevels, resyncMs: 60_000 });
    controller.start();
    await stack.eventually('the retired objects deleted', async () => (await stored(flowSchemas, 'retired-schema')) === undefined && (await stored(priorityLevels, 'retired-level')) === undefined);
    await stack.eventually('every suggested object created', async () => {
      for (const fs of suggestedFlowSchemas()) if ((await stored(flowSchemas, fs.metadata.name)) === undefined) return false;
      for (const pl of suggestedPriorityLevels()) if ((await stored(priorityLevels, pl.metadata.name)) === undefined) return false;
      return true;
    });
    await controller.whenIdle();
    for (const name of ['kept-level', 'users-level']) expect(await stored(priorityLevels, name), name).to.not.equal(undefined);
    for (const name of ['kept-schema', 'odd-schema', 'users-schema']) expect(await stored(flowSchemas, name), name).to.not.equal(undefined);
  });

  it('deletes one that turns up later annotated true, as the periodic pass would', async () => {
    controller = new FlowControlBootstrap({ registry: stack.registry, cache: stack.cache, flowSchemas, priorityLevels, resyncMs: 60_000 });
    controller.start();
    await stack.eventually('global-default created', () => stored(flowSchemas, 'global-default'));
    await stack.registry.create(flowSchemas, '', schema('late-retired', 'true'), write);
    await stack.eventually('late-retired deleted', async () => (await stored(flowSchemas, 'late-retired')) === undefined);
  });
});
