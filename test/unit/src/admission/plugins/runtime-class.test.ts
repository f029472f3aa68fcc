import { expect } from 'chai';
import { runtimeClassPlugin } from '../../../../../src/admission/plugins/runtime-class';
import { admit, attributes, makePlugin, pod, refusal, testDeps } from '../plugin-harness';
import type { JsonObject } from '../../../../../src/apis/object';

const runtimeClass = (extra: JsonObject): JsonObject => ({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'kata' }, handler: 'kata', ...extra });

describe('RuntimeClass', () => {
  it('fills the pod\'s overhead and merges the class\'s node selector and tolerations', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/runtimeclasses/kata', runtimeClass({
      overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
      scheduling: { nodeSelector: { runtime: 'kata' }, tolerations: [{ key: 'kata', operator: 'Exists', effect: 'NoSchedule' }] },
    }));
    const admitted = await admit(await makePlugin(runtimeClassPlugin, deps), attributes({ object: pod('p', { runtimeClassName: 'kata', nodeSelector: { zone: 'a' } }) }));
    expect(admitted?.spec).to.deep.include({
      overhead: { cpu: '250m', memory: '120Mi' },
      nodeSelector: { zone: 'a', runtime: 'kata' },
      tolerations: [{ key: 'kata', operator: 'Exists', effect: 'NoSchedule' }],
    });
  });

  it('refuses an unknown class, an overhead that differs or that no class defines, and a conflicting selector', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/runtimeclasses/kata', runtimeClass({ overhead: { podFixed: { cpu: '250m' } }, scheduling: { nodeSelector: { runtime: 'kata' } } }));
    const plugin = await makePlugin(runtimeClassPlugin, deps);
    expect((await refusal(admit(plugin, attributes({ object: pod('a', { runtimeClassName: 'gvisor' }) })))).message).to.equal('pods "a" is forbidden: pod rejected: RuntimeClass "gvisor" not found');
    expect((await refusal(admit(plugin, attributes({ object: pod('b', { runtimeClassName: 'kata', overhead: { cpu: '1' } }) })))).message).to.equal('pods "b" is forbidden: pod rejected: Pod\'s Overhead doesn\'t match RuntimeClass\'s defined Overhead');
    expect((await refusal(admit(plugin, attributes({ object: pod('c', { overhead: { cpu: '1' } }) })))).message).to.equal('pods "c" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
    expect((await refusal(admit(plugin, attributes({ object: pod('d', { runtimeClassName: 'kata', nodeSelector: { runtime: 'runc' } }) })))).message).to.equal('pods "d" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; pod.spec.nodeSelector[runtime] = runc');
    // The same overhead, written differently, is the same.
    await admit(plugin, attributes({ object: pod('e', { runtimeClassName: 'kata', overhead: { cpu: '0.25' } }) }));
  });
});
