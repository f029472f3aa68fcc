/**
 * Consistent reads from the watch cache (--consistent-reads-from-cache) across three replicas:
 * a write acknowledged by one replica is seen, at its resourceVersion, by a GET and a LIST
 * without resourceVersion on the others at once (what a quorum read guarantees and a cache read
 * without the revision check would not), before and after the store's leader is killed.
 */
import { expect } from 'chai';
import { CarinaApiProcess } from '../../support/carina-api-process';
import { until } from '../../support/until';

type Obj = Record<string, any>;

const PATH = '/api/v1/namespaces/default/configmaps';

/** Writes through `writer`, then reads at once through the others; every read must see the write. */
async function writeThenRead(writer: CarinaApiProcess, readers: CarinaApiProcess[], name: string, value: string): Promise<void> {
  const existing = await writer.request('GET', `${PATH}/${name}`);
  const body = JSON.stringify({ metadata: { name }, data: { v: value } });
  const written = existing.status === 200 ? await writer.request('PUT', `${PATH}/${name}`, { body }) : await writer.request('POST', PATH, { body });
  expect(written.status, written.text).to.be.oneOf([200, 201]);
  const rv = written.json<Obj>().metadata.resourceVersion as string;
  for (const reader of readers) {
    const got = await reader.request('GET', `${PATH}/${name}`);
    expect(got.status, got.text).to.equal(200);
    expect(got.json<Obj>().metadata.resourceVersion, `GET of ${name} on ${reader.url}`).to.equal(rv);
    expect(got.json<Obj>().data.v).to.equal(value);
    const page = await reader.request('GET', `${PATH}?limit=500`);
    const list = page.json<Obj>();
    expect(Number(list.metadata.resourceVersion), `LIST on ${reader.url}`).to.be.at.least(Number(rv));
    const item = list.items.find((o: Obj) => o.metadata.name === name);
    expect(item?.metadata.resourceVersion, `LIST item ${name} on ${reader.url}`).to.equal(rv);
  }
}

describe('consistent reads from the watch cache, three replicas', function () {
  this.timeout(180_000);
  let replicas: CarinaApiProcess[] = [];

  before(async () => {
    replicas = await CarinaApiProcess.startCluster(3, ['--consistent-reads-from-cache']);
  });

  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
  });

  it('reads on every other replica see a write at once, at its resourceVersion, also after the leader is killed', async () => {
    for (let i = 0; i < 30; i++) {
      const writer = replicas[i % 3];
      await writeThenRead(writer, replicas.filter((r) => r !== writer), `rw-${i % 5}`, String(i));
    }
    // Kill -9 the first replica (it often leads the store); the other two keep a quorum.
    await replicas[0].killAndWait('SIGKILL');
    const alive = replicas.slice(1);
    await until('the two remaining replicas to be ready', async () => (await Promise.all(alive.map((r) => r.request('GET', '/readyz')))).every((x) => x.status === 200), 30_000);
    for (let i = 30; i < 50; i++) {
      const writer = alive[i % 2];
      await writeThenRead(writer, alive.filter((r) => r !== writer), `rw-${i % 5}`, String(i));
    }
  });
});
