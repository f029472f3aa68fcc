import { expect } from 'chai';
import { MvccStore, type CompactionResponse, type KvClient, type TxnResponse } from '../../../../raft';
import { COMPACT_REV_KEY, compactRound, type CompactorState } from '../../../../src/storage/compactor';

/** The two calls a compactor makes, over an in-memory store; `compacted` records what was asked. */
function kvOver(store: MvccStore, compacted: number[]): Pick<KvClient, 'txn' | 'compact'> {
  const header = (revision: number) => ({ clusterId: 0n, memberId: 0n, revision, raftTerm: 0 });
  return {
    txn: async (request) => {
      const result = store.txn(request);
      return { header: header(result.revision), succeeded: result.succeeded, responses: result.responses } as TxnResponse;
    },
    compact: async (request): Promise<CompactionResponse> => {
      compacted.push(request.revision);
      store.compact(request.revision);
      return { header: header(store.revision) };
    },
  };
}

const put = (store: MvccStore, key: string) => store.put({ key: Buffer.from(key), value: Buffer.from('v') });

describe('storage/compactor: compaction of an external etcd as kube-apiserver does it', () => {
  it('records on the first round, then compacts each round to the revision seen a round earlier', async () => {
    const store = new MvccStore();
    const compacted: number[] = [];
    const kv = kvOver(store, compacted);
    put(store, '/registry/a');
    let state: CompactorState = { compactTime: 0, revision: 0 };
    state = await compactRound(kv, state);
    expect(compacted).to.deep.equal([]);
    const firstSeen = state.revision;
    put(store, '/registry/b');
    state = await compactRound(kv, state);
    expect(compacted).to.deep.equal([firstSeen]);
    expect(store.compactRevision).to.equal(firstSeen);
    expect(store.range({ key: Buffer.from(COMPACT_REV_KEY) }).kvs[0]?.version).to.equal(2);
  });

  it('lets only one of two API servers compact per round: the other loses the compare-and-swap and catches up', async () => {
    const store = new MvccStore();
    const compacted: number[] = [];
    const kv = kvOver(store, compacted);
    let a: CompactorState = { compactTime: 0, revision: 0 };
    let b: CompactorState = { compactTime: 0, revision: 0 };
    a = await compactRound(kv, a);
    b = await compactRound(kv, b);
    expect(a.compactTime).to.equal(1);
    expect(b.compactTime).to.equal(1, 'b learned the shared clock from the key');
    put(store, '/registry/x');
    a = await compactRound(kv, a);
    b = await compactRound(kv, b);
    expect(compacted).to.have.length(1);
    expect(b.compactTime).to.equal(2);
  });
});
