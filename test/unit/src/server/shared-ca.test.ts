import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KvClient, RangeRequest, RangeResponse } from '../../../../raft';
import { loadOrCreateClusterCertificates } from '../../../../src/certificates';
import { SHARED_CA_KEY, adoptSharedClusterCa } from '../../../../src/server/shared-ca';

/** A store that already holds the shared CA: all adoptSharedClusterCa needs of it is a range. */
function storeHolding(ca: { certPem: string; keyPem: string }): KvClient {
  const store = {
    range: async (request: RangeRequest): Promise<RangeResponse> => {
      expect(Buffer.from(request.key).toString()).to.equal(SHARED_CA_KEY);
      const value = Buffer.from(JSON.stringify(ca));
      return { header: { clusterId: 1n, memberId: 1n, revision: 5, raftTerm: 2 }, kvs: [{ key: request.key, value, createRevision: 3, modRevision: 3, version: 1, lease: 0n }], more: false, count: 1 };
    },
  };
  return store as unknown as KvClient;
}

describe('shared cluster CA', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'carina-shared-ca-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is written into the data directory of a member that joins with no pki directory yet (found by carina chaos member-add)', async () => {
    const founder = await loadOrCreateClusterCertificates(join(dir, 'founder'));
    const joiner = join(dir, 'joiner');
    const log: string[] = [];
    await adoptSharedClusterCa(storeHolding({ certPem: founder.ca.certPem, keyPem: founder.ca.keyPem }), joiner, (line) => log.push(line), 1000);
    expect(readFileSync(join(joiner, 'pki', 'ca.crt'), 'utf8')).to.equal(founder.ca.certPem);
    expect(readFileSync(join(joiner, 'pki', 'ca.key'), 'utf8')).to.equal(founder.ca.keyPem);
    expect(log).to.deep.equal([]);
  });
});
