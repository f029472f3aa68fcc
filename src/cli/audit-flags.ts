/** kube-apiserver's audit log flags (apiserver pkg/server/options/audit.go, v1.25). */
import type { AuditLogOptions } from '../server/audit-parts';
import { FlagError, nonNegativeInteger, type FlagSpec, type FlagValues } from './flags';

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
];

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
    maxAgeDays: nonNegativeInteger(flags, 'audit-log-maxage'),
    maxBackups: nonNegativeInteger(flags, 'audit-log-maxbackup'),
    maxSizeMb: nonNegativeInteger(flags, 'audit-log-maxsize'),
    compress: flags['audit-log-compress'] as boolean,
  };
}
