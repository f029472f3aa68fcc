import { expect } from 'chai';
import { codecFor } from '../../../../raft/etcd/codec';
import type { TxnRequest, TxnResponse } from '../../../../raft/kv/types';

const bytes = (s: string) => Buffer.from(s, 'latin1');

describe('etcd codec: Carina\'s relocation op', () => {
  it('carries requestRelocate in a transaction, as a log entry holds it, and responseRelocate back', () => {
    const request: TxnRequest = {
      compare: [{ key: bytes('/old/a'), target: 'MOD', modRevision: 4, result: 'EQUAL' }],
      success: [{ requestRelocate: { key: bytes('/old/a'), newKey: bytes('/new/a'), value: bytes('sealed') } }],
      failure: [],
    };
    const decoded = codecFor('TxnRequest').decode(codecFor('TxnRequest').encode(request));
    expect(decoded.success).to.have.length(1);
    const op = decoded.success[0] as { requestRelocate: { key: Uint8Array; newKey: Uint8Array; value: Uint8Array } };
    expect([op.requestRelocate.key, op.requestRelocate.newKey, op.requestRelocate.value].map((b) => Buffer.from(b).toString())).to.deep.equal(['/old/a', '/new/a', 'sealed']);
    const header = { clusterId: 0n, memberId: 0n, revision: 9, raftTerm: 0 };
    const response: TxnResponse = { header, succeeded: true, responses: [{ responseRelocate: { header } }] };
    expect(codecFor('TxnResponse').decode(codecFor('TxnResponse').encode(response))).to.deep.equal(response);
  });
});
