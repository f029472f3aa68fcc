/**
 * Create and get of a ~250-byte ConfigMap through one API address (a replica, or the load
 * balancer in front of several), over a few HTTP/2 connections so that a load balancer spreads
 * them: sequential p50/p99 on one connection, then `inflight` concurrent calls over all of them.
 */
import type { ApiClient } from '../support/api-client';
import { closedLoop, median, percentile, timed } from '../support/latency';

export interface CreateGetFigures {
  createP50: number;
  createP99: number;
  createPerSecond: number;
  createLoadedP99: number;
  getP50: number;
  getP99: number;
  getPerSecond: number;
  getLoadedP99: number;
}

function configMap(namespace: string, name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { app: 'bench' } }, data: { payload: 'x'.repeat(120) } });
}

export async function measureCreateGet(clients: ApiClient[], namespace: string, options: { sequential: number; concurrentOps: number; inflight: number }): Promise<CreateGetFigures> {
  const [first] = clients;
  await first.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }) });
  const base = `/api/v1/namespaces/${namespace}/configmaps`;
  for (let i = 0; i < 50; i++) await clients[i % clients.length].request('POST', base, { body: configMap(namespace, `warm-${i}`) });
  const creates: number[] = [];
  for (let i = 0; i < options.sequential; i++) creates.push(await timed(() => first.request('POST', base, { body: configMap(namespace, `seq-${i}`) })));
  const loadedCreates = await closedLoop(options.concurrentOps, options.inflight, (i, w) => clients[w % clients.length].request('POST', base, { body: configMap(namespace, `par-${i}`) }));
  const gets: number[] = [];
  for (let i = 0; i < options.sequential; i++) gets.push(await timed(() => first.request('GET', `${base}/seq-${i}`)));
  const loadedGets = await closedLoop(options.concurrentOps, options.inflight, (i, w) => clients[w % clients.length].request('GET', `${base}/par-${i}`));
  return {
    createP50: median(creates),
    createP99: percentile(creates, 0.99),
    createPerSecond: loadedCreates.perSecond,
    createLoadedP99: percentile(loadedCreates.latencies, 0.99),
    getP50: median(gets),
    getP99: percentile(gets, 0.99),
    getPerSecond: loadedGets.perSecond,
    getLoadedP99: percentile(loadedGets.latencies, 0.99),
  };
}
