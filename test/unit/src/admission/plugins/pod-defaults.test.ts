/** The small pod and node mutators: DefaultTolerationSeconds, TaintNodesByCondition, ExtendedResourceToleration, AlwaysPullImages. */
import { expect } from 'chai';
import { DEFAULT_ADMISSION_FLAG_VALUES } from '../../../../../src/admission';
import { alwaysPullImagesPlugin } from '../../../../../src/admission/plugins/always-pull-images';
import { defaultTolerationSecondsPlugin } from '../../../../../src/admission/plugins/default-toleration-seconds';
import { extendedResourceTolerationPlugin } from '../../../../../src/admission/plugins/extended-resource-toleration';
import { taintNodesByConditionPlugin } from '../../../../../src/admission/plugins/taint-nodes-by-condition';
import { admit, attributes, makePlugin, pod, refusal, testDeps } from '../plugin-harness';
import type { JsonObject } from '../../../../../src/apis/object';

describe('DefaultTolerationSeconds', () => {
  it('adds the not-ready and unreachable NoExecute tolerations for the flags\' seconds', async () => {
    const admitted = await admit(await makePlugin(defaultTolerationSecondsPlugin, testDeps()), attributes({ object: pod('p') }));
    expect((admitted?.spec as JsonObject).tolerations).to.deep.equal([
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
    const deps = { ...testDeps(), flags: { ...DEFAULT_ADMISSION_FLAG_VALUES, defaultNotReadyTolerationSeconds: 60 } };
    const custom = await admit(await makePlugin(defaultTolerationSecondsPlugin, deps), attributes({ object: pod('q') }));
    expect(((custom?.spec as JsonObject).tolerations as JsonObject[])[0].tolerationSeconds).to.equal(60);
  });

  it('adds neither when the pod tolerates them already (an empty key or effect tolerates everything)', async () => {
    const plugin = await makePlugin(defaultTolerationSecondsPlugin, testDeps());
    const own = [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }];
    const mixed = await admit(plugin, attributes({ object: pod('p', { tolerations: own }) }));
    expect(((mixed?.spec as JsonObject).tolerations as JsonObject[]).map((t) => t.key)).to.deep.equal(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);
    const all = await admit(plugin, attributes({ object: pod('q', { tolerations: [{ operator: 'Exists' }] }) }));
    expect((all?.spec as JsonObject).tolerations).to.deep.equal([{ operator: 'Exists' }]);
  });
});

describe('TaintNodesByCondition', () => {
  it('taints a new node not-ready:NoSchedule once', async () => {
    const plugin = await makePlugin(taintNodesByConditionPlugin, testDeps());
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, spec: { taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] } };
    const nodes = { resource: 'nodes', kind: 'Node', namespace: '' };
    const admitted = await admit(plugin, attributes({ ...nodes, object: node }));
    expect((admitted?.spec as JsonObject).taints).to.deep.equal([{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
    const again = await admit(plugin, attributes({ ...nodes, object: admitted }));
    expect((again?.spec as JsonObject).taints).to.have.length(2);
    expect(plugin.handles(attributes({ ...nodes, operation: 'UPDATE', object: node, oldObject: node }))).to.equal(false);
  });
});

describe('ExtendedResourceToleration', () => {
  it('tolerates the NoSchedule taints named after requested extended resources, sorted, once', async () => {
    const plugin = await makePlugin(extendedResourceTolerationPlugin, testDeps());
    const admitted = await admit(plugin, attributes({ object: pod('p', { containers: [{ name: 'a', resources: { requests: { 'example.com/gpu': '1', cpu: '1', 'acme.io/fpga': '2' } } }] }) }));
    expect((admitted?.spec as JsonObject).tolerations).to.deep.equal([
      { key: 'acme.io/fpga', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    const again = await admit(plugin, attributes({ object: admitted }));
    expect((again?.spec as JsonObject).tolerations).to.have.length(2);
  });
});

describe('AlwaysPullImages', () => {
  it('sets imagePullPolicy Always on every container of a new pod or of an update bringing a new image', async () => {
    const plugin = await makePlugin(alwaysPullImagesPlugin, testDeps());
    const admitted = await admit(plugin, attributes({ object: pod('p', { containers: [{ name: 'a', image: 'x', imagePullPolicy: 'IfNotPresent' }], initContainers: [{ name: 'i', image: 'y', imagePullPolicy: 'Never' }] }) }));
    expect(((admitted?.spec as JsonObject).containers as JsonObject[])[0].imagePullPolicy).to.equal('Always');
    expect(((admitted?.spec as JsonObject).initContainers as JsonObject[])[0].imagePullPolicy).to.equal('Always');
    const old = pod('p', { containers: [{ name: 'a', image: 'x', imagePullPolicy: 'IfNotPresent' }] });
    expect(plugin.handles(attributes({ operation: 'UPDATE', object: old, oldObject: old }))).to.equal(false);
    const newImage = pod('p', { containers: [{ name: 'a', image: 'x2', imagePullPolicy: 'IfNotPresent' }] });
    expect(plugin.handles(attributes({ operation: 'UPDATE', object: newImage, oldObject: old }))).to.equal(true);
  });

  it('refuses in validation a pod a later plugin set back to another policy', async () => {
    const plugin = await makePlugin(alwaysPullImagesPlugin, testDeps());
    const err = await refusal(plugin.validate?.(attributes({ object: pod('p', { containers: [{ name: 'a', image: 'x', imagePullPolicy: 'IfNotPresent' }] }) })) ?? Promise.resolve());
    expect(err.message).to.equal('pods "p" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always"');
  });
});
