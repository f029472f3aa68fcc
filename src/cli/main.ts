/**
 * The `carina` command. Today: `carina server` starts one replica of the replicated store with
 * its etcd v3 API (the Kubernetes API server joins it in issue 4).
 */
import { resolve } from 'node:path';
import { FlagError, formatHelp, parseFlags, type FlagSpec } from './flags';
import { parseInitialCluster, startStoreServer } from '../server/store-server';

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
  { name: 'help', kind: 'boolean', default: false, help: 'Print this help.' },
];

const SERVER_SUMMARY = 'Starts one replica of Carina: the Raft-replicated key-value store and its etcd v3 API.\n' +
  'The Kubernetes API server is not built yet (issue 4).';

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write('Usage: carina <command> [flags]\n\nCommands:\n  server    start one replica (see carina server --help)\n');
    return command === undefined ? 1 : 0;
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
  const memberId = flags['member-id'] as number;
  const members = flags['initial-cluster']
    ? parseInitialCluster(flags['initial-cluster'] as string)
    : [{ id: memberId, name: `member-${memberId}`, raftAddress: flags['listen-peer-address'] as string, clientUrls: [`http://${flags['listen-etcd-address'] as string}`] }];
  const self = members.find((m) => m.id === memberId);
  if (!self) throw new FlagError(`--member-id ${memberId} is not in --initial-cluster`);
  if (flags.name) self.name = flags.name as string;
  const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  const dataDir = resolve(flags['data-dir'] as string);
  const running = await startStoreServer({
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
  process.stdout.write(
    `carina: member ${memberId} (${self.name}) of ${members.length}, data in ${dataDir}\n` +
    `carina: etcd v3 API (the store) on http://${running.etcdAddress}\n` +
    `carina: Raft peers on ${running.raftAddress}\n` +
    'carina: Kubernetes API: not built yet (issue 4)\n' +
    'carina: ready\n',
  );
  await new Promise<void>((resolveStop) => {
    const stop = () => resolveStop();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await running.stop();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`carina: ${err instanceof FlagError ? err.message : (err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
