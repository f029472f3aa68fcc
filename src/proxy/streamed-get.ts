/**
 * A GET whose answer is copied to the client byte for byte (pods/log: kube-apiserver v1.25's
 * LocationStreamer, which only copies the kubelet's body): sent on a connection of its own,
 * written and read by hand instead of through node:http's client. The answer's body is taken
 * from the socket as it was decrypted, its HTTP/1.1 framing (chunked, Content-Length or until
 * close) removed in place by slicing, and what arrived in one turn of the event loop goes to
 * the client as one write: one HTTP/1.1 chunk (or HTTP/2 DATA) per batch, where node:http's
 * client and Readable handed the bytes over one TLS record at a time and copied each batch.
 * The proxy phase of bench/api measures the difference (Carina's CPU per MiB of log, before and
 * after, in bench/RESULTS.md).
 *
 * Back-pressure: the socket is paused while the client's connection is over its high-water
 * mark, so a slow client slows the backend. The socket keeps Node's 16 KiB read-ahead: 256 KiB was
 * tried and showed no saving (in runs whose baseline was started with other Node flags, so not
 * settled; bench/RESULTS.md). A client that leaves closes the backend
 * connection; a backend that ends, fails or sends a malformed frame ends the client's stream
 * (kube's handler returns once its copy fails, and Go's server then ends the response).
 */
import type net from 'node:net';
import { dialBackend, type ProxyTransport } from './proxy-transport';
import { readResponseHead } from './upgrade-proxy';

/** What the streamed body is written to: the response writer's stream (src/endpoints). */
export interface StreamedBodySink {
  start(contentType: string, status: number, headers: Record<string, string | string[]>): void;
  /** Writes the buffers in order as one write; false when the connection is full. */
  writeAll(chunks: readonly Buffer[]): boolean;
  /** After start(): true when the response is chunked HTTP/1.1 and the caller frames the chunks (writeFramed). */
  frameChunks(): boolean;
  /** Writes framed chunks as one write. */
  writeFramed(chunks: readonly Buffer[], written: () => void): void;
  /** Resolves when the connection has taken what was buffered (or the client left). */
  drained(): Promise<void>;
  end(): void;
  onClose(callback: () => void): void;
}

/** The backend's answer: its status, and its body to read (an error's text) or to copy to a client. */
export interface StreamedResponse {
  status: number;
  /** The body's first `limit` bytes (fewer if it ends first); the connection is closed after. */
  readText(limit: number): Promise<string>;
  /** Copies the body to the sink until the body ends or the client leaves; ends the sink. */
  copyTo(sink: StreamedBodySink, contentType: string): Promise<void>;
}

const CRLF = Buffer.from('\r\n', 'latin1');
/** A chunk's size line may carry extensions; a line longer than this is malformed (Go allows 4 KiB). */
const CHUNK_SIZE_LINE_MAX_BYTES = 4096;
const noop = (): void => undefined;

/**
 * An HTTP/1.1 response body with its framing taken off: `push` a piece of what the connection
 * delivered and get the payload inside it as slices of that piece (no copy).
 */
export class Http1BodyDecoder {
  /** Chunked: what is left of the current chunk's payload; -1 between chunks. Else the bytes left, or Infinity until close. */
  private remaining: number;
  private sizeLine = '';
  /** Chunked: the CRLF after a chunk's payload still to skip (2, 1 or 0 bytes). */
  private dataEnd = 0;
  private inTrailer = false;
  /** Chunked: the bytes of the trailer line being read. */
  private trailerLine = 0;
  done: boolean;

  constructor(private readonly chunked: boolean, contentLength: number | undefined) {
    this.remaining = chunked ? -1 : contentLength ?? Infinity;
    this.done = !chunked && this.remaining === 0;
  }

  /** The payload in `piece`, in order; throws on a malformed frame. */
  push(piece: Buffer, out: Buffer[]): void {
    if (this.done) return;
    if (!this.chunked) {
      const taken = piece.length <= this.remaining ? piece : piece.subarray(0, this.remaining);
      if (taken.length > 0) out.push(taken);
      this.remaining -= taken.length;
      this.done = this.remaining === 0;
      return;
    }
    let at = 0;
    while (at < piece.length && !this.done) {
      if (this.remaining > 0) {
        const end = Math.min(piece.length, at + this.remaining);
        out.push(piece.subarray(at, end));
        this.remaining -= end - at;
        at = end;
        if (this.remaining === 0) {
          this.remaining = -1;
          this.dataEnd = 2;
        }
      } else if (this.dataEnd > 0) {
        if (piece[at] !== CRLF[2 - this.dataEnd]) throw new Error('malformed chunked encoding');
        this.dataEnd -= 1;
        at += 1;
      } else if (this.inTrailer) {
        // The trailer's fields are dropped (kube's copy reads the body only); an empty line ends it.
        const byte = piece[at++];
        if (byte === 0x0a) {
          if (this.trailerLine === 0) this.done = true;
          this.trailerLine = 0;
        } else if (byte !== 0x0d) this.trailerLine += 1;
      } else {
        const lineEnd = piece.indexOf(0x0a, at);
        const end = lineEnd < 0 ? piece.length : lineEnd;
        this.sizeLine += piece.toString('latin1', at, end);
        if (this.sizeLine.length > CHUNK_SIZE_LINE_MAX_BYTES) throw new Error('malformed chunked encoding');
        at = end;
        if (lineEnd < 0) continue;
        at += 1;
        const match = /^([0-9a-fA-F]{1,16})[ \t]*(;[^\r]*)?\r$/.exec(this.sizeLine);
        this.sizeLine = '';
        if (match === null) throw new Error('malformed chunked encoding');
        const size = parseInt(match[1], 16);
        if (size === 0) this.inTrailer = true;
        else this.remaining = size;
      }
    }
  }
}

/** The response head's framing headers (Transfer-Encoding, Content-Length) and its status. */
function framingOf(head: string): { chunked: boolean; contentLength: number | undefined } {
  let chunked = false;
  let contentLength: number | undefined;
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'transfer-encoding') chunked = value.toLowerCase().split(',').map((v) => v.trim()).includes('chunked');
    else if (name === 'content-length' && /^\d+$/.test(value)) contentLength = Number(value);
  }
  return { chunked, contentLength: chunked ? undefined : contentLength };
}

/**
 * Sends `GET target` (Host and Connection: close, the headers node:http sent for it) and
 * resolves once the answer's head has arrived, within the transport's timeout as a whole.
 * Throws BackendDialError or UpgradeProxyError with Go's text for the failure.
 */
export async function streamedGet(target: URL, transport: ProxyTransport): Promise<StreamedResponse> {
  const deadline = Date.now() + transport.timeoutMs;
  const socket = await dialBackend(target, transport);
  socket.on('error', () => socket.destroy());
  const address = `${target.hostname}:${target.port}`;
  let head: { status: number; bytes: Buffer };
  try {
    socket.write(`GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nConnection: close\r\n\r\n`);
    head = await readResponseHead(socket, Math.max(1, deadline - Date.now()), address);
  } catch (err) {
    socket.destroy();
    throw err;
  }
  const headEnd = head.bytes.indexOf('\r\n\r\n') + 4;
  const framing = framingOf(head.bytes.toString('latin1', 0, headEnd - 4));
  // 1xx, 204 and 304 answers have no body (RFC 9112 §6.3).
  const bodiless = head.status < 200 || head.status === 204 || head.status === 304;
  const decoder = new Http1BodyDecoder(framing.chunked, bodiless ? 0 : framing.contentLength);
  const early = head.bytes.subarray(headEnd);
  return {
    status: head.status,
    readText: (limit) => readText(socket, decoder, early, limit),
    copyTo: (sink, contentType) => copyBody(socket, decoder, early, sink, contentType),
  };
}

function readText(socket: net.Socket, decoder: Http1BodyDecoder, early: Buffer, limit: number): Promise<string> {
  return new Promise((resolve) => {
    const payload: Buffer[] = [];
    let length = 0;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      socket.off('data', onData);
      socket.destroy();
      resolve(Buffer.concat(payload).subarray(0, limit).toString('utf8'));
    };
    const onData = (piece: Buffer) => {
      const before = payload.length;
      try {
        decoder.push(piece, payload);
      } catch {
        return finish();
      }
      for (let i = before; i < payload.length; i++) length += payload[i].length;
      if (decoder.done || length >= limit) finish();
    };
    socket.once('close', finish);
    onData(early);
    if (decoder.done || length >= limit) return;
    socket.on('data', onData);
    socket.resume();
  });
}

/**
 * The copy: the payload of every piece decrypted in one turn of the event loop is written at
 * the turn's end (setImmediate) as one write: for chunked HTTP/1.1, one chunk framed here
 * around the slices, which the TLS layer then encrypts as one record run.
 */
function copyBody(socket: net.Socket, decoder: Http1BodyDecoder, early: Buffer, sink: StreamedBodySink, contentType: string): Promise<void> {
  return new Promise((resolve) => {
    sink.start(contentType, 200, {});
    const framed = sink.frameChunks();
    let batch: Buffer[] = [];
    let batchBytes = 0;
    let scheduled = false;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      socket.off('data', onData);
      socket.destroy();
      sink.end();
      resolve();
    };
    const flush = () => {
      scheduled = false;
      if (finished) return;
      if (batchBytes > 0) {
        const pieces = batch;
        batch = [];
        batchBytes = 0;
        if (framed) {
          let total = 0;
          for (const piece of pieces) total += piece.length;
          sink.writeFramed([Buffer.from(`${total.toString(16)}\r\n`, 'latin1'), ...pieces, CRLF], noop);
        } else sink.writeAll(pieces);
        if (decoder.done) return finish();
        // Paused until the client's connection has room (drained() answers at once when it has).
        socket.pause();
        void sink.drained().then(() => {
          if (!finished) socket.resume();
        });
        return;
      }
      if (decoder.done) finish();
    };
    const onData = (piece: Buffer) => {
      const before = batch.length;
      try {
        decoder.push(piece, batch);
      } catch {
        // A malformed frame: what came before it has been written; the stream ends there.
        batch.length = before;
        decoder.done = true;
      }
      for (let i = before; i < batch.length; i++) batchBytes += batch[i].length;
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    };
    sink.onClose(finish);
    socket.once('end', () => {
      decoder.done = true;
      if (!scheduled) flush();
    });
    socket.once('close', () => {
      decoder.done = true;
      if (!scheduled) flush();
    });
    onData(early);
    socket.on('data', onData);
    socket.resume();
  });
}
