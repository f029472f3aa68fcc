import { expect } from 'chai';
import { limitRangerPlugin } from '../../../../../src/admission/plugins/limit-ranger';
import { admit, attributes, makePlugin, pod, refusal, testDeps } from '../plugin-harness';
import type { JsonObject } from '../../../../../src/apis/object';

const limitRange = (limits: JsonObject[]): JsonObject => ({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'limits', namespace: 'ns' }, spec: { limits } });

describe('LimitRanger', () => {
  it('fills missing container requests and limits from the Container defaults and says so in kubernetes.io/limit-ranger', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/limitranges/ns/limits', limitRange([{ type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m', memory: '128Mi' } }]));
    const plugin = await makePlugin(limitRangerPlugin, deps);
    const admitted = await admit(plugin, attributes({ object: pod('p', {
      containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '200m' } } }],
      initContainers: [{ name: 'init', image: 'busybox' }],
    }) }));
    const spec = admitted?.spec as JsonObject;
    expect((spec.containers as JsonObject[])[0].resources).to.deep.equal({ requests: { cpu: '200m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } });
    expect((spec.initContainers as JsonObject[])[0].resources).to.deep.equal({ limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } });
    expect(((admitted?.metadata as JsonObject).annotations as JsonObject)['kubernetes.io/limit-ranger']).to.equal(
      'LimitRanger plugin set: memory request for container app; cpu, memory limit for container app; cpu, memory request for init container init; cpu, memory limit for init container init',
    );
  });

  it('refuses containers outside min and max and over maxLimitRequestRatio, every failure in one 403', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/limitranges/ns/limits', limitRange([{ type: 'Container', min: { cpu: '100m' }, max: { cpu: '1' }, maxLimitRequestRatio: { memory: '2' } }]));
    const plugin = await makePlugin(limitRangerPlugin, deps);
    await admit(plugin, attributes({ object: pod('ok', { containers: [{ name: 'a', resources: { requests: { cpu: '200m', memory: '1Gi' }, limits: { cpu: '1', memory: '2Gi' } } }] }) }));
    const tooBig = await refusal(admit(plugin, attributes({ object: pod('big', { containers: [{ name: 'a', resources: { requests: { cpu: '2', memory: '1Gi' }, limits: { cpu: '2', memory: '3Gi' } } }] }) })));
    expect(tooBig.code).to.equal(403);
    expect(tooBig.message).to.equal('pods "big" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, memory max limit to request ratio per Container is 2, but provided ratio is 3.000000]');
    const noRequest = await refusal(admit(plugin, attributes({ object: pod('none', { containers: [{ name: 'a', resources: { limits: { cpu: '500m', memory: '1Gi' } } }] }) })));
    expect(noRequest.message).to.equal('pods "none" is forbidden: [minimum cpu usage per Container is 100m.  No request is specified, memory max limit to request ratio per Container is 2, but no request is specified or request is 0]');
  });

  it('holds the pod as a whole to Pod limits: containers summed, at least the largest init container', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/limitranges/ns/limits', limitRange([{ type: 'Pod', max: { memory: '1Gi' } }]));
    const plugin = await makePlugin(limitRangerPlugin, deps);
    const err = await refusal(admit(plugin, attributes({ object: pod('p', {
      containers: [{ name: 'a', resources: { limits: { memory: '512Mi' } } }, { name: 'b', resources: { limits: { memory: '768Mi' } } }],
    }) })));
    expect(err.message).to.equal('pods "p" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1280Mi');
    const initTooBig = await refusal(admit(plugin, attributes({ object: pod('q', {
      containers: [{ name: 'a', resources: { limits: { memory: '256Mi' } } }],
      initContainers: [{ name: 'i', resources: { limits: { memory: '2Gi' } } }],
    }) })));
    expect(initTooBig.message).to.equal('pods "q" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 2Gi');
  });

  it('holds PVC storage requests to PersistentVolumeClaim min and max, on create and update', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/limitranges/ns/limits', limitRange([{ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } }]));
    const plugin = await makePlugin(limitRangerPlugin, deps);
    const claim = (storage: string): JsonObject => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c', namespace: 'ns' }, spec: { resources: { requests: { storage } } } });
    const claims = { resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim' };
    await admit(plugin, attributes({ ...claims, object: claim('5Gi') }));
    const err = await refusal(admit(plugin, attributes({ ...claims, operation: 'UPDATE', object: claim('20Gi'), oldObject: claim('5Gi') })));
    expect(err.message).to.equal('persistentvolumeclaims "c" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi');
  });

  it('does not check pod updates or objects being deleted', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/limitranges/ns/limits', limitRange([{ type: 'Container', max: { cpu: '1' } }]));
    const plugin = await makePlugin(limitRangerPlugin, deps);
    const big = pod('p', { containers: [{ name: 'a', resources: { limits: { cpu: '2' } } }] });
    expect(plugin.handles(attributes({ operation: 'UPDATE', object: big, oldObject: big }))).to.equal(false);
    const deleting = { ...big, metadata: { name: 'p', namespace: 'ns', deletionTimestamp: '2025-01-01T00:00:00Z' } };
    await admit(plugin, attributes({ operation: 'UPDATE', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', object: big, oldObject: deleting }));
  });
});
