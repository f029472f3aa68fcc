/**
 * `carina snapshot restore`: a data directory for one member of a NEW cluster, holding the data
 * of a snapshot file. Every member of the new cluster is restored from the same file with the
 * same flags and so starts from the same state.
 *
 * The directory holds only a Raft log that starts with a snapshot at index 1 (term 1, the new
 * members as voters, the store's image as its data); `carina server` on it restores the store
 * from that snapshot on start, exactly as a follower installs one sent by its leader.
 *
 * Unlike etcd's default restore, the revision moves forward by `bumpRevision` (default 10^9, as
 * Kubernetes' documentation advises) and the history before it is marked compacted: every
 * resourceVersion the old cluster handed out is then older than the compact revision, so a
 * client's watch or list from one gets "compacted" (410 Gone in the Kubernetes API) and relists,
 * instead of resuming from a revision the new cluster reuses for other changes.
 *
 * The new cluster gets its own cluster id, written to <data-dir>/cluster-id, so clients and
 * members of the old cluster are not mistaken for it.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MvccStore, type MvccImage } from '../kv';
import { encodeImage } from '../kv';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, openRaftLog } from '../storage';
import { decodeSnapshotFile, liveKeyCount, SnapshotFileError, type SnapshotFileSummary } from './snapshot-file';

/** Kubernetes' advice for etcdutl snapshot restore --bump-revision. */
export const DEFAULT_REVISION_BUMP = 1_000_000_000;
const CLUSTER_ID_FILE = 'cluster-id';
/** The Raft index (and term) of the snapshot a restored log starts with. */
const RESTORED_INDEX = 1;

export interface SnapshotRestoreOptions {
  /** The snapshot file's bytes. */
  file: Uint8Array;
  /** Must not exist yet, or be empty. */
  dataDir: string;
  memberId: number;
  /** The voters of the new cluster, this member included. */
  voters: number[];
  /** Text that names the new cluster's membership (e.g. --initial-cluster); enters the cluster id. */
  clusterDescription: string;
  bumpRevision?: number;
  markCompacted?: boolean;
  onProgress?: (line: string) => void;
}

export interface SnapshotRestoreSummary {
  source: SnapshotFileSummary;
  revision: number;
  compactRevision: number;
  keyCount: number;
  clusterId: bigint;
}

export async function restoreSnapshot(options: SnapshotRestoreOptions): Promise<SnapshotRestoreSummary> {
  const progress = options.onProgress ?? (() => undefined);
  const bump = options.bumpRevision ?? DEFAULT_REVISION_BUMP;
  const markCompacted = options.markCompacted ?? true;
  if (!Number.isSafeInteger(bump) || bump < 0) throw new SnapshotFileError(`--bump-revision ${bump}: must be a non-negative integer`);
  if (!options.voters.includes(options.memberId)) throw new SnapshotFileError(`member ${options.memberId} is not among the new cluster's members ${options.voters.join(', ')}`);
  if (existsSync(options.dataDir) && readdirSync(options.dataDir).length > 0) {
    throw new SnapshotFileError(`data directory ${options.dataDir} is not empty: restore only into a new directory`);
  }

  progress(`verifying ${options.file.length} bytes (sha256, image checksum)`);
  const { summary, image } = decodeSnapshotFile(options.file);
  progress(`snapshot of cluster ${summary.clusterId.toString(16)} taken from member ${summary.memberId} at applied index ${summary.appliedIndex}: revision ${summary.revision}, ${summary.keyCount} keys`);

  const restored = rebaseImage(image, bump, markCompacted);
  progress(`store rebuilt: revision ${image.revision} -> ${restored.revision}, compact revision ${image.compactRevision} -> ${restored.compactRevision}`);

  const clusterId = newClusterId(options.clusterDescription, summary.sha256, bump);
  mkdirSync(options.dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const data = encodeImage(restored);
  const storage = await openRaftLog(options.dataDir);
  try {
    await storage.save({
      hardState: { term: RESTORED_INDEX, vote: 0, commit: RESTORED_INDEX },
      entries: [],
      snapshot: { metadata: { index: RESTORED_INDEX, term: RESTORED_INDEX, confState: { voters: [...options.voters].sort((a, b) => a - b), learners: [] } }, data },
    }, { sync: true });
  } finally {
    await storage.close();
  }
  writeFileSync(join(options.dataDir, CLUSTER_ID_FILE), `${clusterId.toString(16)}\n`, { mode: PRIVATE_FILE_MODE });
  progress(`wrote ${data.length} bytes of Raft snapshot for member ${options.memberId} of ${options.voters.length} in ${options.dataDir}`);
  return { source: summary, revision: restored.revision, compactRevision: restored.compactRevision, keyCount: liveKeyCount(restored), clusterId };
}

/**
 * The image moved `bump` revisions forward. Marked compacted, only the current value of every
 * live key remains (as a compaction to the old revision leaves it) and the compact revision is
 * the new revision, so no revision the old cluster issued can be read or watched from.
 */
export function rebaseImage(image: MvccImage, bump: number, markCompacted: boolean): MvccImage {
  if (!markCompacted) return { ...image, revision: image.revision + bump };
  const store = MvccStore.fromImage(image);
  if (image.revision > image.compactRevision) store.compact(image.revision);
  const compacted = store.image();
  const revision = image.revision + bump;
  // Deletions at the old revision stay in a compacted image only for watches starting there; none can now.
  return { revision, compactRevision: revision, records: compacted.records.filter((r) => r.kv !== null), leases: compacted.leases };
}

/** The cluster id a restore wrote into `dataDir`, if any. */
export function readRestoredClusterId(dataDir: string): bigint | undefined {
  const path = join(dataDir, CLUSTER_ID_FILE);
  if (!existsSync(path)) return undefined;
  const text = readFileSync(path, 'utf8').trim();
  if (!/^[0-9a-f]{1,16}$/.test(text)) throw new SnapshotFileError(`${path}: "${text}" is not a cluster id (hex)`);
  return BigInt(`0x${text}`);
}

function newClusterId(description: string, snapshotSha256: string, bump: number): bigint {
  const digest = createHash('sha256').update(`${description}\n${snapshotSha256}\n${bump}`).digest();
  return digest.readBigUInt64BE(0) & 0x7fff_ffff_ffff_ffffn;
}
