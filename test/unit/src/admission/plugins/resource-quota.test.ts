import { expect } from 'chai';
import { resourceQuotaPlugin } from '../../../../../src/admission/plugins/resource-quota';
import { ApiError } from '../../../../../src/util';
import { admit, attributes, makePlugin, pod, refusal, testDeps } from '../plugin-harness';
import type { JsonObject } from '../../../../../src/apis/object';

const quota = (name: string, hard: JsonObject, used: JsonObject | undefined, resourceVersion = '10'): JsonObject => ({
  apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name, namespace: 'ns', resourceVersion }, spec: { hard }, status: used === undefined ? { hard } : { hard, used },
});

describe('ResourceQuota', () => {
  it('charges a new pod to the quota\'s status with the version it read, and refuses once the limit is reached', async () => {
    let version = 10;
    const deps = testDeps({ updateStatus: (object) => ({ ...object, metadata: { ...(object.metadata as JsonObject), resourceVersion: String(++version) } }) });
    deps.objects.put('/registry/resourcequotas/ns/q', quota('q', { pods: '2', 'requests.cpu': '1' }, { pods: '1', 'requests.cpu': '500m' }));
    const plugin = await makePlugin(resourceQuotaPlugin, deps);
    const withCpu = (name: string, cpu: string) => pod(name, { containers: [{ name: 'c', resources: { requests: { cpu } } }] });
    await admit(plugin, attributes({ object: withCpu('a', '250m') }));
    expect(deps.statusUpdates).to.have.length(1);
    expect((deps.statusUpdates[0].object.metadata as JsonObject).resourceVersion).to.equal('10');
    expect((deps.statusUpdates[0].object.status as JsonObject).used).to.deep.equal({ pods: '2', 'requests.cpu': '750m' });
    // The cache still shows version 10; the plugin's own write is newer and counts.
    const err = await refusal(admit(plugin, attributes({ object: withCpu('b', '100m') })));
    expect(err.toStatus()).to.deep.include({ code: 403, reason: 'Forbidden', message: 'pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2' });
    expect(deps.statusUpdates).to.have.length(1);
  });

  it('refuses what a quota cannot count yet, and pods that lack what it tracks', async () => {
    const deps = testDeps();
    const plugin = await makePlugin(resourceQuotaPlugin, deps);
    deps.objects.put('/registry/resourcequotas/ns/q', quota('q', { pods: '5', 'limits.memory': '1Gi' }, undefined));
    expect((await refusal(admit(plugin, attributes({ object: pod('p', { containers: [{ name: 'c', resources: { limits: { memory: '1Mi' } } }] }) })))).message)
      .to.equal('pods "p" is forbidden: status unknown for quota: q, resources: limits.memory,pods');
    deps.objects.put('/registry/resourcequotas/ns/q', quota('q', { pods: '5', 'limits.memory': '1Gi' }, { pods: '0', 'limits.memory': '0' }));
    expect((await refusal(admit(plugin, attributes({ object: pod('p') })))).message).to.equal('pods "p" is forbidden: failed quota: q: must specify limits.memory');
  });

  it('checks a dry run against the quota but never charges it', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/resourcequotas/ns/q', quota('q', { 'count/configmaps': '1' }, { 'count/configmaps': '0' }));
    const plugin = await makePlugin(resourceQuotaPlugin, deps);
    const configMaps = { resource: 'configmaps', kind: 'ConfigMap' };
    await admit(plugin, attributes({ ...configMaps, dryRun: true, object: { metadata: { name: 'a' } } }));
    expect(deps.statusUpdates).to.deep.equal([]);
    deps.objects.put('/registry/resourcequotas/ns/q', quota('q', { 'count/configmaps': '1' }, { 'count/configmaps': '1' }));
    const err = await refusal(admit(plugin, attributes({ ...configMaps, dryRun: true, object: { metadata: { name: 'b' } } })));
    expect(err.message).to.equal('configmaps "b" is forbidden: exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1');
    expect(plugin.sideEffects).to.equal('NoneOnDryRun');
  });

  it('charges a service update only for what it adds', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/resourcequotas/ns/q', quota('q', { 'services.nodeports': '2' }, { 'services.nodeports': '1' }));
    const plugin = await makePlugin(resourceQuotaPlugin, deps);
    const services = { resource: 'services', kind: 'Service', operation: 'UPDATE' as const };
    const service = (type: string, ports: number): JsonObject => ({ metadata: { name: 's', resourceVersion: '5' }, spec: { type, ports: Array.from({ length: ports }, (_, i) => ({ port: 80 + i })) } });
    await admit(plugin, attributes({ ...services, object: service('NodePort', 2), oldObject: service('NodePort', 1) }));
    expect((deps.statusUpdates[0].object.status as JsonObject).used).to.deep.equal({ 'services.nodeports': '2' });
    // Unchanged usage: no write.
    await admit(plugin, attributes({ ...services, object: service('NodePort', 1), oldObject: service('NodePort', 1) }));
    expect(deps.statusUpdates).to.have.length(1);
  });

  it('retries a conflicting status write against the quota as the store has it now', async () => {
    const deps = testDeps();
    let attempts = 0;
    deps.client.updateStatus = async (_target, _ns, object) => {
      attempts++;
      if (attempts === 1) throw new ApiError(409, 'Conflict', 'modified');
      deps.statusUpdates.push({ resource: 'resourcequotas', namespace: 'ns', object });
      return object;
    };
    deps.objects.put('/registry/resourcequotas/ns/q', quota('q', { pods: '3' }, { pods: '1' }));
    // Another replica charged a pod meanwhile.
    deps.objects.storeOnly.set('/registry/resourcequotas/ns/q', quota('q', { pods: '3' }, { pods: '2' }, '11'));
    const plugin = await makePlugin(resourceQuotaPlugin, deps);
    await admit(plugin, attributes({ object: pod('p') }));
    expect(attempts).to.equal(2);
    expect((deps.statusUpdates[0].object.status as JsonObject).used).to.deep.equal({ pods: '3' });
    expect((deps.statusUpdates[0].object.metadata as JsonObject).resourceVersion).to.equal('11');
  });

  it('checks the requests of one namespace one at a time, so they do not overrun the quota together', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/resourcequotas/ns/q', quota('q', { pods: '1' }, { pods: '0' }));
    deps.client.updateStatus = async (_target, _ns, object) => {
      // A write that takes a turn of the event loop: time enough for the other admission, all
      // in memory, to check the quota meanwhile unless it waits for this one.
      await new Promise((r) => setImmediate(r));
      deps.objects.put('/registry/resourcequotas/ns/q', { ...object, metadata: { ...(object.metadata as JsonObject), resourceVersion: '99' } });
      return object;
    };
    const plugin = await makePlugin(resourceQuotaPlugin, deps);
    const outcomes = await Promise.allSettled([admit(plugin, attributes({ object: pod('a') })), admit(plugin, attributes({ object: pod('b') }))]);
    expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected']);
  });

  it('needs a covering quota for limited resources of the configuration', async () => {
    const deps = testDeps();
    const config = 'apiVersion: apiserver.config.k8s.io/v1\nkind: ResourceQuotaConfiguration\nlimitedResources:\n- resource: pods\n  matchContains: [requests.cpu]\n';
    const plugin = await makePlugin(resourceQuotaPlugin, deps, config);
    await admit(plugin, attributes({ object: pod('free') }));
    const err = await refusal(admit(plugin, attributes({ object: pod('p', { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] }) })));
    expect(err.message).to.equal('pods "p" is forbidden: insufficient quota to consume: requests.cpu');
  });

  it('leaves subresources, deletes and namespaces without quotas alone', async () => {
    const plugin = await makePlugin(resourceQuotaPlugin, testDeps());
    expect(plugin.handles(attributes({ subresource: 'status', operation: 'UPDATE', object: pod('p'), oldObject: pod('p') }))).to.equal(false);
    expect(plugin.handles(attributes({ operation: 'DELETE', oldObject: pod('p') }))).to.equal(false);
    expect(plugin.handles(attributes({ operation: 'UPDATE', object: pod('p'), oldObject: pod('p') }))).to.equal(false);
    await admit(plugin, attributes({ object: pod('p') }));
  });
});
