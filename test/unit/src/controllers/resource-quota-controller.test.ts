import { expect } from 'chai';
import { ResourceQuotaController } from '../../../../src/controllers/resource-quota-controller';
import { controllerStack, ns, type ControllerStack } from './controller-stack';
import type { JsonObject } from '../../../../src/apis/object';

const pod = (name: string, memory?: string): JsonObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx', ...(memory === undefined ? {} : { resources: { requests: { memory } } }) }] },
});

describe('ResourceQuotaController', () => {
  let stack: ControllerStack;
  const running: ResourceQuotaController[] = [];

  beforeEach(async () => {
    stack = await controllerStack();
    await stack.create('', 'namespaces', '', ns('ns'));
  });
  afterEach(() => {
    for (const r of running.splice(0)) r.stop();
    stack.stop();
  });

  function controller(): ResourceQuotaController {
    const prefixes: Record<string, string> = { '/pods': '/registry/pods/', '/configmaps': '/registry/configmaps/', '/services': '/registry/services/specs/', '/persistentvolumeclaims': '/registry/persistentvolumeclaims/' };
    const c = new ResourceQuotaController({ registry: stack.registry, cache: stack.cache, resourceQuotas: stack.resource('', 'resourcequotas'), keyPrefixOf: (g, r) => prefixes[`${g}/${r}`], delayMs: 5 });
    running.push(c);
    return c;
  }

  const status = async () => ((await stack.get('', 'resourcequotas', 'ns', 'q'))?.status ?? {}) as JsonObject;
  const used = async () => JSON.stringify((await status()).used ?? null);

  it('sets status.hard from spec.hard and status.used from the namespace\'s objects, following creates and deletes', async () => {
    await stack.create('', 'pods', 'ns', pod('a', '64Mi'));
    await stack.create('', 'configmaps', 'ns', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    controller().start();
    await stack.create('', 'resourcequotas', 'ns', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { pods: '5', 'requests.memory': '1Gi', 'count/configmaps': '3' } } });
    await stack.eventually('usage computed', async () => (await used()) === JSON.stringify({ 'count/configmaps': '1', pods: '1', 'requests.memory': '64Mi' }));
    expect((await status()).hard).to.deep.equal({ pods: '5', 'requests.memory': '1Gi', 'count/configmaps': '3' });
    await stack.create('', 'pods', 'ns', pod('b', '64Mi'));
    await stack.eventually('usage after a create', async () => (await used()) === JSON.stringify({ 'count/configmaps': '1', pods: '2', 'requests.memory': '128Mi' }));
    await stack.registry.delete(stack.resource('', 'pods'), 'ns', 'a', { dryRun: false });
    await stack.eventually('usage given back after a delete', async () => (await used()) === JSON.stringify({ 'count/configmaps': '1', pods: '1', 'requests.memory': '64Mi' }));
  });

  it('follows a change of spec.hard, and hands over to the next holder', async () => {
    const first = controller();
    first.start();
    await stack.create('', 'resourcequotas', 'ns', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { pods: '5' } } });
    await stack.eventually('first status', async () => (await used()) === JSON.stringify({ pods: '0' }));
    first.stop();
    const current = await stack.get('', 'resourcequotas', 'ns', 'q');
    await stack.registry.update(stack.resource('', 'resourcequotas'), 'ns', 'q', { ...current, spec: { hard: { pods: '5', 'count/configmaps': '2' } } }, { dryRun: false, subresource: '' });
    await stack.create('', 'pods', 'ns', pod('a'));
    controller().start();
    await stack.eventually('status by the next holder', async () => (await used()) === JSON.stringify({ 'count/configmaps': '0', pods: '1' }));
    expect((await status()).hard).to.deep.equal({ pods: '5', 'count/configmaps': '2' });
  });
});
