/**
 * Three `carina server` replicas of one cluster: one CA for all, writes through any replica
 * seen by the others at the same resourceVersion, watches served by every replica, readiness
 * that follows the store's quorum, and a shutdown that hands watchers a final bookmark.
 */
import { expect } from 'chai';
import { CarinaApiProcess } from '../../support/carina-api-process';
import { until } from '../../support/until';

type Obj = Record<string, any>;

describe('three carina server replicas', function () {
  this.timeout(120_000);
  let replicas: CarinaApiProcess[] = [];

  before(async () => {
    replicas = await CarinaApiProcess.startCluster(3, ['--shutdown-delay-duration', '1s']);
  });

  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
  });

  it('share one CA: the first replica\'s admin credentials work on every replica', async () => {
    for (const replica of replicas) {
      const res = await replica.request('GET', '/api/v1/namespaces/default').catch(() => undefined);
      expect(res?.status).to.equal(200);
      const other = await replica.kubectl(['get', 'ns', 'default', '-o', 'name']);
      expect(other.stdout).to.equal('namespace/default\n');
    }
    const viaFirst = await replicas[1].kubectl(['--server', replicas[2].url, '--kubeconfig', replicas[0].kubeconfig, 'get', 'ns', 'kube-system', '-o', 'name']);
    expect(viaFirst.stdout, viaFirst.stderr).to.equal('namespace/kube-system\n');
  });

  it('a write through one replica is read by the others at the same resourceVersion, and watched', async () => {
    const watch = replicas[2].openWatch('/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0', (events) => events.some((e) => (e.object.metadata as Obj)?.name === 'shared'));
    // Established before the write, so the write reaches it as a change, not in its initial list.
    expect(await watch.established).to.equal(200);
    const created = await replicas[1].request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { name: 'shared' }, data: { a: '1' } }) });
    expect(created.status).to.equal(201);
    const rv = created.json<Obj>().metadata.resourceVersion;
    for (const replica of replicas) {
      const got = await replica.request('GET', '/api/v1/namespaces/default/configmaps/shared');
      expect(got.json<Obj>().metadata.resourceVersion).to.equal(rv);
    }
    const seen = await watch.done;
    const event = seen.events.find((e) => (e.object.metadata as Obj)?.name === 'shared');
    expect(event?.type).to.equal('ADDED');
    expect((event?.object.metadata as Obj).resourceVersion).to.equal(rv);
  });

  it('continue tokens and watch resume points from one replica are valid on the others', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    let last = '';
    for (let i = 0; i < 5; i++) {
      const created = await replicas[i % 3].request('POST', path, { body: JSON.stringify({ metadata: { name: `paged-${i}`, labels: { paged: 'yes' } } }) });
      expect(created.status).to.equal(201);
      last = created.json<Obj>().metadata.resourceVersion;
    }
    const names: string[] = [];
    const listVersions = new Set<string>();
    let token = '';
    for (let page = 0; page < 3; page++) {
      // Each page from the next replica, with the previous replica's token.
      const res = await replicas[page % 3].request('GET', `${path}?labelSelector=paged%3Dyes&limit=2${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      expect(res.status).to.equal(200);
      const list = res.json<Obj>();
      names.push(...list.items.map((o: Obj) => o.metadata.name));
      listVersions.add(list.metadata.resourceVersion);
      token = list.metadata.continue ?? '';
    }
    expect(names).to.deep.equal(['paged-0', 'paged-1', 'paged-2', 'paged-3', 'paged-4']);
    expect(token).to.equal('');
    expect(listVersions.size).to.equal(1);
    // A watch on replica 3 from the resourceVersion replica 2 returned sees only what came after.
    const watch = replicas[2].openWatch(`${path}?watch=1&labelSelector=paged%3Dyes&resourceVersion=${last}`, (events) => events.length > 0);
    expect(await watch.established).to.equal(200);
    await replicas[0].request('DELETE', `${path}/paged-0`);
    const seen = await watch.done;
    expect(seen.events.map((e) => `${e.type} ${(e.object.metadata as Obj).name}`)).to.deep.equal(['DELETED paged-0']);
  });

  it('the kubernetes Endpoints list every replica', async () => {
    let subsets: unknown;
    await until('the kubernetes Endpoints to list all replicas', async () => {
      subsets = (await replicas[0].request('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).json<Obj>().subsets;
      const ports = ((subsets ?? []) as Obj[]).map((s) => s.ports[0].port).sort();
      return JSON.stringify(ports) === JSON.stringify(replicas.map((r) => r.port).sort());
    }, 20_000, () => `subsets: ${JSON.stringify(subsets)}`);
  });

  it('on shutdown a replica fails /readyz first, then sends watchers a bookmark they resume from elsewhere', async () => {
    const leaving = replicas[0];
    const watching = leaving.openWatch('/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&allowWatchBookmarks=true', () => false, 20_000);
    // The watch must be established before the replica leaves.
    expect(await watching.established).to.equal(200);
    leaving.terminate();
    // During --shutdown-delay-duration the replica still serves, but is not ready.
    const ready = await until('the leaving replica to fail /readyz', async () => {
      const answer = await leaving.request('GET', '/readyz?verbose');
      return answer.status !== 200 && answer;
    }, 10_000);
    expect(ready.status).to.equal(500);
    expect(ready.text).to.contain('[-]shutdown failed');
    const result = await watching.done;
    const last = result.events[result.events.length - 1];
    expect(last.type).to.equal('BOOKMARK');
    const bookmarkRv = (last.object.metadata as Obj).resourceVersion as string;
    // A write after the bookmark is seen by a watch resumed from it on another replica: no relist needed.
    // The leaving replica may have led the store: write once the others have a leader again (ready).
    await until('the remaining replicas to be ready', async () => (await replicas[2].request('GET', '/readyz')).status === 200, 20_000);
    const resumed = replicas[1].watch(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${bookmarkRv}`, (events) => events.length > 0);
    const afterPost = await replicas[2].request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { name: 'after-bookmark' } }) });
    expect(afterPost.status).to.equal(201);
    const after = await resumed;
    if (after.events.length === 0) throw new Error(`the resumed watch saw nothing (status ${after.status}); replica log:\n${replicas[1].log.slice(-3000)}`);
    expect(after.events[0].type).to.equal('ADDED');
    expect((after.events[0].object.metadata as Obj).name).to.equal('after-bookmark');
    await leaving.stop({ keepData: true });
  });

  it('runs the cluster controllers on one replica at a time, handing them over when it leaves', async () => {
    const holderOf = async (replica: CarinaApiProcess) => {
      const lease = await replica.request('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/carina-controller-manager');
      return lease.status === 200 ? String(lease.json<Obj>().spec.holderIdentity ?? '') : '';
    };
    // replicas[0] left in the previous test; the lease must now be held by one of the others.
    let holder = '';
    await until('the controller lease to be taken over', async () => ['member-2', 'member-3'].includes((holder = await holderOf(replicas[1]))), 30_000, () => `holder "${holder}"`);
    // And the controllers work there: a namespace deletion completes.
    await replicas[1].request('POST', '/api/v1/namespaces', { body: JSON.stringify({ metadata: { name: 'handed-over' } }) });
    await replicas[1].request('POST', '/api/v1/namespaces/handed-over/configmaps', { body: JSON.stringify({ metadata: { name: 'inside' } }) });
    await replicas[2].request('DELETE', '/api/v1/namespaces/handed-over');
    await until('the namespace to be removed after the hand-over', async () => (await replicas[2].request('GET', '/api/v1/namespaces/handed-over')).status === 404, 30_000);
  });

  it('a replica that cannot reach a quorum is not ready', async () => {
    await replicas[1].stop({ keepData: true });
    const survivor = replicas[2];
    const ready = await until('the survivor without a quorum to fail /readyz', async () => {
      const answer = await survivor.request('GET', '/readyz?verbose');
      return answer.status === 500 && answer;
    }, 20_000);
    expect(ready.text).to.contain('[-]etcd failed');
  });
});
