/**
 * A Protobuf writer into one growing buffer, for the large bodies the API serves (a list of
 * 10,000 Pods is ~10 MB in millions of fields). protobufjs's Writer queues an operation object
 * per field and copies them all at finish(), which made a list's encode spend most of its time
 * in garbage collection (bench/RESULTS.md, "write verbs and wire encoding cost").
 *
 * Nested messages are written in place: fork() reserves one byte for the length, and ldelim()
 * writes the varint length there, moving the message right by the extra bytes when the length
 * needs more than one. Most nested messages of Kubernetes objects are under 128 bytes, and a
 * large one moves once per level it is nested in, so the copying stays a small multiple of the
 * output. The bytes are those of a canonical encoder (minimal varints), as Go's are.
 */
// Below half of Buffer.poolSize, so that small bodies come from the shared pool.
const INITIAL_BYTES = 1024;

export class WireWriter {
  private buffer = Buffer.allocUnsafe(INITIAL_BYTES);
  private length = 0;
  /** Start offsets of the messages forked and not yet closed. */
  private readonly forks: number[] = [];

  uint32(value: number): this {
    this.varint32(value >>> 0);
    return this;
  }

  /** Negative values take ten bytes (sign-extended to 64 bits), as protobuf's int32 does. */
  int32(value: number): this {
    if (value >= 0) this.varint32(value);
    else this.varint64(BigInt.asUintN(64, BigInt(value)));
    return this;
  }

  /** A decimal string for values beyond 2^53, as Go durations in nanoseconds can be. */
  int64(value: number | string): this {
    if (typeof value === 'number' && value >= 0 && Number.isSafeInteger(value)) this.varintNumber(value);
    else this.varint64(BigInt.asUintN(64, BigInt(value)));
    return this;
  }

  bool(value: boolean): this {
    this.reserve(1);
    this.buffer[this.length++] = value ? 1 : 0;
    return this;
  }

  double(value: number): this {
    this.reserve(8);
    this.buffer.writeDoubleLE(value, this.length);
    this.length += 8;
    return this;
  }

  string(value: string): this {
    const bytes = Buffer.byteLength(value, 'utf8');
    this.varint32(bytes);
    this.reserve(bytes);
    if (bytes === value.length && bytes < 64) {
      // Short ASCII (names, keys, most values): a loop beats a call into the native writer.
      for (let i = 0; i < bytes; i++) this.buffer[this.length + i] = value.charCodeAt(i);
    } else {
      this.buffer.write(value, this.length, bytes, 'utf8');
    }
    this.length += bytes;
    return this;
  }

  bytes(value: Uint8Array): this {
    this.varint32(value.length);
    this.reserve(value.length);
    this.buffer.set(value, this.length);
    this.length += value.length;
    return this;
  }

  /** Starts a length-delimited message; ldelim() closes it. */
  fork(): this {
    this.reserve(1);
    this.forks.push(this.length);
    this.length += 1;
    return this;
  }

  ldelim(): this {
    const start = this.forks.pop();
    if (start === undefined) throw new Error('WireWriter.ldelim without fork');
    const size = this.length - start - 1;
    const lengthBytes = varintSize(size);
    if (lengthBytes > 1) {
      this.reserve(lengthBytes - 1);
      this.buffer.copyWithin(start + lengthBytes, start + 1, this.length);
      this.length += lengthBytes - 1;
    }
    let at = start;
    let rest = size;
    while (rest >= 0x80) {
      this.buffer[at++] = (rest & 0x7f) | 0x80;
      rest >>>= 7;
    }
    this.buffer[at] = rest;
    return this;
  }

  /** The bytes written, as a view of the writer's buffer (the writer is not to be used after). */
  finish(): Buffer {
    if (this.forks.length > 0) throw new Error('WireWriter.finish with an open fork');
    return this.buffer.subarray(0, this.length);
  }

  private reserve(bytes: number): void {
    const needed = this.length + bytes;
    if (needed <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  private varint32(value: number): void {
    this.reserve(5);
    while (value >= 0x80) {
      this.buffer[this.length++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    this.buffer[this.length++] = value;
  }

  /** A non-negative safe integer, possibly beyond 32 bits. */
  private varintNumber(value: number): void {
    if (value <= 0xffffffff) {
      this.varint32(value);
      return;
    }
    this.reserve(10);
    while (value >= 0x80) {
      this.buffer[this.length++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    this.buffer[this.length++] = value;
  }

  private varint64(value: bigint): void {
    this.reserve(10);
    while (value >= 0x80n) {
      this.buffer[this.length++] = Number(value & 0x7fn) | 0x80;
      value >>= 7n;
    }
    this.buffer[this.length++] = Number(value);
  }
}

function varintSize(value: number): number {
  let bytes = 1;
  while (value >= 0x80) {
    value >>>= 7;
    bytes++;
  }
  return bytes;
}
