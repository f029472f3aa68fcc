/**
 * The one writer of every response to a request: objects, Tables, documents, streams and error
 * `Status` bodies (apiserver pkg/endpoints/handlers/responsewriters). The representation is
 * negotiated once per request (spec 01 §4.6), from the Accept header and what the endpoint
 * offers, and every later write uses that choice. Warnings collected during the request
 * (deprecated versions, pruned fields, admission) go out as `Warning: 299` headers on whatever
 * response is written, so no stage can drop another's.
 *
 * Contract: exactly one of writeObject, writeEncoded, writeStatus or stream() starts a
 * response; after a stream has started, only the stream writes. writeStatus after the headers
 * went out ends the response (the client sees a cut stream, as with kube-apiserver).
 */
import { ApiError } from '../util';
import { inGoOrder } from '../apis/field-order';
import type { BodyCodec } from './body-codec';
import { mediaTypeOf, negotiateResponse, type Representation, type ResponseChoice } from './negotiation';
import type { JsonObject } from '../apis/object';

/** What node:http and node:http2 compatibility responses both offer. */
export interface HttpResponse {
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly writableLength?: number;
  readonly writableNeedDrain?: boolean;
  writeHead(status: number, headers: Record<string, string | string[]>): unknown;
  write(chunk: Buffer, written?: () => void): boolean;
  end(chunk?: Buffer | string): unknown;
  on(event: 'close' | 'drain', listener: () => void): unknown;
  once(event: 'drain', listener: () => void): unknown;
  flushHeaders?(): void;
  /** node:http's response holds writes between cork() and uncork() and gives them to the socket at once. */
  cork?(): void;
  uncork?(): void;
  /** node:http2's compatibility response: its stream holds writes the same way, and is reset by close(). */
  readonly stream?: { cork(): void; uncork(): void; close?(code?: number): void };
  /** node:http's response: ends the connection. */
  destroy?(): void;
}

/** A response written piece by piece: watch events, or an unpaged list streamed item by item. */
export interface WatchSink {
  /**
   * Sends the header (200 unless `status` says otherwise; `extraHeaders`: a proxied backend's);
   * called once before the first event.
   */
  start(contentType: string, status?: number, extraHeaders?: Record<string, string | string[]>): void;
  /** Writes bytes; false when the socket buffer is full. */
  write(chunk: Buffer): boolean;
  /**
   * Writes `chunks` one after the other as one write (a vectored write of the buffers as they
   * are, not a copy: a watch event's bytes are shared by every watcher); false when full.
   */
  writeAll(chunks: readonly Buffer[]): boolean;
  /**
   * Leaves HTTP/1.1's chunked encoding to the caller, after start(): true when the response is
   * chunked HTTP/1.1, and from then on writeFramed takes whole chunks (size line, bytes, CRLF;
   * `chunkFrame`), so that a watch event shared by every HTTP/1.1 watcher is framed once, not
   * once per watcher. False on HTTP/2 (DATA frames are the session's) and HTTP/1.0.
   */
  frameChunks(): boolean;
  /**
   * Writes `chunks` as one write (framed already if frameChunks() said so) and calls `written`
   * once the connection has taken them (the socket, or HTTP/2's flow control): a watch holds its
   * next events until then and writes them together (watch-stream.ts). Not called if the
   * response ends first.
   */
  writeFramed(chunks: readonly Buffer[], written: () => void): void;
  end(): void;
  /** Called when the client goes away. */
  onClose(callback: () => void): void;
  /** Bytes written but not yet taken by the socket. */
  bufferedBytes(): number;
  /** Resolves when the socket has taken what was buffered (or the client left). */
  drained(): Promise<void>;
}

/** What a watch's events are written to: the response, its HTTP/2 stream, or node:http's connection. */
interface ChunkWriter {
  write(chunk: Buffer, written?: () => void): boolean;
  cork?(): void;
  uncork?(): void;
  readonly stream?: { cork(): void; uncork(): void };
}

/**
 * Writes `chunks` in order as one write: the writer (node:http's response or connection) or its
 * stream (node:http2's compatibility response) is corked around them, so the socket gets the
 * buffers as they are in one vectored write, without a copy that joins them. One chunk is written
 * as it is: corking it would only buffer it and unbuffer it again. Answers what the last write
 * answered.
 */
function writeCorked(res: ChunkWriter, chunks: readonly Buffer[], written?: () => void): boolean {
  if (chunks.length === 1) return res.write(chunks[0], written);
  const held = res.stream ?? (res.cork !== undefined && res.uncork !== undefined ? res : undefined);
  held?.cork?.();
  let taken = true;
  const last = chunks.length - 1;
  for (let i = 0; i < last; i++) taken = res.write(chunks[i]);
  if (last >= 0) taken = res.write(chunks[last], written);
  held?.uncork?.();
  return taken;
}

/** node:http's connection under a response, as far as a direct write needs it. */
interface HttpConnection extends ChunkWriter {
  readonly writable: boolean;
  readonly destroyed: boolean;
  readonly writableNeedDrain: boolean;
  readonly _httpMessage?: unknown;
  once(event: 'drain', listener: () => void): unknown;
}

/** What node:http's response (OutgoingMessage) keeps of its connection and of what it holds back. */
interface OutgoingState {
  readonly socket?: HttpConnection | null;
  readonly _headerSent?: boolean;
  readonly outputData?: readonly unknown[];
}

/**
 * node:http's connection of `res` when a chunk the caller framed may be written to it directly:
 * the response owns it (not a later request's, pipelined), its header went out and it holds
 * nothing back. The response would add its checks to each write and, to a write not corked by
 * the caller, a cork of the connection until the next tick (node:_http_outgoing's write_); written
 * directly, one event to one watcher is one write of the connection. The bytes and their order are
 * the same: the response's own writes (the last chunk) go to the same connection.
 */
function directConnection(res: HttpResponse): HttpConnection | undefined {
  const message = res as unknown as OutgoingState;
  const socket = message.socket;
  if (socket === undefined || socket === null || socket._httpMessage !== res || !socket.writable || socket.destroyed) return undefined;
  return message._headerSent === true && message.outputData?.length === 0 ? socket : undefined;
}

/** HTTP/1.1's chunk of `payload`: its size in hex, CRLF, the bytes, CRLF (RFC 9112 §7.1). */
export function chunkFrame(payload: Buffer): Buffer {
  const size = `${payload.length.toString(16)}\r\n`;
  const framed = Buffer.allocUnsafe(size.length + payload.length + 2);
  framed.write(size, 0, 'latin1');
  payload.copy(framed, size.length);
  framed.write('\r\n', size.length + payload.length, 'latin1');
  return framed;
}

/**
 * The payload's size of a chunk made by chunkFrame (for the per-event metrics), from the chunk's
 * length alone: n payload bytes take hexDigits(n) + 4 more (size line, two CRLFs), and the
 * smallest digit count that fits is the one (a search of the bytes cost a scan per event and watcher).
 */
function chunkPayloadLength(chunk: Buffer): number {
  let digits = 1;
  while (chunk.length - 4 - digits >= 16 ** digits) digits++;
  return chunk.length - 4 - digits;
}

/** HTTP/1.1's last chunk, written by the stream itself once it frames the chunks. */
const LAST_CHUNK = Buffer.from('0\r\n\r\n', 'latin1');

/**
 * node:http's response (OutgoingMessage) frames each write as a chunk while `chunkedEncoding` is
 * set; cleared once its header went out, the response passes the caller's chunks through as they
 * are, in order with what it buffered, to the socket.
 */
interface ChunkedMessage {
  chunkedEncoding?: boolean;
}

/** What an endpoint can answer in: Protobuf (built-in kinds) and a meta.k8s.io Table (reads). */
export interface RepresentationOffer {
  readonly protobuf: boolean;
  readonly table: boolean;
  /** Reads may answer with metadata only (PartialObjectMetadata); see negotiation.ts. */
  readonly partial?: boolean;
}

/**
 * A list whose items are in kube's order, with the rest put in it: a built-in list's kind,
 * apiVersion, metadata and items; a custom resource list's keys sorted (an UnstructuredList).
 */
function listInGoOrder(list: JsonObject): JsonObject {
  const { items, ...rest } = list;
  const ordered = inGoOrder({ ...rest, items: [] });
  ordered.items = items;
  return ordered;
}

/** Open streams, so that a stopping server can end them; returns the function that forgets one. */
export type StreamTracker = (end: () => void) => () => void;

const CACHE_CONTROL = 'no-cache, private';
/** HTTP/2's INTERNAL_ERROR, which Go's server resets a stream with when a handler aborts. */
const NGHTTP2_INTERNAL_ERROR = 2;
/**
 * v1.25's answer to a request past its deadline (filters/timeout.go): the Status without kind or
 * apiVersion, as json.Encoder writes the bare struct, whose content type Go's server sniffs.
 */
const TIMEOUT_BODY = `${JSON.stringify({ metadata: {}, status: 'Failure', message: 'Timeout: request did not complete within the allotted timeout', reason: 'Timeout', details: {}, code: 504 })}\n`;
const SNIFFED_TEXT = 'text/plain; charset=utf-8';
/** v1.25's limits on warnings (spec 02 §8), in characters (runes). */
const WARNINGS_MAX_RUNES = 4096;
const WARNING_TRUNCATED_RUNES = 256;

function runeLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function firstRunes(text: string, count: number): string {
  let out = '';
  let n = 0;
  for (const ch of text) {
    if (n++ === count) break;
    out += ch;
  }
  return out;
}

/**
 * `299 - "<text>"` as Go writes it (apimachinery NewWarningHeader): quotes and backslashes
 * escaped, control characters as spaces (Go's server does so for line breaks; Node refuses
 * them), the text's UTF-8 bytes sent as they are.
 */
function warningHeader(text: string): string {
  const quoted = text.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, ' ');
  return Buffer.from(`299 - "${quoted}"`, 'utf8').toString('latin1');
}

/** strconv.ParseBool's true and false spellings; anything else is an error, which isPrettyPrint reads as false. */
const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);

/**
 * v1.25's isPrettyPrint (handlers/negotiation): a non-empty `pretty` query parameter decides
 * (true only if strconv.ParseBool reads true: `pretty=yes` is not pretty, whatever the client);
 * without one, the User-Agent of browsers and command-line HTTP tools does.
 */
export function isPrettyPrint(query: URLSearchParams, userAgent: string | undefined): boolean {
  const value = query.get('pretty');
  if (value !== null && value !== '') return GO_TRUE.has(value);
  const agent = userAgent ?? '';
  return agent.startsWith('curl') || agent.startsWith('Wget') || agent.startsWith('Mozilla/5.0');
}

/**
 * What of an object is already in kube's field order (src/apis/field-order): all of it (an
 * object read from the store), or a list's items; anything else is put in order when written.
 */
export type InOrder = 'object' | 'items';

export class ResponseWriter {
  /** The status code sent, for metrics and audit; 0 until something was written. */
  status = 0;
  /** What the response carried, for the audit log: the object written, or the Status of a failure. */
  written?: { readonly kind: 'object' | 'status'; readonly value: unknown };
  /** Called when a stream sends its headers (the audit log's ResponseStarted stage). */
  onStreamStart?: () => void;
  /** Called for each chunk a stream writes (apiserver_watch_events_total and _sizes). */
  onStreamChunk?: (bytes: number) => void;
  /** Bytes of the body written by the one-shot writers (apiserver_response_sizes). */
  bodyBytes = 0;
  private readonly extraHeaders: Record<string, string> = {};
  private choice?: ResponseChoice;
  private readonly warnings: string[] = [];
  private readonly recordedWarnings = new Set<string>();
  private readonly orderedWarnings: string[] = [];
  private warningRunes = 0;
  private truncatingWarnings = false;
  /** The request's deadline passed: what the handler writes from then on is dropped. */
  private expired = false;

  constructor(
    private readonly res: HttpResponse,
    private readonly accept: string | undefined,
    private readonly query: URLSearchParams,
    private readonly codec: BodyCodec,
    private readonly trackStream: StreamTracker = () => () => {},
    private readonly userAgent?: string,
  ) {}

  /** The request's deadline passed before it answered (a 504, or a response cut short). */
  get timedOut(): boolean {
    return this.expired;
  }

  get headersSent(): boolean {
    return this.res.headersSent;
  }

  /**
   * Gives the request `ms` milliseconds (from now) to answer (request-deadline.ts): past them, a
   * response not yet started is a 504 Timeout, one already started is cut (the connection closed,
   * or the HTTP/2 stream reset), and whatever the handler writes later is dropped.
   */
  deadlineIn(ms: number): void {
    const timer = setTimeout(() => this.expire(), Math.max(0, ms));
    this.res.on('close', () => clearTimeout(timer));
  }

  private expire(): void {
    if (this.res.writableEnded || this.expired) return;
    this.expired = true;
    if (this.res.headersSent) {
      if (this.res.stream?.close !== undefined) this.res.stream.close(NGHTTP2_INTERNAL_ERROR);
      else this.res.destroy?.();
      return;
    }
    this.status = 504;
    this.written = { kind: 'status', value: JSON.parse(TIMEOUT_BODY) as unknown };
    this.res.writeHead(504, this.headers(SNIFFED_TEXT));
    this.res.end(TIMEOUT_BODY);
  }

  /** Calls `callback` if the client goes away before the response ended (a request waiting in a queue leaves it). */
  onClientGone(callback: () => void): void {
    this.res.on('close', () => {
      if (!this.res.writableEnded) callback();
    });
  }

  /** A header every response to this request carries (Audit-Id). */
  setHeader(name: string, value: string): void {
    this.extraHeaders[name] = value;
  }

  /**
   * Adds a `Warning: 299` header to the response; duplicates are sent once. v1.25's limits
   * (apiserver endpoints/filters/warning.go): up to 4096 characters in all; past that, every
   * warning so far and each later one is cut to 256 characters, and once the cut ones fill
   * 4096 too, the rest are dropped.
   */
  warn(text: string): void {
    if (text === '') return;
    if (this.truncatingWarnings && this.warningRunes >= WARNINGS_MAX_RUNES) return;
    if (this.recordedWarnings.has(text)) return;
    this.recordedWarnings.add(text);
    this.orderedWarnings.push(text);
    let shown = text;
    let length = runeLength(text);
    if (this.truncatingWarnings && length > WARNING_TRUNCATED_RUNES) {
      shown = firstRunes(text, WARNING_TRUNCATED_RUNES);
      length = WARNING_TRUNCATED_RUNES;
    }
    if (this.warningRunes + length <= WARNINGS_MAX_RUNES || this.truncatingWarnings) {
      this.warningRunes += length;
      this.warnings.push(shown);
      return;
    }
    // Over the limit: replay everything cut short, as v1.25 does.
    this.truncatingWarnings = true;
    this.warningRunes = 0;
    this.warnings.length = 0;
    for (const earlier of this.orderedWarnings) {
      const cut = runeLength(earlier) > WARNING_TRUNCATED_RUNES ? firstRunes(earlier, WARNING_TRUNCATED_RUNES) : earlier;
      this.warningRunes += runeLength(cut);
      this.warnings.push(cut);
    }
  }

  /**
   * The representation of this request's response, negotiated on the first call; later calls
   * return the same choice whatever they offer (one negotiation per request). Throws 406.
   */
  negotiate(offer: RepresentationOffer): ResponseChoice {
    if (this.choice === undefined) {
      const choice = negotiateResponse(this.accept, offer.protobuf, offer.table, offer.partial ?? false);
      this.choice = !choice.pretty && isPrettyPrint(this.query, this.userAgent) ? { ...choice, pretty: true } : choice;
    }
    return this.choice;
  }

  private headers(contentType: string, extra: Record<string, string | string[]> = {}): Record<string, string | string[]> {
    // Cache-Control may be overridden by a document that can be cached (the issuer's keys).
    const headers: Record<string, string | string[]> = { ...this.extraHeaders, 'Content-Type': contentType, 'Cache-Control': CACHE_CONTROL, ...extra };
    if (this.warnings.length > 0) headers.Warning = this.warnings.map(warningHeader);
    return headers;
  }

  /**
   * Encodes `object` in the negotiated representation (negotiating now if nothing did yet), its
   * fields in kube's order: objects read from the store are in it already (`inOrder`), what the
   * server makes for an answer (a Status, a Table, a list around stored items, a dry run's
   * object) is put in it here.
   */
  writeObject(status: number, object: JsonObject, offer: RepresentationOffer = { protobuf: false, table: false }, inOrder?: InOrder): void {
    const choice = this.negotiate(offer);
    const representation: Representation = choice.table !== undefined ? 'json' : choice.representation;
    const ordered = inOrder === 'object' ? object : inOrder === 'items' ? listInGoOrder(object) : inGoOrder(object);
    this.written = { kind: object.kind === 'Status' ? 'status' : 'object', value: ordered };
    this.writeEncoded(status, mediaTypeOf(representation), this.codec.encode(representation, ordered, choice.pretty));
  }

  /**
   * A JSON object already encoded, as slices written in order without joining them (a list
   * assembled from its items' served JSON): what the audit log records of it is parsed back only
   * if the audit policy asks for the response.
   */
  writeJsonSlices(status: number, slices: readonly Buffer[]): void {
    if (this.expired) return;
    this.written = { kind: 'object', get value() { return JSON.parse(Buffer.concat(slices).toString('utf8')) as unknown; } };
    let length = 0;
    for (const slice of slices) length += slice.length;
    this.bodyBytes = length;
    this.status = status;
    this.res.writeHead(status, this.headers(mediaTypeOf('json'), { 'Content-Length': String(length) }));
    writeCorked(this.res, slices);
    this.res.end();
  }

  /** A body already encoded (documents, metrics, health text, cached OpenAPI). */
  writeEncoded(status: number, contentType: string, body: Buffer | string, extraHeaders: Record<string, string | string[]> = {}): void {
    if (this.expired) return;
    this.status = status;
    this.bodyBytes = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    this.res.writeHead(status, this.headers(contentType, extraHeaders));
    this.res.end(body);
  }

  /** 304 Not Modified: no body, no content type. */
  writeNotModified(etag: string): void {
    if (this.expired) return;
    this.status = 304;
    this.res.writeHead(304, { ...this.extraHeaders, ETag: etag });
    this.res.end();
  }

  /**
   * The one place a failure becomes a `Status` body: in the request's representation when one
   * was negotiated (a Protobuf client gets Protobuf errors), else in what the Accept header
   * prefers among the Status's representations, else JSON.
   */
  writeStatus(err: ApiError): void {
    if (this.expired) return;
    if (this.res.headersSent) {
      if (!this.res.writableEnded) this.res.end();
      return;
    }
    let representation: Representation = 'json';
    let pretty = isPrettyPrint(this.query, this.userAgent);
    const protobuf = this.codec.protobufSupports('v1', 'Status');
    try {
      const choice = this.choice ?? negotiateResponse(this.accept, protobuf);
      representation = choice.table !== undefined || (choice.representation === 'protobuf' && !protobuf) ? 'json' : choice.representation;
      pretty = pretty || choice.pretty;
    } catch {
      // An unacceptable Accept still gets its error, as JSON.
    }
    const extra: Record<string, string> = {};
    if (err.retryAfterSeconds !== undefined) extra['Retry-After'] = String(err.retryAfterSeconds);
    const status = inGoOrder(err.toStatus());
    this.written = { kind: 'status', value: status };
    const body = this.codec.encode(representation, status, representation === 'json' && pretty);
    this.status = err.code;
    this.res.writeHead(err.code, this.headers(representation === 'json' ? 'application/json' : mediaTypeOf(representation), extra));
    this.res.end(body);
  }

  /** Starts nothing yet: the sink sends its 200 header when the first bytes are ready. */
  stream(): WatchSink {
    const res = this.res;
    let closeCallbacks: Array<() => void> = [];
    let closed = false;
    /** A write was refused (the buffer is full) and no 'drain' came since. */
    let mustDrain = false;
    /** The caller frames HTTP/1.1's chunks (frameChunks). */
    let callerFrames = false;
    const close = () => {
      if (closed) return;
      closed = true;
      forget();
      for (const cb of closeCallbacks) cb();
      closeCallbacks = [];
    };
    const endStream = () => {
      if (!res.writableEnded && !this.expired) {
        if (callerFrames) res.write(LAST_CHUNK);
        res.end();
      }
      close();
    };
    const forget = this.trackStream(endStream);
    res.on('close', close);
    res.on('drain', () => (mustDrain = false));
    return {
      start: (contentType, status = 200, extraHeaders = {}) => {
        if (this.expired) return;
        this.status = status;
        this.onStreamStart?.();
        // No Content-Length: HTTP/1.1 streams it chunked, HTTP/2 as DATA frames.
        res.writeHead(status, this.headers(contentType, extraHeaders));
        res.flushHeaders?.();
      },
      write: (chunk) => {
        if (closed || this.expired) return false;
        this.onStreamChunk?.(chunk.length);
        const taken = res.write(callerFrames ? chunkFrame(chunk) : chunk);
        if (!taken) mustDrain = true;
        return taken;
      },
      writeAll: (chunks) => {
        if (closed || this.expired) return false;
        if (this.onStreamChunk !== undefined) for (const chunk of chunks) this.onStreamChunk(chunk.length);
        const taken = writeCorked(res, callerFrames ? chunks.map(chunkFrame) : chunks);
        if (!taken) mustDrain = true;
        return taken;
      },
      frameChunks: () => {
        if (callerFrames) return true;
        const message = res as unknown as ChunkedMessage;
        if (res.stream !== undefined || message.chunkedEncoding !== true || !res.headersSent) return false;
        message.chunkedEncoding = false;
        callerFrames = true;
        return true;
      },
      writeFramed: (chunks, written) => {
        if (closed || this.expired) return;
        if (this.onStreamChunk !== undefined) for (const chunk of chunks) this.onStreamChunk(callerFrames ? chunkPayloadLength(chunk) : chunk.length);
        // HTTP/1.1 whose chunks the caller frames: straight to the connection when the response
        // lets it (its fullness is then the connection's, which drained() reads).
        const connection = callerFrames ? directConnection(res) : undefined;
        if (connection !== undefined) writeCorked(connection, chunks, written);
        else if (!writeCorked(res, chunks, written)) mustDrain = true;
      },
      bufferedBytes: () => res.writableLength ?? 0,
      drained: () => new Promise<void>((resolve) => {
        const connection = callerFrames ? directConnection(res) : undefined;
        // node:http2's compatibility response has no writableNeedDrain: what its last write
        // answered is the only sign that it is full (without it, a streamed list was buffered whole).
        const full = connection?.writableNeedDrain === true ? connection : mustDrain || res.writableNeedDrain === true ? res : undefined;
        if (closed || full === undefined) resolve();
        else {
          full.once('drain', () => resolve());
          closeCallbacks.push(resolve);
        }
      }),
      end: endStream,
      onClose: (cb) => {
        if (closed) cb();
        else closeCallbacks.push(cb);
      },
    };
  }
}
