/** Auditing of a replica, from --audit-policy-file, --audit-log-* and --audit-webhook-* (src/audit). */
import { Counter } from 'prom-client';
import { AuditLogFile, AuditSink, LogFileBackend, UnionBackend, WebhookBackend, loadAuditPolicy, withDelivery, type AuditErrorReporter, type AuditEventBackend, type AuditOptions } from '../audit';
import { loadWebhookKubeconfig } from '../authn';
import type { BodyCodec } from '../endpoints';
import type { ApiMetrics } from '../observability/api-metrics';

export type { AuditOptions } from '../audit';

/** The audit sink, or undefined without a policy file and a backend (nothing is audited then). */
export async function buildAudit(options: AuditOptions | undefined, deps: { codec: BodyCodec; metrics: ApiMetrics; log: (line: string) => void }): Promise<AuditSink | undefined> {
  if (options === undefined) return undefined;
  if (options.policyFile === '') {
    if (options.log !== undefined) deps.log('audit: no audit policy file provided, no events will be recorded for log backend');
    if (options.webhook !== undefined) deps.log('audit: no audit policy file provided, no events will be recorded for webhook backend');
    return undefined;
  }
  if (options.log === undefined && options.webhook === undefined) return undefined;
  const policy = loadAuditPolicy(options.policyFile);
  // kube-apiserver v1.25's audit metrics (apiserver pkg/audit/metrics.go).
  const errorsByPlugin = new Counter({ name: 'apiserver_audit_error_total', help: 'Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.', labelNames: ['plugin'], registers: [deps.metrics.registry] });
  const reportError: AuditErrorReporter = (plugin, count, reason) => {
    errorsByPlugin.inc({ plugin }, count);
    deps.log(`audit: Error in audit plugin '${plugin}' affecting ${count} audit events: ${reason}`);
  };
  const backends: AuditEventBackend[] = [];
  if (options.log !== undefined) {
    const settings = options.log;
    const file = new AuditLogFile({ path: settings.path, maxAgeDays: settings.maxAgeDays, maxBackups: settings.maxBackups, maxSizeMb: settings.maxSizeMb, compress: settings.compress, log: deps.log });
    file.open();
    backends.push(withDelivery(new LogFileBackend(file, reportError), settings, reportError));
  }
  if (options.webhook !== undefined) {
    const settings = options.webhook;
    const endpoint = await loadWebhookKubeconfig(settings.configFile);
    backends.push(withDelivery(new WebhookBackend({ endpoint, initialBackoffMs: settings.initialBackoffMs, reportError }), settings, reportError));
  }
  return new AuditSink({
    policy,
    backend: backends.length === 1 ? backends[0] : new UnionBackend(backends),
    protobuf: (bytes) => deps.codec.decode('protobuf', bytes),
    onEvent: deps.metrics.counter('apiserver_audit_event_total', 'Counter of audit events generated and sent to the audit backend.'),
    onRejected: deps.metrics.counter('apiserver_audit_requests_rejected_total', 'Counter of apiserver requests rejected due to an error in audit logging backend.'),
    log: deps.log,
  });
}
