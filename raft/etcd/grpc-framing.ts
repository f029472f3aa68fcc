/**
 * The pieces of gRPC over HTTP/2 that a client or server written on `node:http2` needs, after
 * the gRPC "PROTOCOL-HTTP2" specification: the length-prefixed message framing, an incremental
 * deframer for DATA chunks, the `grpc-timeout` header, the `grpc-status` / `grpc-message`
 * trailers with the message percent-encoded, and the mapping of HTTP statuses for responses that
 * carry no gRPC status. Nothing here knows about etcd or protobuf.
 *
 * Compression is not supported: messages are sent with the compressed flag 0, and a message that
 * arrives compressed is refused (no `grpc-encoding` other than identity is ever offered).
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerHttp2Stream } from 'node:http2';

/** gRPC status codes (grpc/doc/statuscodes.md); one table, kept with the store's error codes. */
export { GrpcCode as Status } from '../kv';
import { GrpcCode as Status } from '../kv';

export const GRPC_CONTENT_TYPE = 'application/grpc';
/** Compressed flag (1 byte) and message length (4 bytes, big-endian). */
export const FRAME_HEADER_BYTES = 5;
/** The largest length a frame header can carry. */
export const MAX_FRAME_LENGTH = 0xffffffff;

/** A framing or protocol problem, with the gRPC status it ends the call with. */
export class GrpcProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'GrpcProtocolError';
  }
}

// --- Framing ----------------------------------------------------------------------------------------

/**
 * Fills the 5-byte header at `offset` for the message that follows it up to the end of `frame`
 * (an encoder that left the bytes free, e.g. `encodeWithPrefix(value, FRAME_HEADER_BYTES)`).
 */
export function writeFrameHeader(frame: Uint8Array, offset = 0): Uint8Array {
  const length = frame.length - offset - FRAME_HEADER_BYTES;
  if (length < 0) throw new RangeError('frame is shorter than its header');
  if (length > MAX_FRAME_LENGTH) throw new RangeError(`message of ${length} bytes does not fit a gRPC frame`);
  frame[offset] = 0;
  frame[offset + 1] = length >>> 24;
  frame[offset + 2] = (length >>> 16) & 0xff;
  frame[offset + 3] = (length >>> 8) & 0xff;
  frame[offset + 4] = length & 0xff;
  return frame;
}

/** One message as one uncompressed frame (a copy). */
export function frameMessage(message: Uint8Array): Uint8Array {
  const frame = new Uint8Array(FRAME_HEADER_BYTES + message.length);
  frame.set(message, FRAME_HEADER_BYTES);
  return writeFrameHeader(frame);
}

const NO_MESSAGES: readonly Uint8Array[] = Object.freeze([]) as readonly Uint8Array[];

/**
 * Cuts a stream of DATA chunks into messages. Chunks may split a message (or its header) anywhere
 * and may hold several messages. Every message is returned in a buffer of its own, copied out of
 * the chunks: views into a chunk would keep the whole chunk (often a large shared read buffer)
 * alive for as long as any decoded value of the message is kept. The copy comes from
 * Buffer.allocUnsafe, i.e. Node's 8 KiB pool for messages under 4 KiB: several times cheaper
 * than a fresh ArrayBuffer, at the cost of a kept view pinning at most one pool slab.
 *
 * After an error the deframer is broken and every later push throws the same error: the stream
 * it reads is no longer in step.
 */
export class GrpcDeframer {
  private readonly header = new Uint8Array(FRAME_HEADER_BYTES);
  private headerFilled = 0;
  private message: Uint8Array | null = null;
  private messageFilled = 0;
  private broken: GrpcProtocolError | null = null;

  constructor(readonly maxMessageBytes: number = 4 * 1024 * 1024) {
    if (!Number.isSafeInteger(maxMessageBytes) || maxMessageBytes < 0) throw new RangeError(`bad maxMessageBytes ${maxMessageBytes}`);
  }

  /** True between messages: ending the stream here loses nothing. */
  get atBoundary(): boolean {
    return this.headerFilled === 0 && this.message === null;
  }

  /** Bytes received of the message (and header) not yet complete. */
  get bufferedBytes(): number {
    return this.headerFilled + this.messageFilled;
  }

  /** The complete messages that this chunk finishes, in order. */
  push(chunk: Uint8Array): readonly Uint8Array[] {
    if (this.broken !== null) throw this.broken;
    let out: Uint8Array[] | null = null;
    let pos = 0;
    const end = chunk.length;
    while (pos < end) {
      if (this.message === null) {
        // Fast path: a whole header in this chunk, nothing pending.
        if (this.headerFilled === 0 && end - pos >= FRAME_HEADER_BYTES) {
          const length = this.startMessage(chunk[pos], readUint32(chunk, pos + 1));
          pos += FRAME_HEADER_BYTES;
          if (end - pos >= length) {
            const message = Buffer.allocUnsafe(length);
            message.set(chunk.subarray(pos, pos + length));
            pos += length;
            (out ??= []).push(message);
            continue;
          }
          this.message = Buffer.allocUnsafe(length);
          this.messageFilled = 0;
          continue;
        }
        const take = Math.min(FRAME_HEADER_BYTES - this.headerFilled, end - pos);
        this.header.set(chunk.subarray(pos, pos + take), this.headerFilled);
        this.headerFilled += take;
        pos += take;
        if (this.headerFilled < FRAME_HEADER_BYTES) break;
        this.headerFilled = 0;
        const length = this.startMessage(this.header[0], readUint32(this.header, 1));
        this.message = Buffer.allocUnsafe(length);
        this.messageFilled = 0;
        if (length === 0) {
          (out ??= []).push(this.message);
          this.message = null;
        }
        continue;
      }
      const take = Math.min(this.message.length - this.messageFilled, end - pos);
      this.message.set(chunk.subarray(pos, pos + take), this.messageFilled);
      this.messageFilled += take;
      pos += take;
      if (this.messageFilled === this.message.length) {
        (out ??= []).push(this.message);
        this.message = null;
        this.messageFilled = 0;
      }
    }
    return out ?? NO_MESSAGES;
  }

  /**
   * Checks that the stream ended between messages; throws (INTERNAL) if it ended inside one.
   */
  end(): void {
    if (this.broken !== null) throw this.broken;
    if (!this.atBoundary) {
      this.broken = new GrpcProtocolError(Status.INTERNAL, `stream ended inside a message (${this.bufferedBytes} bytes buffered)`);
      throw this.broken;
    }
  }

  private startMessage(flag: number, length: number): number {
    if (flag === 1) {
      this.broken = new GrpcProtocolError(Status.INTERNAL, 'received a compressed message, but no compression was negotiated');
    } else if (flag !== 0) {
      this.broken = new GrpcProtocolError(Status.INTERNAL, `bad compressed flag ${flag} in a gRPC frame`);
    } else if (length > this.maxMessageBytes) {
      this.broken = new GrpcProtocolError(
        Status.RESOURCE_EXHAUSTED,
        `received message larger than max (${length} vs. ${this.maxMessageBytes})`,
      );
    }
    if (this.broken !== null) throw this.broken;
    return length;
  }
}

function readUint32(bytes: Uint8Array, at: number): number {
  return ((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0;
}

// --- grpc-timeout ----------------------------------------------------------------------------------

/** Each unit with its length in milliseconds, finest first. */
const TIMEOUT_UNITS: ReadonlyArray<[string, number]> = [
  ['n', 1e-6],
  ['u', 1e-3],
  ['m', 1],
  ['S', 1_000],
  ['M', 60_000],
  ['H', 3_600_000],
];
const MAX_TIMEOUT_VALUE = 99_999_999;

/** A timeout in milliseconds counted in one unit, rounded up (exact for whole milliseconds). */
function inUnit(ms: number, unitMs: number): number {
  return Math.ceil(unitMs < 1 ? ms * Math.round(1 / unitMs) : ms / unitMs);
}

/**
 * `grpc-timeout` for a timeout in milliseconds: at most 8 digits and a unit, in the finest unit
 * that fits. A value that needs rounding is rounded up, so the server never gives up before the
 * client; a timeout beyond 99999999 hours is capped there.
 */
export function formatGrpcTimeout(ms: number): string {
  if (!(ms >= 0)) throw new RangeError(`bad timeout ${ms}`);
  for (const [unit, unitMs] of TIMEOUT_UNITS) {
    const value = inUnit(ms, unitMs);
    if (value <= MAX_TIMEOUT_VALUE) return `${value}${unit}`;
  }
  return `${MAX_TIMEOUT_VALUE}H`;
}

/** The timeout in milliseconds of a `grpc-timeout` value, or null if it is malformed. */
export function parseGrpcTimeout(value: string): number | null {
  const match = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (match === null) return null;
  const unit = TIMEOUT_UNITS.find(([u]) => u === match[2]);
  if (unit === undefined) return null;
  const count = Number(match[1]);
  // Divided rather than multiplied by the fraction, so whole milliseconds come out exact.
  return unit[1] < 1 ? count / Math.round(1 / unit[1]) : count * unit[1];
}

// --- grpc-message ----------------------------------------------------------------------------------

const HEX = '0123456789ABCDEF';
const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8');

/**
 * Percent-encodes a status message for the `grpc-message` trailer: the message's UTF-8 bytes
 * from space to `~` go as they are, except `%`; every other byte as `%XX` (upper-case hex).
 */
export function encodeGrpcMessage(message: string): string {
  let plain = true;
  for (let i = 0; i < message.length; i++) {
    const c = message.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x25) {
      plain = false;
      break;
    }
  }
  if (plain) return message;
  let out = '';
  for (const b of utf8Encoder.encode(message)) {
    if (b >= 0x20 && b <= 0x7e && b !== 0x25) out += String.fromCharCode(b);
    else out += '%' + HEX[b >> 4] + HEX[b & 15];
  }
  return out;
}

/**
 * The inverse of encodeGrpcMessage, lenient as the specification asks: a `%` not followed by two
 * hex digits is kept as it is, and bytes that are not valid UTF-8 become U+FFFD.
 */
export function decodeGrpcMessage(value: string): string {
  if (value.indexOf('%') < 0) return value;
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x25 && i + 2 < value.length && isHex(value.charCodeAt(i + 1)) && isHex(value.charCodeAt(i + 2))) {
      bytes.push(parseInt(value.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c < 0x80) {
      bytes.push(c);
    } else {
      // Not allowed unencoded, but a lenient reader keeps it: as its UTF-8 bytes.
      for (const b of utf8Encoder.encode(value[i])) bytes.push(b);
    }
  }
  return utf8Decoder.decode(new Uint8Array(bytes));
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

// --- Status ----------------------------------------------------------------------------------------

export interface GrpcStatus {
  code: number;
  message: string;
}

/** The trailers that end a response with this status. */
export function statusTrailers(code: number, message = ''): OutgoingHttpHeaders {
  const trailers: OutgoingHttpHeaders = { 'grpc-status': String(code) };
  if (message !== '') trailers['grpc-message'] = encodeGrpcMessage(message);
  return trailers;
}

/**
 * The status in a header block (trailers, or the headers of a trailers-only response), or null if
 * it carries none. A status that is not a number in 0..16 maps to UNKNOWN with its text kept.
 */
export function statusFromHeaders(headers: IncomingHttpHeaders): GrpcStatus | null {
  const raw = headers['grpc-status'];
  if (raw === undefined) return null;
  const text = Array.isArray(raw) ? raw[0] : raw;
  const rawMessage = headers['grpc-message'];
  const message = rawMessage === undefined ? '' : decodeGrpcMessage(Array.isArray(rawMessage) ? rawMessage[0] : rawMessage);
  if (!/^\d{1,2}$/.test(text) || Number(text) > 16) {
    return { code: Status.UNKNOWN, message: `malformed grpc-status ${JSON.stringify(text)}${message ? `: ${message}` : ''}` };
  }
  return { code: Number(text), message };
}

/**
 * The gRPC status of a response that ended without one, from its HTTP status, as the gRPC
 * "http-grpc-status-mapping" document lists it.
 */
export function statusFromHttp(httpStatus: number): GrpcStatus {
  let code: number = Status.UNKNOWN;
  switch (httpStatus) {
    case 400:
      code = Status.INTERNAL;
      break;
    case 401:
      code = Status.UNAUTHENTICATED;
      break;
    case 403:
      code = Status.PERMISSION_DENIED;
      break;
    case 404:
      code = Status.UNIMPLEMENTED;
      break;
    case 429:
    case 502:
    case 503:
    case 504:
      code = Status.UNAVAILABLE;
      break;
  }
  return { code, message: `HTTP status ${httpStatus} without a gRPC status` };
}

/** True for `application/grpc` and its `+proto` / `;params` variants. */
export function isGrpcContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  if (!value.startsWith(GRPC_CONTENT_TYPE)) return false;
  const rest = value.charCodeAt(GRPC_CONTENT_TYPE.length);
  return Number.isNaN(rest) || rest === 0x2b /* + */ || rest === 0x3b /* ; */;
}

export interface RequestHeaderOptions {
  /** `/package.Service/Method`. */
  path: string;
  /** `host:port` of the server. */
  authority: string;
  scheme?: 'http' | 'https';
  timeoutMs?: number;
  userAgent?: string;
}

/** The HEADERS of a gRPC request. */
export function requestHeaders(options: RequestHeaderOptions): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {
    ':method': 'POST',
    ':scheme': options.scheme ?? 'http',
    ':path': options.path,
    ':authority': options.authority,
    'content-type': GRPC_CONTENT_TYPE,
    te: 'trailers',
  };
  if (options.timeoutMs !== undefined && options.timeoutMs > 0) headers['grpc-timeout'] = formatGrpcTimeout(options.timeoutMs);
  if (options.userAgent !== undefined) headers['user-agent'] = options.userAgent;
  return headers;
}

/** The HEADERS of a gRPC response (status and trailers come later, or with statusTrailers alone). */
export function responseHeaders(): OutgoingHttpHeaders {
  return { ':status': 200, 'content-type': GRPC_CONTENT_TYPE };
}

/**
 * The server side of a unary call's request: calls `onMessage` with its one message as soon as
 * it has arrived (anything after it is ignored), or `onFailure` with the status to end the call
 * with if the stream is malformed or ends without a message. Exactly one of the two is called.
 */
export function readUnaryRequest(
  stream: ServerHttp2Stream,
  deframer: GrpcDeframer,
  onMessage: (message: Uint8Array) => void,
  onFailure: (code: number, message: string) => void,
): void {
  let settled = false;
  stream.on('data', (chunk: Buffer) => {
    if (settled) return;
    let messages: readonly Uint8Array[];
    try {
      messages = deframer.push(chunk);
    } catch (err) {
      settled = true;
      onFailure(err instanceof GrpcProtocolError ? err.code : Status.INTERNAL, (err as Error).message);
      return;
    }
    if (messages.length === 0) return;
    settled = true;
    onMessage(messages[0]);
  });
  stream.on('end', () => {
    if (settled) return;
    settled = true;
    onFailure(Status.INTERNAL, 'grpc: request stream ended without a message');
  });
}
