/**
 * The audit log file (`--audit-log-path` with `--audit-log-maxsize`, `-maxbackup`, `-maxage`,
 * `-compress`), rotated as kube-apiserver's lumberjack logger does:
 *
 * - lines are appended to the file (created 0600; an existing file is appended to);
 * - before a line would take the file past maxsize megabytes (0: 100 MB, lumberjack's default),
 *   the file is renamed `<name>-<UTC time as 2006-01-02T15-04-05.000><ext>` and a new one is
 *   started;
 * - then backups beyond maxbackup (0: all kept) and older than maxage days (0: no limit), by the
 *   time in their name, are removed, oldest first; with compress, backups are gzipped
 *   (`.gz` appended);
 * - `-` writes to standard output instead, without rotation.
 *
 * Writes are synchronous, in order (kube's default "blocking" mode: the request waits for its
 * event to be written). A failing write is reported through `log` once until writes succeed
 * again; the event is lost, never the request.
 */
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { AuditError, errorText } from './errors';

export interface AuditLogFileOptions {
  readonly path: string;
  /** Megabytes before rotation; 0 is lumberjack's default of 100. */
  readonly maxSizeMb: number;
  /** Backups kept; 0 keeps all. */
  readonly maxBackups: number;
  /** Days a backup is kept; 0 keeps them whatever their age. */
  readonly maxAgeDays: number;
  readonly compress: boolean;
  readonly now?: () => Date;
  readonly log?: (line: string) => void;
}

const MEGABYTE = 1024 * 1024;
const DEFAULT_MAX_SIZE_MB = 100;
const DAY_MS = 24 * 60 * 60 * 1000;

function backupTimestamp(date: Date): string {
  // 2006-01-02T15-04-05.000, UTC: lumberjack's backupTimeFormat.
  return date.toISOString().slice(0, 23).replace(/:/g, '-');
}

export class AuditLogFile {
  private fd: number | undefined;
  private size = 0;
  private failing = false;
  private readonly maxBytes: number;
  private readonly now: () => Date;
  private readonly directory: string;
  private readonly prefix: string;
  private readonly extension: string;

  constructor(private readonly options: AuditLogFileOptions) {
    if (options.maxSizeMb < 0 || options.maxBackups < 0 || options.maxAgeDays < 0) throw new AuditError('INVALID_OPTIONS', '--audit-log-maxsize, --audit-log-maxbackup and --audit-log-maxage must not be negative');
    this.maxBytes = (options.maxSizeMb === 0 ? DEFAULT_MAX_SIZE_MB : options.maxSizeMb) * MEGABYTE;
    this.now = options.now ?? (() => new Date());
    this.directory = path.dirname(options.path);
    this.extension = path.extname(options.path);
    this.prefix = `${path.basename(options.path, this.extension)}-`;
  }

  get isStdout(): boolean {
    return this.options.path === '-';
  }

  /** Opens (creating) the file now, so that a path that cannot be written stops the server at start. */
  open(): void {
    if (this.isStdout || this.fd !== undefined) return;
    try {
      mkdirSync(this.directory, { recursive: true, mode: 0o700 });
      this.fd = openSync(this.options.path, 'a', 0o600);
      this.size = fstatSync(this.fd).size;
    } catch (err) {
      throw new AuditError('IO_ERROR', `opening the audit log "${this.options.path}": ${errorText(err)}`, { cause: err });
    }
  }

  /** Appends one line (a newline is added); false when it could not be written. */
  write(line: string): boolean {
    const bytes = Buffer.from(`${line}\n`, 'utf8');
    if (this.isStdout) {
      process.stdout.write(bytes);
      return true;
    }
    try {
      if (this.fd === undefined) this.open();
      if (this.size > 0 && this.size + bytes.length > this.maxBytes) this.rotate();
      writeSync(this.fd as number, bytes);
      this.size += bytes.length;
      this.failing = false;
      return true;
    } catch (err) {
      if (!this.failing) this.options.log?.(`audit log: writing to "${this.options.path}" failed, events are lost until it works again: ${errorText(err)}`);
      this.failing = true;
      // Reopen on the next write.
      if (this.fd !== undefined) {
        try {
          closeSync(this.fd);
        } catch {
          // Already unusable.
        }
        this.fd = undefined;
      }
      return false;
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  private rotate(): void {
    this.close();
    let backup = path.join(this.directory, `${this.prefix}${backupTimestamp(this.now())}${this.extension}`);
    // Two rotations within one millisecond must not overwrite each other.
    for (let n = 1; existsSync(backup) || existsSync(`${backup}.gz`); n++) backup = path.join(this.directory, `${this.prefix}${backupTimestamp(new Date(this.now().getTime() + n))}${this.extension}`);
    renameSync(this.options.path, backup);
    this.fd = openSync(this.options.path, 'a', 0o600);
    this.size = 0;
    if (this.options.compress) {
      writeFileSync(`${backup}.gz`, gzipSync(readFileSync(backup)), { mode: 0o600 });
      unlinkSync(backup);
    }
    this.removeOldBackups();
  }

  /** The backups of this log, newest first, with the time in their names. */
  backups(): Array<{ file: string; time: number }> {
    const found: Array<{ file: string; time: number }> = [];
    for (const name of readdirSync(this.directory)) {
      if (!name.startsWith(this.prefix)) continue;
      const rest = name.slice(this.prefix.length).replace(/\.gz$/, '');
      if (!rest.endsWith(this.extension)) continue;
      const stamp = rest.slice(0, rest.length - this.extension.length);
      const match = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(stamp);
      if (match === null) continue;
      const time = Date.parse(`${match[1]}T${match[2]}:${match[3]}:${match[4]}.${match[5]}Z`);
      if (!Number.isNaN(time)) found.push({ file: path.join(this.directory, name), time });
    }
    return found.sort((a, b) => b.time - a.time);
  }

  private removeOldBackups(): void {
    const backups = this.backups();
    const cutoff = this.options.maxAgeDays > 0 ? this.now().getTime() - this.options.maxAgeDays * DAY_MS : undefined;
    backups.forEach((backup, index) => {
      const tooMany = this.options.maxBackups > 0 && index >= this.options.maxBackups;
      const tooOld = cutoff !== undefined && backup.time < cutoff;
      if (!tooMany && !tooOld) return;
      try {
        unlinkSync(backup.file);
      } catch (err) {
        this.options.log?.(`audit log: removing the old backup "${backup.file}" failed: ${errorText(err)}`);
      }
    });
  }
}
