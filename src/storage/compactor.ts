/**
 * Periodic compaction of an external etcd, as kube-apiserver does it (--etcd-compaction-interval,
 * storage/etcd3 compactor, v1.25): every interval, each API server tries a compare-and-swap on
 * the key `compact_rev_key`, whose version is a shared logical clock; the one that wins compacts
 * to the revision it saw at the previous interval. So several API servers over one etcd compact
 * about once per interval between them, and the history kept is at least one interval long (the
 * spec's 5-minute continue tokens and watches rely on it). The first round only records.
 */
import type { KvClient } from '../../raft';

export const COMPACT_REV_KEY = 'compact_rev_key';

export interface CompactorState {
  /** The version of compact_rev_key this server last saw (its logical compaction time). */
  compactTime: number;
  /** The store's revision at the last round: what the next successful round compacts to. */
  revision: number;
}

/** One round; returns the state for the next. A lost compare-and-swap is not an error. */
export async function compactRound(kv: Pick<KvClient, 'txn' | 'compact'>, state: CompactorState, log?: (line: string) => void): Promise<CompactorState> {
  const key = Buffer.from(COMPACT_REV_KEY);
  const response = await kv.txn({
    compare: [{ key, target: 'VERSION', version: state.compactTime, result: 'EQUAL' }],
    success: [{ requestPut: { key, value: Buffer.from(String(state.revision)) } }],
    failure: [{ requestRange: { key } }],
  });
  const current = response.header.revision;
  if (!response.succeeded) {
    const answer = response.responses[0];
    const seen = answer !== undefined && 'responseRange' in answer ? answer.responseRange.kvs[0]?.version ?? state.compactTime : state.compactTime;
    return { compactTime: seen, revision: current };
  }
  const next = { compactTime: state.compactTime + 1, revision: current };
  // Nothing is compacted on the first round: there is no revision one interval old yet.
  if (state.revision === 0) return next;
  await kv.compact({ revision: state.revision });
  log?.(`etcd: compacted to revision ${state.revision}`);
  return next;
}

/** Runs rounds every `intervalMs` until stopped; failures are logged and the next round tries again. */
export function startCompactor(kv: Pick<KvClient, 'txn' | 'compact'>, intervalMs: number, log: (line: string) => void): { stop(): void } {
  let state: CompactorState = { compactTime: 0, revision: 0 };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      compactRound(kv, state, log).then((next) => {
        state = next;
      }, (err: unknown) => {
        log(`etcd: compaction failed: ${(err as Error).message}`);
      }).finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  schedule();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
