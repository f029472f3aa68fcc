/**
 * Pod creation through the admission webhooks (issue 15's benchmark): POST of a small Pod,
 * INFLIGHT at a time, on a fresh replica for each scenario, side by side:
 *
 *   no webhooks        the webhook admission plugins disabled
 *                      (--disable-admission-plugins=MutatingAdmissionWebhook,ValidatingAdmissionWebhook)
 *   default plugins    the default admission plugins, no webhook configured
 *   2 webhooks         one mutating and one validating webhook matching pods/CREATE, served by
 *                      a local HTTPS process answering `allowed: true`
 *
 * Each scenario warms up (WARMUP creates), then measures OPS creates: p50, p99 and creates/s.
 * The goal the issue sets: with both webhooks, throughput >= 0.5x and p99 <= 3x of no webhooks.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ApiClient } from '../support/api-client';
import { CarinaServer, type CarinaServerPorts } from '../support/carina-server';
import { closedLoop, median, percentile } from '../support/latency';

export interface WebhookScenarioFigures {
  readonly scenario: string;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly perSecond: number;
  /** Calls the webhook process answered during the scenario (0 without webhooks). */
  readonly webhookCalls: number;
}

function pod(namespace: string, name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels: { app: 'bench' } }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0' }] } });
}

async function startWebhookProcess(): Promise<{ child: ChildProcess; port: number; caPem: string }> {
  const child = fork(join(__dirname, 'webhook-bench-server.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port, caPem } = await new Promise<{ port: number; caPem: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { port: number; caPem: string }));
    child.once('exit', (code) => reject(new Error(`the benchmark webhook exited (${code})`)));
  });
  return { child, port, caPem };
}

async function webhookCalls(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve((m as { answered: number }).answered));
    child.send('count');
  });
}

function configurations(port: number, caPem: string): Array<{ path: string; body: string }> {
  const webhook = (name: string, path: string) => ({
    name,
    clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle: Buffer.from(caPem).toString('base64') },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    failurePolicy: 'Fail',
    timeoutSeconds: 10,
  });
  return [
    { path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', body: JSON.stringify({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'bench-mutating' }, webhooks: [webhook('mutate.bench.carina.test', '/mutate')] }) },
    { path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', body: JSON.stringify({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'bench-validating' }, webhooks: [webhook('validate.bench.carina.test', '/validate')] }) },
  ];
}

async function scenario(name: string, ports: CarinaServerPorts, extraArgs: string[], options: { ops: number; warmup: number; inflight: number; webhooks?: { child: ChildProcess; port: number; caPem: string } }): Promise<WebhookScenarioFigures> {
  const server = await CarinaServer.start(ports, ['--auto-compaction-interval', '0', ...extraArgs]);
  const api = new ApiClient(server.url, server.credentials());
  try {
    const ns = 'bench-webhooks';
    await api.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }) });
    const hooks = options.webhooks;
    if (hooks !== undefined) {
      for (const { path, body } of configurations(hooks.port, hooks.caPem)) await api.request('POST', path, { body });
      // The configurations reach the admission chain through the watch cache: wait until a create is seen by both.
      const before = await webhookCalls(hooks.child);
      for (let i = 0; (await webhookCalls(hooks.child)) < before + 2; i++) {
        await api.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pod(ns, `probe-${i}`) });
        if (i > 200) throw new Error('the benchmark webhooks were never called');
      }
    }
    await closedLoop(options.warmup, options.inflight, (i) => api.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pod(ns, `warm-${i}`) }));
    const callsBefore = hooks === undefined ? 0 : await webhookCalls(hooks.child);
    const result = await closedLoop(options.ops, options.inflight, (i) => api.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pod(ns, `pod-${i}`) }));
    const calls = hooks === undefined ? 0 : (await webhookCalls(hooks.child)) - callsBefore;
    return { scenario: name, p50Ms: median(result.latencies), p99Ms: percentile(result.latencies, 0.99), perSecond: result.perSecond, webhookCalls: calls };
  } finally {
    api.close();
    await server.stop();
  }
}

/** The three scenarios, one fresh replica each, in this order. */
export async function measureWebhookOverhead(ports: CarinaServerPorts, options: { ops: number; warmup: number; inflight: number }, log: (line: string) => void): Promise<WebhookScenarioFigures[]> {
  const webhooks = await startWebhookProcess();
  try {
    log('webhooks: no webhooks');
    const none = await scenario('no webhooks', ports, ['--disable-admission-plugins', 'MutatingAdmissionWebhook,ValidatingAdmissionWebhook'], options);
    log('webhooks: default plugins only');
    const defaults = await scenario('default plugins only', ports, [], options);
    log('webhooks: one mutating and one validating webhook');
    const both = await scenario('1 mutating + 1 validating webhook', ports, [], { ...options, webhooks });
    return [none, defaults, both];
  } finally {
    webhooks.child.send('stop');
  }
}

export function formatWebhookTable(rows: readonly WebhookScenarioFigures[], inflight: number): string {
  const base = rows[0];
  const lines = [
    `| pod creation, ${inflight} in flight | p50 | p99 | creates/s | throughput vs no webhooks | p99 vs no webhooks | webhook calls |`,
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    lines.push(`| ${row.scenario} | ${row.p50Ms.toFixed(2)} ms | ${row.p99Ms.toFixed(2)} ms | ${row.perSecond.toFixed(0)} | ${(row.perSecond / base.perSecond).toFixed(2)}x | ${(row.p99Ms / base.p99Ms).toFixed(2)}x | ${row.webhookCalls} |`);
  }
  return lines.join('\n');
}
