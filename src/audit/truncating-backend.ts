/**
 * `--audit-{log,webhook}-truncate-enabled` with `-truncate-max-event-size` and
 * `-truncate-max-batch-size`: kube-apiserver v1.25's truncate backend (apiserver
 * plugin/pkg/audit/truncate), in front of the mode's backend.
 *
 * - An event larger than maxEventSize bytes (its JSON) at level Request or above loses its
 *   requestObject and responseObject and gains the annotation `audit.k8s.io/truncated: "true"`;
 *   one still too large is lost ("event is too large even after truncating") and counted as
 *   plugin `truncate`.
 * - The events of one call are handed on in batches of at most maxBatchSize bytes (an event
 *   alone may fill a batch).
 */
import { bothTook, type AuditErrorReporter, type AuditEventBackend, type AuditEventJson, type AuditOutcome } from './audit-backend';

export interface TruncateConfig {
  readonly maxEventSize: number;
  readonly maxBatchSize: number;
}

/** v1.25's defaults (NewAuditTruncateOptions): 100 KB events, 10 MB batches. */
export const DEFAULT_TRUNCATE: TruncateConfig = { maxEventSize: 100 * 1024, maxBatchSize: 10 * 1024 * 1024 };

export const TRUNCATE_PLUGIN = 'truncate';
const TRUNCATED_ANNOTATION = 'audit.k8s.io/truncated';

function sizeOf(event: AuditEventJson): number {
  return Buffer.byteLength(JSON.stringify(event), 'utf8');
}

function carriesObjects(event: AuditEventJson): boolean {
  return event.level === 'Request' || event.level === 'RequestResponse';
}

function truncated(event: AuditEventJson): AuditEventJson {
  const { requestObject: _request, responseObject: _response, ...rest } = event;
  const annotations = { ...((event.annotations as Record<string, string> | undefined) ?? {}), [TRUNCATED_ANNOTATION]: 'true' };
  return { ...rest, annotations };
}

export class TruncatingBackend implements AuditEventBackend {
  readonly name: string;

  constructor(
    private readonly delegate: AuditEventBackend,
    private readonly config: TruncateConfig,
    private readonly reportError: AuditErrorReporter,
  ) {
    this.name = `truncate<${delegate.name}>`;
  }

  processEvents(events: readonly AuditEventJson[]): AuditOutcome {
    let outcome: AuditOutcome = true;
    let batch: AuditEventJson[] = [];
    let batchBytes = 0;
    let lost = 0;
    for (let event of events) {
      let size = sizeOf(event);
      if (size > this.config.maxEventSize && carriesObjects(event)) {
        event = truncated(event);
        size = sizeOf(event);
      }
      if (size > this.config.maxEventSize) {
        lost++;
        continue;
      }
      if (batch.length > 0 && batchBytes + size > this.config.maxBatchSize) {
        outcome = bothTook(outcome, this.delegate.processEvents(batch));
        batch = [];
        batchBytes = 0;
      }
      batch.push(event);
      batchBytes += size;
    }
    if (batch.length > 0) outcome = bothTook(outcome, this.delegate.processEvents(batch));
    if (lost > 0) this.reportError(TRUNCATE_PLUGIN, lost, 'event is too large even after truncating');
    return outcome;
  }

  shutdown(): Promise<void> {
    return this.delegate.shutdown();
  }
}
