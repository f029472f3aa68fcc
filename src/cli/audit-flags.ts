/**
 * kube-apiserver's audit log flags (apiserver pkg/server/options/audit.go, v1.25) and the flags
 * of the webhook admission plugins: --admission-control-config-file (its webhook entries),
 * which of the three webhook plugins run, and Carina's circuit breaker per webhook.
 *
 * Until the admission framework brings --enable-admission-plugins and
 * --disable-admission-plugins for every plugin, they are read here for the three webhook
 * plugins only (other names are left to the framework and refused here): the webhook plugins
 * are on by default, ImagePolicyWebhook off, as in v1.25.
 */
import type { AuditLogOptions, WebhookAdmissionOptions } from '../server/admission-parts';
import { FlagError, type FlagSpec, type FlagValues } from './flags';

export const AUDIT_FLAGS: FlagSpec[] = [
  { name: 'audit-policy-file', kind: 'string', default: '', help: 'audit.k8s.io/v1 Policy deciding what is audited and at which level (nothing is audited without one).' },
  { name: 'audit-log-path', kind: 'string', default: '', help: 'File the audit events are appended to, one JSON event per line ("-": standard output).' },
  { name: 'audit-log-maxage', kind: 'number', default: 0, help: 'Days to keep rotated audit log files (0: no limit).' },
  { name: 'audit-log-maxbackup', kind: 'number', default: 0, help: 'Rotated audit log files to keep (0: all).' },
  { name: 'audit-log-maxsize', kind: 'number', default: 0, help: 'Megabytes an audit log file may reach before it is rotated (0: 100).' },
  { name: 'audit-log-compress', kind: 'boolean', default: false, help: 'Gzip rotated audit log files.' },
  { name: 'audit-log-format', kind: 'string', default: 'json', help: 'Format of the audit log: json (one audit.k8s.io Event per line).' },
  { name: 'audit-log-mode', kind: 'string', default: 'blocking', help: 'blocking or blocking-strict: each event is written before the request goes on.' },
  { name: 'audit-log-version', kind: 'string', default: 'audit.k8s.io/v1', help: 'API version of the audit events: audit.k8s.io/v1.' },
  { name: 'admission-control-config-file', kind: 'string', default: '', help: 'AdmissionConfiguration (apiserver.config.k8s.io/v1) with the plugins\' configuration: the webhooks\' kubeconfig (WebhookAdmissionConfiguration), ImagePolicyWebhook\'s imagePolicy.' },
  { name: 'enable-admission-plugins', kind: 'list', default: [], help: 'Admission plugins to run besides the default ones (here: ImagePolicyWebhook).' },
  { name: 'disable-admission-plugins', kind: 'list', default: [], help: 'Default admission plugins not to run (here: MutatingAdmissionWebhook, ValidatingAdmissionWebhook).' },
  { name: 'admission-webhook-circuit-breaker-failures', kind: 'number', default: 5, help: 'Failed calls of one admission webhook within the window that open its circuit breaker (0: never).' },
  { name: 'admission-webhook-circuit-breaker-window', kind: 'duration', default: 30_000, help: 'Window in which an admission webhook\'s failures are counted.' },
  { name: 'admission-webhook-circuit-breaker-cooldown', kind: 'duration', default: 30_000, help: 'How long an open circuit skips (failurePolicy Ignore) or refuses at once (Fail) before one trial call.' },
];

const WEBHOOK_PLUGINS = ['ImagePolicyWebhook', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook'];

function nonNegative(flags: FlagValues, name: string): number {
  const value = flags[name] as number;
  if (!Number.isInteger(value) || value < 0) throw new FlagError(`--${name} must be a non-negative integer, not ${value}`);
  return value;
}

export function auditFromFlags(flags: FlagValues): AuditLogOptions | undefined {
  if (flags['audit-log-format'] !== 'json') throw new FlagError(`--audit-log-format: invalid value "${String(flags['audit-log-format'])}": only json is supported`);
  if (flags['audit-log-version'] !== 'audit.k8s.io/v1') throw new FlagError(`--audit-log-version: invalid value "${String(flags['audit-log-version'])}": only audit.k8s.io/v1 is supported`);
  const mode = flags['audit-log-mode'];
  if (mode !== 'blocking' && mode !== 'blocking-strict') throw new FlagError(`--audit-log-mode: invalid value "${String(mode)}": blocking or blocking-strict`);
  const policyFile = flags['audit-policy-file'] as string;
  const logPath = flags['audit-log-path'] as string;
  if (policyFile === '' && logPath === '') return undefined;
  return {
    policyFile,
    logPath,
    maxAgeDays: nonNegative(flags, 'audit-log-maxage'),
    maxBackups: nonNegative(flags, 'audit-log-maxbackup'),
    maxSizeMb: nonNegative(flags, 'audit-log-maxsize'),
    compress: flags['audit-log-compress'] as boolean,
  };
}

export function webhookAdmissionFromFlags(flags: FlagValues): WebhookAdmissionOptions {
  const enabled = flags['enable-admission-plugins'] as string[];
  const disabled = flags['disable-admission-plugins'] as string[];
  for (const [flag, names] of [['enable-admission-plugins', enabled], ['disable-admission-plugins', disabled]] as const) {
    const unknown = names.filter((n) => !WEBHOOK_PLUGINS.includes(n));
    if (unknown.length > 0) throw new FlagError(`--${flag}: unknown admission plugins: ${unknown.join(', ')} (this build knows ${WEBHOOK_PLUGINS.join(', ')})`);
  }
  const both = enabled.filter((n) => disabled.includes(n));
  if (both.length > 0) throw new FlagError(`${both.join(', ')} in both --enable-admission-plugins and --disable-admission-plugins`);
  return {
    admissionConfigFile: flags['admission-control-config-file'] as string,
    mutating: !disabled.includes('MutatingAdmissionWebhook'),
    validating: !disabled.includes('ValidatingAdmissionWebhook'),
    imagePolicy: enabled.includes('ImagePolicyWebhook'),
    circuitBreaker: {
      failureThreshold: nonNegative(flags, 'admission-webhook-circuit-breaker-failures'),
      windowMs: flags['admission-webhook-circuit-breaker-window'] as number,
      cooldownMs: flags['admission-webhook-circuit-breaker-cooldown'] as number,
    },
  };
}
