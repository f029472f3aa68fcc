import { expect } from 'chai';
import { TokenController } from '../../../../src/controllers/token-controller';
import { controllerStack, ns, type ControllerStack } from './controller-stack';
import type { JsonObject } from '../../../../src/apis/object';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
/** A signer whose "token" shows what it was asked to sign (no key needed). */
const signer = { issueLegacyToken: async (input: object) => `signed:${JSON.stringify(input)}` };
const decode = (value: unknown) => Buffer.from(String(value), 'base64').toString('utf8');
const tokenSecret = (name: string, account: string, extra: JsonObject = {}): JsonObject => ({
  apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token', metadata: { name, annotations: { 'kubernetes.io/service-account.name': account, ...((extra.annotations as JsonObject | undefined) ?? {}) } },
});

describe('TokenController (legacy service-account tokens)', () => {
  let stack: ControllerStack;
  const running: TokenController[] = [];

  beforeEach(async () => {
    stack = await controllerStack();
    await stack.create('', 'namespaces', '', ns('ns'));
  });
  afterEach(() => {
    for (const r of running.splice(0)) r.stop();
    stack.stop();
  });

  function controller(): TokenController {
    const c = new TokenController({ registry: stack.registry, cache: stack.cache, secrets: stack.resource('', 'secrets'), serviceAccounts: stack.resource('', 'serviceaccounts'), signer, rootCaPem: CA });
    running.push(c);
    return c;
  }

  const secret = (name: string) => stack.get('', 'secrets', 'ns', name);

  it('fills a token Secret with the account\'s legacy token, ca.crt and namespace, and its uid', async () => {
    const account = await stack.create('', 'serviceaccounts', 'ns', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } });
    controller().start();
    await stack.create('', 'secrets', 'ns', tokenSecret('robot-token', 'robot'));
    const filled = await stack.eventually('the token', async () => {
      const found = await secret('robot-token');
      return (found?.data as JsonObject | undefined)?.token !== undefined ? found : undefined;
    });
    const data = filled.data as JsonObject;
    const uid = String((account.metadata as JsonObject).uid);
    expect(JSON.parse(decode(data.token).slice('signed:'.length))).to.deep.equal({ namespace: 'ns', serviceAccountName: 'robot', serviceAccountUid: uid, secretName: 'robot-token' });
    expect(decode(data['ca.crt'])).to.equal(CA);
    expect(decode(data.namespace)).to.equal('ns');
    expect(((filled.metadata as JsonObject).annotations as JsonObject)['kubernetes.io/service-account.uid']).to.equal(uid);
    // A filled Secret is not rewritten.
    const version = (filled.metadata as JsonObject).resourceVersion;
    expect(await running[0].syncSecret('ns', 'robot-token')).to.equal(true);
    expect(((await secret('robot-token'))?.metadata as JsonObject).resourceVersion).to.equal(version);
  });

  it('deletes token Secrets whose account is missing or is another account of that name, and those of a deleted account', async () => {
    const account = await stack.create('', 'serviceaccounts', 'ns', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } });
    await stack.create('', 'secrets', 'ns', tokenSecret('orphan', 'nobody'));
    await stack.create('', 'secrets', 'ns', tokenSecret('stale', 'robot', { annotations: { 'kubernetes.io/service-account.uid': 'an-older-uid' } }));
    await stack.create('', 'secrets', 'ns', tokenSecret('current', 'robot'));
    await stack.create('', 'secrets', 'ns', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'unrelated' }, data: { a: 'Yg==' } });
    controller().start();
    await stack.eventually('the orphan is gone', async () => (await secret('orphan')) === undefined);
    await stack.eventually('the stale one is gone', async () => (await secret('stale')) === undefined);
    await stack.eventually('the current one is filled', async () => ((await secret('current'))?.data as JsonObject | undefined)?.token !== undefined);
    await stack.registry.delete(stack.resource('', 'serviceaccounts'), 'ns', 'robot', { dryRun: false, preconditions: { uid: String((account.metadata as JsonObject).uid) } });
    await stack.eventually('deleted with its account', async () => (await secret('current')) === undefined);
    expect(await secret('unrelated')).to.not.equal(undefined);
  });

  it('hands over: a Secret made while no holder ran is filled by the next', async () => {
    await stack.create('', 'serviceaccounts', 'ns', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } });
    const first = controller();
    first.start();
    first.stop();
    await stack.create('', 'secrets', 'ns', tokenSecret('late', 'robot'));
    controller().start();
    await stack.eventually('filled by the next holder', async () => ((await secret('late'))?.data as JsonObject | undefined)?.token !== undefined);
  });
});
