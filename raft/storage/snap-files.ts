/**
 * SnapFiles: the data of Raft snapshots, one file each, beside the write-ahead log that records
 * their metadata (wal-storage.ts). The log carries a snapshot's index, term, membership, data
 * length and data checksum; the file carries the data. A snapshot counts only once the log's
 * record of it is durable, so the file is written (and synced, with its directory) first.
 *
 * File name: `<term, 16 hex digits>-<index, 16 hex digits>.snap`. Layout, big-endian:
 *
 *     magic u32 ("CSNP") | index u64 | term u64 | data length u64 | data | crc u32
 *
 * `crc` is CRC-32 over everything before it; the data's own CRC-32 (what the log records) is
 * computed on the way. Both run 1 MiB at a time with the event loop in between, because a store
 * image may be hundreds of megabytes and a long computation would delay heartbeats.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { assertSafeInteger } from '../core';
import { RaftError } from '../core';
import { crc32 } from './record-codec';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, fsyncDirectory } from './wal-files';

const MAGIC = 0x43534e50; // "CSNP"
const HEADER_BYTES = 28;
const SLICE_BYTES = 1 << 20;
const NAME_PATTERN = /^([0-9a-f]{16})-([0-9a-f]{16})\.snap$/;

export interface SnapFileRef {
  index: number;
  term: number;
}

export interface PreparedSnapFile {
  ref: SnapFileRef;
  dataCrc: number;
  temporary: string;
}

export class SnapFiles {
  constructor(readonly dir: string) {}

  static fileName(ref: SnapFileRef): string {
    return `${hex16(ref.term)}-${hex16(ref.index)}.snap`;
  }

  path(ref: SnapFileRef): string {
    return join(this.dir, SnapFiles.fileName(ref));
  }

  /** Writes and syncs the data of the snapshot at (index, term); returns the data's CRC-32. */
  async write(ref: SnapFileRef, data: Uint8Array): Promise<number> {
    const prepared = await this.prepare(ref, data);
    await this.install(prepared);
    return prepared.dataCrc;
  }

  /**
   * Writes and syncs the data under a temporary name of its own; install() gives it its final
   * name, discard() removes it. Lets a writer check, once the data is on disk, that the snapshot
   * is still wanted, without another write racing for the same final name.
   */
  async prepare(ref: SnapFileRef, data: Uint8Array): Promise<PreparedSnapFile> {
    assertSafeInteger(ref.index, 'snapshot index');
    assertSafeInteger(ref.term, 'snapshot term');
    await fsp.mkdir(this.dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeUInt32BE(MAGIC, 0);
    writeU64(header, 4, ref.index);
    writeU64(header, 12, ref.term);
    writeU64(header, 20, data.length);
    const dataCrc = await slicedCrc(data, 0);
    const fileCrc = await slicedCrc(data, crc32(header));
    const trailer = Buffer.alloc(4);
    trailer.writeUInt32BE(fileCrc >>> 0, 0);
    const temporary = `${this.path(ref)}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await fsp.open(temporary, 'w', PRIVATE_FILE_MODE);
    try {
      await handle.writev([header, data, trailer]);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return { ref, dataCrc, temporary };
  }

  async install(prepared: PreparedSnapFile): Promise<void> {
    await fsp.rename(prepared.temporary, this.path(prepared.ref));
    await fsyncDirectory(this.dir);
  }

  async discard(prepared: PreparedSnapFile): Promise<void> {
    await fsp.rm(prepared.temporary, { force: true });
  }

  /**
   * Reads the data of the snapshot at (index, term), checking the file against itself and against
   * what the log recorded. Throws RaftError CORRUPT naming the file.
   */
  async read(ref: SnapFileRef, expected: { dataBytes: number; dataCrc: number }): Promise<Uint8Array> {
    const path = this.path(ref);
    const corrupt = (detail: string): RaftError => new RaftError('CORRUPT', `read snapshot file "${path}": ${detail}`);
    let bytes: Buffer;
    try {
      bytes = await fsp.readFile(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw corrupt('missing, though the log records this snapshot');
      throw err;
    }
    if (bytes.length < HEADER_BYTES + 4) throw corrupt(`${bytes.length} bytes, shorter than header and checksum`);
    if (bytes.readUInt32BE(0) !== MAGIC) throw corrupt(`bad magic 0x${bytes.readUInt32BE(0).toString(16)}`);
    const dataBytes = readU64(bytes, 20);
    if (HEADER_BYTES + dataBytes + 4 !== bytes.length) throw corrupt(`header says ${dataBytes} data bytes, the file holds ${bytes.length - HEADER_BYTES - 4}`);
    const data = bytes.subarray(HEADER_BYTES, HEADER_BYTES + dataBytes);
    const fileCrc = await slicedCrc(data, crc32(bytes.subarray(0, HEADER_BYTES)));
    if (fileCrc >>> 0 !== bytes.readUInt32BE(bytes.length - 4)) throw corrupt('checksum mismatch');
    if (readU64(bytes, 4) !== ref.index || readU64(bytes, 12) !== ref.term) {
      throw corrupt(`holds the snapshot at index ${readU64(bytes, 4)}, term ${readU64(bytes, 12)}`);
    }
    if (dataBytes !== expected.dataBytes || (await slicedCrc(data, 0)) >>> 0 !== expected.dataCrc >>> 0) {
      throw corrupt(`does not match the log's record (${expected.dataBytes} bytes, crc 0x${(expected.dataCrc >>> 0).toString(16)})`);
    }
    const copy = new Uint8Array(data.length);
    copy.set(data);
    return copy;
  }

  /**
   * Removes every snapshot file but `keep`'s. Not the temporary files: one may be a snapshot
   * being written right now (removeTemporary clears them at open).
   */
  async removeAllBut(keep: SnapFileRef | null): Promise<void> {
    const kept = keep ? SnapFiles.fileName(keep) : null;
    for (const name of await this.names()) {
      if (name !== kept && NAME_PATTERN.test(name)) await fsp.rm(join(this.dir, name), { force: true });
    }
  }

  /** Removes the temporary files of writes a crash interrupted; only when none is in progress. */
  async removeTemporary(): Promise<void> {
    for (const name of await this.names()) {
      if (name.endsWith('.tmp')) await fsp.rm(join(this.dir, name), { force: true });
    }
  }

  private async names(): Promise<string[]> {
    try {
      return await fsp.readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }
}

async function slicedCrc(data: Uint8Array, initial: number): Promise<number> {
  let crc = initial;
  for (let offset = 0; offset < data.length; offset += SLICE_BYTES) {
    if (offset > 0) await yieldToEventLoop();
    crc = crc32(data.subarray(offset, Math.min(data.length, offset + SLICE_BYTES)), crc);
  }
  return crc >>> 0;
}

function hex16(value: number): string {
  return value.toString(16).padStart(16, '0');
}

function writeU64(buffer: Buffer, offset: number, value: number): void {
  buffer.writeUInt32BE(Math.floor(value / 0x1_0000_0000), offset);
  buffer.writeUInt32BE(value >>> 0, offset + 4);
}

function readU64(buffer: Buffer, offset: number): number {
  return buffer.readUInt32BE(offset) * 0x1_0000_0000 + buffer.readUInt32BE(offset + 4);
}
