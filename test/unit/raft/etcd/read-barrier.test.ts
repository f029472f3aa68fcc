/**
 * ReadBarrier on a hand-driven ReadIndex source: one round at a time, the reads that arrive
 * during a round all served by the next one, and a failed round failing its reads with the
 * store's error.
 */
import { expect } from 'chai';
import { RaftError } from '../../../../raft/core/errors';
import { isKvError } from '../../../../raft/kv/errors';
import { ReadBarrier } from '../../../../raft/etcd/read-barrier';

/** A ReadIndex source whose rounds the test settles by hand. */
class HandDrivenReadIndex {
  readonly rounds: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];

  readIndex(): Promise<unknown> {
    return new Promise((resolve, reject) => this.rounds.push({ resolve: () => resolve(7), reject }));
  }
}

/** Lets the promise callbacks queued so far run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('ReadBarrier (the read-index loop)', () => {
  it('leaves the reads that arrive during a round to the next round, which serves them all at once', async () => {
    const source = new HandDrivenReadIndex();
    const barrier = new ReadBarrier(1, source);
    const done: string[] = [];
    void barrier.wait().then(() => done.push('first'));
    // The first round is under way: these two may have come after the index it will confirm.
    void barrier.wait().then(() => done.push('during'));
    void barrier.wait().then(() => done.push('during-too'));
    expect(source.rounds).to.have.length(1);
    source.rounds[0].resolve();
    await settle();
    expect(done).to.deep.equal(['first']);
    expect(source.rounds).to.have.length(2);
    source.rounds[1].resolve();
    await settle();
    expect(done).to.deep.equal(['first', 'during', 'during-too']);
    expect(source.rounds).to.have.length(2);
  });

  it('fails the reads of a failed round with the store\'s error, and the next round still runs', async () => {
    const source = new HandDrivenReadIndex();
    const barrier = new ReadBarrier(1, source);
    const failed = barrier.wait().then(() => null, (err: unknown) => err);
    source.rounds[0].reject(new RaftError('NOT_LEADER', 'no leader'));
    const err = await failed;
    expect(isKvError(err) && err.code).to.equal('NOT_LEADER');
    const next = barrier.wait();
    await settle();
    expect(source.rounds).to.have.length(2);
    source.rounds[1].resolve();
    await next;
  });
});
