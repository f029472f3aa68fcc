/**
 * CorruptionGuard: etcd's corruption checker and its CORRUPT alarm, for one replica. It takes
 * part in the consistency checks through the log (consistency-check.ts: the hash check and
 * report entries, which the state machine hands it as they apply) and, once a majority's digest
 * shows this replica's store diverged, keeps it from serving:
 *
 *  - refuseIfCorrupt() throws KvError 'CORRUPT' (etcd's "etcdserver: corrupt cluster") before
 *    every read and write; watches are refused and ended by ReplicaWatches;
 *  - the finding is kept on disk (<data-dir>/corrupt.json) before anything else, as etcd keeps
 *    its alarm, so a restart does not serve the damaged store again: the member stays refused
 *    until an operator restores its data and removes the file;
 *  - its host is told once (onCorrupt), to hand leadership away and end the open watches.
 *
 * Which replica proposes hash checks, and when, is a leader duty (leader-duties.ts).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeId } from '../core';
import { KvError } from '../kv';
import type { MvccImage } from '../kv';
import { PRIVATE_FILE_MODE } from '../storage';
import { ConsistencyChecker, type ConsistencyCheckResult, type StoreCorruption } from './consistency-check';

export interface CorruptionGuardHost {
  memberId: NodeId;
  /** Where the finding is kept across restarts. */
  dataDir: string;
  /** The voters when a check or report entry applies. */
  voters(): NodeId[];
  /** The store's image now (between two applied entries). */
  image(): MvccImage;
  /** Proposes this replica's hash report; called outside apply. */
  proposeReport(report: Uint8Array): Promise<void>;
  /** The store was found diverged in this run; called once, after the finding is on disk. */
  onCorrupt(corruption: StoreCorruption): void;
  log(line: string): void;
}

export class CorruptionGuard {
  private readonly checker: ConsistencyChecker;

  constructor(host: CorruptionGuardHost) {
    const file = corruptionFile(host.dataDir);
    this.checker = new ConsistencyChecker({
      memberId: host.memberId,
      voters: () => host.voters(),
      image: () => host.image(),
      proposeReport: (report) => host.proposeReport(report),
      onCorrupt: (corruption) => {
        // On disk first, as etcd keeps its CORRUPT alarm: a restart must not serve the damaged store again.
        writeFileSync(file, JSON.stringify(corruption), { mode: PRIVATE_FILE_MODE });
        host.onCorrupt(corruption);
      },
      log: (line) => host.log(line),
    });
    const earlier = readCorruption(file);
    if (earlier !== undefined) {
      this.checker.resumeCorruption(earlier);
      host.log(`CORRUPT: a consistency check found this member's store diverged (${earlier.reason}); it serves nothing until ${file} is removed, after restoring its data from a snapshot or from the other members`);
    }
  }

  /** Why this replica stopped serving, or null while its store agrees with the majority's. */
  get corruption(): StoreCorruption | null {
    return this.checker.corruption;
  }

  /** The last decided consistency check as this replica saw it (null before the first). */
  get lastResult(): ConsistencyCheckResult | null {
    return this.checker.lastResult;
  }

  /** Throws etcd's CORRUPT error once this replica's store was found diverged. */
  refuseIfCorrupt(): void {
    // etcd's wording, which its clients recognise; the reason is in this replica's log and Status errors.
    if (this.checker.corruption !== null) throw new KvError('CORRUPT');
  }

  /** A hash check entry at `index` applies (the state machine's ConsistencyApplier). */
  applyCheck(index: number): { checkIndex: number } {
    return this.checker.applyCheck(index);
  }

  /** A hash report entry applies. */
  applyReport(body: Uint8Array): { checkIndex: number } {
    return this.checker.applyReport(body);
  }

  /** No more reports are proposed (the replica stops). */
  stop(): void {
    this.checker.stop();
  }
}

function corruptionFile(dataDir: string): string {
  return join(dataDir, 'corrupt.json');
}

function readCorruption(file: string): StoreCorruption | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<StoreCorruption>;
    return { checkIndex: Number(parsed.checkIndex ?? 0), reason: String(parsed.reason ?? 'found corrupt by an earlier run') };
  } catch {
    return { checkIndex: 0, reason: `unreadable ${file}: found corrupt by an earlier run` };
  }
}
