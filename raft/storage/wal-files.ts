/**
 * The files of the write-ahead log (wal-storage.ts): segment names, listing, zero-filled
 * preallocation, and the few system calls it needs as promises.
 *
 * A segment is named `<sequence, 16 hex digits>-<first index, 16 hex digits>.wal`: its number
 * (from 1, one more than the segment before it) and the log index that was next when it was
 * started, so every entry appended in earlier segments is below it. A segment is created whole
 * and zero-filled under a temporary name, synced, then renamed into place (and the directory
 * synced), so a segment under its final name always has its full length of zeros or frames.
 *
 * Why zero-filled: overwriting blocks a file already owns needs no metadata change, so each
 * synced write costs one data flush. Measured on this project's 2-core ext4 VM (2,000 synced
 * writes each): 400-byte writes 0.11 ms (p50) into a zero-filled file against 0.16-0.25 ms when
 * extending the file; 40 kB writes 0.16-0.18 ms against 0.26-0.35 ms (extending, or into a sparse
 * file of the right length, which allocates blocks on write).
 */
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { assert } from '../core';

/**
 * The modes of everything the store writes: its files hold every value (Secrets included), so
 * only the owner reads them, whatever the process umask (etcd: fileutil.PrivateFileMode and
 * PrivateDirMode). A mode given at creation is still masked by the umask, never widened.
 */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

export const SEGMENT_SUFFIX = '.wal';
const SEGMENT_PATTERN = /^([0-9a-f]{16})-([0-9a-f]{16})\.wal$/;
const ZERO_FILL_CHUNK = 1 << 20;

export interface SegmentName {
  sequence: number;
  firstIndex: number;
}

export function segmentFileName(name: SegmentName): string {
  return `${name.sequence.toString(16).padStart(16, '0')}-${name.firstIndex.toString(16).padStart(16, '0')}${SEGMENT_SUFFIX}`;
}

export function parseSegmentFileName(file: string): SegmentName | null {
  const m = SEGMENT_PATTERN.exec(file);
  if (m === null) return null;
  const sequence = parseInt(m[1], 16);
  const firstIndex = parseInt(m[2], 16);
  if (!Number.isSafeInteger(sequence) || !Number.isSafeInteger(firstIndex) || sequence === 0) return null;
  return { sequence, firstIndex };
}

/** The segments in `dir` in sequence order, and the names of files that are not segments. */
export async function listSegments(dir: string): Promise<{ segments: Array<SegmentName & { file: string }>; others: string[] }> {
  const names = await fsp.readdir(dir);
  const segments: Array<SegmentName & { file: string }> = [];
  const others: string[] = [];
  for (const file of names) {
    const parsed = parseSegmentFileName(file);
    if (parsed) segments.push({ ...parsed, file });
    else others.push(file);
  }
  segments.sort((a, b) => a.sequence - b.sequence);
  return { segments, others };
}

/**
 * Creates `path` as `bytes` zeros, synced, through a temporary file renamed into place; the
 * directory is synced too. Written 1 MiB at a time through the thread pool: the event loop goes
 * on meanwhile.
 */
export async function createZeroFilledFile(dir: string, file: string, bytes: number): Promise<void> {
  assert(bytes > 0 && bytes % 512 === 0, () => `zero-filled file of ${bytes} bytes: a positive multiple of 512, please`);
  const temporary = join(dir, `${file}.tmp`);
  const handle = await fsp.open(temporary, 'w', PRIVATE_FILE_MODE);
  try {
    const zeros = Buffer.alloc(Math.min(ZERO_FILL_CHUNK, bytes));
    for (let offset = 0; offset < bytes; offset += zeros.length) {
      await handle.write(zeros, 0, Math.min(zeros.length, bytes - offset), offset);
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fsp.rename(temporary, join(dir, file));
  await fsyncDirectory(dir);
}

/** Makes a directory's entries (new, renamed or removed files) durable. */
export async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Opens a segment for synchronous-durability writes: each write returns once it is on disk. */
export function openSegmentForWriting(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.open(path, fs.constants.O_RDWR | fs.constants.O_DSYNC, (err, fd) => (err ? reject(err) : resolve(fd)));
  });
}

/**
 * Writes all of `bytes` at `position`. On a descriptor opened by openSegmentForWriting the write
 * is durable when this resolves (O_DSYNC: the equivalent of write + fdatasync in one system call
 * and one thread-pool round trip; measured 0.14-0.18 ms against 0.21-0.24 ms for the two calls).
 */
export function writeAt(fd: number, bytes: Uint8Array, position: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const step = (done: number): void => {
      if (done === bytes.length) {
        resolve();
        return;
      }
      fs.write(fd, bytes, done, bytes.length - done, position + done, (err, written) => {
        if (err) reject(err);
        else step(done + written);
      });
    };
    step(0);
  });
}

export function closeFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.close(fd, (err) => (err ? reject(err) : resolve())));
}
