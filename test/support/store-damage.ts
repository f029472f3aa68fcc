/**
 * StoreDamage: a fault for the tests of the store's consistency checks. Given to a replica as
 * its `wrapStateMachine` (KvReplicaOptions), it keeps a handle on the store under the replica's
 * state machine and changes one value there, in memory and outside the log, as a bit flip
 * would: at once (damageNow), or right after the first applied batch that reaches a given log
 * index (damageAfterIndex). Nothing reaches the disk, so only a digest of the memory state (a
 * consistency check) can tell. Until it fires, the wrapper passes every call through unchanged.
 */
import type { StateMachine } from '../../raft/node';
import type { MvccStore } from '../../raft/kv/mvcc-store';

export class StoreDamage {
  private store: MvccStore | null = null;
  private afterIndex: number | null = null;

  /** `log` gets one line per damage done (a process's stderr, a test's array). */
  constructor(private readonly log: (line: string) => void) {}

  /** For KvReplicaOptions.wrapStateMachine: the replica's state machine, damaging as asked. */
  readonly wrap = (machine: StateMachine, store: MvccStore): StateMachine => {
    this.store = store;
    return {
      appliedIndex: () => machine.appliedIndex(),
      apply: (entries, lastIndex) => {
        const outcomes = machine.apply(entries, lastIndex);
        if (outcomes instanceof Promise) return outcomes.then((o) => this.afterApplied(lastIndex, o));
        return this.afterApplied(lastIndex, outcomes);
      },
      snapshot: () => machine.snapshot(),
      restore: (data, index) => machine.restore(data, index),
    };
  };

  /** Damages the store's newest value now; false when the store holds no value yet. */
  damageNow(): boolean {
    if (this.store === null) throw new Error('StoreDamage: not wrapped around a replica\'s state machine yet');
    const image = this.store.image();
    for (let i = image.records.length - 1; i >= 0; i--) {
      const kv = image.records[i].kv;
      if (kv === null) continue;
      const value = Buffer.concat([Buffer.from(kv.value), Buffer.from('!corrupt')]);
      image.records[i] = { ...image.records[i], kv: { ...kv, value } };
      this.store.restoreImage(image);
      this.log(`test fault: damaged the value of key ${JSON.stringify(image.records[i].key)} in memory`);
      return true;
    }
    return false;
  }

  /** damageNow() once a batch that reaches `index` has applied (retried on later batches until there is a value). */
  damageAfterIndex(index: number): void {
    this.afterIndex = index;
  }

  private afterApplied<T>(lastIndex: number, outcomes: T): T {
    if (this.afterIndex !== null && lastIndex >= this.afterIndex && this.damageNow()) this.afterIndex = null;
    return outcomes;
  }
}
