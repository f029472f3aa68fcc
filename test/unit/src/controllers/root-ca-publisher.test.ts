import { expect } from 'chai';
import { DESCRIPTION, RootCaPublisher } from '../../../../src/controllers/root-ca-publisher';
import { controllerStack, ns, type ControllerStack } from './controller-stack';
import type { JsonObject } from '../../../../src/apis/object';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('RootCaPublisher', () => {
  let stack: ControllerStack;
  const running: RootCaPublisher[] = [];

  beforeEach(async () => {
    stack = await controllerStack({ admission: ['NamespaceLifecycle'] });
  });
  afterEach(() => {
    for (const r of running.splice(0)) r.stop();
    stack.stop();
  });

  function publisher(): RootCaPublisher {
    const p = new RootCaPublisher({ registry: stack.registry, cache: stack.cache, configMaps: stack.resource('', 'configmaps'), rootCaPem: CA });
    running.push(p);
    return p;
  }

  const rootCa = (namespace: string) => stack.get('', 'configmaps', namespace, 'kube-root-ca.crt');

  it('publishes kube-root-ca.crt with the CA and its description in every namespace', async () => {
    await stack.create('', 'namespaces', '', ns('a'));
    publisher().start();
    await stack.create('', 'namespaces', '', ns('b'));
    for (const name of ['a', 'b']) {
      const configMap = await stack.eventually(`kube-root-ca.crt in ${name}`, () => rootCa(name));
      expect(configMap.data).to.deep.equal({ 'ca.crt': CA });
      expect((configMap.metadata as JsonObject).annotations).to.deep.equal({ 'kubernetes.io/description': DESCRIPTION });
    }
  });

  it('puts the CA back when the ConfigMap is changed or deleted', async () => {
    await stack.create('', 'namespaces', '', ns('a'));
    publisher().start();
    const published = await stack.eventually('published', () => rootCa('a'));
    await stack.registry.update(stack.resource('', 'configmaps'), 'a', 'kube-root-ca.crt', { ...published, data: { 'ca.crt': 'tampered' } }, { dryRun: false, subresource: '' });
    await stack.eventually('restored', async () => (await rootCa('a'))?.data && ((await rootCa('a'))?.data as JsonObject)['ca.crt'] === CA);
    await stack.registry.delete(stack.resource('', 'configmaps'), 'a', 'kube-root-ca.crt', { dryRun: false });
    await stack.eventually('recreated', () => rootCa('a'));
  });

  it('treats a namespace being deleted as done, and hands over to the next holder', async () => {
    await stack.create('', 'namespaces', '', ns('dying'));
    await stack.registry.delete(stack.resource('', 'namespaces'), '', 'dying', { dryRun: false });
    const first = publisher();
    expect(await first.sync('dying')).to.equal(true);
    expect(await rootCa('dying')).to.equal(undefined);
    first.start();
    first.stop();
    await stack.create('', 'namespaces', '', ns('later'));
    publisher().start();
    await stack.eventually('published by the next holder', () => rootCa('later'));
  });
});
