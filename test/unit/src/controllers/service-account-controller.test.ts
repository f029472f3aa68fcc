import { expect } from 'chai';
import { LeaderElector } from '../../../../src/controllers/leader-election';
import { ServiceAccountController } from '../../../../src/controllers/service-account-controller';
import { controllerStack, ns, type ControllerStack } from './controller-stack';
import type { JsonObject } from '../../../../src/apis/object';

describe('ServiceAccountController', () => {
  let stack: ControllerStack;
  const running: Array<{ stop(): void }> = [];

  beforeEach(async () => {
    stack = await controllerStack({ admission: ['NamespaceLifecycle'] });
  });
  afterEach(() => {
    for (const r of running.splice(0)) r.stop();
    stack.stop();
  });

  function controller(): ServiceAccountController {
    const c = new ServiceAccountController({ registry: stack.registry, cache: stack.cache, serviceAccounts: stack.resource('', 'serviceaccounts') });
    running.push(c);
    return c;
  }

  it('creates default in namespaces that exist at start and in new ones, and again when it is deleted', async () => {
    await stack.create('', 'namespaces', '', ns('before'));
    controller().start();
    await stack.eventually('default in an existing namespace', () => stack.get('', 'serviceaccounts', 'before', 'default'));
    await stack.create('', 'namespaces', '', ns('after'));
    const created = await stack.eventually('default in a new namespace', () => stack.get('', 'serviceaccounts', 'after', 'default'));
    await stack.registry.delete(stack.resource('', 'serviceaccounts'), 'after', 'default', { dryRun: false });
    const again = await stack.eventually('default again', async () => {
      const found = await stack.get('', 'serviceaccounts', 'after', 'default');
      return found !== undefined && (found.metadata as JsonObject).uid !== (created.metadata as JsonObject).uid ? found : undefined;
    });
    expect(again).to.deep.include({ apiVersion: 'v1', kind: 'ServiceAccount' });
  });

  it('leaves a namespace that is being deleted alone', async () => {
    await stack.create('', 'namespaces', '', ns('dying'));
    await stack.registry.delete(stack.resource('', 'namespaces'), '', 'dying', { dryRun: false });
    const c = controller();
    expect(await c.sync('dying')).to.equal(true);
    expect(await stack.get('', 'serviceaccounts', 'dying', 'default')).to.equal(undefined);
  });

  it('moves with the controller lease: the next holder serves namespaces made while none ran', async () => {
    const leases = stack.resource('coordination.k8s.io', 'leases');
    await stack.create('', 'namespaces', '', ns('kube-system'));
    const replica = (identity: string) => {
      const c = controller();
      const elector = new LeaderElector({ registry: stack.registry, leases, namespace: 'kube-system', name: 'carina-controller-manager', identity, leaseDurationSeconds: 1, retryPeriodMs: 50, onStartedLeading: () => c.start(), onStoppedLeading: () => c.stop() });
      elector.start();
      return elector;
    };
    const first = replica('member-1');
    await stack.eventually('member-1 leads', async () => first.isLeader);
    await stack.create('', 'namespaces', '', ns('one'));
    await stack.eventually('default in one', () => stack.get('', 'serviceaccounts', 'one', 'default'));
    await first.stop();
    await stack.create('', 'namespaces', '', ns('two'));
    const second = replica('member-2');
    try {
      await stack.eventually('member-2 leads', async () => second.isLeader);
      await stack.eventually('default in two, made by the new holder', () => stack.get('', 'serviceaccounts', 'two', 'default'));
    } finally {
      await second.stop();
    }
  });
});
