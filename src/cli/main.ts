/**
 * The `carina` command. `carina server` starts one replica: the Raft-replicated store with its
 * etcd v3 API (or, with --etcd-servers, a client of an external etcd) and the Kubernetes API
 * server over it.
 */
import { resolve } from 'node:path';
import { EtcdClient, type KvClient } from '../../raft';
import { FlagError, formatHelp, parseFlags, type FlagSpec } from './flags';
import { parseInitialCluster, startStoreServer, type RunningStoreServer } from '../server/store-server';
import { startApiServer, storeHealthCheck, withTimeout } from '../server/api-server';
import { buildApiServerParts, startControllers } from '../server/default-parts';
import { localClusterDown, localClusterUp } from './local-cluster';
import { formatMemberTable, memberStatus } from './members';
import { chaosCommand } from './chaos';

const SERVER_FLAGS: FlagSpec[] = [
  { name: 'data-dir', kind: 'string', default: './data', help: 'Directory for the replica\'s Raft log and store.' },
  { name: 'name', kind: 'string', default: '', help: 'Human-readable name of this member (default member-<id>).' },
  { name: 'member-id', kind: 'number', default: 1, help: 'This member\'s id in --initial-cluster.' },
  { name: 'initial-cluster', kind: 'string', default: '', help: 'Members of a new cluster: id@raftHost:port@etcdHost:port,... (default: this member alone, on --listen-peer-address and --listen-etcd-address).' },
  { name: 'listen-peer-address', kind: 'string', default: '127.0.0.1:2380', help: 'host:port for Raft traffic from the other replicas.' },
  { name: 'listen-etcd-address', kind: 'string', default: '127.0.0.1:2379', help: 'host:port where the store serves the etcd v3 gRPC API (plaintext).' },
  { name: 'heartbeat-interval', kind: 'duration', default: 100, help: 'Raft heartbeat interval (one tick).' },
  { name: 'election-timeout', kind: 'duration', default: 1000, help: 'Raft election timeout.' },
  { name: 'snapshot-count', kind: 'number', default: 100_000, help: 'Applied entries between two snapshots of the store (etcd 3.4: 100000).' },
  { name: 'auto-compaction-interval', kind: 'duration', default: 300_000, help: 'How often the leader compacts the store\'s history (0 disables).' },
  { name: 'auto-compaction-retention', kind: 'duration', default: 300_000, help: 'How much history automatic compaction keeps.' },
  { name: 'watch-progress-notify-interval', kind: 'duration', default: 600_000, help: 'Interval of watch progress notifications for watches that ask for them.' },
  { name: 'max-request-bytes', kind: 'number', default: 1_572_864, help: 'Largest write request the store accepts.' },
  { name: 'bind-address', kind: 'string', default: '127.0.0.1', help: 'Address the Kubernetes API (HTTPS) listens on.' },
  { name: 'secure-port', kind: 'number', default: 6443, help: 'Port of the Kubernetes API (HTTPS, HTTP/2 and HTTP/1.1); 0 serves no Kubernetes API (the store alone).' },
  { name: 'advertise-address', kind: 'string', default: '', help: 'IP address published in the kubernetes Endpoints for this replica (default: --bind-address unless loopback, else the host\'s first non-loopback IPv4).' },
  { name: 'etcd-servers', kind: 'string', default: '', help: 'Comma-separated etcd v3 endpoints (http://host:port) to store objects in instead of the embedded replicated store.' },
  { name: 'tls-san', kind: 'string', default: '', help: 'Extra comma-separated DNS names and IP addresses for the serving certificate.' },
  { name: 'runtime-config', kind: 'string', default: '', help: 'Comma-separated <group>/<version>[=true|false] pairs enabling or disabling API group versions.' },
  { name: 'livez-grace-period', kind: 'duration', default: 0, help: 'Time after start during which unfinished start-up hooks count as live.' },
  { name: 'shutdown-delay-duration', kind: 'duration', default: 0, help: 'On SIGTERM, time during which /readyz fails while requests are still served, before the server stops.' },
  { name: 'min-request-timeout', kind: 'number', default: 1800, help: 'Minimum watch duration in seconds; each watch lasts a random time between this and twice it, unless timeoutSeconds is given.' },
  { name: 'service-cluster-ip-range', kind: 'string', default: '10.0.0.0/24', help: 'IPv4 CIDR from which Services get their cluster IPs (the first address is the kubernetes Service\'s).' },
  { name: 'service-node-port-range', kind: 'string', default: '30000-32767', help: 'Port range for NodePort and LoadBalancer Services.' },
  { name: 'watch-cache-history', kind: 'duration', default: 300_000, help: 'How far back the watch cache keeps events; a watch from an older resourceVersion gets 410 Gone.' },
  { name: 'help', kind: 'boolean', default: false, help: 'Print this help.' },
];

const SERVER_SUMMARY = 'Starts one replica of Carina: the Raft-replicated key-value store with its etcd v3 API, and the\n' +
  'Kubernetes API server over it (HTTPS on --bind-address:--secure-port; admin kubeconfig in <data-dir>/admin.kubeconfig).\n' +
  'With --etcd-servers the objects live in that etcd instead and no replica is started.';

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write('Usage: carina <command> [flags]\n\nCommands:\n  server          start one replica (see carina server --help)\n  local-cluster   up|down: replicas and HAProxy on loopback (see carina local-cluster --help)\n  members         the members of a running cluster and their state (see carina members --help)\n');
    return command === undefined ? 1 : 0;
  }
  if (command === 'local-cluster') return localCluster(rest);
  if (command === 'chaos') return chaosCommand(rest);
  if (command === 'members') {
    const flags = parseFlags(rest, MEMBERS_FLAGS);
    if (flags.help) {
      process.stdout.write(formatHelp('members', 'Lists the members of a running cluster with their role, term, log indexes and lag behind the leader.', MEMBERS_FLAGS));
      return 0;
    }
    const endpoints = (flags.endpoints as string).split(',').map((e) => e.trim()).filter((e) => e !== '');
    const rows = await memberStatus(endpoints);
    process.stdout.write(formatMemberTable(rows));
    return rows.some((r) => r.role === 'unreachable') ? 2 : 0;
  }
  if (command !== 'server') {
    process.stderr.write(`carina: unknown command "${command}" (try carina --help)\n`);
    return 1;
  }
  const flags = parseFlags(rest, SERVER_FLAGS);
  if (flags.help) {
    process.stdout.write(formatHelp('server', SERVER_SUMMARY, SERVER_FLAGS));
    return 0;
  }
  const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  const dataDir = resolve(flags['data-dir'] as string);
  let store: RunningStoreServer | undefined;
  let kv: KvClient;
  const etcdServers = (flags['etcd-servers'] as string).split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (etcdServers.length > 0) {
    kv = new EtcdClient({ endpoints: etcdServers });
  } else {
    store = await startEmbeddedStore(flags, dataDir, log);
    kv = store.replica;
  }
  if (flags['secure-port'] === 0) {
    if (store === undefined) throw new FlagError('--secure-port=0 with --etcd-servers would serve nothing');
    process.stdout.write(
      `carina: data in ${dataDir}\ncarina: etcd v3 API (the store) on http://${store.etcdAddress}\ncarina: Raft peers on ${store.raftAddress}\n` +
      'carina: Kubernetes API: off (--secure-port=0)\ncarina: ready\n',
    );
    await waitForStopSignal();
    await store.stop();
    return 0;
  }
  // Names this replica's leases: its member id, or its address when the store is an external etcd.
  const identity = store !== undefined ? `member-${flags['member-id'] as number}` : `${flags['bind-address'] as string}-${flags['secure-port'] as number}`;
  const sans = (flags['tls-san'] as string).split(',').map((s) => s.trim()).filter((s) => s !== '');
  const parts = buildApiServerParts(kv, { runtimeConfig: flags['runtime-config'] as string, storeHealthy: storeHealthCheck(kv) });
  const replica = store?.replica;
  if (replica !== undefined) parts.raftStatus = () => replica.raftStatus();
  const api = await startApiServer({
    dataDir,
    bindAddress: flags['bind-address'] as string,
    securePort: flags['secure-port'] as number,
    servingDnsNames: sans.filter((s) => !/^[0-9.]+$|:/.test(s)),
    servingIpAddresses: sans.filter((s) => /^[0-9.]+$|:/.test(s)),
    livezGracePeriodMs: flags['livez-grace-period'] as number,
    shutdownDelayMs: flags['shutdown-delay-duration'] as number,
    minRequestTimeoutSeconds: flags['min-request-timeout'] as number,
    serviceClusterIpRange: flags['service-cluster-ip-range'] as string,
    advertiseAddress: flags['advertise-address'] as string,
    watchCacheHistoryMs: flags['watch-cache-history'] as number,
    serviceNodePortRange: flags['service-node-port-range'] as string,
    identity,
  }, parts, log);
  const controllers = startControllers(api.registry, parts, identity, log);
  process.stdout.write(
    `carina: data in ${dataDir}\n` +
    (store !== undefined
      ? `carina: etcd v3 API (the store) on http://${store.etcdAddress}\ncarina: Raft peers on ${store.raftAddress}\n`
      : `carina: objects stored in etcd at ${etcdServers.join(',')}\n`) +
    `carina: Kubernetes API on ${api.url}\n` +
    `carina: admin kubeconfig ${api.kubeconfigPath}\n` +
    'carina: ready\n',
  );
  await waitForStopSignal();
  await withTimeout(controllers.stop(), 2000);
  await api.stop();
  if (store !== undefined) await store.stop();
  else await kv.close();
  return 0;
}

const MEMBERS_FLAGS: FlagSpec[] = [
  { name: 'endpoints', kind: 'string', default: '127.0.0.1:2379', help: 'Comma-separated etcd v3 API addresses of one or more members (host:port).' },
  { name: 'help', kind: 'boolean', default: false, help: 'Print this help.' },
];

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
    `carina: stop with: make cluster-down (or carina local-cluster down --dir ${dir})\n`);
  return 0;
}

function waitForStopSignal(): Promise<void> {
  return new Promise<void>((resolveStop) => {
    const stop = () => resolveStop();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}

async function startEmbeddedStore(flags: Record<string, string | number | boolean>, dataDir: string, log: (line: string) => void): Promise<RunningStoreServer> {
  const memberId = flags['member-id'] as number;
  const members = flags['initial-cluster']
    ? parseInitialCluster(flags['initial-cluster'] as string)
    : [{ id: memberId, name: `member-${memberId}`, raftAddress: flags['listen-peer-address'] as string, clientUrls: [`http://${flags['listen-etcd-address'] as string}`] }];
  const self = members.find((m) => m.id === memberId);
  if (!self) throw new FlagError(`--member-id ${memberId} is not in --initial-cluster`);
  if (flags.name) self.name = flags.name as string;
  return startStoreServer({
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
  }, log);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`carina: ${err instanceof FlagError ? err.message : (err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
