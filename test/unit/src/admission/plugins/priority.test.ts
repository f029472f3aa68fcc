import { expect } from 'chai';
import { priorityPlugin } from '../../../../../src/admission/plugins/priority';
import { admit, attributes, makePlugin, pod, refusal, testDeps } from '../plugin-harness';
import type { JsonObject } from '../../../../../src/apis/object';

const priorityClass = (name: string, value: number, extra: JsonObject = {}): JsonObject => ({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value, preemptionPolicy: 'PreemptLowerPriority', ...extra });
const classes = { group: 'scheduling.k8s.io', resource: 'priorityclasses', kind: 'PriorityClass', namespace: '' };

describe('Priority', () => {
  it('gives a pod without a class priority 0 and PreemptLowerPriority, or the global default\'s', async () => {
    const deps = testDeps();
    const plugin = await makePlugin(priorityPlugin, deps);
    const plain = await admit(plugin, attributes({ object: pod('p') }));
    expect(plain?.spec).to.deep.include({ priority: 0, preemptionPolicy: 'PreemptLowerPriority' });
    deps.objects.put('/registry/priorityclasses/high', priorityClass('high', 1000, { globalDefault: true, preemptionPolicy: 'Never' }));
    const defaulted = await admit(plugin, attributes({ object: pod('q') }));
    expect(defaulted?.spec).to.deep.include({ priorityClassName: 'high', priority: 1000, preemptionPolicy: 'Never' });
  });

  it('resolves a named class and refuses an unknown one or a contradicting priority', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/priorityclasses/system-node-critical', priorityClass('system-node-critical', 2000001000));
    const plugin = await makePlugin(priorityPlugin, deps);
    const critical = await admit(plugin, attributes({ object: pod('p', { priorityClassName: 'system-node-critical' }) }));
    expect((critical?.spec as JsonObject).priority).to.equal(2000001000);
    const unknown = await refusal(admit(plugin, attributes({ object: pod('q', { priorityClassName: 'nope' }) })));
    expect(unknown.message).to.equal('pods "q" is forbidden: no PriorityClass with name nope was found');
    const stated = await refusal(admit(plugin, attributes({ object: pod('r', { priority: 5 }) })));
    expect(stated.message).to.equal('pods "r" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name');
  });

  it('keeps the stored priority on updates that leave it out', async () => {
    const plugin = await makePlugin(priorityPlugin, testDeps());
    const updated = await admit(plugin, attributes({ operation: 'UPDATE', object: pod('p'), oldObject: pod('p', { priority: 7, preemptionPolicy: 'Never' }) }));
    expect(updated?.spec).to.deep.include({ priority: 7, preemptionPolicy: 'Never' });
  });

  it('allows one global default class, and protects the system classes from deletion', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/priorityclasses/first', priorityClass('first', 10, { globalDefault: true }));
    const plugin = await makePlugin(priorityPlugin, deps);
    const second = await refusal(admit(plugin, attributes({ ...classes, object: priorityClass('second', 20, { globalDefault: true }) })));
    expect(second.message).to.equal('priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass first is already marked as default. Only one default can exist');
    await admit(plugin, attributes({ ...classes, operation: 'UPDATE', object: priorityClass('first', 10, { globalDefault: true, description: 'x' }), oldObject: priorityClass('first', 10, { globalDefault: true }) }));
    const deletion = await refusal(admit(plugin, attributes({ ...classes, operation: 'DELETE', name: 'system-cluster-critical', oldObject: priorityClass('system-cluster-critical', 2000000000) })));
    expect(deletion.message).to.equal('priorityclasses.scheduling.k8s.io "system-cluster-critical" is forbidden: this is a system priority class and cannot be deleted');
  });
});
