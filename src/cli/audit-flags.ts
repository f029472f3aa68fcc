/**
 * kube-apiserver's audit flags (apiserver pkg/server/options/audit.go, v1.25): the policy, the
 * log backend (--audit-log-*), the webhook backend (--audit-webhook-*), and for each its mode,
 * batching and truncation, with v1.25's defaults and validation messages. A backend's batch
 * options are checked only in batch mode, as kube does; its truncate options always.
 */
import { AUDIT_MODES, DEFAULT_INITIAL_BACKOFF_MS, DEFAULT_LOG_BATCH, DEFAULT_TRUNCATE, DEFAULT_WEBHOOK_BATCH, type AuditDeliveryOptions, type AuditMode, type AuditOptions, type BatchConfig } from '../audit';
import { FlagError, nonNegativeInteger, type FlagSpec, type FlagValues } from './flags';

const AUDIT_VERSION = 'audit.k8s.io/v1';

function deliveryFlags(plugin: 'log' | 'webhook', mode: AuditMode, batch: BatchConfig): FlagSpec[] {
  const p = `audit-${plugin}`;
  return [
    { name: `${p}-mode`, kind: 'string', default: mode, help: `Strategy for sending audit events. Blocking indicates sending events should block server responses. Batch causes the backend to buffer and write events asynchronously. Known modes are ${AUDIT_MODES.join(',')}.` },
    { name: `${p}-batch-buffer-size`, kind: 'number', default: batch.bufferSize, help: 'The size of the buffer to store events before batching and writing. Only used in batch mode.' },
    { name: `${p}-batch-max-size`, kind: 'number', default: batch.maxBatchSize, help: 'The maximum size of a batch. Only used in batch mode.' },
    { name: `${p}-batch-max-wait`, kind: 'duration', default: batch.maxBatchWaitMs, help: 'The amount of time to wait before force writing the batch that hadn\'t reached the max size. Only used in batch mode.' },
    { name: `${p}-batch-throttle-enable`, kind: 'boolean', default: batch.throttle !== undefined, help: 'Whether batching throttling is enabled. Only used in batch mode.' },
    { name: `${p}-batch-throttle-qps`, kind: 'number', default: batch.throttle?.qps ?? 0, help: 'Maximum average number of batches per second. Only used in batch mode.' },
    { name: `${p}-batch-throttle-burst`, kind: 'number', default: batch.throttle?.burst ?? 0, help: 'Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.' },
    { name: `${p}-truncate-enabled`, kind: 'boolean', default: false, help: 'Whether event and batch truncating is enabled.' },
    { name: `${p}-truncate-max-batch-size`, kind: 'number', default: DEFAULT_TRUNCATE.maxBatchSize, help: 'Maximum size of the batch sent to the underlying backend. Actual serialized size can be several hundreds of bytes greater. If a batch exceeds this limit, it is split into several batches of smaller size.' },
    { name: `${p}-truncate-max-event-size`, kind: 'number', default: DEFAULT_TRUNCATE.maxEventSize, help: 'Maximum size of the audit event sent to the underlying backend. If the size of an event is greater than this number, first request and response are removed, and if this doesn\'t reduce the size enough, event is discarded.' },
    { name: `${p}-version`, kind: 'string', default: AUDIT_VERSION, help: `API group and version used for serializing audit events written to ${plugin}.` },
  ];
}

export const AUDIT_FLAGS: FlagSpec[] = [
  { name: 'audit-policy-file', kind: 'string', default: '', help: 'Path to the file that defines the audit policy configuration (nothing is audited without one).' },
  { name: 'audit-log-path', kind: 'string', default: '', help: 'If set, all requests coming to the apiserver will be logged to this file, one JSON event per line. \'-\' means standard out.' },
  { name: 'audit-log-maxage', kind: 'number', default: 0, help: 'The maximum number of days to retain old audit log files based on the timestamp encoded in their filename (0: no limit).' },
  { name: 'audit-log-maxbackup', kind: 'number', default: 0, help: 'The maximum number of old audit log files to retain (0: all).' },
  { name: 'audit-log-maxsize', kind: 'number', default: 0, help: 'The maximum size in megabytes of the audit log file before it gets rotated (0: 100).' },
  { name: 'audit-log-compress', kind: 'boolean', default: false, help: 'If set, the rotated log files will be compressed using gzip.' },
  { name: 'audit-log-format', kind: 'string', default: 'json', help: 'Format of saved audits: json (one audit.k8s.io Event per line).' },
  ...deliveryFlags('log', 'blocking', DEFAULT_LOG_BATCH),
  { name: 'audit-webhook-config-file', kind: 'string', default: '', help: 'Path to a kubeconfig formatted file that defines the audit webhook configuration.' },
  { name: 'audit-webhook-initial-backoff', kind: 'duration', default: DEFAULT_INITIAL_BACKOFF_MS, help: 'The amount of time to wait before retrying the first failed request.' },
  ...deliveryFlags('webhook', 'batch', DEFAULT_WEBHOOK_BATCH),
];

function positive(value: number): boolean {
  return Number.isFinite(value) && value > 0;
}

/** v1.25's validateBackendBatchOptions, AuditTruncateOptions.Validate and validateGroupVersionString, then the options. */
function deliveryFromFlags(flags: FlagValues, plugin: 'log' | 'webhook'): AuditDeliveryOptions {
  const p = `audit-${plugin}`;
  const mode = flags[`${p}-mode`] as string;
  if (!(AUDIT_MODES as readonly string[]).includes(mode)) throw new FlagError(`invalid audit ${plugin} mode ${mode}, allowed modes are "${AUDIT_MODES.join(',')}"`);
  const bufferSize = flags[`${p}-batch-buffer-size`] as number;
  const maxBatchSize = flags[`${p}-batch-max-size`] as number;
  const throttleEnable = flags[`${p}-batch-throttle-enable`] as boolean;
  const qps = flags[`${p}-batch-throttle-qps`] as number;
  const burst = flags[`${p}-batch-throttle-burst`] as number;
  if (mode === 'batch') {
    if (!positive(bufferSize)) throw new FlagError(`invalid audit batch ${plugin} buffer size ${bufferSize}, must be a positive number`);
    if (!positive(maxBatchSize)) throw new FlagError(`invalid audit batch ${plugin} max batch size ${maxBatchSize}, must be a positive number`);
    if (throttleEnable && !positive(qps)) throw new FlagError(`invalid audit batch ${plugin} throttle QPS ${qps}, must be a positive number`);
    if (throttleEnable && !positive(burst)) throw new FlagError(`invalid audit batch ${plugin} throttle burst ${burst}, must be a positive number`);
  }
  const maxEventSize = flags[`${p}-truncate-max-event-size`] as number;
  const truncateBatchSize = flags[`${p}-truncate-max-batch-size`] as number;
  if (!positive(maxEventSize)) throw new FlagError(`invalid audit truncate ${plugin} max event size ${maxEventSize}, must be a positive number`);
  if (truncateBatchSize < maxEventSize) throw new FlagError(`invalid audit truncate ${plugin} max batch size ${truncateBatchSize}, must be greater than max event size (${maxEventSize})`);
  if (flags[`${p}-version`] !== AUDIT_VERSION) throw new FlagError(`--${p}-version: invalid group version, allowed versions are ["${AUDIT_VERSION}"]`);
  return {
    mode: mode as AuditMode,
    batch: {
      bufferSize: Math.floor(bufferSize),
      maxBatchSize: Math.floor(maxBatchSize),
      maxBatchWaitMs: flags[`${p}-batch-max-wait`] as number,
      ...(throttleEnable ? { throttle: { qps, burst: Math.floor(burst) } } : {}),
      asyncDelegate: plugin === 'webhook',
    },
    ...(flags[`${p}-truncate-enabled`] === true ? { truncate: { maxEventSize, maxBatchSize: truncateBatchSize } } : {}),
  };
}

export function auditFromFlags(flags: FlagValues): AuditOptions | undefined {
  const policyFile = flags['audit-policy-file'] as string;
  const logPath = flags['audit-log-path'] as string;
  const webhookConfig = flags['audit-webhook-config-file'] as string;
  // Like kube, a backend's options are validated only when the backend is enabled.
  let log: AuditOptions['log'];
  if (logPath !== '') {
    if (flags['audit-log-format'] !== 'json') throw new FlagError(`invalid audit log format ${String(flags['audit-log-format'])}, allowed formats are "json"`);
    log = {
      path: logPath,
      maxAgeDays: nonNegativeInteger(flags, 'audit-log-maxage'),
      maxBackups: nonNegativeInteger(flags, 'audit-log-maxbackup'),
      maxSizeMb: nonNegativeInteger(flags, 'audit-log-maxsize'),
      compress: flags['audit-log-compress'] as boolean,
      ...deliveryFromFlags(flags, 'log'),
    };
  }
  let webhook: AuditOptions['webhook'];
  if (webhookConfig !== '') webhook = { configFile: webhookConfig, initialBackoffMs: flags['audit-webhook-initial-backoff'] as number, ...deliveryFromFlags(flags, 'webhook') };
  if (policyFile === '' && log === undefined && webhook === undefined) return undefined;
  return { policyFile, ...(log === undefined ? {} : { log }), ...(webhook === undefined ? {} : { webhook }) };
}
