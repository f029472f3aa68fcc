/**
 * `carina snapshot save|status|restore`: backups of the store, as etcdctl/etcdutl snapshot.
 *
 *   carina snapshot save FILE --endpoints host:port,... --cacert CA --cert CERT --key KEY
 *                                                           a running cluster's store, to FILE
 *   carina snapshot status FILE [--write-out json]           revision, keys, size, hash of FILE
 *   carina snapshot restore FILE --data-dir DIR --member-id N --initial-cluster ...
 *                           [--bump-revision N] [--mark-compacted=false]
 *
 * Progress goes to stderr, the final line to stdout. A save streams into FILE.part, verifies it
 * and only then renames it to FILE, so FILE is never a partial or damaged snapshot.
 */
import { createWriteStream, existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  DEFAULT_REVISION_BUMP,
  EtcdClient,
  isKvError,
  restoreSnapshot,
  SnapshotFileError,
  verifySnapshotFile,
  type SnapshotFileSummary,
} from '../../raft';
import { FlagError, formatHelp, parseFlags, type FlagSpec, type FlagValues } from './flags';
import { parseInitialCluster } from '../server/store-server';
import { STORE_CLIENT_FLAGS, storeClientTls } from './store-flags';

const SAVE_FLAGS: FlagSpec[] = [
  { name: 'endpoints', kind: 'string', default: '127.0.0.1:2379', help: 'Comma-separated etcd v3 API addresses (host:port) of members; the first that answers is used.' },
  ...STORE_CLIENT_FLAGS,
  { name: 'help', kind: 'boolean', default: false, help: 'Print this help.' },
];

const STATUS_FLAGS: FlagSpec[] = [
  { name: 'write-out', kind: 'string', default: 'text', help: 'Output format: text or json.' },
  { name: 'help', kind: 'boolean', default: false, help: 'Print this help.' },
];

const RESTORE_FLAGS: FlagSpec[] = [
  { name: 'data-dir', kind: 'string', default: '', help: 'The new member\'s data directory; must not exist or be empty.' },
  { name: 'member-id', kind: 'number', default: 1, help: 'This member\'s id in --initial-cluster.' },
  { name: 'initial-cluster', kind: 'string', default: '', help: 'Members of the new cluster, as for carina server: id@raftHost:port@etcdHost:port,...' },
  { name: 'bump-revision', kind: 'number', default: DEFAULT_REVISION_BUMP, help: 'How far the store\'s revision moves forward, above every revision the old cluster issued.' },
  { name: 'mark-compacted', kind: 'boolean', default: true, help: 'Mark every revision up to the new one compacted, so watches and lists from old resourceVersions get 410 and relist.' },
  { name: 'help', kind: 'boolean', default: false, help: 'Print this help.' },
];

const USAGE = 'Usage: carina snapshot save|status|restore FILE [flags] (see carina snapshot <action> --help)\n';

export async function snapshotCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  const fileArg = rest[0] !== undefined && !rest[0].startsWith('--') ? rest[0] : undefined;
  const flagArgs = fileArg === undefined ? rest : rest.slice(1);
  try {
    switch (action) {
      case 'save':
        return await save(fileArg, parseFlags(flagArgs, SAVE_FLAGS));
      case 'status':
        return status(fileArg, parseFlags(flagArgs, STATUS_FLAGS));
      case 'restore':
        return await restore(fileArg, parseFlags(flagArgs, RESTORE_FLAGS));
      default:
        process.stderr.write(USAGE);
        return action === undefined || action === '--help' || action === 'help' ? 0 : 1;
    }
  } catch (err) {
    if (err instanceof SnapshotFileError || err instanceof FlagError || isKvError(err)) {
      process.stderr.write(`carina: snapshot ${action}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

async function save(file: string | undefined, flags: FlagValues): Promise<number> {
  if (flags.help) {
    process.stdout.write(formatHelp('snapshot save FILE', 'Saves a snapshot of a running cluster\'s store (consistent at one applied log index) to FILE.', SAVE_FLAGS));
    return 0;
  }
  const target = resolve(requireFile(file, 'save'));
  const endpoints = (flags.endpoints as string).split(',').map((e) => e.trim()).filter((e) => e !== '');
  const partial = `${target}.part`;
  const client = new EtcdClient({ endpoints, tls: storeClientTls(flags) });
  const progress = new ProgressPrinter();
  try {
    const saved = await client.snapshot(createWriteStream(partial), (received, remaining) => progress.update(received, remaining));
    progress.done(saved.bytes, saved.endpoint);
    const summary = verifySnapshotFile(readSnapshotFile(partial));
    renameSync(partial, target);
    process.stdout.write(`carina: snapshot saved to ${target}: revision ${summary.revision}, applied index ${summary.appliedIndex}, ${summary.keyCount} keys, ${summary.totalBytes} bytes, sha256 ${summary.sha256}\n`);
    return 0;
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  } finally {
    await client.close();
  }
}

function status(file: string | undefined, flags: FlagValues): number {
  if (flags.help) {
    process.stdout.write(formatHelp('snapshot status FILE', 'Verifies a snapshot file and prints its revision, keys, size and hash.', STATUS_FLAGS));
    return 0;
  }
  const summary = verifySnapshotFile(readSnapshotFile(requireFile(file, 'status')));
  if (flags['write-out'] === 'json') {
    process.stdout.write(JSON.stringify(statusFields(summary)) + '\n');
    return 0;
  }
  if (flags['write-out'] !== 'text') throw new FlagError(`--write-out ${String(flags['write-out'])}: text or json`);
  const fields = statusFields(summary);
  const width = Math.max(...Object.keys(fields).map((k) => k.length)) + 1;
  for (const [name, value] of Object.entries(fields)) process.stdout.write(`${(name + ':').padEnd(width)} ${value}\n`);
  return 0;
}

function statusFields(s: SnapshotFileSummary): Record<string, string | number> {
  return {
    hash: s.sha256,
    revision: s.revision,
    'compact revision': s.compactRevision,
    'total keys': s.keyCount,
    'total size': s.totalBytes,
    'applied index': s.appliedIndex,
    'cluster id': s.clusterId.toString(16),
    'from member': s.memberId,
    'taken at': new Date(s.takenAtMs).toISOString(),
  };
}

async function restore(file: string | undefined, flags: FlagValues): Promise<number> {
  if (flags.help) {
    process.stdout.write(formatHelp('snapshot restore FILE', 'Creates the data directory of one member of a new cluster holding the snapshot\'s data. Restore every member from the same file with the same flags, then start each with carina server.', RESTORE_FLAGS));
    return 0;
  }
  const source = requireFile(file, 'restore');
  if (flags['data-dir'] === '') throw new FlagError('--data-dir is required');
  if (flags['initial-cluster'] === '') throw new FlagError('--initial-cluster is required');
  const dataDir = resolve(flags['data-dir'] as string);
  const memberId = flags['member-id'] as number;
  const members = parseInitialCluster(flags['initial-cluster'] as string);
  process.stderr.write(`carina: restore: reading ${source}\n`);
  const summary = await restoreSnapshot({
    file: readSnapshotFile(source),
    dataDir,
    memberId,
    voters: members.map((m) => m.id),
    clusterDescription: members.map((m) => `${m.id}@${m.raftAddress}@${m.clientUrls.join(' ')}`).sort().join(','),
    bumpRevision: flags['bump-revision'] as number,
    markCompacted: flags['mark-compacted'] as boolean,
    onProgress: (line) => process.stderr.write(`carina: restore: ${line}\n`),
  });
  process.stdout.write(
    `carina: restored ${source} into ${dataDir} as member ${memberId} of new cluster ${summary.clusterId.toString(16)}: ` +
    `revision ${summary.revision} (was ${summary.source.revision}), compact revision ${summary.compactRevision}, ${summary.keyCount} keys\n` +
    `carina: give it the cluster's shared PKI first (its store ports accept only the store CA's certificates): carina pki copy --from <a member's data-dir>/pki --to ${dataDir}/pki\n` +
    `carina: start it with: carina server --data-dir ${dataDir} --member-id ${memberId} --initial-cluster ${flags['initial-cluster'] as string}` +
    ` --listen-etcd-address ${etcdAddressOf(members, memberId)}\n`,
  );
  return 0;
}

/** The member's etcd API address from --initial-cluster, which carina server does not infer. */
function etcdAddressOf(members: Array<{ id: number; clientUrls: string[] }>, memberId: number): string {
  const url = members.find((m) => m.id === memberId)?.clientUrls[0] ?? '';
  return url.replace(/^https?:\/\//, '');
}

function readSnapshotFile(path: string): Buffer {
  if (!existsSync(path)) throw new SnapshotFileError(`${path}: no such file`);
  try {
    return readFileSync(path);
  } catch (err) {
    throw new SnapshotFileError(`${path}: ${(err as Error).message}`, { cause: err });
  }
}

function requireFile(file: string | undefined, action: string): string {
  if (file === undefined) throw new FlagError(`carina snapshot ${action} needs a FILE argument`);
  return file;
}

/** Progress lines for a transfer: at most one a second, and one at each tenth of the total. */
class ProgressPrinter {
  private lastAt = 0;
  private lastTenth = -1;

  update(received: number, remaining: number): void {
    const total = received + remaining;
    const tenth = total > 0 ? Math.floor((10 * received) / total) : 10;
    const now = Date.now();
    if (tenth === this.lastTenth && now - this.lastAt < 1000) return;
    this.lastTenth = tenth;
    this.lastAt = now;
    process.stderr.write(`carina: snapshot: received ${formatBytes(received)} of ${formatBytes(total)} (${total > 0 ? Math.floor((100 * received) / total) : 100}%)\n`);
  }

  done(bytes: number, endpoint: string): void {
    process.stderr.write(`carina: snapshot: ${formatBytes(bytes)} received from ${endpoint}; verifying\n`);
  }
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}
