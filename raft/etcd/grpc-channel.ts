/**
 * GrpcChannel: the connections of an etcd client (etcd-client.ts) to its endpoints, and the unary
 * call on them with its failover: one HTTP/2 session per endpoint kept open (TLS offering only h2,
 * or plaintext h2c), one stream per unary call, the call's deadline sent as grpc-timeout, and a
 * traced call's `traceparent` as metadata. A session holds the process alive only while a call
 * or stream is in flight on it.
 *
 * Failover (the contract EtcdClient documents): a call failing with gRPC code UNAVAILABLE moves
 * the channel to the next endpoint; a read is retried there, once per endpoint, within the
 * deadline; a write only when the request provably never left this process (the session never
 * connected, or the server refused the stream unprocessed). Streams (Watch, Snapshot) open on
 * connection(), follow their end with onStreamEnd() as the unary call does, and move on with
 * moveOnFrom().
 */
import * as http2 from 'node:http2';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { propagation, type Context } from '@opentelemetry/api';
import { KvError, kvErrorFromGrpc } from '../kv';
import type { MessageCodec } from './codec';
import {
  FRAME_HEADER_BYTES,
  GrpcDeframer,
  GrpcProtocolError,
  isGrpcContentType,
  requestHeaders,
  Status,
  statusFromHeaders,
  statusFromHttp,
  writeFrameHeader,
  type GrpcStatus,
} from './grpc-framing';

/** What the channel presents and trusts on TLS endpoints. */
export interface ChannelTls {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface GrpcChannelOptions {
  endpoints: string[];
  tls?: ChannelTls;
  /** Deadline of each call, retries included; 0 for none. */
  timeoutMs: number;
  maxMessageBytes: number;
  streamWindowBytes: number;
  connectionWindowBytes: number;
}

/** Whether a failed call may be repeated on another endpoint: a read always, a write only if never sent. */
export type Retry = 'read' | 'write';

export interface MethodSpec {
  path: string;
  request: MessageCodec<unknown>;
  response: MessageCodec<unknown>;
}

export const USER_AGENT = 'carina-etcd-client/0.1';
const { NGHTTP2_CANCEL, NGHTTP2_NO_ERROR, NGHTTP2_REFUSED_STREAM } = http2.constants;

/** One HTTP/2 session and what the client tracks of it. */
export class Connection {
  /** Whether it has connected (from then on, bytes of a request may have reached the server). */
  connected = false;
  /** Calls and streams in flight: while there are any, the session keeps the process alive. */
  active = 0;

  constructor(readonly session: http2.ClientHttp2Session) {}

  get usable(): boolean {
    return !this.session.closed && !this.session.destroyed;
  }

  /** Marks a call or stream in flight; the returned function ends the mark (once). */
  hold(): () => void {
    if (this.active++ === 0 && !this.session.destroyed) this.session.ref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.active === 0 && !this.session.destroyed) this.session.unref();
    };
  }
}

export class Endpoint {
  connection: Connection | null = null;

  constructor(
    readonly authority: string,
    readonly host: string,
    readonly port: number,
    readonly secure: boolean,
  ) {}
}

function parseEndpoint(text: string, tlsByDefault: boolean): Endpoint {
  let rest = text.trim();
  let secure = tlsByDefault;
  if (rest.startsWith('https://')) {
    rest = rest.slice('https://'.length);
    secure = true;
  } else if (rest.startsWith('http://')) {
    rest = rest.slice('http://'.length);
    secure = false;
  }
  rest = rest.replace(/\/+$/, '');
  const match = /^(\[[^\]]+\]|[^:/[\]]+):(\d{1,5})$/.exec(rest);
  if (match === null) throw new Error(`endpoint ${JSON.stringify(text)} is not host:port`);
  const port = Number(match[2]);
  if (port <= 0 || port > 65535) throw new Error(`endpoint ${text}: bad port`);
  const host = match[1].startsWith('[') ? match[1].slice(1, -1) : match[1];
  return new Endpoint(rest, host, port, secure);
}

type Outcome = { ok: true; message: Uint8Array } | { ok: false; error: KvError; notSent: boolean };

/** How a client stream ended, as onStreamEnd reports it once the stream has closed. */
export interface StreamEnd {
  /**
   * The gRPC status the server ended the call with: that of the trailers, of a trailers-only
   * response, or the one a non-200 HTTP response stands for; null when none came.
   */
  status: GrpcStatus | null;
  /** The error the stream failed with, if it did. */
  error: Error | null;
  /** Why a stream without a status ended: its error's message, or its reset code. */
  failure: string;
}

/**
 * Follows a client stream (a unary call, Watch or Snapshot) to its end: collects the status the
 * server answered with and the stream's error (listening for it, so it is never unhandled), and
 * calls `ended` once the stream has closed. A stream the server has ended is closed here if our
 * side is still open, as the call is over (see below).
 */
export function onStreamEnd(stream: http2.ClientHttp2Stream, ended: (end: StreamEnd) => void): void {
  let status: GrpcStatus | null = null;
  let error: Error | null = null;
  stream.on('response', (headers) => {
    const httpStatus = Number(headers[':status']);
    status = statusFromHeaders(headers) ?? (httpStatus !== 200 ? statusFromHttp(httpStatus) : null);
  });
  stream.on('trailers', (trailers) => {
    status = statusFromHeaders(trailers);
  });
  stream.on('error', (err) => {
    error = err;
  });
  // A gRPC call is over once the server has ended its side. grpc-go (etcd) then resets a stream
  // whose client has not ended its own; a Node server (Carina's store) leaves it half-open, and a
  // Watch stream, which never ends its side, would then wait for its close for ever.
  stream.once('end', () => {
    if (!stream.writableEnded) stream.close(NGHTTP2_NO_ERROR);
  });
  stream.once('close', () => {
    const failure = error !== null ? error.message : `stream reset (code ${stream.rstCode})`;
    ended({ status, error, failure });
  });
}

export function unavailable(message: string, cause?: unknown): KvError {
  return new KvError('UNAVAILABLE', message, cause === undefined ? undefined : { cause });
}

export class GrpcChannel {
  readonly endpoints: Endpoint[];
  private current = 0;
  private closed = false;
  private readonly timeoutMs: number;
  readonly maxMessageBytes: number;

  constructor(private readonly options: GrpcChannelOptions) {
    this.endpoints = options.endpoints.map((e) => parseEndpoint(e, options.tls !== undefined));
    this.timeoutMs = options.timeoutMs;
    this.maxMessageBytes = options.maxMessageBytes;
  }

  /** The index of the endpoint calls currently go to. */
  get currentIndex(): number {
    return this.current;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** The endpoint at `index` failed: later calls start at the next one (unless another call moved on already). */
  moveOnFrom(index: number): void {
    if (this.current === index) this.current = (index + 1) % this.endpoints.length;
  }

  /** Sends one request message and returns the one response message, failing over as allowed. */
  async exchange(spec: MethodSpec, request: unknown, retry: Retry, trace?: Context): Promise<Uint8Array> {
    if (this.closed) throw unavailable('the client is closed');
    const frame = writeFrameHeader(spec.request.encodeWithPrefix(request, FRAME_HEADER_BYTES));
    if (frame.length - FRAME_HEADER_BYTES > this.maxMessageBytes) {
      throw new KvError('REQUEST_TOO_LARGE', `request of ${frame.length - FRAME_HEADER_BYTES} bytes exceeds maxMessageBytes ${this.maxMessageBytes}`);
    }
    const deadline = this.timeoutMs > 0 ? Date.now() + this.timeoutMs : Infinity;
    let lastError: KvError | null = null;
    for (let attempt = 0; attempt < this.endpoints.length; attempt++) {
      if (Date.now() >= deadline) break;
      const index = this.current;
      const endpoint = this.endpoints[index];
      const outcome = await this.attempt(endpoint, spec.path, frame, deadline, trace);
      if (outcome.ok) return outcome.message;
      const error = outcome.error;
      if (error.grpcCode !== Status.UNAVAILABLE || this.closed) throw error;
      // This endpoint is unwell: later calls start at the next one, whether or not this one retries.
      this.moveOnFrom(index);
      lastError = error;
      if (retry === 'write' && !outcome.notSent) throw error;
    }
    throw lastError ?? unavailable('deadline exceeded');
  }

  /** The open session to `ep`, or a new one. */
  connection(ep: Endpoint): Connection {
    const existing = ep.connection;
    if (existing !== null && existing.usable) return existing;
    const session = http2.connect(`${ep.secure ? 'https' : 'http'}://${ep.authority}`, {
      createConnection: () => {
        const socket = ep.secure ? this.tlsConnect(ep) : net.connect({ host: ep.host, port: ep.port });
        socket.setNoDelay(true);
        return socket;
      },
      settings: { enablePush: false, initialWindowSize: this.options.streamWindowBytes },
      maxSessionMemory: 256,
    });
    const connection = new Connection(session);
    ep.connection = connection;
    session.once('connect', () => {
      connection.connected = true;
      try {
        session.setLocalWindowSize(this.options.connectionWindowBytes);
      } catch {
        // The window is an optimisation; a session that refuses it still works.
      }
    });
    // Failures surface on the streams; the listener keeps an 'error' from being thrown.
    session.on('error', () => {});
    session.once('close', () => {
      if (ep.connection === connection) ep.connection = null;
    });
    // After GOAWAY the session finishes what it has but takes nothing new: the next call opens
    // a fresh one.
    session.once('goaway', () => {
      if (ep.connection === connection) ep.connection = null;
    });
    session.unref();
    return connection;
  }

  /**
   * A TLS connection that offers only h2, as gRPC requires. The server's name is checked
   * against the endpoint's host (an IP address against the certificate's IP SANs); SNI is sent
   * only for a DNS name, as TLS forbids it for an address.
   */
  private tlsConnect(ep: Endpoint): tls.TLSSocket {
    const settings = this.options.tls ?? {};
    return tls.connect({
      host: ep.host,
      port: ep.port,
      servername: net.isIP(ep.host) === 0 ? ep.host : undefined,
      ca: settings.ca,
      cert: settings.cert,
      key: settings.key,
      ALPNProtocols: ['h2'],
      minVersion: 'TLSv1.2',
    });
  }

  private attempt(ep: Endpoint, path: string, frame: Uint8Array, deadline: number, trace?: Context): Promise<Outcome> {
    return new Promise<Outcome>((resolve) => {
      const remaining = deadline - Date.now();
      let connection: Connection;
      let stream: http2.ClientHttp2Stream;
      try {
        connection = this.connection(ep);
        const headers = requestHeaders({ path, authority: ep.authority, timeoutMs: Number.isFinite(remaining) ? remaining : undefined, userAgent: USER_AGENT });
        // A traced call carries its W3C traceparent as gRPC metadata, as etcd's otelgrpc client
        // interceptor sends it.
        if (trace !== undefined) propagation.inject(trace, headers);
        stream = connection.session.request(headers, { endStream: false });
      } catch (err) {
        if (ep.connection !== null && !ep.connection.usable) ep.connection = null;
        resolve({ ok: false, error: unavailable(`cannot start a call to ${ep.authority}: ${(err as Error).message}`, err), notSent: true });
        return;
      }
      const release = connection.hold();
      const deframer = new GrpcDeframer(this.maxMessageBytes);
      let message: Uint8Array | null = null;
      let problem: GrpcStatus | null = null;
      let timedOut = false;
      const timer = Number.isFinite(remaining)
        ? setTimeout(() => {
            timedOut = true;
            stream.close(NGHTTP2_CANCEL);
          }, remaining)
        : null;

      stream.on('response', (headers) => {
        // A trailers-only response is the call's status, which onStreamEnd reports.
        if (statusFromHeaders(headers) !== null) return;
        const httpStatus = Number(headers[':status']);
        if (httpStatus !== 200) problem = statusFromHttp(httpStatus);
        else if (!isGrpcContentType(headers['content-type'] as string | undefined)) {
          problem = { code: Status.UNKNOWN, message: `response content-type ${String(headers['content-type'])} is not gRPC` };
        }
        if (problem !== null) stream.close(NGHTTP2_CANCEL);
      });
      stream.on('data', (chunk: Buffer) => {
        if (problem !== null) return;
        try {
          const messages = deframer.push(chunk);
          for (let i = 0; i < messages.length; i++) {
            if (message !== null) throw new GrpcProtocolError(Status.INTERNAL, 'more than one response message in a unary call');
            message = messages[i];
          }
        } catch (err) {
          problem = err instanceof GrpcProtocolError ? { code: err.code, message: err.message } : { code: Status.INTERNAL, message: String(err) };
          stream.close(NGHTTP2_CANCEL);
        }
      });
      onStreamEnd(stream, (end) => {
        if (timer !== null) clearTimeout(timer);
        release();
        if (timedOut) {
          resolve({ ok: false, error: unavailable(`deadline exceeded calling ${path} on ${ep.authority}`), notSent: false });
          return;
        }
        if (problem !== null) {
          resolve({ ok: false, error: kvErrorFromGrpc(problem.code, problem.message), notSent: false });
          return;
        }
        if (end.status !== null) {
          if (end.status.code !== Status.OK) {
            resolve({ ok: false, error: kvErrorFromGrpc(end.status.code, end.status.message), notSent: false });
          } else if (message === null || !deframer.atBoundary) {
            resolve({ ok: false, error: kvErrorFromGrpc(Status.INTERNAL, `${path}: the response ended without a complete message`), notSent: false });
          } else {
            resolve({ ok: true, message });
          }
          return;
        }
        const notSent = !connection.connected || stream.rstCode === NGHTTP2_REFUSED_STREAM;
        if (ep.connection === connection && !connection.usable) ep.connection = null;
        resolve({ ok: false, error: unavailable(`${path} on ${ep.authority} failed: ${end.failure}`, end.error ?? undefined), notSent });
      });
      stream.end(frame);
    });
  }

  /** From now on every call fails as UNAVAILABLE ("the client is closed"). */
  refuseNewCalls(): void {
    this.closed = true;
  }

  /** Refuses new calls and closes every session, waiting up to a second for each to finish what it carries. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      this.endpoints.map(async (ep) => {
        const session = ep.connection?.session;
        ep.connection = null;
        if (session === undefined || session.destroyed) return;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => session.destroy(), 1_000);
          session.close(() => {
            clearTimeout(timer);
            resolve();
          });
          session.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }),
    );
  }
}
