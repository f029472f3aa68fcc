/**
 * Where a server's CPU goes, for the benchmarks that look (bench/api/profile-fan-out.ts, the
 * proxy phase's PROFILE_DIR): `profiling` makes every Node process a start callback spawns
 * profile itself (bench/api/cpu-profile-preload.ts through NODE_OPTIONS; written at exit), and
 * `summarizeCpuProfile` prints one profile's busy time by area and by function.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The area of a frame, from its script URL and name. */
export function areaOf(url: string, name: string): string {
  if (name === '(garbage collector)') return 'garbage collection';
  if (name === '(idle)' || name === '(program)' || name === '(root)') return name;
  if (url.includes('/dist/src/storage/')) return 'src/storage (watch cache, object store)';
  if (url.includes('/dist/src/endpoints/')) return 'src/endpoints (handlers, watch streams, encoding)';
  if (url.includes('/dist/src/http/')) return 'src/http (listener, filters)';
  if (url.includes('/dist/src/registry/')) return 'src/registry';
  if (url.includes('/dist/src/proxy/')) return 'src/proxy (the proxy)';
  if (url.includes('/dist/src/admission/') || url.includes('/dist/src/authz/') || url.includes('/dist/src/authn/')) return 'src/admission, authn, authz';
  if (url.includes('/dist/src/')) return 'src (other)';
  if (url.includes('/dist/raft/etcd/')) return 'raft/etcd (gRPC server and client, replica)';
  if (url.includes('/dist/raft/')) return 'raft (Raft, store)';
  if (url.includes('node_modules')) return `node_modules/${url.split('node_modules/')[1]?.split('/')[0] ?? '?'}`;
  if (url.startsWith('node:') || url === '') return 'Node internals and native (TLS, HTTP/2, JSON, Buffer)';
  return 'other';
}

/** Busy time of one profile, by area and by function (self time). */
export function summarizeCpuProfile(file: string): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busyUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const { functionName, url, lineNumber } = byId.get(profile.samples[i])?.callFrame ?? { functionName: '?', url: '', lineNumber: 0 };
    const us = profile.timeDeltas[i] ?? 0;
    const area = areaOf(url, functionName);
    if (area === '(idle)' || area === '(program)') continue;
    busyUs += us;
    byArea.set(area, (byArea.get(area) ?? 0) + us);
    const key = `${functionName === '' ? '(anonymous)' : functionName} ${url.replace(/^.*\/dist\//, '').replace(/^.*node_modules\//, '')}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  }
  const top = (map: Map<string, number>, n: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([k, us]) => `  ${((us / busyUs) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
  return [`busy ${(busyUs / 1000).toFixed(0)} ms`, 'by area:', ...top(byArea, 12), 'by function (self time):', ...top(byFunction, 20)].join('\n');
}

/**
 * Runs `start` with an environment that makes every Node process it starts profile itself into
 * `dir`, then restores it: only the server's processes profile, not the load generator's.
 */
export async function profiling<T>(dir: string, start: () => Promise<T>): Promise<T> {
  const previous = process.env.NODE_OPTIONS;
  // --cpu-prof is refused in NODE_OPTIONS: a preloaded module profiles each process instead.
  process.env.NODE_OPTIONS = `${previous ?? ''} --require ${join(__dirname, '..', 'api', 'cpu-profile-preload.js')}`.trim();
  process.env.CARINA_CPU_PROF_DIR = dir;
  try {
    return await start();
  } finally {
    if (previous === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = previous;
    delete process.env.CARINA_CPU_PROF_DIR;
  }
}
