/**
 * The audit hook's backend (src/http/filters/audit.ts): the policy decides each request's level
 * and omitted stages; each stage's record becomes one audit.k8s.io/v1 Event (audit-event.ts),
 * counted in apiserver_audit_event_total, and goes to the backends (audit-backend.ts: the log
 * file, the webhook, each in its mode).
 *
 * The answer for a RequestReceived event is the request's fate: false (a blocking-strict backend
 * failed) makes the hook answer 500 "failed to store audit event", counted in
 * apiserver_audit_requests_rejected_total. Answers for later stages are only waited on by no one.
 *
 * Without a policy nothing is recorded, as kube-apiserver records nothing without
 * --audit-policy-file.
 */
import type { AuditBackend, AuditPolicyDecision, AuditRecord, AuditRequestAttributes } from './audit-contract';
import type { AuditEventBackend, AuditOutcome } from './audit-backend';
import { auditEventOf, type ProtobufBodyDecoder } from './audit-event';
import { evaluateAuditPolicy, type AuditPolicy } from './audit-policy';

export interface AuditSinkOptions {
  readonly policy: AuditPolicy;
  readonly backend: AuditEventBackend;
  /** Decodes Protobuf request bodies for requestObject. */
  readonly protobuf?: ProtobufBodyDecoder;
  /** Told of each event made (apiserver_audit_event_total). */
  readonly onEvent?: () => void;
  /** Told of each request refused because its RequestReceived event was not stored (apiserver_audit_requests_rejected_total). */
  readonly onRejected?: () => void;
  readonly log?: (line: string) => void;
}

export class AuditSink implements AuditBackend {
  constructor(private readonly options: AuditSinkOptions) {}

  decide(request: AuditRequestAttributes): AuditPolicyDecision {
    return evaluateAuditPolicy(this.options.policy, request);
  }

  record(record: AuditRecord): AuditOutcome {
    let event: Record<string, unknown>;
    try {
      event = auditEventOf(record, this.options.protobuf);
    } catch (err) {
      // A bug, not the request's fault: the event is lost, the request goes on.
      this.options.log?.(`audit: cannot encode the ${record.stage} event of ${record.auditId}: ${(err as Error).message}`);
      return true;
    }
    this.options.onEvent?.();
    const outcome = this.options.backend.processEvents([event]);
    if (record.stage !== 'RequestReceived' || this.options.onRejected === undefined) return outcome;
    const onRejected = this.options.onRejected;
    if (typeof outcome === 'boolean') {
      if (!outcome) onRejected();
      return outcome;
    }
    return outcome.then((took) => {
      if (!took) onRejected();
      return took;
    });
  }

  /** Sends what is buffered, waits for what is in flight, closes the log file. */
  shutdown(): Promise<void> {
    return this.options.backend.shutdown();
  }
}
