/**
 * The log backend of the audit hook (src/http/filters/audit.ts): the policy decides each
 * request's level and omitted stages; each stage event becomes one JSON line in the audit log
 * file (audit-log-file.ts), as `--audit-log-format=json` writes them in v1.25.
 *
 * Without a policy nothing is recorded, as kube-apiserver records nothing without
 * --audit-policy-file. Events that reach the log are counted in apiserver_audit_event_total.
 */
import type { AuditBackend, AuditPolicyDecision, AuditRecord, AuditRequestAttributes } from '../http/filters/audit';
import { auditEventOf, type ProtobufBodyDecoder } from './audit-event';
import type { AuditLogFile } from './audit-log-file';
import { evaluateAuditPolicy, type AuditPolicy } from './audit-policy';

export interface AuditLogBackendOptions {
  readonly policy: AuditPolicy;
  readonly file: Pick<AuditLogFile, 'write' | 'close'>;
  /** Decodes Protobuf request bodies for requestObject. */
  readonly protobuf?: ProtobufBodyDecoder;
  /** Told of each event written (apiserver_audit_event_total). */
  readonly onEvent?: () => void;
  readonly log?: (line: string) => void;
}

export class AuditLogBackend implements AuditBackend {
  constructor(private readonly options: AuditLogBackendOptions) {}

  decide(request: AuditRequestAttributes): AuditPolicyDecision {
    return evaluateAuditPolicy(this.options.policy, request);
  }

  record(record: AuditRecord): void {
    let line: string;
    try {
      line = JSON.stringify(auditEventOf(record, this.options.protobuf));
    } catch (err) {
      // A bug, not the request's fault: the event is lost, the request goes on.
      this.options.log?.(`audit log: cannot encode the ${record.stage} event of ${record.auditId}: ${(err as Error).message}`);
      return;
    }
    this.options.file.write(line);
    this.options.onEvent?.();
  }

  close(): void {
    this.options.file.close();
  }
}
