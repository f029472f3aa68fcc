import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeleteRangeRequest, DeleteRangeResponse, KvClient, TxnRequest, TxnResponse } from '../../../../raft';
import { createSharedPki, pkiDirectory } from '../../../../src/certificates';
import { LEGACY_SHARED_CA_KEY, SHARED_CA_CERT_KEY, checkSharedClusterCa } from '../../../../src/server/shared-ca';

const HEADER = { clusterId: 1n, memberId: 1n, revision: 5, raftTerm: 2 };

/** A store of plain keys: enough of etcd's txn (create-revision compare, put, range) and delete for the check. */
function memoryStore(initial: Record<string, string> = {}): { kv: KvClient; values: Map<string, string> } {
  const values = new Map(Object.entries(initial));
  const kv = {
    deleteRange: async (request: DeleteRangeRequest): Promise<DeleteRangeResponse> => {
      const key = Buffer.from(request.key).toString();
      const deleted = values.delete(key) ? 1 : 0;
      return { header: HEADER, deleted, prevKvs: [] };
    },
    txn: async (request: TxnRequest): Promise<TxnResponse> => {
      const compare = request.compare[0];
      const key = Buffer.from(compare.key).toString();
      const succeeded = !values.has(key);
      const ops = succeeded ? request.success : request.failure;
      const responses = ops.map((op) => {
        if ('requestPut' in op) {
          values.set(Buffer.from(op.requestPut.key).toString(), Buffer.from(op.requestPut.value ?? new Uint8Array()).toString());
          return { responsePut: { header: HEADER } };
        }
        if ('requestRange' in op) {
          const k = Buffer.from(op.requestRange.key).toString();
          const v = values.get(k);
          const kvs = v === undefined ? [] : [{ key: Buffer.from(k), value: Buffer.from(v), createRevision: 3, modRevision: 3, version: 1, lease: 0n }];
          return { responseRange: { header: HEADER, kvs, more: false, count: kvs.length } };
        }
        throw new Error('unexpected op');
      });
      return { header: HEADER, succeeded, responses } as unknown as TxnResponse;
    },
  };
  return { kv: kv as unknown as KvClient, values };
}

describe('shared cluster CA check', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'carina-shared-ca-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('publishes only the CA certificate, never a private key, when the store has none', async () => {
    const founder = join(dir, 'founder');
    await createSharedPki(pkiDirectory(founder));
    const store = memoryStore();
    await checkSharedClusterCa(store.kv, founder, () => undefined, 1000);
    expect([...store.values.keys()]).to.deep.equal([SHARED_CA_CERT_KEY]);
    const stored = store.values.get(SHARED_CA_CERT_KEY) as string;
    expect(stored).to.contain('BEGIN CERTIFICATE');
    expect(stored).not.to.contain('PRIVATE KEY');
  });

  it('accepts a replica that holds the published CA, and refuses one holding another cluster\'s', async () => {
    const founder = join(dir, 'founder');
    const copy = join(dir, 'copy');
    const stranger = join(dir, 'stranger');
    await createSharedPki(pkiDirectory(founder));
    await createSharedPki(pkiDirectory(stranger));
    const { copySharedPki } = await import('../../../../src/certificates');
    await copySharedPki(pkiDirectory(founder), pkiDirectory(copy));
    const store = memoryStore();
    await checkSharedClusterCa(store.kv, founder, () => undefined, 1000);
    await checkSharedClusterCa(store.kv, copy, () => undefined, 1000);
    let failure: unknown;
    try {
      await checkSharedClusterCa(store.kv, stranger, () => undefined, 1000);
    } catch (err) {
      failure = err;
    }
    expect((failure as { code?: string }).code).to.equal('SHARED_CA_MISMATCH');
  });

  it('deletes the CA key that earlier versions kept in the store', async () => {
    const founder = join(dir, 'founder');
    await createSharedPki(pkiDirectory(founder));
    const store = memoryStore({ [LEGACY_SHARED_CA_KEY]: JSON.stringify({ certPem: 'x', keyPem: '-----BEGIN RSA PRIVATE KEY-----' }) });
    const log: string[] = [];
    await checkSharedClusterCa(store.kv, founder, (line) => log.push(line), 1000);
    expect(store.values.has(LEGACY_SHARED_CA_KEY)).to.equal(false);
    expect(log.join('\n')).to.contain('removed the cluster CA key');
  });
});
