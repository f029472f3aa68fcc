/**
 * Replicas check each other's stores, through the log.
 *
 * The leader proposes, every interval, a "hash check" entry. Every replica that applies it
 * computes a digest of its store at exactly that point of the log (after every entry before it,
 * before any after it), so replicas that applied the same log compute the same digest whatever
 * their speed. Each then proposes a "hash report" entry (check index, its member id, its
 * digest). Every replica tallies the reports it applies; once a majority of the voters agree on
 * one digest, a replica whose own digest differs knows its store has diverged: it marks itself
 * corrupt (its CorruptionGuard then refuses reads and writes, and /readyz fails), and says so in its log.
 * Mismatching members are recorded in the check's result on every replica.
 *
 * A replica that reached the check by installing a Raft snapshot taken after it has no digest of
 * its own for it and judges only the others. Checks that never gather a majority (members down,
 * or no two digests alike) are dropped after a few newer ones.
 */
import { createHash } from 'node:crypto';
import { encodeRecordValue } from '../kv';
import type { MvccImage } from '../kv';

/** How many undecided checks are kept waiting for reports. */
const OPEN_CHECKS_KEPT = 8;
const DIGEST_BYTES = 32;
const REPORT_BYTES = 8 + 4 + 8 + DIGEST_BYTES;

export interface StoreCorruption {
  /** The log index of the check that found it. */
  checkIndex: number;
  reason: string;
}

export interface ConsistencyCheckResult {
  /** The log index of the hash check entry. */
  checkIndex: number;
  /** The store's revision at that index, on this replica. */
  revision: number | null;
  /** True once a majority of voters agree; false if all reported and no majority exists. */
  agreed: boolean;
  agreedDigest: string | null;
  /** This replica's digest at the check, if it applied the check entry itself. */
  ownDigest: string | null;
  reporters: number[];
  /** Members whose digest differs from the majority's. */
  mismatched: number[];
}

export interface HashReport {
  checkIndex: number;
  memberId: number;
  revision: number;
  digest: string;
}

export interface ConsistencyCheckerOptions {
  memberId: number;
  /** The voters at the time an entry applies. */
  voters: () => number[];
  /** The store's image now (between two applied entries). */
  image: () => MvccImage;
  /** Proposes this replica's report; called outside apply. */
  proposeReport: (report: Uint8Array) => Promise<void>;
  onCorrupt: (corruption: StoreCorruption) => void;
  log: (line: string) => void;
}

interface OpenCheck {
  own: { digest: string; revision: number } | null;
  reports: Map<number, string>;
  /** Set once decided; the check stays open for late reports until every voter reported. */
  result: ConsistencyCheckResult | null;
}

export class ConsistencyChecker {
  private readonly open = new Map<number, OpenCheck>();
  private last: ConsistencyCheckResult | null = null;
  private corrupt: StoreCorruption | null = null;
  private stopped = false;

  constructor(private readonly options: ConsistencyCheckerOptions) {}

  /** The last decided check, or null before the first. */
  get lastResult(): ConsistencyCheckResult | null {
    return this.last;
  }

  get corruption(): StoreCorruption | null {
    return this.corrupt;
  }

  /** A corruption found by an earlier run of this member (CorruptionGuard keeps it on disk). */
  resumeCorruption(corruption: StoreCorruption): void {
    this.corrupt = corruption;
  }

  stop(): void {
    this.stopped = true;
  }

  /** A hash check entry at `index` applies: digest the store as it is now, report it. */
  applyCheck(index: number): { checkIndex: number } {
    const image = this.options.image();
    const digest = storeDigest(image);
    this.openCheck(index).own = { digest, revision: image.revision };
    const report = encodeHashReport({ checkIndex: index, memberId: this.options.memberId, revision: image.revision, digest });
    // Proposing from inside apply would wait on the apply that is running: report afterwards.
    setImmediate(() => void this.report(report, index, 3));
    this.decide(index);
    return { checkIndex: index };
  }

  /** A hash report entry applies: tally it. */
  applyReport(body: Uint8Array): { checkIndex: number } {
    const report = decodeHashReport(body);
    // Reports of checks already decided, or dropped, change nothing.
    if (this.last !== null && report.checkIndex <= this.last.checkIndex && !this.open.has(report.checkIndex)) return { checkIndex: report.checkIndex };
    this.openCheck(report.checkIndex).reports.set(report.memberId, report.digest);
    this.decide(report.checkIndex);
    return { checkIndex: report.checkIndex };
  }

  private openCheck(index: number): OpenCheck {
    let check = this.open.get(index);
    if (check === undefined) {
      check = { own: null, reports: new Map(), result: null };
      this.open.set(index, check);
      for (const old of [...this.open.keys()].sort((a, b) => a - b).slice(0, Math.max(0, this.open.size - OPEN_CHECKS_KEPT))) this.open.delete(old);
    }
    return check;
  }

  private decide(index: number): void {
    const check = this.open.get(index);
    if (check === undefined) return;
    const voters = this.options.voters();
    const votes = new Map<string, number>();
    for (const [member, digest] of check.reports) if (voters.includes(member)) votes.set(digest, (votes.get(digest) ?? 0) + 1);
    const majority = Math.floor(voters.length / 2) + 1;
    let agreedDigest: string | null = null;
    for (const [digest, count] of votes) if (count >= majority) agreedDigest = digest;
    const allReported = voters.every((v) => check.reports.has(v));
    // A majority decides at once (a member that is down must not hold the verdict up); late
    // reports of a decided check are still compared while it stays open.
    if (agreedDigest === null && !allReported) return;
    const mismatched = [...check.reports].filter(([, d]) => agreedDigest !== null && d !== agreedDigest).map(([m]) => m).sort((a, b) => a - b);
    const previous = check.result;
    const result: ConsistencyCheckResult = {
      checkIndex: index,
      revision: check.own?.revision ?? null,
      agreed: agreedDigest !== null,
      agreedDigest,
      ownDigest: check.own?.digest ?? null,
      reporters: [...check.reports.keys()].sort((a, b) => a - b),
      mismatched,
    };
    check.result = result;
    if (this.last === null || index >= this.last.checkIndex) this.last = result;
    if (agreedDigest === null) {
      if (previous === null) this.options.log(`consistency check at index ${index}: no majority among the digests of members ${result.reporters.join(', ')}`);
      this.open.delete(index);
      return;
    }
    const newlyMismatched = mismatched.filter((m) => !(previous?.mismatched.includes(m) ?? false));
    if (newlyMismatched.length > 0) {
      this.options.log(`consistency check at index ${index}: member(s) ${newlyMismatched.join(', ')} report a store digest different from the majority's`);
    }
    if (check.own !== null && check.own.digest !== agreedDigest && this.corrupt === null) {
      this.corrupt = {
        checkIndex: index,
        reason: `store of member ${this.options.memberId} diverged: at log index ${index} (revision ${check.own.revision}) its digest ${check.own.digest.slice(0, 16)} differs from the majority's ${agreedDigest.slice(0, 16)}`,
      };
      this.options.log(`CORRUPT: ${this.corrupt.reason}; this replica stops serving reads and writes`);
      this.options.onCorrupt(this.corrupt);
    }
    if (allReported) this.open.delete(index);
  }

  private async report(report: Uint8Array, index: number, attempts: number): Promise<void> {
    for (let attempt = 1; attempt <= attempts && !this.stopped; attempt++) {
      try {
        await this.options.proposeReport(report);
        return;
      } catch (err) {
        if (attempt === attempts || this.stopped) {
          this.options.log(`consistency check at index ${index}: could not report this replica's digest: ${(err as Error).message}`);
          return;
        }
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  }
}

/**
 * A digest of the whole state a replica derives from the log: revision, compact revision,
 * leases (in id order, since their order in memory depends on history) and every retained
 * record in (main, sub) order.
 */
export function storeDigest(image: MvccImage): string {
  const hash = createHash('sha256');
  const head = Buffer.alloc(20);
  head.writeBigUInt64BE(BigInt(image.revision), 0);
  head.writeBigUInt64BE(BigInt(image.compactRevision), 8);
  head.writeUInt32BE(image.leases.length, 16);
  hash.update(head);
  for (const lease of [...image.leases].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    const b = Buffer.alloc(16);
    b.writeBigInt64BE(lease.id, 0);
    b.writeBigUInt64BE(BigInt(lease.ttl), 8);
    hash.update(b);
  }
  for (const r of image.records) {
    const position = Buffer.alloc(12);
    position.writeBigUInt64BE(BigInt(r.main), 0);
    position.writeUInt32BE(r.sub, 8);
    hash.update(position).update(encodeRecordValue(Buffer.from(r.key, 'latin1'), r.kv));
  }
  return hash.digest('hex');
}

export function encodeHashReport(report: HashReport): Buffer {
  const b = Buffer.alloc(REPORT_BYTES);
  b.writeBigUInt64BE(BigInt(report.checkIndex), 0);
  b.writeUInt32BE(report.memberId, 8);
  b.writeBigUInt64BE(BigInt(report.revision), 12);
  Buffer.from(report.digest, 'hex').copy(b, 20);
  return b;
}

export function decodeHashReport(body: Uint8Array): HashReport {
  if (body.length !== REPORT_BYTES) throw new Error(`hash report of ${body.length} bytes, expected ${REPORT_BYTES}`);
  const b = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return {
    checkIndex: Number(b.readBigUInt64BE(0)),
    memberId: b.readUInt32BE(8),
    revision: Number(b.readBigUInt64BE(12)),
    digest: b.subarray(20, 20 + DIGEST_BYTES).toString('hex'),
  };
}
