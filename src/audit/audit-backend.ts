/**
 * The chain an encoded audit event goes through after the policy, as kube-apiserver v1.25
 * composes its backends (apiserver pkg/server/options/audit.go):
 *
 *   log:     truncate? → mode → the log file      (truncate-enabled, then --audit-log-mode)
 *   webhook: truncate? → mode → the webhook POST  (the same for --audit-webhook-*)
 *   both:    a union, every event to each
 *
 * where mode is `blocking-strict` (the backend as it is: a failure reaches the caller),
 * `blocking` (the same call, its failure ignored) or `batch` (a buffer and batches,
 * buffered-backend.ts). A backend answers whether it took the events; only a
 * blocking-strict backend's `false` on a RequestReceived event fails the request (500).
 *
 * An answer is synchronous when the backend's work is (the log file), a promise when it waits on
 * something (the webhook's POST), so a server with only a log pays no promise per event.
 *
 * Events lost anywhere are counted, by the plugin that lost them, through the
 * AuditErrorReporter (apiserver_audit_error_total{plugin}, kube's audit.HandlePluginError).
 */
import type { JsonObject } from '../apis/object';

/** One audit.k8s.io/v1 Event as JSON (audit-event.ts). */
export type AuditEventJson = JsonObject;

export type AuditOutcome = boolean | Promise<boolean>;

export interface AuditEventBackend {
  /** kube's plugin name, for errors: log, webhook, buffered, truncate. */
  readonly name: string;
  /** Takes the events; false when some were lost (the backend counted them). Never throws or rejects. */
  processEvents(events: readonly AuditEventJson[]): AuditOutcome;
  /** Sends what is buffered and waits for what is in flight; later events are lost and counted. */
  shutdown(): Promise<void>;
}

/** Counts and logs `count` events lost by `plugin` (kube: audit.HandlePluginError). */
export type AuditErrorReporter = (plugin: string, count: number, reason: string) => void;

export type AuditMode = 'batch' | 'blocking' | 'blocking-strict';
export const AUDIT_MODES: readonly AuditMode[] = ['batch', 'blocking', 'blocking-strict'];

/** Both answers true when both are; a promise only when one of them is. */
export function bothTook(a: AuditOutcome, b: AuditOutcome): AuditOutcome {
  if (typeof a === 'boolean' && typeof b === 'boolean') return a && b;
  return Promise.all([a, b]).then(([x, y]) => x && y);
}

/** Each event to every backend (kube's audit.Union). */
export class UnionBackend implements AuditEventBackend {
  readonly name: string;

  constructor(private readonly backends: readonly AuditEventBackend[]) {
    this.name = `union[${backends.map((b) => b.name).join(',')}]`;
  }

  processEvents(events: readonly AuditEventJson[]): AuditOutcome {
    let outcome: AuditOutcome = true;
    for (const backend of this.backends) outcome = bothTook(outcome, backend.processEvents(events));
    return outcome;
  }

  async shutdown(): Promise<void> {
    await Promise.all(this.backends.map((b) => b.shutdown()));
  }
}

/** `blocking` mode: the backend's own call, waited for, its failure not the request's. */
export class IgnoreErrorsBackend implements AuditEventBackend {
  readonly name: string;

  constructor(private readonly delegate: AuditEventBackend) {
    this.name = delegate.name;
  }

  processEvents(events: readonly AuditEventJson[]): AuditOutcome {
    const outcome = this.delegate.processEvents(events);
    return typeof outcome === 'boolean' ? true : outcome.then(() => true);
  }

  shutdown(): Promise<void> {
    return this.delegate.shutdown();
  }
}
