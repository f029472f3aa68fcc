/**
 * The replica's data directory holds every Secret (the store's WAL, snapshots and LevelDB
 * tables), so nobody but its owner may read it: folders 0700, files 0600, whatever existed.
 *
 * Two measures, both at the start of a `carina server` or `carina snapshot restore`:
 * - the process umask is 0o077 (main.ts), because LevelDB (classic-level) creates its own files
 *   with 0644 & ~umask and offers no mode: the tables, logs and manifests that compactions create
 *   later are born 0600 too. The umask is per process; the only other thread, the YAML decoder
 *   (src/codec/yaml-body-decoder.ts), creates no files, and what else this process writes (the
 *   audit log, kubeconfigs, PKI files) is its owner's alone; the PKI sets its modes explicitly.
 * - tightenDataDir: the directory as found (an operator's `mkdir`, a 0755 from an older version)
 *   is made 0700 and everything in it loses its group and other bits, with one warning line when
 *   the directory itself was open to others (etcd 3.4 warns the same way about its data dir).
 *   pki/ is left to src/certificates, which sets its own modes (keys 0600, folders 0700,
 *   certificates 0644 as kubeadm writes them); the 0700 data directory keeps others out of it.
 * The store's own code (raft/storage, raft/kv, raft/etcd) also creates its folders 0700 and its
 * files 0600 explicitly, so that it holds when the store is used without this entry point.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';

/** The umask of every `carina` process that writes a data directory. */
export const PRIVATE_UMASK = 0o077;

/** The data directory's PKI folder (src/certificates), whose modes are its own. */
const PKI_DIR = 'pki';

/**
 * Creates `dataDir` 0700 if missing; otherwise sets it 0700 and strips the group and other bits
 * of everything below it. Logs one line when the directory was readable or writable by others.
 *
 * @example await tightenDataDir('/var/lib/carina', console.log)
 */
export async function tightenDataDir(dataDir: string, log: (line: string) => void): Promise<void> {
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const mode = (await fs.stat(dataDir)).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    log(`carina: data directory ${dataDir} had mode ${mode.toString(8).padStart(4, '0')}: other users could read the store (Secrets included); it is now 0700`);
  }
  await fs.chmod(dataDir, 0o700);
  for (const entry of await fs.readdir(dataDir, { withFileTypes: true })) {
    if (entry.name !== PKI_DIR) await tighten(join(dataDir, entry.name), entry.isDirectory());
  }
}

async function tighten(path: string, isDirectory: boolean): Promise<void> {
  const stat = await fs.lstat(path);
  if (stat.isSymbolicLink()) return; // the link's target is not ours to change
  const mode = stat.mode & 0o777;
  const wanted = isDirectory ? 0o700 : mode & 0o700;
  if (mode !== wanted) await fs.chmod(path, wanted);
  if (!isDirectory) return;
  for (const entry of await fs.readdir(path, { withFileTypes: true })) {
    await tighten(join(path, entry.name), entry.isDirectory());
  }
}
