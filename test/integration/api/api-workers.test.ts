/**
 * A real `carina server --api-workers 2` on loopback (issue 19; src/server/api-workers.ts): both
 * workers serve the one port, a watch on either worker sees writes made through either, with the
 * same resourceVersions, a worker killed with SIGKILL is started again while the replica keeps
 * serving, kubectl works, and killing the primary leaves no worker behind.
 */
import { expect } from 'chai';
import { CarinaApiProcess } from '../../support/carina-api-process';
import { until } from '../../support/until';

/** The latest pid of each API worker, from the primary's "api worker N (pid P) ready" lines. */
function workerPids(log: string): Map<number, number> {
  const pids = new Map<number, number>();
  for (const match of log.matchAll(/api worker (\d+) \(pid (\d+)\) ready/g)) pids.set(Number(match[1]), Number(match[2]));
  return pids;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** One metric's value in a /metrics text, by name and label text (`''`: no labels). */
function metric(text: string, name: string, labels = ''): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    const key = line.slice(0, space);
    if (key === name + (labels === '' ? '' : `{${labels}}`)) return Number(line.slice(space + 1));
  }
  return undefined;
}

/** Scrapes /metrics over new connections until every worker answered; returns each worker's text. */
async function scrapeEveryWorker(server: CarinaApiProcess, workers: number[]): Promise<Map<number, string>> {
  const seen = new Map<number, string>();
  await until(`a /metrics answer from each of workers ${workers.join(', ')}`, async () => {
    const res = await server.request('GET', '/metrics');
    const id = metric(res.text, 'carina_api_worker_id');
    if (res.status === 200 && id !== undefined) seen.set(id, res.text);
    return workers.every((w) => seen.has(w));
  }, 30_000, () => `answered: ${[...seen.keys()].join(', ')}`);
  return seen;
}

describe('carina server --api-workers 2', function () {
  this.timeout(120_000);
  let server: CarinaApiProcess;

  before(async () => {
    server = await CarinaApiProcess.start({ extraArgs: ['--api-workers', '2'] });
  });

  after(async () => {
    await server?.stop();
  });

  it('forks two API workers and prints the kubeconfig once', () => {
    expect([...workerPids(server.log).keys()].sort()).to.deep.equal([1, 2]);
    expect(server.log.match(/carina: admin kubeconfig/g)).to.have.length(1);
    expect(server.log).to.match(/\[api-worker 1\] serving the Kubernetes API .*controllers/);
    expect(server.log).to.match(/\[api-worker 2\] serving the Kubernetes API/);
  });

  it('serves requests from both workers, and a watch on either sees writes through either with the same resourceVersions', async () => {
    const ns = 'workers-watch';
    expect((await server.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }) })).status).to.equal(201);
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    // The server's own subscriptions count too: the watches show as an increase.
    const baseline = new Map([...await scrapeEveryWorker(server, [1, 2])].map(([id, t]) => [id, metric(t, 'carina_watch_cache_watchers') ?? 0]));
    // Four watches on four connections, kept open while the writes go through new connections; the
    // selector leaves out the namespace's kube-root-ca.crt, which the root CA publisher may add at any time.
    const watches = Array.from({ length: 4 }, () => server.watch(`/api/v1/namespaces/${ns}/configmaps?watch=true&labelSelector=written-by%3Dthis-test`, (events) => events.length >= names.length, 60_000));
    // Every worker holds at least one of them (its watch cache counts them).
    await until('watches open on both workers', async () => {
      const texts = await scrapeEveryWorker(server, [1, 2]);
      return [...texts].every(([id, t]) => (metric(t, 'carina_watch_cache_watchers') ?? 0) > (baseline.get(id) ?? 0));
    }, 30_000);
    const written = new Map<string, string>();
    for (const name of names) {
      const res = await server.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { 'written-by': 'this-test' } }, data: { k: name } }) });
      expect(res.status, res.text).to.equal(201);
      written.set(name, String((res.json().metadata as Record<string, unknown>).resourceVersion));
    }
    // The creates landed on both workers.
    const texts = await scrapeEveryWorker(server, [1, 2]);
    for (const [id, text] of texts) {
      const creates = text.split('\n').filter((l) => l.startsWith('apiserver_request_total{') && l.includes('verb="POST"') && l.includes('resource="configmaps"'));
      expect(creates, `worker ${id} served configmap creates`).to.not.be.empty;
    }
    for (const watch of await Promise.all(watches)) {
      expect(watch.status).to.equal(200);
      expect(watch.events.map((e) => [e.type, (e.object.metadata as Record<string, unknown>).name, (e.object.metadata as Record<string, unknown>).resourceVersion]))
        .to.deep.equal(names.map((n) => ['ADDED', n, written.get(n)]));
    }
  });

  it('works with kubectl', async () => {
    const created = await server.kubectl(['create', 'configmap', 'from-kubectl', '--from-literal=a=b']);
    expect(created.code, created.stderr).to.equal(0);
    const got = await server.kubectl(['get', 'configmap', 'from-kubectl', '-o', 'jsonpath={.data.a}']);
    expect(got.code, got.stderr).to.equal(0);
    expect(got.stdout).to.equal('b');
  });

  it('starts a worker killed with SIGKILL again, and the replica serves meanwhile', async () => {
    const before = workerPids(server.log);
    const victim = before.get(2) as number;
    process.kill(victim, 'SIGKILL');
    await until('the killed worker to be gone', async () => !alive(victim));
    // The other worker answers every connection meanwhile.
    for (let i = 0; i < 4; i++) expect((await server.request('GET', '/api/v1/namespaces/default')).status).to.equal(200);
    const restarted = await until('worker 2 started again', async () => {
      const pid = workerPids(server.log).get(2);
      return pid !== undefined && pid !== victim ? pid : undefined;
    }, 60_000, () => server.log.slice(-2000));
    expect(alive(restarted)).to.equal(true);
    expect(workerPids(server.log).get(1)).to.equal(before.get(1));
    await scrapeEveryWorker(server, [1, 2]);
  });

  it('leaves no worker behind when the primary is killed with SIGKILL', async () => {
    const pids = [...workerPids(server.log).values()];
    expect(pids.every(alive)).to.equal(true);
    await server.killAndWait('SIGKILL');
    await until('every API worker to exit', async () => pids.every((pid) => !alive(pid)), 30_000, () => `alive: ${pids.filter(alive).join(', ')}`);
  });
});
