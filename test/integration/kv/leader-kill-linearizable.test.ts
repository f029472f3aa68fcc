/**
 * Three `carina server` replicas on loopback; eight clients, each bound to one replica, run puts,
 * linearizable gets, deletes and compare-and-swaps on a few keys while the leader is killed with
 * kill -9 and restarted, twice. Afterwards:
 *  - the recorded history (call and return times, outputs; failed writes as unknown outcomes)
 *    is linearizable (raft/testing's checker, partitioned by key);
 *  - every acknowledged put is in every replica's history at the revision it was acknowledged
 *    with, holding its value (no acknowledged write lost);
 *  - all replicas agree: the same revision and the same hash of the whole store.
 */
import { expect } from 'chai';
import { EtcdClient } from '../../../raft/etcd/etcd-client';
import { SeededRandom } from '../../../raft/core/rand';
import { checkLinearizable, kvModel, type KvOperation } from '../../../raft/testing';
import { CarinaStoreCluster } from '../../support/carina-store-cluster';
import { until } from '../../support/until';

const enc = (s: string) => Buffer.from(s);
const dec = (b: Uint8Array) => Buffer.from(b).toString();
const KEYS = Array.from({ length: 10 }, (_, i) => `k${i}`);
/** Acknowledged writes the workload makes before each kill and at the end. */
const WRITES_PER_PHASE = 50;
/** ... and while the killed leader is down: the two left have elected a leader and serve writes. */
const WRITES_WHILE_DOWN = 10;
const now = () => Number(process.hrtime.bigint()) / 1e6;

describe('Carina store, 3 replicas: kill -9 of the leader under concurrent clients', function () {
  this.timeout(180_000);
  let cluster: CarinaStoreCluster | null = null;

  afterEach(async () => {
    await cluster?.close();
    cluster = null;
  });

  it('keeps the history linearizable and loses no acknowledged write', async () => {
    cluster = await CarinaStoreCluster.start(3, { extraArgs: ['--heartbeat-interval=50ms', '--election-timeout=500ms'] });
    const c = cluster;
    const history: KvOperation[] = [];
    const acknowledged: Array<{ key: string; value: string; revision: number }> = [];
    let stop = false;
    let valueSeq = 0;

    /**
     * After a failed call a client waits until its replica runs and follows a running leader, so
     * that a dead replica's client adds few operations of unknown outcome.
     */
    const serving = (client: EtcdClient, replica: number) => until(`replica ${replica + 1} to follow a running leader`, async () => {
      if (!c.member(replica).running) return false;
      const { leader } = await client.status();
      return leader !== 0n && c.member(Number(leader) - 1).running;
    }, 60_000);

    const runClient = async (clientId: number) => {
      const random = new SeededRandom(clientId * 7919);
      const client = new EtcdClient({ endpoints: [c.clientEndpoints[clientId % 3]], tls: c.clientTls, timeoutMs: 3_000 });
      try {
        while (!stop) {
          const key = KEYS[random.intBelow(KEYS.length)];
          const roll = random.intBelow(100);
          const call = now();
          if (roll < 35) {
            const value = `c${clientId}-${valueSeq++}`;
            try {
              const r = await client.put({ key: enc(key), value: enc(value) });
              history.push({ clientId, input: { op: 'put', key, value }, call, return: now(), output: { ok: true } });
              acknowledged.push({ key, value, revision: r.header.revision });
            } catch {
              history.push({ clientId, input: { op: 'put', key, value }, call, return: Infinity });
              await serving(client, clientId % 3);
            }
          } else if (roll < 70) {
            try {
              const r = await client.range({ key: enc(key) });
              history.push({ clientId, input: { op: 'get', key }, call, return: now(), output: { ok: true, value: r.kvs.length ? dec(r.kvs[0].value) : null } });
            } catch {
              // A failed read changed nothing: it is left out of the history.
              await serving(client, clientId % 3);
            }
          } else if (roll < 80) {
            try {
              const r = await client.deleteRange({ key: enc(key) });
              history.push({ clientId, input: { op: 'delete', key }, call, return: now(), output: { ok: true, deleted: r.deleted } });
            } catch {
              history.push({ clientId, input: { op: 'delete', key }, call, return: Infinity });
              await serving(client, clientId % 3);
            }
          } else {
            // Compare-and-swap on the value just read, as an optimistic-concurrency client does.
            let expected: string | null;
            const readCall = now();
            try {
              const r = await client.range({ key: enc(key) });
              expected = r.kvs.length ? dec(r.kvs[0].value) : null;
              history.push({ clientId, input: { op: 'get', key }, call: readCall, return: now(), output: { ok: true, value: expected } });
            } catch {
              continue;
            }
            const value = `c${clientId}-${valueSeq++}`;
            const casCall = now();
            const compare = expected === null
              ? { key: enc(key), target: 'VERSION' as const, version: 0, result: 'EQUAL' as const }
              : { key: enc(key), target: 'VALUE' as const, value: enc(expected), result: 'EQUAL' as const };
            try {
              const r = await client.txn({ compare: [compare], success: [{ requestPut: { key: enc(key), value: enc(value) } }], failure: [] });
              history.push({ clientId, input: { op: 'cas', key, expected, value }, call: casCall, return: now(), output: { ok: true, succeeded: r.succeeded } });
              if (r.succeeded) acknowledged.push({ key, value, revision: r.header.revision });
            } catch {
              history.push({ clientId, input: { op: 'cas', key, expected, value }, call: casCall, return: Infinity });
              await serving(client, clientId % 3);
            }
          }
        }
      } finally {
        await client.close();
      }
    };

    const clients = Array.from({ length: 8 }, (_, i) => runClient(i));
    /** The workload goes on until `writes` more writes are acknowledged. */
    const progress = async (writes: number, phase: string) => {
      const from = acknowledged.length;
      await until(`${writes} writes acknowledged ${phase}`, () => acknowledged.length >= from + writes, 60_000);
    };
    for (let round = 0; round < 2; round++) {
      await progress(WRITES_PER_PHASE, `before kill ${round + 1}`);
      const leader = await c.waitHealthy();
      await c.kill(leader);
      await progress(WRITES_WHILE_DOWN, `while the killed leader is down (kill ${round + 1})`);
      await c.restart(leader);
      await c.waitHealthy(30_000);
    }
    await progress(WRITES_PER_PHASE, 'after the restarts');
    stop = true;
    await Promise.all(clients);

    // Final reads through every replica join the history: the state everyone ends with.
    for (let i = 0; i < 3; i++) {
      const client = new EtcdClient({ endpoints: [c.clientEndpoints[i]], tls: c.clientTls, timeoutMs: 10_000 });
      for (const key of KEYS) {
        const call = now();
        const r = await client.range({ key: enc(key) });
        history.push({ clientId: 100 + i, input: { op: 'get', key }, call, return: now(), output: { ok: true, value: r.kvs.length ? dec(r.kvs[0].value) : null } });
      }
      await client.close();
    }

    const acknowledgedWrites = history.filter((op) => op.input.op !== 'get' && op.return !== Infinity).length;
    const unknown = history.filter((op) => op.return === Infinity).length;
    expect(acknowledgedWrites, 'the workload made progress').to.be.greaterThan(200);
    console.log(`      history: ${history.length} operations, ${acknowledgedWrites} acknowledged writes, ${unknown} of unknown outcome`);
    const result = checkLinearizable(kvModel(), history, { timeoutMs: 60_000 });
    expect(result.timedOut, 'checker timed out').to.equal(false);
    expect(result.ok, result.violation?.explanation).to.equal(true);

    // Every acknowledged write is in every replica's history at its revision, with its value.
    const finalRevisions: number[] = [];
    const hashes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const client = new EtcdClient({ endpoints: [c.clientEndpoints[i]], tls: c.clientTls, timeoutMs: 10_000 });
      for (const w of acknowledged) {
        const r = await client.range({ key: enc(w.key), revision: w.revision, serializable: true });
        expect(r.kvs.map((kv) => dec(kv.value)), `replica ${i + 1}: ${w.key}@${w.revision}`).to.deep.equal([w.value]);
        expect(r.kvs[0].modRevision).to.equal(w.revision);
      }
      const status = await client.range({ key: enc('k'), rangeEnd: enc('l') });
      finalRevisions.push(status.header.revision);
      hashes.push((await client.call('hashKV', { revision: 0 }, 'read')).hash);
      await client.close();
    }
    expect(new Set(finalRevisions).size, `revisions ${finalRevisions}`).to.equal(1);
    expect(new Set(hashes).size, `hashes ${hashes}`).to.equal(1);
  });
});
