/**
 * EntryProposer on a stand-in node: the entry it proposes, the outcome it hands back, and the
 * errors a caller sees (a stopped replica, a request too large, the request's own error from
 * apply, a Raft failure).
 */
import { expect } from 'chai';
import { RaftError } from '../../../../raft/core/errors';
import { EntryProposer } from '../../../../raft/etcd/entry-proposer';
import { decodeEntry, EntryKind } from '../../../../raft/etcd/entry-format';
import { isKvError, KvError } from '../../../../raft/kv/errors';

function proposerWith(result: () => Promise<{ index: number; result: unknown }>, stopped = false): { proposer: EntryProposer; proposed: Uint8Array[] } {
  const proposed: Uint8Array[] = [];
  const proposer = new EntryProposer({
    node: {
      propose: (data) => {
        proposed.push(data);
        return result();
      },
    },
    maxRequestBytes: 8,
    isStopped: () => stopped,
  });
  return { proposer, proposed };
}

async function errorOf(call: Promise<unknown>): Promise<string | false> {
  const err = await call.then(() => null, (e: unknown) => e);
  return isKvError(err) && err.code;
}

describe('EntryProposer', () => {
  it('proposes a store entry of the kind and resolves with the value apply gave it', async () => {
    const { proposer, proposed } = proposerWith(async () => ({ index: 3, result: { value: { revision: 9 } } }));
    expect(await proposer.propose('put', Buffer.from('req'))).to.deep.equal({ revision: 9 });
    const { kind, request } = decodeEntry(proposed[0]);
    expect(kind).to.equal(EntryKind.put);
    expect(Buffer.from(request).toString()).to.equal('req');
  });

  it('throws the request\'s own error as apply decided it', async () => {
    const { proposer } = proposerWith(async () => ({ index: 3, result: { error: new KvError('LEASE_NOT_FOUND') } }));
    expect(await errorOf(proposer.propose('leaseKeepAlive', Buffer.from('x')))).to.equal('LEASE_NOT_FOUND');
  });

  it('refuses before proposing when the replica stopped or the request is too large', async () => {
    const stopped = proposerWith(async () => ({ index: 1, result: { value: 1 } }), true);
    expect(await errorOf(stopped.proposer.propose('put', Buffer.from('x')))).to.equal('STOPPED');
    const large = proposerWith(async () => ({ index: 1, result: { value: 1 } }));
    expect(await errorOf(large.proposer.propose('put', Buffer.alloc(9)))).to.equal('REQUEST_TOO_LARGE');
    expect([...stopped.proposed, ...large.proposed]).to.deep.equal([]);
  });

  it('maps a Raft failure to the store\'s error: a timeout is TIMEOUT, whose outcome is unknown', async () => {
    const { proposer } = proposerWith(async () => {
      throw new RaftError('TIMEOUT', 'proposal timed out');
    });
    expect(await errorOf(proposer.propose('put', Buffer.from('x')))).to.equal('TIMEOUT');
  });
});
