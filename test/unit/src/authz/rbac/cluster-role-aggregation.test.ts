import { expect } from 'chai';
import { ClusterRoleAggregationController, aggregatedRules } from '../../../../../src/authz/rbac/cluster-role-aggregation';
import type { RoleObject } from '../../../../../src/authz/rbac/types';
import { until } from '../../../../support/until';
import { MemoryFeed } from '../memory-feed';
import { FakeRbacClient } from './fake-rbac-client';

const role = (name: string, labels: Record<string, string>, rules: object[], aggregate?: Record<string, string>[]): RoleObject => ({
  metadata: { name, labels },
  rules: rules as RoleObject['rules'],
  ...(aggregate ? { aggregationRule: { clusterRoleSelectors: aggregate.map((matchLabels) => ({ matchLabels })) } } : {}),
});

describe('authz/rbac ClusterRoleAggregationController', () => {
  it('takes the rules of matching roles by selector, then name, each rule once, never its own', () => {
    const monitor = role('monitor', {}, [], [{ a: '1' }, { b: '1' }]);
    const rules = aggregatedRules(monitor, [
      monitor,
      role('zeta', { a: '1' }, [{ verbs: ['get'], apiGroups: [''], resources: ['z'] }]),
      role('alpha', { a: '1', b: '1' }, [{ verbs: ['get'], apiGroups: [''], resources: ['a'] }]),
      role('beta', { b: '1' }, [{ verbs: ['get'], apiGroups: [''], resources: ['a'] }, { verbs: ['list'], apiGroups: [''], resources: ['b'] }]),
      role('other', { c: '1' }, [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]),
    ]);
    expect(rules.map((r) => `${r.verbs[0]} ${r.resources?.[0]}`)).to.deep.equal(['get a', 'get z', 'list b']);
  });

  it('writes the aggregate when a labelled role appears, and not when nothing differs', async () => {
    const feed = new MemoryFeed();
    const client = new FakeRbacClient();
    // The client writes back into the feed, as the registry and watch cache would.
    const update = client.update.bind(client);
    client.update = async (kind, object) => {
      const stored = await update(kind, object);
      feed.put(`/registry/clusterroles/${stored.metadata.name}`, stored as never);
      return stored;
    };
    const view = role('view', {}, [], [{ 'rbac.authorization.k8s.io/aggregate-to-view': 'true' }]);
    await client.create('ClusterRole', view);
    feed.put('/registry/clusterroles/view', client.object('ClusterRole', '', 'view') as never);
    const controller = new ClusterRoleAggregationController(feed, client, { retryMs: 10 });
    controller.start();
    await until('controller idle', async () => controller.isIdle, 2000);
    expect(client.updates).to.equal(0);

    feed.put('/registry/clusterroles/crontabs-view', role('crontabs-view', { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' }, [{ verbs: ['get'], apiGroups: ['stable.example.com'], resources: ['crontabs'] }]) as never);
    const updated = await until('view aggregated', async () => {
      const current = client.object('ClusterRole', '', 'view') as RoleObject;
      return (current.rules ?? []).length === 1 ? current : undefined;
    }, 1000);
    expect(updated.rules).to.deep.equal([{ verbs: ['get'], apiGroups: ['stable.example.com'], resources: ['crontabs'] }]);
    await until('controller idle', async () => controller.isIdle, 2000);
    const writes = client.updates;
    feed.put('/registry/clusterroles/unrelated', role('unrelated', {}, [{ verbs: ['get'], apiGroups: [''], resources: ['x'] }]) as never);
    await until('controller idle', async () => controller.isIdle, 2000);
    expect(client.updates).to.equal(writes);
    controller.stop();
  });
});
