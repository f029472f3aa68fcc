/**
 * EtcdGrpcServer: etcd's v3 gRPC API (KV, Watch, Lease, Cluster, Maintenance) served from a
 * KvReplica, written directly on node:http2. With `tls` (what `carina server` always passes) it
 * serves HTTP/2 over TLS with client-certificate authentication, as etcd with --client-cert-auth:
 * a client without a certificate from the trusted CA fails the handshake, so no request of
 * its is ever read. Without `tls` it is plaintext h2c (in-process tests only).
 * A direct implementation keeps the unary path to one decode, one call and one encode, with no
 * per-call machinery; grpc-framing.ts supplies the wire pieces.
 *
 * Per stream: a unary call is answered as soon as its one message has arrived; Watch multiplexes
 * many watches on one bidirectional stream (grpc-watch-stream.ts, with its flow control);
 * LeaseKeepAlive answers each request on its stream; Snapshot streams the file in chunks.
 *
 * Errors leave as gRPC statuses with etcd's codes and messages (raft/kv/errors.ts), so etcd
 * clients recognise them.
 *
 * Tracing: a unary call is a server span named after OpenTelemetry's RPC conventions
 * (`etcdserverpb.KV/Range`, rpc.system grpc, rpc.service, rpc.method, rpc.grpc.status_code),
 * in the caller's trace when its metadata carries a W3C `traceparent` (as etcd's otelgrpc
 * interceptor reads it), sampled as the process's tracing configuration says. The replica's own
 * spans (raft.forward, raft.commit, ...) become its children and its events (raft.propose,
 * raft.read_index) are added to it. No tracing registered: the span is a no-op and the call runs
 * as before.
 */
import * as http2 from 'node:http2';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, propagation, trace, type TextMapGetter } from '@opentelemetry/api';
import type { AddressInfo, Socket } from 'node:net';
import type { MutualTls } from '../transport';
import { KvError, isKvError } from '../kv';
import { codecFor, ETCD_METHODS, ETCD_PROTO_PACKAGE, methodPath, type EtcdMethodName, type EtcdRequestOf } from './codec';
import { FRAME_HEADER_BYTES, GrpcDeframer, isGrpcContentType, readUnaryRequest, responseHeaders, Status, statusTrailers, writeFrameHeader } from './grpc-framing';
import type { KvReplica } from './kv-replica';
import { serveWatchStream } from './grpc-watch-stream';
import type { KvCallOptions } from '../kv';

export interface EtcdGrpcServerOptions {
  /** host:port; port 0 picks a free one, which start() returns. */
  listenAddress: string;
  /** Largest request message accepted; etcd: --max-request-bytes plus 512 KiB of gRPC overhead. */
  maxReceiveBytes?: number;
  logger?: (line: string) => void;
  /** This server's certificate and the CA that clients' certificates must come from (etcd's --cert-file, --key-file, --trusted-ca-file). */
  tls?: MutualTls;
}

/** `options.trace`: the call's server span's context when the call is traced. */
type UnaryHandler = (request: never, options: KvCallOptions) => Promise<unknown>;

const UNTRACED: KvCallOptions = {};

const metadataGetter: TextMapGetter<http2.IncomingHttpHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/** Bytes of the snapshot file per Maintenance.Snapshot message. */
const SNAPSHOT_CHUNK_BYTES = 1024 * 1024;

export class EtcdGrpcServer {
  private server: http2.Http2Server | http2.Http2SecureServer | null = null;
  /** Connections whose TLS handshake failed (no client certificate, an untrusted one, not TLS at all). */
  refusedHandshakes = 0;
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private readonly statusSent = new WeakMap<http2.ServerHttp2Stream, number>();
  private readonly routes = new Map<string, { name: EtcdMethodName; unary?: UnaryHandler }>();

  constructor(private readonly replica: KvReplica, private readonly options: EtcdGrpcServerOptions) {
    const r = replica;
    const unary: Partial<Record<EtcdMethodName, UnaryHandler>> = {
      range: (q: EtcdRequestOf<'range'>, options) => r.range(q, options),
      put: (q: EtcdRequestOf<'put'>, options) => r.put(q, options),
      deleteRange: (q: EtcdRequestOf<'deleteRange'>, options) => r.deleteRange(q, options),
      txn: (q: EtcdRequestOf<'txn'>, options) => r.txn(q, options),
      compact: (q: EtcdRequestOf<'compact'>, options) => r.compact(q, options),
      leaseGrant: (q: EtcdRequestOf<'leaseGrant'>) => r.leaseGrant(q),
      leaseRevoke: (q: EtcdRequestOf<'leaseRevoke'>) => r.leaseRevoke(q.id),
      leaseTimeToLive: (q: EtcdRequestOf<'leaseTimeToLive'>) => r.leaseTimeToLive(q.id, q.keys),
      leaseLeases: () => r.leaseLeases(),
      memberList: () => r.memberList(),
      memberAdd: (q: EtcdRequestOf<'memberAdd'>) => r.memberAdd({ peerUrls: q.peerUrls, isLearner: q.isLearner }),
      memberRemove: (q: EtcdRequestOf<'memberRemove'>) => r.memberRemove(memberIdOf(q.id)),
      memberUpdate: (q: EtcdRequestOf<'memberUpdate'>) => r.memberUpdate(memberIdOf(q.id), q.peerUrls),
      memberPromote: (q: EtcdRequestOf<'memberPromote'>) => r.memberPromote(memberIdOf(q.id)),
      status: () => r.status(),
      alarm: async () => ({ header: r.header(), alarms: [] }),
      defragment: async () => {
        await r.defragment();
        return { header: r.header() };
      },
      hash: async () => ({ header: r.header(), hash: r.hashKv().hash }),
      hashKV: async () => {
        const h = r.hashKv();
        return { header: r.header(h.revision), hash: h.hash, compactRevision: h.compactRevision };
      },
      moveLeader: async (q: EtcdRequestOf<'moveLeader'>) => {
        await r.moveLeader(Number(q.targetId));
        return { header: r.header() };
      },
    };
    for (const name of Object.keys(ETCD_METHODS) as EtcdMethodName[]) {
      this.routes.set(methodPath(name), { name, unary: unary[name] });
    }
  }

  /** Starts listening; returns the bound host:port. */
  async start(): Promise<string> {
    const { host, port } = splitHostPort(this.options.listenAddress);
    const settings = { initialWindowSize: 4 * 1024 * 1024 };
    const tls = this.options.tls;
    const server: http2.Http2Server | http2.Http2SecureServer = tls === undefined
      ? http2.createServer({ settings })
      : http2.createSecureServer({
        settings,
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        // Client-certificate authentication: the handshake itself refuses a client without one.
        requestCert: true,
        rejectUnauthorized: true,
        minVersion: 'TLSv1.2',
      });
    if (tls !== undefined) {
      server.on('tlsClientError', () => {
        this.refusedHandshakes++;
      });
    }
    server.on('session', (session: http2.ServerHttp2Session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
      session.on('error', () => undefined);
    });
    // Small responses must not wait for Nagle's algorithm.
    server.on('connection', (socket: Socket) => socket.setNoDelay(true));
    server.on('stream', (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => this.onStream(stream, headers));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const address = server.address() as AddressInfo;
    return `${host}:${address.port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    for (const session of this.sessions) session.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private onStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
    stream.on('error', () => undefined);
    const path = headers[':path'] ?? '';
    const route = this.routes.get(path);
    if (headers[':method'] !== 'POST' || !isGrpcContentType(headers['content-type'])) {
      stream.respond({ ':status': 415 }, { endStream: true });
      return;
    }
    if (!route) {
      this.endWithStatus(stream, Status.UNIMPLEMENTED, `unknown method ${path}`);
      return;
    }
    this.countCall(stream, route.name);
    const deframer = new GrpcDeframer(this.options.maxReceiveBytes ?? 2 * 1024 * 1024);
    if (route.name === 'watch') {
      return serveWatchStream(stream, deframer, this.replica, {
        write: (frame) => this.writeCounted(stream, frame),
        sendOkTrailers: () => this.sendOkTrailers(stream),
        endWithStatus: (code, message) => this.endStreamWithStatus(stream, code, message),
      });
    }
    if (route.name === 'leaseKeepAlive') return this.serveKeepAlive(stream, deframer);
    if (route.name === 'snapshot') return this.serveSnapshot(stream, deframer);
    const handler = route.unary;
    if (!handler) {
      this.endWithStatus(stream, Status.UNIMPLEMENTED, `${path} is not supported by this server`);
      return;
    }
    const requestCodec = codecFor(ETCD_METHODS[route.name].request);
    const responseCodec = codecFor(ETCD_METHODS[route.name].response);
    readUnaryRequest(stream, deframer, (message) => {
      let request: unknown;
      try {
        request = requestCodec.decode(message);
      } catch (err) {
        this.endWithStatus(stream, Status.INTERNAL, `grpc: error unmarshalling request: ${(err as Error).message}`);
        return;
      }
      this.traced(route.name, headers, (options) => handler(request as never, options)).then(
        (response) => this.endWithMessage(stream, responseCodec.encodeWithPrefix(response as never, FRAME_HEADER_BYTES)),
        (err) => this.endWithError(stream, err),
      );
    }, (code, message) => this.endWithStatus(stream, code, message));
  }

  /**
   * Counts the call as go-grpc-prometheus does for etcd (grpc_server_started_total, and
   * grpc_server_handled_total with the status the call ended with; a stream closed before any
   * status was sent was cancelled by its client) and its bytes in.
   */
  private countCall(stream: http2.ServerHttp2Stream, name: EtcdMethodName): void {
    const metrics = this.replica.grpcMetrics;
    metrics.callStarted(name);
    stream.on('data', (chunk: Buffer) => {
      metrics.receivedBytes += chunk.length;
    });
    stream.once('close', () => metrics.callHandled(name, this.statusSent.get(stream) ?? Status.CANCELLED));
  }

  /** The status a stream ended with, once sent (for grpc_server_handled_total). */
  private noteStatus(stream: http2.ServerHttp2Stream, code: number): void {
    if (!this.statusSent.has(stream)) this.statusSent.set(stream, code);
  }

  private writeCounted(stream: http2.ServerHttp2Stream, frame: Uint8Array): boolean {
    this.replica.grpcMetrics.sentBytes += frame.length;
    return stream.write(frame);
  }

  /** Runs a unary call in its server span when tracing samples it (see the module header). */
  private traced<T>(name: EtcdMethodName, headers: http2.IncomingHttpHeaders, call: (options: KvCallOptions) => Promise<T>): Promise<T> {
    const parent = propagation.extract(ROOT_CONTEXT, headers, metadataGetter);
    const { service, method } = ETCD_METHODS[name];
    const rpcService = `${ETCD_PROTO_PACKAGE}.${service}`;
    const span = trace.getTracer('carina.etcd').startSpan(`${rpcService}/${method}`, {
      kind: SpanKind.SERVER,
      attributes: { 'rpc.system': 'grpc', 'rpc.service': rpcService, 'rpc.method': method },
    }, parent);
    if (!span.isRecording()) return call(UNTRACED);
    return call({ trace: trace.setSpan(parent, span) }).then(
      (response) => {
        span.setAttribute('rpc.grpc.status_code', Status.OK);
        span.end();
        return response;
      },
      (err: unknown) => {
        span.setAttribute('rpc.grpc.status_code', isKvError(err) ? err.grpcCode : Status.INTERNAL);
        span.setStatus({ code: SpanStatusCode.ERROR, message: isKvError(err) ? err.wireMessage : (err as Error).message });
        span.end();
        throw err;
      },
    );
  }

  private serveKeepAlive(stream: http2.ServerHttp2Stream, deframer: GrpcDeframer): void {
    const responseCodec = codecFor('LeaseKeepAliveResponse');
    let open = true;
    let inFlight = 0;
    let clientDone = false;
    // The client may half-close right after its last request: answer what is in flight first.
    const maybeEnd = () => {
      if (clientDone && inFlight === 0 && open && !stream.closed && !stream.writableEnded) stream.end();
    };
    stream.respond(responseHeaders(), { waitForTrailers: true });
    stream.on('wantTrailers', () => this.sendOkTrailers(stream));
    stream.on('close', () => {
      open = false;
    });
    stream.on('end', () => {
      clientDone = true;
      maybeEnd();
    });
    stream.on('data', (chunk: Buffer) => {
      let messages: readonly Uint8Array[];
      try {
        messages = deframer.push(chunk);
      } catch (err) {
        open = false;
        this.endStreamWithStatus(stream, Status.RESOURCE_EXHAUSTED, (err as Error).message);
        return;
      }
      for (const message of messages) {
        const { id } = codecFor('LeaseKeepAliveRequest').decode(message);
        inFlight++;
        this.replica.leaseKeepAliveOnce(id).then(
          (response) => {
            inFlight--;
            if (open) this.writeCounted(stream, writeFrameHeader(responseCodec.encodeWithPrefix(response, FRAME_HEADER_BYTES)));
            maybeEnd();
          },
          (err) => {
            inFlight--;
            if (!open) return;
            open = false;
            const e = isKvError(err) ? err : new KvError('INTERNAL', (err as Error).message);
            this.endStreamWithStatus(stream, e.grpcCode, e.wireMessage);
          },
        );
      }
    });
  }

  /**
   * Maintenance.Snapshot: the store's snapshot file (KvReplica.backupSnapshot, consistent at one
   * applied index) in chunks, each with the bytes still to come. The file carries its own sha256
   * trailer, as etcd's stream ends with one. Chunks wait for the stream's 'drain', so a slow
   * client holds one chunk in flight, not the whole file.
   */
  private serveSnapshot(stream: http2.ServerHttp2Stream, deframer: GrpcDeframer): void {
    const responseCodec = codecFor('SnapshotResponse');
    readUnaryRequest(stream, deframer, () => {
      this.replica.backupSnapshot().then(
        async (file) => {
          if (stream.closed || stream.destroyed) return;
          stream.respond(responseHeaders(), { waitForTrailers: true });
          stream.once('wantTrailers', () => this.sendOkTrailers(stream));
          const header = this.replica.header();
          for (let offset = 0; offset < file.length; offset += SNAPSHOT_CHUNK_BYTES) {
            if (stream.closed || stream.destroyed) return;
            const blob = file.subarray(offset, Math.min(file.length, offset + SNAPSHOT_CHUNK_BYTES));
            const frame = writeFrameHeader(responseCodec.encodeWithPrefix({ header, remainingBytes: file.length - offset - blob.length, blob }, FRAME_HEADER_BYTES));
            if (!this.writeCounted(stream, frame)) await new Promise<void>((resolve) => {
              const done = () => {
                stream.off('drain', done);
                stream.off('close', done);
                resolve();
              };
              stream.on('drain', done);
              stream.on('close', done);
            });
          }
          if (!stream.closed && !stream.destroyed) stream.end();
        },
        (err) => this.endWithError(stream, err),
      );
    }, (code, message) => this.endWithStatus(stream, code, message));
  }

  private endWithMessage(stream: http2.ServerHttp2Stream, frame: Uint8Array): void {
    if (stream.closed || stream.destroyed) return;
    writeFrameHeader(frame);
    stream.respond(responseHeaders(), { waitForTrailers: true });
    stream.once('wantTrailers', () => this.sendOkTrailers(stream));
    this.replica.grpcMetrics.sentBytes += frame.length;
    stream.end(frame);
  }

  private sendOkTrailers(stream: http2.ServerHttp2Stream): void {
    this.noteStatus(stream, Status.OK);
    stream.sendTrailers(statusTrailers(Status.OK));
  }

  private endWithError(stream: http2.ServerHttp2Stream, err: unknown): void {
    if (isKvError(err)) {
      this.endWithStatus(stream, err.grpcCode, err.wireMessage);
      return;
    }
    this.log(`internal error: ${(err as Error).stack ?? String(err)}`);
    this.endWithStatus(stream, Status.INTERNAL, (err as Error).message);
  }

  /** A trailers-only response: the status in the one HEADERS frame. */
  private endWithStatus(stream: http2.ServerHttp2Stream, code: number, message: string): void {
    if (stream.closed || stream.destroyed) return;
    this.noteStatus(stream, code);
    stream.respond({ ...responseHeaders(), ...statusTrailers(code, message) }, { endStream: true });
  }

  /** Ends a stream whose headers were already sent, with a status in the trailers. */
  private endStreamWithStatus(stream: http2.ServerHttp2Stream, code: number, message: string): void {
    if (stream.closed || stream.destroyed) return;
    stream.removeAllListeners('wantTrailers');
    this.noteStatus(stream, code);
    stream.once('wantTrailers', () => stream.sendTrailers(statusTrailers(code, message)));
    stream.end();
  }

  private log(line: string): void {
    (this.options.logger ?? ((l: string) => process.stderr.write(l + '\n')))(`etcd api: ${line}`);
  }
}

/** Member ids are 64-bit on the wire; Carina's fit in 32 bits, so a larger one names no member. */
function memberIdOf(id: bigint): number {
  if (id <= 0n || id > 0xffff_ffffn) throw new KvError('MEMBER_NOT_FOUND');
  return Number(id);
}

function splitHostPort(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(':');
  if (i < 0) throw new Error(`listen address "${address}" is not host:port`);
  const host = address.slice(0, i).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(i + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`listen address "${address}": bad port`);
  return { host, port };
}
