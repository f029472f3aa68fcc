/**
 * The CSR cleaner (kube-controller-manager v1.25 `csrcleaner`,
 * pkg/controller/certificates/cleaner; spec 02 §3, §8): every `intervalMs` (an hour, as kube
 * polls; the first pass at start) it deletes the requests that
 *
 * - were approved and issued, the Approved condition last updated over an hour ago;
 * - were denied, the Denied condition last updated over an hour ago;
 * - failed, the Failed condition last updated over an hour ago;
 * - are pending (no condition at all) and were created over 24 hours ago;
 * - were approved and issued a certificate whose notAfter has passed.
 *
 * An approved request without a certificate (its signer never signed) is not one of these, as in
 * v1.25. Deletions carry the uid as a precondition, so a request re-created under the same name
 * meanwhile is not the one deleted; a request already gone is not an error.
 */
import { X509Certificate } from 'node:crypto';
import { decodePemBlocks } from '../apis/validation';
import { FeedMirror, type ObjectFeed } from '../authz';
import type { GenericRegistry } from '../registry';
import type { ServedResource } from '../registry';
import { ApiError } from '../util';
import { CERTIFICATE_CONTROLLER_USER, CSR_KEY_PREFIX, csrConditions, issuedCertificate } from './csr-status';
import type { JsonObject } from '../apis/object';

export const APPROVED_EXPIRATION_MS = 60 * 60 * 1000;
export const DENIED_EXPIRATION_MS = 60 * 60 * 1000;
export const PENDING_EXPIRATION_MS = 24 * 60 * 60 * 1000;
export const CLEANER_INTERVAL_MS = 60 * 60 * 1000;

export interface CsrCleanerOptions {
  readonly registry: Pick<GenericRegistry, 'delete'>;
  readonly csrs: ServedResource;
  readonly feed: ObjectFeed;
  readonly intervalMs?: number;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
}

/** isOlderThan: a set time more than `ageMs` before now. */
function isOlderThan(time: unknown, ageMs: number, now: number): boolean {
  if (typeof time !== 'string' || time === '') return false;
  const at = Date.parse(time);
  return !Number.isNaN(at) && now - at > ageMs;
}

/** The notAfter of the first certificate in status.certificate; undefined when none parses. */
function certificateNotAfter(csr: JsonObject): number | undefined {
  const [block] = decodePemBlocks(issuedCertificate(csr));
  if (block === undefined) return undefined;
  try {
    return Date.parse(new X509Certificate(block.bytes).validTo);
  } catch {
    return undefined;
  }
}

/** Why `csr` is to be deleted at `now`, or undefined to keep it. */
export function cleanupReason(csr: JsonObject, now: number): string | undefined {
  const conditions = csrConditions(csr);
  const issued = issuedCertificate(csr).length > 0;
  for (const c of conditions) {
    if (c.type === 'Approved' && issued && isOlderThan(c.lastUpdateTime, APPROVED_EXPIRATION_MS, now)) return 'it is more than 1h0m0s old and approved';
  }
  for (const c of conditions) {
    if (c.type === 'Denied' && isOlderThan(c.lastUpdateTime, DENIED_EXPIRATION_MS, now)) return 'it is more than 1h0m0s old and denied';
  }
  for (const c of conditions) {
    if (c.type === 'Failed' && isOlderThan(c.lastUpdateTime, DENIED_EXPIRATION_MS, now)) return 'it is more than 1h0m0s old and failed';
  }
  if (conditions.length === 0 && isOlderThan((csr.metadata as JsonObject | undefined)?.creationTimestamp, PENDING_EXPIRATION_MS, now)) {
    return 'it is more than 24h0m0s old and unhandled';
  }
  if (issued && conditions.some((c) => c.type === 'Approved')) {
    const notAfter = certificateNotAfter(csr);
    if (notAfter !== undefined && now > notAfter) return 'the associated certificate is expired';
  }
  return undefined;
}

export class CsrCleaner {
  private readonly mirror: FeedMirror<JsonObject>;
  private timer?: NodeJS.Timeout;
  private stopped = true;
  private running: Promise<number> | undefined;

  constructor(private readonly options: CsrCleanerOptions) {
    this.mirror = new FeedMirror(options.feed, CSR_KEY_PREFIX, { convert: (object) => object, log: options.log });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.mirror.start();
    const pass = () => {
      if (this.running !== undefined || this.stopped) return;
      this.running = this.clean().catch((err) => {
        this.options.log?.(`csrcleaner: ${(err as Error).message}`);
        return 0;
      }).finally(() => {
        this.running = undefined;
      });
    };
    this.timer = setInterval(pass, this.options.intervalMs ?? CLEANER_INTERVAL_MS);
    this.timer.unref();
    // The first pass once the mirror has listed.
    const first = setInterval(() => {
      if (this.stopped) {
        clearInterval(first);
        return;
      }
      if (!this.mirror.isSynced) return;
      clearInterval(first);
      pass();
    }, 20);
    first.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.mirror.stop();
  }

  /** One pass; the number of requests deleted. */
  async clean(): Promise<number> {
    const now = (this.options.now ?? Date.now)();
    let deleted = 0;
    for (const [name, csr] of [...this.mirror.entries()]) {
      if (this.stopped) break;
      const reason = cleanupReason(csr, now);
      if (reason === undefined) continue;
      const uid = (csr.metadata as JsonObject | undefined)?.uid;
      try {
        await this.options.registry.delete(this.options.csrs, '', name, {
          dryRun: false,
          preconditions: typeof uid === 'string' ? { uid } : undefined,
          user: CERTIFICATE_CONTROLLER_USER,
        });
        deleted++;
        this.options.log?.(`csrcleaner: deleted CSR ${JSON.stringify(name)} as ${reason}`);
      } catch (err) {
        // Gone already, or replaced by a request of the same name (the uid precondition failed).
        if (err instanceof ApiError && (err.code === 404 || err.code === 409)) continue;
        throw err;
      }
    }
    return deleted;
  }
}
