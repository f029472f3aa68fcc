import { expect } from 'chai';
import { AUDIT_FLAGS, auditFromFlags } from '../../../../src/cli/audit-flags';
import { parseFlags } from '../../../../src/cli/flags';

const read = (...args: string[]) => auditFromFlags(parseFlags(args, AUDIT_FLAGS));
const refusal = (...args: string[]) => {
  try {
    read(...args);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`${args.join(' ')} was accepted`);
};

describe('cli: the audit flags as v1.25 has them (--audit-log-*, --audit-webhook-*)', () => {
  it('audits nothing without a policy or a backend', () => {
    expect(read()).to.equal(undefined);
  });

  it('defaults the webhook to batch mode with v1.25\'s batch, throttle and backoff values', () => {
    expect(read('--audit-policy-file', 'p.yaml', '--audit-webhook-config-file', 'hook.kubeconfig')).to.deep.equal({
      policyFile: 'p.yaml',
      webhook: {
        configFile: 'hook.kubeconfig',
        initialBackoffMs: 10_000,
        mode: 'batch',
        batch: { bufferSize: 10_000, maxBatchSize: 400, maxBatchWaitMs: 30_000, throttle: { qps: 10, burst: 15 }, asyncDelegate: true },
      },
    });
  });

  it('defaults the log to blocking, one event a batch, no throttle; takes every batch and truncate option', () => {
    expect(read('--audit-policy-file', 'p.yaml', '--audit-log-path', 'a.log')?.log).to.deep.include({ mode: 'blocking', batch: { bufferSize: 10_000, maxBatchSize: 1, maxBatchWaitMs: 0, asyncDelegate: false } });
    const log = read('--audit-policy-file', 'p.yaml', '--audit-log-path', 'a.log', '--audit-log-mode', 'batch', '--audit-log-batch-buffer-size', '50', '--audit-log-batch-max-size', '5', '--audit-log-batch-max-wait', '2s',
      '--audit-log-batch-throttle-enable', '--audit-log-batch-throttle-qps', '2.5', '--audit-log-batch-throttle-burst', '3', '--audit-log-truncate-enabled', '--audit-log-truncate-max-event-size', '2048', '--audit-log-truncate-max-batch-size', '4096')?.log;
    expect(log).to.deep.include({ mode: 'batch', batch: { bufferSize: 50, maxBatchSize: 5, maxBatchWaitMs: 2000, throttle: { qps: 2.5, burst: 3 }, asyncDelegate: false }, truncate: { maxEventSize: 2048, maxBatchSize: 4096 } });
  });

  it('takes the webhook\'s blocking modes, initial backoff and truncation', () => {
    const webhook = read('--audit-policy-file', 'p.yaml', '--audit-webhook-config-file', 'k', '--audit-webhook-mode', 'blocking-strict', '--audit-webhook-initial-backoff', '250ms', '--audit-webhook-truncate-enabled')?.webhook;
    expect(webhook).to.deep.include({ mode: 'blocking-strict', initialBackoffMs: 250, truncate: { maxEventSize: 102_400, maxBatchSize: 10_485_760 } });
  });

  it('refuses what v1.25 refuses, in its words', () => {
    expect(refusal('--audit-webhook-config-file', 'k', '--audit-webhook-mode', 'async')).to.equal('invalid audit webhook mode async, allowed modes are "batch,blocking,blocking-strict"');
    expect(refusal('--audit-webhook-config-file', 'k', '--audit-webhook-batch-buffer-size', '0')).to.equal('invalid audit batch webhook buffer size 0, must be a positive number');
    expect(refusal('--audit-webhook-config-file', 'k', '--audit-webhook-batch-max-size', '-1')).to.equal('invalid audit batch webhook max batch size -1, must be a positive number');
    expect(refusal('--audit-webhook-config-file', 'k', '--audit-webhook-batch-throttle-qps', '0')).to.equal('invalid audit batch webhook throttle QPS 0, must be a positive number');
    expect(refusal('--audit-log-path', 'a', '--audit-log-mode', 'batch', '--audit-log-batch-throttle-enable', '--audit-log-batch-throttle-qps', '1')).to.equal('invalid audit batch log throttle burst 0, must be a positive number');
    expect(refusal('--audit-log-path', 'a', '--audit-log-truncate-max-event-size', '0')).to.equal('invalid audit truncate log max event size 0, must be a positive number');
    expect(refusal('--audit-webhook-config-file', 'k', '--audit-webhook-truncate-max-batch-size', '10')).to.equal('invalid audit truncate webhook max batch size 10, must be greater than max event size (102400)');
    expect(refusal('--audit-webhook-config-file', 'k', '--audit-webhook-version', 'audit.k8s.io/v2')).to.equal('--audit-webhook-version: invalid group version, allowed versions are ["audit.k8s.io/v1"]');
  });

  it('checks a backend\'s batch options only in batch mode, as v1.25 does', () => {
    expect(read('--audit-log-path', 'a', '--audit-log-batch-buffer-size', '0')?.log?.mode).to.equal('blocking');
  });
});
