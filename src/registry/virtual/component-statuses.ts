/**
 * The deprecated `componentstatuses` (kube's componentstatus REST, v1.25): one ComponentStatus
 * per control-plane component, each with a single Healthy condition: True with the component's
 * answer as its message, or False with the failure as its error.
 *
 * What each entry reports in Carina, which runs no separate scheduler or controller-manager:
 * - `scheduler`: probed exactly as kube-apiserver probes it, https://127.0.0.1:10259/healthz
 *   without verifying the certificate. A kube-scheduler run beside this replica answers "ok";
 *   without one the entry is Unhealthy with the dial error, as v1.25 reports a scheduler it
 *   cannot reach (`Get "https://127.0.0.1:10259/healthz": dial tcp ...: connect: connection refused`).
 * - `controller-manager`: Carina's own controllers, healthy ("ok") while a replica holds their
 *   Lease; otherwise Unhealthy with the reason.
 * - `etcd-<i>`: one per store member, healthy with etcd's /health answer when the store answers
 *   a quorum read through this replica.
 * kube lists them in no fixed order; here the order is scheduler, controller-manager, etcd-<i>.
 */
import { request as httpsRequest } from 'node:https';
import type { JsonObject } from '../../apis/object';

/** What a component's health check found: Healthy True/False/Unknown, its answer, and the failure. */
export interface ComponentHealth {
  status: 'True' | 'False' | 'Unknown';
  message: string;
  error: string;
}

export interface ComponentHealthSources {
  /** The store's member count (one `etcd-<i>` each); may reject, and then one entry stands for the store. */
  storeMemberCount(): Promise<number>;
  /** Undefined when the store answers a quorum read, else what went wrong. */
  storeProblem(): Promise<string | undefined>;
  /** Undefined when a replica holds the controllers' Lease, else why none does. */
  controllerManagerProblem(): Promise<string | undefined>;
  /** The scheduler's health check; by default kube-apiserver's probe of 127.0.0.1:10259. */
  scheduler?: () => Promise<ComponentHealth>;
}

/** etcd's answer to GET /health, which kube-apiserver shows as the etcd entries' message. */
const ETCD_HEALTHY_ANSWER = '{"health":"true","reason":""}';
/** kube-scheduler's secure port and health path, as v1.25's apiserver probes them. */
export const SCHEDULER_HEALTH_URL = 'https://127.0.0.1:10259/healthz';
/** v1.25's probeTimeOut for component health checks. */
const PROBE_TIMEOUT_MS = 20_000;

const healthy = (message: string): ComponentHealth => ({ status: 'True', message, error: '' });
const unhealthy = (error: string): ComponentHealth => ({ status: 'False', message: '', error });

function componentStatus(name: string, health: ComponentHealth): JsonObject {
  const condition: JsonObject = { type: 'Healthy', status: health.status };
  if (health.message !== '') condition.message = health.message;
  if (health.error !== '') condition.error = health.error;
  return { kind: 'ComponentStatus', apiVersion: 'v1', metadata: { name, creationTimestamp: null }, conditions: [condition] };
}

/** The componentstatuses list, each component checked at once. */
export async function listComponentStatuses(sources: ComponentHealthSources): Promise<JsonObject[]> {
  const probeScheduler = sources.scheduler ?? (() => probeHealthEndpoint(SCHEDULER_HEALTH_URL));
  const [scheduler, controllerProblem, storeProblem, members] = await Promise.all([
    probeScheduler(),
    sources.controllerManagerProblem().catch((err: Error) => err.message),
    sources.storeProblem(),
    sources.storeMemberCount().catch(() => 1),
  ]);
  const items = [
    componentStatus('scheduler', scheduler),
    componentStatus('controller-manager', controllerProblem === undefined ? healthy('ok') : unhealthy(controllerProblem)),
  ];
  for (let i = 0; i < Math.max(members, 1); i++) {
    items.push(componentStatus(`etcd-${i}`, storeProblem === undefined ? healthy(ETCD_HEALTHY_ANSWER) : unhealthy(storeProblem)));
  }
  return items;
}

/** Go's net/http wording for the dial failures a probe of a local port meets. */
function goDialError(url: URL, err: NodeJS.ErrnoException): string {
  const address = `${url.hostname}:${url.port || '443'}`;
  switch (err.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${address}: connect: connection refused`;
    case 'EHOSTUNREACH':
      return `dial tcp ${address}: connect: no route to host`;
    case 'ECONNRESET':
      return `read tcp ${address}: read: connection reset by peer`;
    default:
      return err.message;
  }
}

/**
 * kube's HttpServer.DoServerCheck: GET the URL (TLS, certificate not verified, as v1.25 probes
 * the scheduler); a 2xx answer is healthy with its body as the message, a 3xx Unknown, any other
 * status unhealthy (`HTTP probe failed with statuscode: N`), and a failure to connect unhealthy
 * with Go's error text.
 */
export function probeHealthEndpoint(target: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<ComponentHealth> {
  const url = new URL(target);
  const failed = (why: string): ComponentHealth => unhealthy(`Get ${JSON.stringify(target)}: ${why}`);
  return new Promise((resolve) => {
    const req = httpsRequest(url, { method: 'GET', rejectUnauthorized: false, agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (err) => resolve(failed(goDialError(url, err))));
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        const body = Buffer.concat(chunks).toString('utf8');
        if (status >= 200 && status < 300) resolve(healthy(body));
        else if (status >= 300 && status < 400) resolve({ status: 'Unknown', message: body, error: '' });
        else resolve(unhealthy(`HTTP probe failed with statuscode: ${status}`));
      });
    });
    req.on('timeout', () => {
      req.destroy();
      resolve(failed('context deadline exceeded (Client.Timeout exceeded while awaiting headers)'));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(failed(goDialError(url, err))));
    req.end();
  });
}
