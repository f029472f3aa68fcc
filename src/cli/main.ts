/**
 * The `carina` command. `carina server` starts one replica: the Raft-replicated store with its
 * etcd v3 API (or, with --etcd-servers, a client of an external etcd) and the Kubernetes API
 * server over it, and logs where its start went (`start-up:` each phase's time and CPU).
 *
 * Run as a program (bin/carina, `node dist/src/cli/main.js`), it runs the command in argv. A
 * test harness that must reach inside a replica imports runCarina and passes CarinaSeams: the
 * command itself never sets them.
 */
import { resolve } from 'node:path';
import { EtcdClient, type KvClient, type KvReplicaOptions } from '../../raft';
import { FlagError, formatHelp, parseFlags, type FlagSpec, type FlagValues } from './flags';
import { parseInitialCluster, startStoreServer, type RunningStoreServer } from '../server/store-server';
import { startApiServer, storeHealthCheck, withTimeout, type RaftStatusView } from '../server/api-server';
import { buildApiServerParts } from '../server/api-machinery';
import { startControllers } from '../server/replica-controllers';
import type * as ClusterCommands from '../cluster';
import { snapshotCommand } from './snapshot';
import type * as ChaosCommand from './chaos';
import { SECURITY_FLAGS, securityFromFlags } from './security-flags';
import { startCompactor } from '../storage';
import { ENCRYPTION_PROVIDER_CONFIG_FLAG, STORE_CLIENT_FLAGS, STORE_TLS_FLAGS, encryptionProviders, externalEtcdTls, foundsSharedPki, prepareSharedPki, resolveStoreTls, storeClientTls } from './store-flags';
import { pkiCommand } from './pki';
import { availableParallelism } from 'node:os';
import { apiWorkerId, followPrimary, reportWorkerReady, startApiWorkerPool } from '../server/api-workers';
import { apiServerUrl, loadOrCreateClusterCertificates, loadOrCreateFrontProxyCertificates, pkiDirectory, writeAdminKubeconfig } from '../certificates';
import { ADMISSION_FLAGS, admissionFromFlags } from './admission-flags';
import { AUDIT_FLAGS, auditFromFlags } from './audit-flags';
import { AGGREGATOR_FLAGS, KUBELET_FLAGS, aggregatorFromFlags, kubeletFromFlags } from './proxy-flags';
import { CERTIFICATE_FLAGS, certificateSettingsFromFlags, clusterInfoServer } from './certificate-flags';
import { TRACING_FLAGS, startServerTracing, tracingFromFlags } from './tracing-flags';
import type { FlowControlOptions } from '../server/overload-protection';
import { structuredLogger } from '../observability/logger';
import { PRIVATE_UMASK, tightenDataDir } from '../server/data-dir';

const SERVER_FLAGS: FlagSpec[] = [
  { name: 'data-dir', kind: 'string', default: './data', help: 'Directory for the replica\'s Raft log and store.' },
  { name: 'name', kind: 'string', default: '', help: 'Human-readable name of this member (default member-<id>).' },
  { name: 'member-id', kind: 'number', default: 1, help: 'This member\'s id in --initial-cluster.' },
  { name: 'initial-cluster', kind: 'string', default: '', help: 'Members of a new cluster: id@raftHost:port@etcdHost:port,... (default: this member alone, on --listen-peer-address and --listen-etcd-address).' },
  { name: 'initial-cluster-state', kind: 'string', default: 'new', help: '"new": bootstrap a new cluster of --initial-cluster; "existing": join a running cluster that already added this member (carina members add prints the flags), starting empty and catching up from the leader\'s log or snapshot.' },
  { name: 'listen-peer-address', kind: 'string', default: '127.0.0.1:2380', help: 'host:port for Raft traffic from the other replicas.' },
  { name: 'listen-etcd-address', kind: 'string', default: '127.0.0.1:2379', help: 'host:port where the store serves the etcd v3 gRPC API (TLS with client certificates only).' },
  { name: 'heartbeat-interval', kind: 'duration', default: 100, help: 'Raft heartbeat interval (one tick).' },
  { name: 'election-timeout', kind: 'duration', default: 1000, help: 'Raft election timeout.' },
  { name: 'snapshot-count', kind: 'number', default: 100_000, help: 'Applied entries between two snapshots of the store (etcd 3.4: 100000).' },
  { name: 'snapshot-catchup-entries', kind: 'number', default: 5_000, help: 'Log entries kept behind a snapshot, so that a slightly lagging member needs no snapshot (etcd 3.5: 5000).' },
  { name: 'auto-compaction-interval', kind: 'duration', default: 300_000, help: 'How often the leader compacts the store\'s history (0 disables).' },
  { name: 'auto-compaction-retention', kind: 'duration', default: 300_000, help: 'How much history automatic compaction keeps.' },
  { name: 'watch-progress-notify-interval', kind: 'duration', default: 600_000, help: 'Interval of watch progress notifications for watches that ask for them.' },
  { name: 'max-request-bytes', kind: 'number', default: 1_572_864, help: 'Largest write request the store accepts.' },
  { name: 'consistency-check-interval', kind: 'duration', default: 300_000, help: 'How often the leader has the replicas compare digests of their stores at one log index; a replica that differs from the majority stops serving (0 disables).' },
  { name: 'bind-address', kind: 'string', default: '127.0.0.1', help: 'Address the Kubernetes API (HTTPS) listens on.' },
  { name: 'secure-port', kind: 'number', default: 6443, help: 'Port of the Kubernetes API (HTTPS, HTTP/2 and HTTP/1.1); 0 serves no Kubernetes API (the store alone).' },
  { name: 'advertise-address', kind: 'string', default: '', help: 'IP address published in the kubernetes Endpoints for this replica (default: --bind-address unless loopback, else the host\'s first non-loopback IPv4).' },
  { name: 'etcd-compaction-interval', kind: 'duration', default: 300_000, help: 'With --etcd-servers: how often the history of the external etcd is compacted, as kube-apiserver does (0 disables).' },
  { name: 'etcd-servers', kind: 'string', default: '', help: 'Comma-separated etcd v3 endpoints (https://host:port, or http:// for a plaintext etcd) to store objects in instead of the embedded replicated store.' },
  { name: 'tls-san', kind: 'string', default: '', help: 'Extra comma-separated DNS names and IP addresses for the serving certificate.' },
  { name: 'runtime-config', kind: 'string', default: '', help: 'Comma-separated <group>/<version>[=true|false] pairs enabling or disabling API group versions.' },
  { name: 'livez-grace-period', kind: 'duration', default: 0, help: 'Time after start during which unfinished start-up hooks count as live.' },
  { name: 'shutdown-delay-duration', kind: 'duration', default: 0, help: 'On SIGTERM, time during which /readyz fails while requests are still served, before the server stops.' },
  { name: 'min-request-timeout', kind: 'number', default: 1800, help: 'Minimum watch duration in seconds; each watch lasts a random time between this and twice it, unless timeoutSeconds is given.' },
  { name: 'max-requests-inflight', kind: 'number', default: 400, help: 'This and --max-mutating-requests-inflight are summed to determine the server\'s total concurrency limit (which must be positive) if --enable-priority-and-fairness is true. Otherwise, this flag limits the maximum number of non-mutating requests in flight, or a zero value disables the limit completely.' },
  { name: 'max-mutating-requests-inflight', kind: 'number', default: 200, help: 'This and --max-requests-inflight are summed to determine the server\'s total concurrency limit (which must be positive) if --enable-priority-and-fairness is true. Otherwise, this flag limits the maximum number of mutating requests in flight, or a zero value disables the limit completely.' },
  { name: 'enable-priority-and-fairness', kind: 'boolean', default: true, help: 'If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness.' },
  { name: 'service-cluster-ip-range', kind: 'string', default: '10.0.0.0/24', help: 'IPv4 CIDR from which Services get their cluster IPs (the first address is the kubernetes Service\'s).' },
  { name: 'service-node-port-range', kind: 'string', default: '30000-32767', help: 'Port range for NodePort and LoadBalancer Services.' },
  { name: 'api-workers', kind: 'number', default: 1, help: 'Processes serving the Kubernetes API of this replica, sharing its port, beside the one that runs the store (1: the API and the store in one process, the default; 0: one per core). More than one measured slower on 2 shared cores: bench/RESULTS.md.' },
  { name: 'consistent-reads-from-cache', kind: 'boolean', default: false, help: 'If true, a GET or LIST without resourceVersion is answered from the watch cache once it has reached the revision of one linearizable read of the store (KEP-2340, kube\'s ConsistentListFromCache), from the store when it does not in time.' },
  { name: 'watch-fan-out-interval', kind: 'duration', default: 0, help: 'The least time between two rounds of the watch cache\'s fan-out to client watches: events that come sooner wait for the next round and reach each watcher together, in one write (0, the default: each event at once). An event after a quiet spell is not held back.' },
  { name: 'watch-cache-history', kind: 'duration', default: 300_000, help: 'How far back the watch cache keeps events; a watch from an older resourceVersion gets 410 Gone.' },
  ...SECURITY_FLAGS,
  // Admission plugins, their configuration and the webhooks' circuit breaker: src/cli/admission-flags.ts.
  ...ADMISSION_FLAGS,
  // The audit log: src/cli/audit-flags.ts.
  ...AUDIT_FLAGS,
  // The kubelet client of the connect subresources: src/cli/proxy-flags.ts.
  ...KUBELET_FLAGS,
  ...AGGREGATOR_FLAGS,
  // kube-controller-manager's --controllers and CSR signing flags: src/cli/certificate-flags.ts.
  ...CERTIFICATE_FLAGS,
  // --tracing-config-file: src/cli/tracing-flags.ts.
  ...TRACING_FLAGS,
  // The store's TLS (etcd's and kube-apiserver's flag names) and encryption at rest: src/cli/store-flags.ts.
  ...STORE_TLS_FLAGS,
  ENCRYPTION_PROVIDER_CONFIG_FLAG,
  { name: 'help', kind: 'boolean', default: false, help: 'Print this help.' },
];

const SERVER_SUMMARY = 'Starts one replica of Carina: the Raft-replicated key-value store with its etcd v3 API, and the\n' +
  'Kubernetes API server over it (HTTPS on --bind-address:--secure-port; admin kubeconfig in <data-dir>/admin.kubeconfig).\n' +
  'With --etcd-servers the objects live in that etcd instead and no replica is started.';

/** What a test harness may put into a `carina server` process (test/support builds them). */
export interface CarinaSeams {
  /** Wraps the embedded store's state machine (KvReplicaOptions.wrapStateMachine), to inject a fault. */
  wrapStateMachine?: KvReplicaOptions['wrapStateMachine'];
}

/* eslint-disable @typescript-eslint/no-require-imports */
// The cluster and chaos commands load their modules when they run: `carina server` does not need
// them, and each start would otherwise compile them (issue 32).
function clusterCommands(): typeof ClusterCommands {
  return require('../cluster') as typeof ClusterCommands;
}

function chaosModule(): typeof ChaosCommand {
  return require('./chaos') as typeof ChaosCommand;
}
/* eslint-enable @typescript-eslint/no-require-imports */

async function main(argv: string[], seams: CarinaSeams): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write('Usage: carina <command> [flags]\n\nCommands:\n  server          start one replica (see carina server --help)\n  local-cluster   up|down: replicas and HAProxy on loopback (see carina local-cluster --help)\n  members         list|add|promote|remove|transfer-leader: the members of a running cluster (see carina members --help)\n  snapshot        save|status|restore: backups of the store (see carina snapshot --help)\n  chaos           failure injection against a cluster in network namespaces (see carina chaos --help)\n  pki             init|copy: the PKI a cluster\'s replicas share (see carina pki --help)\n');
    return command === undefined ? 1 : 0;
  }
  if (command === 'local-cluster') return localCluster(rest);
  // The store's files hold Secrets, and LevelDB creates its own without a mode: only the umask
  // makes them 0600, those compactions create later included (src/server/data-dir.ts).
  if (command === 'server' || command === 'snapshot') process.umask(PRIVATE_UMASK);
  if (command === 'snapshot') return snapshotCommand(rest);
  if (command === 'chaos') return chaosModule().chaosCommand(rest);
  if (command === 'members') return members(rest);
  if (command === 'pki') return pkiCommand(rest);
  if (command !== 'server') {
    process.stderr.write(`carina: unknown command "${command}" (try carina --help)\n`);
    return 1;
  }
  const flags = parseFlags(rest, SERVER_FLAGS);
  if (flags.help) {
    process.stdout.write(formatHelp('server', SERVER_SUMMARY, SERVER_FLAGS));
    return 0;
  }
  // Where a start goes (issue 32): each phase's end, in ms from the process's start.
  const startUp = new StartUpTimeline();
  const workerId = apiWorkerId();
  // klog-like lines, with the trace id of a traced request (src/observability/logger.ts); a
  // worker's lines name it.
  const klog = structuredLogger();
  const log = workerId === undefined ? klog : (line: string) => klog(`[api-worker ${workerId}] ${line}`);
  const dataDir = resolve(flags['data-dir'] as string);
  if (workerId !== undefined) return runApiWorker(flags, dataDir, workerId, log);
  const requestedWorkers = flags['api-workers'] as number;
  if (!Number.isInteger(requestedWorkers) || requestedWorkers < 0) throw new FlagError(`--api-workers must be a whole number >= 0, not ${requestedWorkers}`);
  const apiWorkers = requestedWorkers === 0 ? availableParallelism() : requestedWorkers;
  await tightenDataDir(dataDir, log);
  // Read before anything starts: a bad configuration must not leave a replica half up.
  const encryption = await encryptionProviders(flags);
  const admission = admissionFromFlags(flags);
  const audit = auditFromFlags(flags);
  const certificateSettings = certificateSettingsFromFlags(flags, dataDir);
  const tracing = startServerTracing(tracingFromFlags(flags), `member-${flags['member-id'] as number}`);
  let store: RunningStoreServer | undefined;
  let kv: KvClient;
  let compactor: { stop(): void } | undefined;
  const etcdServers = (flags['etcd-servers'] as string).split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (etcdServers.length > 0) {
    // An API server over an external etcd founds its own cluster CA, as before.
    await prepareSharedPki(dataDir, true, log);
    kv = new EtcdClient({ endpoints: etcdServers, tls: externalEtcdTls(flags) });
    // kube-apiserver compacts its etcd; the embedded store compacts itself (--auto-compaction-*).
    const interval = flags['etcd-compaction-interval'] as number;
    if (interval > 0) compactor = startCompactor(kv, interval, log);
  } else {
    startUp.mark('flags and certificates');
    store = await startEmbeddedStore(flags, dataDir, log, seams, startUp);
    kv = store.replica;
    store.replica.startConsistencyChecks(flags['consistency-check-interval'] as number);
  }
  if (flags['secure-port'] === 0) {
    if (store === undefined) throw new FlagError('--secure-port=0 with --etcd-servers would serve nothing');
    process.stdout.write(
      `carina: data in ${dataDir}\ncarina: etcd v3 API (the store) on https://${store.etcdAddress}\ncarina: Raft peers on ${store.raftAddress}\n` +
      'carina: Kubernetes API: off (--secure-port=0)\ncarina: ready\n',
    );
    const removed = await waitForStopSignalOrRemoval(store);
    await store.stop();
    await tracing?.shutdown();
    if (removed) process.stdout.write('carina: this member was removed from the cluster: stopped\n');
    return 0;
  }
  if (apiWorkers > 1) {
    const replica = store?.replica;
    return runApiWorkersPrimary(flags, dataDir, apiWorkers, store, etcdServers, log, async () => {
      compactor?.stop();
      if (store !== undefined) await store.stop();
      else await kv.close();
      await tracing?.shutdown();
    }, replica === undefined ? undefined : () => ({ raft: replica.raftStatus(), corruption: replica.corruption()?.reason, storeMetrics: replica.metricFamilies(), storeStatus: replica.statusReport() }));
  }
  const replica = store?.replica;
  const parts = buildApiServerParts(kv, {
    runtimeConfig: flags['runtime-config'] as string,
    storeHealthy: storeHealthCheck(kv),
    replica: replica === undefined ? undefined : {
      inProcess: true,
      raftStatus: () => replica.raftStatus(),
      metrics: () => replica.metricFamilies(),
      status: () => replica.statusReport(),
      corruption: () => replica.corruption()?.reason,
    },
  });
  const identity = replicaIdentity(flags, store !== undefined);
  startUp.mark('API parts');
  const api = await startApiServer({ ...apiServerConfig(flags, dataDir, identity), encryptionProviders: encryption, admission, audit, tracing }, parts, log);
  startUp.mark('API server listening');
  const controllers = startControllers(api.registry, api.cache, parts, identity, log, controllerOptions(flags, api, certificateSettings));
  startUp.mark('controllers');
  log(`start-up: ${startUp.summary()}`);
  process.stdout.write(
    `carina: data in ${dataDir}\n` +
    (store !== undefined
      ? `carina: etcd v3 API (the store) on https://${store.etcdAddress}\ncarina: Raft peers on ${store.raftAddress}\n`
      : `carina: objects stored in etcd at ${etcdServers.join(',')}\n`) +
    `carina: Kubernetes API on ${api.url}\n` +
    `carina: admin kubeconfig ${api.kubeconfigPath}\n` +
    'carina: ready\n',
  );
  const removed = store !== undefined ? await waitForStopSignalOrRemoval(store) : (await waitForStopSignal(), false);
  if (removed) process.stdout.write('carina: this member was removed from the cluster: stopping\n');
  await withTimeout(controllers.stop(), 2000);
  await api.stop();
  compactor?.stop();
  if (store !== undefined) await store.stop();
  else await kv.close();
  await tracing?.shutdown();
  return 0;
}

/** What the lease holder's controllers need: the cluster's credentials and the CSR and bootstrap settings. */
function controllerOptions(
  flags: FlagValues,
  api: Awaited<ReturnType<typeof startApiServer>>,
  certificateSettings: ReturnType<typeof certificateSettingsFromFlags>,
): Parameters<typeof startControllers>[5] {
  const advertised = flags['advertise-address'] as string;
  const port = api.url.slice(api.url.lastIndexOf(':') + 1);
  const ownServer = advertised !== '' ? `https://${advertised.includes(':') ? `[${advertised}]` : advertised}:${port}` : api.url;
  return {
    credentials: { rootCaPem: api.clusterCaPem, tokenSigner: api.tokenSigner },
    certificates: {
      settings: certificateSettings,
      deps: { authorize: api.authorize, clusterCaPem: api.clusterCaPem, clusterInfoServer: clusterInfoServer(certificateSettings.controlPlaneEndpoint, ownServer) },
    },
  };
}

/** Names this replica's leases: its member id, or its address when the store is an external etcd. */
function replicaIdentity(flags: FlagValues, embeddedStore: boolean): string {
  return embeddedStore ? `member-${flags['member-id'] as number}` : `${flags['bind-address'] as string}-${flags['secure-port'] as number}`;
}

function servingNames(flags: FlagValues): { servingDnsNames: string[]; servingIpAddresses: string[] } {
  const sans = (flags['tls-san'] as string).split(',').map((s) => s.trim()).filter((s) => s !== '');
  return { servingDnsNames: sans.filter((s) => !/^[0-9.]+$|:/.test(s)), servingIpAddresses: sans.filter((s) => /^[0-9.]+$|:/.test(s)) };
}

/** The API server's configuration from the flags (without what must be read once: encryption, admission, audit). */
function apiServerConfig(flags: FlagValues, dataDir: string, identity: string): Parameters<typeof startApiServer>[0] {
  return {
    dataDir,
    bindAddress: flags['bind-address'] as string,
    securePort: flags['secure-port'] as number,
    ...servingNames(flags),
    livezGracePeriodMs: flags['livez-grace-period'] as number,
    shutdownDelayMs: flags['shutdown-delay-duration'] as number,
    minRequestTimeoutSeconds: flags['min-request-timeout'] as number,
    serviceClusterIpRange: flags['service-cluster-ip-range'] as string,
    advertiseAddress: flags['advertise-address'] as string,
    watchCacheHistoryMs: flags['watch-cache-history'] as number,
    watchFanOutIntervalMs: flags['watch-fan-out-interval'] as number,
    consistentReadsFromCache: flags['consistent-reads-from-cache'] as boolean,
    serviceNodePortRange: flags['service-node-port-range'] as string,
    identity,
    security: securityFromFlags(flags),
    kubelet: kubeletFromFlags(flags),
    aggregator: aggregatorFromFlags(flags),
    flowControl: flowControlFromFlags(flags),
  };
}

/** The overload flags, checked as kube-apiserver v1.25 checks them. */
function flowControlFromFlags(flags: FlagValues): FlowControlOptions {
  const maxRequestsInFlight = flags['max-requests-inflight'] as number;
  const maxMutatingRequestsInFlight = flags['max-mutating-requests-inflight'] as number;
  const enabled = flags['enable-priority-and-fairness'] as boolean;
  if (maxRequestsInFlight < 0) throw new FlagError('--max-requests-inflight can not be negative value');
  if (maxMutatingRequestsInFlight < 0) throw new FlagError('--max-mutating-requests-inflight can not be negative value');
  if (enabled && maxRequestsInFlight + maxMutatingRequestsInFlight <= 0) {
    throw new FlagError(`invalid configuration: MaxRequestsInFlight=${maxRequestsInFlight} and MaxMutatingRequestsInFlight=${maxMutatingRequestsInFlight}; they must add up to something positive`);
  }
  return { enabled, maxRequestsInFlight, maxMutatingRequestsInFlight };
}

/** Set in the workers' environment by the primary: where they reach the store. */
const WORKER_STORE_ENV = 'CARINA_API_WORKER_STORE';

/**
 * The primary of a replica with API workers (src/server/api-workers.ts): the store runs here;
 * the serving certificate and the admin kubeconfig are made here, once; the workers serve.
 */
async function runApiWorkersPrimary(
  flags: FlagValues,
  dataDir: string,
  count: number,
  store: RunningStoreServer | undefined,
  etcdServers: string[],
  log: (line: string) => void,
  stopStore: () => Promise<void>,
  replicaStatus: (() => { raft: RaftStatusView; corruption?: string }) | undefined,
): Promise<number> {
  // Before any worker starts: N workers must not each create the serving certificate.
  const certificates = await loadOrCreateClusterCertificates(dataDir, { serving: { dnsNames: servingNames(flags).servingDnsNames, ipAddresses: servingNames(flags).servingIpAddresses } });
  // Nor the front-proxy CA and client certificate.
  await loadOrCreateFrontProxyCertificates(pkiDirectory(dataDir));
  const storeUrl = store !== undefined ? `https://${store.etcdAddress}` : etcdServers.join(',');
  const pool = startApiWorkerPool({ count, env: { [WORKER_STORE_ENV]: storeUrl }, replicaStatus, log });
  const stopSignal = store !== undefined ? waitForStopSignalOrRemoval(store) : waitForStopSignal().then(() => false);
  const url = await Promise.race([pool.ready, stopSignal.then(() => undefined)]);
  if (url !== undefined) {
    const kubeconfigPath = await writeAdminKubeconfig(dataDir, certificates, apiServerUrl(new URL(url).hostname, Number(new URL(url).port)));
    process.stdout.write(
      `carina: data in ${dataDir}\n` +
      (store !== undefined
        ? `carina: etcd v3 API (the store) on https://${store.etcdAddress}\ncarina: Raft peers on ${store.raftAddress}\n`
        : `carina: objects stored in etcd at ${etcdServers.join(',')}\n`) +
      `carina: Kubernetes API on ${url} (${count} API worker processes: ${[...pool.pids()].map(([id, pid]) => `${id}=pid ${pid}`).join(', ')})\n` +
      `carina: admin kubeconfig ${kubeconfigPath}\n` +
      'carina: ready\n',
    );
  }
  const removed = await stopSignal;
  if (removed) process.stdout.write('carina: this member was removed from the cluster: stopping\n');
  await pool.stop();
  await stopStore();
  return 0;
}

/** An API worker: the API server over an etcd client of the primary's store (or the external etcd). */
async function runApiWorker(flags: FlagValues, dataDir: string, workerId: number, log: (line: string) => void): Promise<number> {
  const primary = followPrimary(log);
  const encryption = await encryptionProviders(flags);
  const admission = admissionFromFlags(flags);
  const audit = auditFromFlags(flags);
  const certificateSettings = certificateSettingsFromFlags(flags, dataDir);
  const tracing = startServerTracing(tracingFromFlags(flags), `member-${flags['member-id'] as number}-api-worker-${workerId}`);
  const endpoints = (process.env[WORKER_STORE_ENV] ?? '').split(',').filter((e) => e !== '');
  const external = (flags['etcd-servers'] as string) !== '';
  const client = new EtcdClient({
    endpoints,
    tls: external ? externalEtcdTls(flags) : storeClientTls({ 'data-dir': dataDir, cacert: '', cert: '', key: '' }),
  });
  // The primary's store is Carina's: its transactions may relocate keys (src/storage/key-layout-migration.ts).
  const kv = external ? client : Object.assign(client, { relocates: true });
  const parts = buildApiServerParts(kv, {
    runtimeConfig: flags['runtime-config'] as string,
    storeHealthy: storeHealthCheck(kv),
    replica: external ? undefined : {
      inProcess: false,
      raftStatus: () => primary.status().raft ?? { id: 0, role: 'unknown', term: 0, lead: 0, commit: 0, applied: 0, lastIndex: 0, progress: {} },
      metrics: () => primary.status().storeMetrics ?? [],
      status: () => primary.status().storeStatus,
      corruption: () => primary.status().corruption,
    },
  });
  const identity = replicaIdentity(flags, !external);
  const duties = workerId === 1;
  const api = await startApiServer({
    ...apiServerConfig(flags, dataDir, identity),
    encryptionProviders: encryption,
    admission,
    audit,
    tracing,
    workerId,
    replicaDuties: duties,
    writeKubeconfig: false,
  }, parts, log);
  const controllers = duties ? startControllers(api.registry, api.cache, parts, identity, log, controllerOptions(flags, api, certificateSettings)) : undefined;
  log(`serving the Kubernetes API on ${api.url}${duties ? ' (with the replica\'s controllers and bootstrap)' : ''}`);
  reportWorkerReady(workerId, api.url);
  await waitForStopSignal();
  if (controllers !== undefined) await withTimeout(controllers.stop(), 2000);
  await api.stop();
  await kv.close();
  await tracing?.shutdown();
  return 0;
}

const ENDPOINTS_FLAG: FlagSpec = { name: 'endpoints', kind: 'string', default: '127.0.0.1:2379', help: 'Comma-separated etcd v3 API addresses of one or more members (host:port).' };
const HELP_FLAG: FlagSpec = { name: 'help', kind: 'boolean', default: false, help: 'Print this help.' };
const CLIENT_FLAGS: FlagSpec[] = [ENDPOINTS_FLAG, ...STORE_CLIENT_FLAGS];

const MEMBERS_COMMANDS: Record<string, { usage: string; summary: string; flags: FlagSpec[] }> = {
  list: {
    usage: 'members [list]',
    summary: 'Lists the members of a running cluster (learners included) with their role, term, log indexes and lag behind the leader.',
    flags: [...CLIENT_FLAGS, HELP_FLAG],
  },
  add: {
    usage: 'members add NAME',
    summary: 'Adds a member (etcd\'s MemberAdd) and prints the flags to start it with (--initial-cluster-state existing).',
    flags: [
      ...CLIENT_FLAGS,
      { name: 'peer-address', kind: 'string', default: '', help: 'host:port of the new member\'s Raft transport (required).' },
      { name: 'client-url', kind: 'string', default: '', help: 'https://host:port of the new member\'s etcd v3 API (required).' },
      { name: 'learner', kind: 'boolean', default: false, help: 'Add it as a learner (no vote until promoted): the safe way to add a member.' },
      HELP_FLAG,
    ],
  },
  promote: {
    usage: 'members promote ID',
    summary: 'Promotes a learner to a voter; refused until the learner is in sync with the leader (90% of its log).',
    flags: [
      ...CLIENT_FLAGS,
      { name: 'wait', kind: 'boolean', default: false, help: 'Wait, printing the learner\'s progress, until it has caught up, then promote it.' },
      { name: 'wait-timeout', kind: 'duration', default: 600_000, help: 'How long --wait waits.' },
      HELP_FLAG,
    ],
  },
  remove: {
    usage: 'members remove ID',
    summary: 'Removes a member (it stops itself); refused if the running voters left would be fewer than their quorum.',
    flags: [...CLIENT_FLAGS, HELP_FLAG],
  },
  'transfer-leader': {
    usage: 'members transfer-leader ID',
    summary: 'Hands leadership to the given voter (etcd\'s MoveLeader).',
    flags: [...CLIENT_FLAGS, HELP_FLAG],
  },
};

async function members(args: string[]): Promise<number> {
  const sub = args[0] !== undefined && !args[0].startsWith('--') ? args[0] : 'list';
  const rest = args[0] === sub ? args.slice(1) : args;
  const spec = MEMBERS_COMMANDS[sub];
  if (spec === undefined) {
    process.stderr.write(`carina members: unknown subcommand "${sub}" (one of ${Object.keys(MEMBERS_COMMANDS).join(', ')})\n`);
    return 1;
  }
  const takesArgument = sub !== 'list';
  const positional = takesArgument && rest[0] !== undefined && !rest[0].startsWith('--') ? rest[0] : undefined;
  const flags = parseFlags(positional === undefined ? rest : rest.slice(1), spec.flags);
  if (flags.help) {
    const overview = sub === 'list' ? `\nSubcommands: ${Object.values(MEMBERS_COMMANDS).map((c) => `carina ${c.usage}`).join('; ')}.\nIDs are decimal, as carina prints them, or hex, as etcdctl does.\n` : '';
    process.stdout.write(formatHelp(spec.usage, spec.summary, spec.flags) + overview);
    return 0;
  }
  if (takesArgument && positional === undefined) throw new FlagError(`carina ${spec.usage}: missing ${sub === 'add' ? 'NAME' : 'ID'}`);
  const endpoints = (flags.endpoints as string).split(',').map((e) => e.trim()).filter((e) => e !== '');
  const store = { endpoints, tls: storeClientTls(flags) };
  const { addMember, formatMemberTable, memberStatus, parseMemberId, promoteMember, removeMember, transferLeadership } = clusterCommands();
  try {
    switch (sub) {
      case 'add': {
        if (!flags['peer-address'] || !flags['client-url']) throw new FlagError('carina members add: --peer-address and --client-url are required');
        const added = await addMember(store, { name: positional as string, peerAddress: flags['peer-address'] as string, clientUrl: flags['client-url'] as string, learner: flags.learner as boolean });
        process.stdout.write(added.text);
        return 0;
      }
      case 'promote':
        process.stdout.write(await promoteMember(store, parseMemberId(positional as string), {
          wait: flags.wait as boolean,
          waitTimeoutMs: flags['wait-timeout'] as number,
          progress: (line) => process.stdout.write(`${line}\n`),
        }));
        return 0;
      case 'remove':
        process.stdout.write(await removeMember(store, parseMemberId(positional as string)));
        return 0;
      case 'transfer-leader':
        process.stdout.write(await transferLeadership(store, parseMemberId(positional as string)));
        return 0;
      default: {
        const rows = await memberStatus(store);
        process.stdout.write(formatMemberTable(rows));
        return rows.some((r) => r.role === 'unreachable') ? 2 : 0;
      }
    }
  } catch (err) {
    if (err instanceof FlagError) throw err;
    process.stderr.write(`carina members ${sub}: ${(err as Error).message}\n`);
    return 1;
  }
}

const LOCAL_CLUSTER_FLAGS: FlagSpec[] = [
  { name: 'dir', kind: 'string', default: './data/cluster', help: 'Directory for the replicas\' data, logs, pid files, haproxy.cfg and admin.kubeconfig.' },
  { name: 'replicas', kind: 'number', default: 3, help: 'How many replicas.' },
  { name: 'base-port', kind: 'number', default: 17000, help: 'Member i listens on base+10i (API), base+10i+1 (etcd API), base+10i+2 (Raft).' },
  { name: 'lb-port', kind: 'number', default: 7443, help: 'Port of the HAProxy load balancer in front of the replicas.' },
  { name: 'help', kind: 'boolean', default: false, help: 'Print this help.' },
];

async function localCluster(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  const flags = parseFlags(rest, LOCAL_CLUSTER_FLAGS);
  if (flags.help || (action !== 'up' && action !== 'down')) {
    process.stdout.write(formatHelp('local-cluster up|down', 'Starts (up) or stops (down) replicas of one cluster and an HAProxy in front of them, on loopback.', LOCAL_CLUSTER_FLAGS));
    return flags.help ? 0 : 1;
  }
  const dir = flags.dir as string;
  const { localClusterDown, localClusterUp } = clusterCommands();
  if (action === 'down') {
    await localClusterDown(dir);
    process.stdout.write(`carina: local cluster in ${dir} stopped\n`);
    return 0;
  }
  const cluster = await localClusterUp({
    dir,
    replicas: flags.replicas as number,
    basePort: flags['base-port'] as number,
    lbPort: flags['lb-port'] as number,
    log: (line) => process.stdout.write(`carina: ${line}\n`),
  });
  process.stdout.write(`carina: ${cluster.members.length} replicas behind ${cluster.url}\n` +
    `carina: kubectl --kubeconfig ${cluster.kubeconfig} get ns\n` +
    `carina: etcdctl --endpoints ${cluster.etcdEndpoints.join(',')} --cacert ${cluster.storeClient.cacert} --cert ${cluster.storeClient.cert} --key ${cluster.storeClient.key} member list\n` +
    `carina: stop with: make cluster-down (or carina local-cluster down --dir ${dir})\n`);
  return 0;
}

/** True when the store stopped because this member was removed from the cluster. */
async function waitForStopSignalOrRemoval(store: RunningStoreServer): Promise<boolean> {
  return Promise.race([waitForStopSignal().then(() => false), store.replica.whenRemoved().then(() => true)]);
}

function waitForStopSignal(): Promise<void> {
  return new Promise<void>((resolveStop) => {
    const stop = () => resolveStop();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}

/**
 * The end of each start-up phase, in ms since the process started (performance.now()), with the
 * process's CPU time then: on a busy machine the elapsed time says more about the neighbours.
 */
class StartUpTimeline {
  private readonly marks: Array<{ phase: string; atMs: number; cpuMs: number }> = [];

  constructor() {
    this.mark('module load');
  }

  mark(phase: string): void {
    const cpu = process.cpuUsage();
    this.marks.push({ phase, atMs: performance.now(), cpuMs: (cpu.user + cpu.system) / 1000 });
  }

  /** "module load 310 ms (cpu 280 ms), store ... ms; done N ms (cpu M ms) after the process started": each phase's own time. */
  summary(): string {
    const parts = this.marks.map((m, i) => {
      const before = i === 0 ? { atMs: 0, cpuMs: 0 } : this.marks[i - 1];
      return `${m.phase} ${(m.atMs - before.atMs).toFixed(0)} ms (cpu ${(m.cpuMs - before.cpuMs).toFixed(0)})`;
    });
    const last = this.marks[this.marks.length - 1];
    return `${parts.join(', ')}; done ${last.atMs.toFixed(0)} ms (cpu ${last.cpuMs.toFixed(0)} ms) after the process started`;
  }
}

async function startEmbeddedStore(flags: FlagValues, dataDir: string, log: (line: string) => void, seams: CarinaSeams, startUp?: StartUpTimeline): Promise<RunningStoreServer> {
  const memberId = flags['member-id'] as number;
  const initialClusterState = flags['initial-cluster-state'];
  if (initialClusterState !== 'new' && initialClusterState !== 'existing') throw new FlagError(`--initial-cluster-state must be "new" or "existing", not "${String(initialClusterState)}"`);
  if (initialClusterState === 'existing' && !flags['initial-cluster']) throw new FlagError('--initial-cluster-state=existing needs --initial-cluster (carina members add prints it)');
  const members = flags['initial-cluster']
    ? parseInitialCluster(flags['initial-cluster'] as string)
    : [{ id: memberId, name: `member-${memberId}`, raftAddress: flags['listen-peer-address'] as string, clientUrls: [`https://${flags['listen-etcd-address'] as string}`] }];
  const self = members.find((m) => m.id === memberId);
  if (!self) throw new FlagError(`--member-id ${memberId} is not in --initial-cluster`);
  if (flags.name) self.name = flags.name as string;
  // Certificates before anything listens: both of the store's ports speak only mutual TLS.
  await prepareSharedPki(dataDir, foundsSharedPki(memberId, members.map((m) => m.id), initialClusterState), log);
  const tls = await resolveStoreTls(flags, dataDir, [self.raftAddress, flags['listen-peer-address'] as string, flags['listen-etcd-address'] as string, ...self.clientUrls], log);
  startUp?.mark('store: PKI and TLS');
  return startStoreServer({
    tls,
    memberId,
    name: self.name,
    dataDir,
    members,
    listenPeerAddress: flags['initial-cluster'] ? self.raftAddress : (flags['listen-peer-address'] as string),
    listenEtcdAddress: flags['listen-etcd-address'] as string,
    heartbeatMs: flags['heartbeat-interval'] as number,
    electionTimeoutMs: flags['election-timeout'] as number,
    snapshotCount: flags['snapshot-count'] as number,
    autoCompactionIntervalMs: flags['auto-compaction-interval'] as number,
    autoCompactionRetentionMs: flags['auto-compaction-retention'] as number,
    progressNotifyIntervalMs: flags['watch-progress-notify-interval'] as number,
    maxRequestBytes: flags['max-request-bytes'] as number,
    snapshotCatchupEntries: flags['snapshot-catchup-entries'] as number,
    initialClusterState,
    wrapStateMachine: seams.wrapStateMachine,
  }, log, (phase) => startUp?.mark(phase));
}

/** Runs the `carina` command in `argv` and exits the process with its status. */
export function runCarina(argv: string[], seams: CarinaSeams = {}): void {
  main(argv, seams).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`carina: ${err instanceof FlagError ? err.message : (err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}

if (require.main === module) runCarina(process.argv.slice(2));
