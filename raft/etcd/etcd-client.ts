/**
 * A client of etcd's v3 gRPC API (a real etcd, or Carina's store serving the same API) written on
 * `node:http2` directly: HTTP/2 over TLS to `https://host:port` endpoints (or to bare `host:port`
 * ones when `tls` is given), presenting a client certificate when it has one, as etcdctl with
 * --cacert/--cert/--key; plaintext h2c to `http://` ones. One session per endpoint kept open,
 * one stream per unary call, and the Watch service as one bidirectional stream that carries
 * every watch of the client. @grpc/grpc-js is not used: for sequential unary calls its per-call
 * machinery costs several times what the call itself does. The sessions, the unary call and its
 * failover are grpc-channel.ts's; this module holds the API, the Watch stream and Snapshot.
 *
 * TLS: the server's certificate must chain to `tls.ca` (the system's CAs when absent) and name
 * the endpoint's host. A handshake that fails (the server refused our certificate, or we its)
 * fails the call as UNAVAILABLE with the reason; nothing was sent, so it may fail over.
 *
 * Errors: a non-OK gRPC status becomes the KvError that raft/kv/errors.ts maps it to; a failed
 * session or stream, a timeout and a protocol violation become KvError 'UNAVAILABLE' (the
 * latter two with their reason in the message), an undecodable response 'INTERNAL'.
 *
 * Endpoints and retries: calls go to the current endpoint. A call that fails with a status whose
 * gRPC code is UNAVAILABLE (the transport failed, or etcd said "no leader", "request timed out",
 * ...) moves the client to the next endpoint; reads (Range, read-only Txn, lease time-to-live and
 * listing, keep-alive, member list, status) are then retried there, once per endpoint, within the
 * call's deadline. Writes are retried only when the request provably never left this process (the
 * connection could not be opened, or the server refused the stream unprocessed): a write that
 * may have been applied is reported, never silently repeated.
 *
 * Tracing: a unary call made while a span is current sends its `traceparent` as metadata.
 */
import * as http2 from 'node:http2';
import type { Writable } from 'node:stream';
import type { Context } from '@opentelemetry/api';
import { KvError, kvErrorFromGrpc } from '../kv';
import type {
  CompactionRequest,
  CompactionResponse,
  DeleteRangeRequest,
  DeleteRangeResponse,
  Event,
  KvCallOptions,
  KvClient,
  LeaseGrantRequest,
  LeaseGrantResponse,
  LeaseKeepAliveResponse,
  LeaseLeasesResponse,
  LeaseRevokeResponse,
  LeaseTimeToLiveResponse,
  MemberListResponse,
  PutRequest,
  PutResponse,
  RangeRequest,
  RangeResponse,
  RequestOp,
  StatusResponse,
  TxnRequest,
  TxnResponse,
  WatchCreateRequest,
  WatchHandle,
  WatchResponse,
} from '../kv';
import {
  codecFor,
  ETCD_METHODS,
  methodPath,
  type EtcdMethodName,
  type EtcdRequestOf,
  type EtcdResponseOf,
  type MemberAddResponse,
  type MembersResponse,
  type MessageCodec,
  type WatchRequest,
} from './codec';
import {
  FRAME_HEADER_BYTES,
  GrpcDeframer,
  GrpcProtocolError,
  requestHeaders,
  Status,
  writeFrameHeader,
} from './grpc-framing';
import { GrpcChannel, onStreamEnd, unavailable, USER_AGENT, type Connection, type Endpoint, type MethodSpec, type Retry } from './grpc-channel';

/** What the client presents and trusts on TLS endpoints (kube-apiserver's --etcd-cafile, --etcd-certfile, --etcd-keyfile). */
export interface EtcdClientTls {
  /** PEM CA bundle the server's certificate must chain to; the system's CAs when absent. */
  ca?: string;
  /** PEM client certificate and its key, for servers that authenticate clients (both or neither). */
  cert?: string;
  key?: string;
}

export interface EtcdClientOptions {
  /**
   * Each member: `https://host:port` (TLS), `http://host:port` (plaintext), or `host:port`
   * (TLS when `tls` is given, else plaintext).
   */
  endpoints: string[];
  /** TLS settings for TLS endpoints. */
  tls?: EtcdClientTls;
  /** Deadline of each call, retries included, in milliseconds; 0 for none. Default 30 s. */
  timeoutMs?: number;
  /** Largest message sent or received, in bytes. Default 512 MiB. */
  maxMessageBytes?: number;
  /** HTTP/2 flow-control window per stream, in bytes. Default 16 MiB. */
  streamWindowBytes?: number;
  /** HTTP/2 flow-control window of each connection, in bytes. Default 64 MiB. */
  connectionWindowBytes?: number;
}

/** The unary RPCs (every RPC but Watch, LeaseKeepAlive and Snapshot, which stream). */
export type UnaryMethodName = {
  [M in EtcdMethodName]: (typeof ETCD_METHODS)[M]['stream'] extends false ? M : never;
}[EtcdMethodName];

const METHOD_SPECS = new Map<EtcdMethodName, MethodSpec>(
  (Object.keys(ETCD_METHODS) as EtcdMethodName[]).map((name) => [
    name,
    {
      path: methodPath(name),
      request: codecFor(ETCD_METHODS[name].request) as MessageCodec<unknown>,
      response: codecFor(ETCD_METHODS[name].response) as MessageCodec<unknown>,
    },
  ]),
);

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_MESSAGE_BYTES = 512 * 1024 * 1024;
const DEFAULT_STREAM_WINDOW = 16 * 1024 * 1024;
const DEFAULT_CONNECTION_WINDOW = 64 * 1024 * 1024;
const { NGHTTP2_CANCEL } = http2.constants;

const watchRequestCodec = codecFor('WatchRequest');
const watchResponseCodec = codecFor('WatchResponse');


function isReadOnlyOps(ops: RequestOp[]): boolean {
  for (const op of ops) {
    if ('requestRange' in op) continue;
    if ('requestTxn' in op && isReadOnlyTxn(op.requestTxn)) continue;
    return false;
  }
  return true;
}

function isReadOnlyTxn(txn: TxnRequest): boolean {
  return isReadOnlyOps(txn.success) && isReadOnlyOps(txn.failure);
}

export class EtcdClient implements KvClient {
  private readonly channel: GrpcChannel;
  private readonly endpoints: readonly Endpoint[];
  private watchMux: WatchMux | null = null;

  constructor(options: EtcdClientOptions) {
    if (options.endpoints.length === 0) throw new Error('EtcdClient needs at least one endpoint');
    if ((options.tls?.cert === undefined) !== (options.tls?.key === undefined)) throw new Error('EtcdClient: a client certificate needs its key, and a key its certificate');
    this.channel = new GrpcChannel({
      endpoints: options.endpoints,
      tls: options.tls,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      streamWindowBytes: options.streamWindowBytes ?? DEFAULT_STREAM_WINDOW,
      connectionWindowBytes: options.connectionWindowBytes ?? DEFAULT_CONNECTION_WINDOW,
    });
    this.endpoints = this.channel.endpoints;
  }

  /** The endpoint calls currently go to. */
  get currentEndpoint(): string {
    return this.endpoints[this.channel.currentIndex].authority;
  }

  // --- KvClient -----------------------------------------------------------------------------------

  range(request: RangeRequest, options?: KvCallOptions): Promise<RangeResponse> {
    return this.unary('range', request, 'read', options?.trace);
  }

  put(request: PutRequest, options?: KvCallOptions): Promise<PutResponse> {
    return this.unary('put', request, 'write', options?.trace);
  }

  deleteRange(request: DeleteRangeRequest, options?: KvCallOptions): Promise<DeleteRangeResponse> {
    return this.unary('deleteRange', request, 'write', options?.trace);
  }

  txn(request: TxnRequest, options?: KvCallOptions): Promise<TxnResponse> {
    return this.unary('txn', request, isReadOnlyTxn(request) ? 'read' : 'write', options?.trace);
  }

  compact(request: CompactionRequest, options?: KvCallOptions): Promise<CompactionResponse> {
    return this.unary('compact', request, 'write', options?.trace);
  }

  leaseGrant(request: LeaseGrantRequest): Promise<LeaseGrantResponse> {
    return this.unary('leaseGrant', request, 'write');
  }

  leaseRevoke(id: bigint): Promise<LeaseRevokeResponse> {
    return this.unary('leaseRevoke', { id }, 'write');
  }

  /**
   * One keep-alive on a LeaseKeepAlive stream of its own: the request, half-close, the one
   * response. Renewing twice does no harm, so it is retried like a read.
   */
  leaseKeepAliveOnce(id: bigint): Promise<LeaseKeepAliveResponse> {
    return this.unary('leaseKeepAlive', { id }, 'read');
  }

  leaseTimeToLive(id: bigint, keys = false): Promise<LeaseTimeToLiveResponse> {
    return this.unary('leaseTimeToLive', { id, keys }, 'read');
  }

  leaseLeases(): Promise<LeaseLeasesResponse> {
    return this.unary('leaseLeases', {}, 'read');
  }

  memberList(): Promise<MemberListResponse> {
    return this.unary('memberList', {}, 'read');
  }

  status(): Promise<StatusResponse> {
    return this.unary('status', {}, 'read');
  }

  // --- Cluster (membership) ----------------------------------------------------------------------
  // Membership changes are not idempotent (an add twice is two members): they never fail over
  // once sent. Their errors come back as typed KvErrors (isMembershipError tells etcd's membership refusals).

  /** etcd's MemberAdd: `peerUrls` is the new member's Raft URL (http://host:port). */
  memberAdd(peerUrls: string[], isLearner = false): Promise<MemberAddResponse> {
    return this.unary<MemberAddResponse>('memberAdd', { peerUrls, isLearner }, 'write');
  }

  memberRemove(id: bigint): Promise<MembersResponse> {
    return this.unary<MembersResponse>('memberRemove', { id }, 'write');
  }

  memberUpdate(id: bigint, peerUrls: string[]): Promise<MembersResponse> {
    return this.unary<MembersResponse>('memberUpdate', { id, peerUrls }, 'write');
  }

  memberPromote(id: bigint): Promise<MembersResponse> {
    return this.unary<MembersResponse>('memberPromote', { id }, 'write');
  }

  /** etcd's MoveLeader: only the current leader can hand over, so call it on the leader's endpoint. */
  async moveLeader(targetId: bigint): Promise<void> {
    await this.unary('moveLeader', { targetId }, 'write');
  }


  watch(request: WatchCreateRequest, onResponse: (response: WatchResponse) => void, onError?: (err: Error) => void): WatchHandle {
    const entry = new WatchEntry(request, onResponse, onError);
    if (this.channel.isClosed) {
      entry.fail(unavailable('the client is closed'), false);
      return entry;
    }
    this.watchStream().add(entry);
    return entry;
  }

  /** Asks for a progress notification on the watch stream (answered to every watch on it). */
  requestWatchProgress(): void {
    this.watchMux?.send({ progressRequest: {} });
  }

  /**
   * Any unary RPC of the API by its method name (ETCD_METHODS), for the Cluster and Maintenance
   * calls that KvClient leaves out. `retry: 'read'` lets an idempotent call fail over.
   */
  call<M extends UnaryMethodName>(method: M, request: EtcdRequestOf<M>, retry: Retry = 'write'): Promise<EtcdResponseOf<M>> {
    return this.unary(method, request, retry);
  }

  /**
   * Maintenance.Snapshot: streams the member's snapshot into `sink`, ends it and waits for it
   * to finish. `onProgress` sees the bytes received so far and those the server says remain.
   * A member that fails before sending anything is replaced by the next endpoint; once bytes
   * have reached the sink, a failure is final (the sink holds a partial file).
   */
  async snapshot(sink: Writable, onProgress?: (received: number, remaining: number) => void): Promise<{ bytes: number; endpoint: string; revision: number }> {
    if (this.channel.isClosed) throw unavailable('the client is closed');
    let lastError: KvError | null = null;
    for (let attempt = 0; attempt < this.endpoints.length; attempt++) {
      const index = this.channel.currentIndex;
      const endpoint = this.endpoints[index];
      const outcome = await this.snapshotFrom(endpoint, sink, onProgress);
      if ('bytes' in outcome) {
        await new Promise<void>((resolve, reject) => {
          sink.once('error', reject);
          sink.end(() => resolve());
        });
        return { bytes: outcome.bytes, endpoint: endpoint.authority, revision: outcome.revision };
      }
      lastError = outcome.error;
      if (!outcome.retryable || this.channel.isClosed) break;
      this.channel.moveOnFrom(index);
    }
    sink.destroy();
    throw lastError ?? unavailable('snapshot: no endpoint answered');
  }

  private snapshotFrom(ep: Endpoint, sink: Writable, onProgress?: (received: number, remaining: number) => void): Promise<{ bytes: number; revision: number } | { error: KvError; retryable: boolean }> {
    const codec = codecFor('SnapshotResponse');
    return new Promise((resolve) => {
      let connection: Connection;
      let stream: http2.ClientHttp2Stream;
      try {
        connection = this.channel.connection(ep);
        stream = connection.session.request(requestHeaders({ path: methodPath('snapshot'), authority: ep.authority, userAgent: USER_AGENT }), { endStream: false });
      } catch (err) {
        resolve({ error: unavailable(`cannot start a snapshot from ${ep.authority}: ${(err as Error).message}`, err), retryable: true });
        return;
      }
      const release = connection.hold();
      const deframer = new GrpcDeframer(this.channel.maxMessageBytes);
      let received = 0;
      let revision = 0;
      let remaining = -1;
      let problem: KvError | null = null;
      stream.on('data', (chunk: Buffer) => {
        if (problem !== null) return;
        try {
          for (const message of deframer.push(chunk)) {
            const response = codec.decode(message);
            received += response.blob.length;
            remaining = response.remainingBytes;
            revision = response.header.revision;
            if (!sink.write(response.blob)) {
              stream.pause();
              sink.once('drain', () => stream.resume());
            }
            onProgress?.(received, remaining);
          }
        } catch (err) {
          problem = err instanceof GrpcProtocolError ? kvErrorFromGrpc(err.code, err.message) : new KvError('INTERNAL', `undecodable snapshot response: ${(err as Error).message}`, { cause: err });
          stream.close(NGHTTP2_CANCEL);
        }
      });
      onStreamEnd(stream, ({ status, error, failure }) => {
        release();
        if (problem !== null) resolve({ error: problem, retryable: false });
        else if (status !== null && status.code !== Status.OK) resolve({ error: kvErrorFromGrpc(status.code, status.message), retryable: received === 0 && status.code === Status.UNAVAILABLE });
        else if (status !== null && remaining === 0) resolve({ bytes: received, revision });
        else {
          const reason = status !== null ? `the stream ended with ${remaining} bytes still to come` : failure;
          resolve({ error: unavailable(`snapshot from ${ep.authority}: ${reason}`, error ?? undefined), retryable: received === 0 });
        }
      });
      stream.end(writeFrameHeader(codecFor('SnapshotRequest').encodeWithPrefix({}, FRAME_HEADER_BYTES)));
    });
  }

  async close(): Promise<void> {
    if (this.channel.isClosed) return;
    // Closed first, so that the watch stream ended below moves to no other endpoint.
    this.channel.refuseNewCalls();
    this.watchMux?.close();
    this.watchMux = null;
    await this.channel.close();
  }


  // --- Unary calls --------------------------------------------------------------------------------

  private async unary<R>(method: EtcdMethodName, request: unknown, retry: Retry, trace?: Context): Promise<R> {
    const spec = METHOD_SPECS.get(method)!;
    const bytes = await this.channel.exchange(spec, request, retry, trace);
    try {
      return spec.response.decode(bytes) as R;
    } catch (err) {
      throw new KvError('INTERNAL', `undecodable ${method} response: ${(err as Error).message}`, { cause: err });
    }
  }


  // --- Watch --------------------------------------------------------------------------------------

  private watchStream(): WatchMux {
    if (this.watchMux !== null && !this.watchMux.ended) return this.watchMux;
    const mux = new WatchMux(this.channel.currentIndex, this.channel.maxMessageBytes, (failed, error, retryable) => this.watchStreamFailed(failed, error, retryable));
    this.watchMux = mux;
    this.openWatchStream(mux);
    return mux;
  }

  private openWatchStream(mux: WatchMux): void {
    const ep = this.endpoints[mux.endpointIndex];
    let connection: Connection;
    let stream: http2.ClientHttp2Stream;
    try {
      connection = this.channel.connection(ep);
      stream = connection.session.request(requestHeaders({ path: methodPath('watch'), authority: ep.authority, userAgent: USER_AGENT }), { endStream: false });
    } catch (err) {
      queueMicrotask(() => mux.fail(unavailable(`cannot open the watch stream to ${ep.authority}: ${(err as Error).message}`, err), true));
      return;
    }
    mux.attach(stream, ep, connection);
  }

  /** A watch stream failed: before it answered anything, its watches move to the next endpoint. */
  private watchStreamFailed(mux: WatchMux, error: KvError, retryable: boolean): void {
    if (this.watchMux === mux) this.watchMux = null;
    this.channel.moveOnFrom(mux.endpointIndex);
    const entries = mux.takeEntries();
    if (entries.length === 0) return;
    if (retryable && !this.channel.isClosed && mux.attempts < this.endpoints.length) {
      const next = new WatchMux(this.channel.currentIndex, this.channel.maxMessageBytes, (failed, e, r) => this.watchStreamFailed(failed, e, r));
      next.attempts = mux.attempts + 1;
      this.watchMux = next;
      this.openWatchStream(next);
      for (const entry of entries) next.add(entry);
      return;
    }
    for (const entry of entries) entry.fail(error, true);
  }
}

/**
 * One Watch stream and the watches it carries. Create requests are answered in the order they
 * were sent, each by a `created` response carrying the watch id; later responses are routed by
 * that id. A response for watch id -1 that is not a creation (a progress notification asked for
 * the whole stream) goes to every watch.
 */
class WatchMux {
  attempts = 1;
  ended = false;
  private stream: http2.ClientHttp2Stream | null = null;
  private release: () => void = () => {};
  private readonly unsent: WatchRequest[] = [];
  private readonly pending: WatchEntry[] = [];
  private readonly active = new Map<number, WatchEntry>();
  private answered = false;
  private readonly deframer: GrpcDeframer;

  constructor(
    readonly endpointIndex: number,
    maxMessageBytes: number,
    private readonly onFailure: (mux: WatchMux, error: KvError, retryable: boolean) => void,
  ) {
    this.deframer = new GrpcDeframer(maxMessageBytes);
  }

  attach(stream: http2.ClientHttp2Stream, ep: Endpoint, connection: Connection): void {
    this.stream = stream;
    this.release = connection.hold();
    stream.on('response', () => {
      this.answered = true;
    });
    stream.on('data', (chunk: Buffer) => {
      if (this.ended) return;
      let messages: readonly Uint8Array[];
      try {
        messages = this.deframer.push(chunk);
      } catch (err) {
        const e = err as GrpcProtocolError;
        this.fail(kvErrorFromGrpc(e.code ?? Status.INTERNAL, `watch stream: ${e.message}`), false);
        return;
      }
      for (const bytes of messages) {
        if (this.ended) return;
        let response: WatchResponse;
        try {
          response = watchResponseCodec.decode(bytes);
        } catch (err) {
          this.fail(new KvError('INTERNAL', `undecodable watch response: ${(err as Error).message}`, { cause: err }), false);
          return;
        }
        this.dispatch(response);
      }
    });
    onStreamEnd(stream, ({ status, error, failure }) => {
      if (this.ended) return;
      if (status !== null && status.code !== Status.OK) {
        this.fail(kvErrorFromGrpc(status.code, status.message), false);
        return;
      }
      const reason = status !== null ? 'the server ended the watch stream' : failure;
      // Nothing came back and nothing reached the server: the watches can go elsewhere.
      this.fail(unavailable(`watch stream to ${ep.authority}: ${reason}`, error ?? undefined), !this.answered && !connection.connected);
    });
    for (const request of this.unsent.splice(0)) this.send(request);
  }

  add(entry: WatchEntry): void {
    entry.mux = this;
    this.pending.push(entry);
    this.send({ createRequest: entry.request });
  }

  send(request: WatchRequest): void {
    if (this.ended) return;
    if (this.stream === null) {
      this.unsent.push(request);
      return;
    }
    const frame = writeFrameHeader(watchRequestCodec.encodeWithPrefix(request, FRAME_HEADER_BYTES));
    this.stream.write(frame);
  }

  forget(id: number): void {
    this.active.delete(id);
  }

  private dispatch(response: WatchResponse): void {
    if (response.created) {
      const entry = this.pending.shift();
      if (entry === undefined) {
        this.fail(new KvError('INTERNAL', `watch stream: a created response (watch ${response.watchId}) that no create request asked for`), false);
        return;
      }
      if (!response.canceled) this.active.set(response.watchId, entry);
      entry.created(response);
      return;
    }
    const entry = this.active.get(response.watchId);
    if (entry !== undefined) {
      entry.deliver(response);
      return;
    }
    if (response.watchId === -1) {
      for (const e of [...this.active.values()]) e.deliver(response);
    }
  }

  /** The watches not yet finished, taken out of this stream (which is then ended). */
  takeEntries(): WatchEntry[] {
    const entries = [...this.pending, ...new Set(this.active.values())];
    this.pending.length = 0;
    this.active.clear();
    return entries;
  }

  fail(error: KvError, retryable: boolean): void {
    if (this.ended) return;
    this.ended = true;
    this.stream?.close(NGHTTP2_CANCEL);
    this.release();
    this.onFailure(this, error, retryable);
  }

  /** Ends the stream for good (client closed): watches end without onError. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.stream?.close(NGHTTP2_CANCEL);
    this.release();
    for (const entry of this.takeEntries()) entry.fail(unavailable('the client is closed'), false);
  }
}

class WatchEntry implements WatchHandle {
  readonly watchId: Promise<number>;
  mux: WatchMux | null = null;
  private state: 'pending' | 'active' | 'done' = 'pending';
  private id = 0;
  private resolveId!: (id: number) => void;
  private rejectId!: (err: Error) => void;
  private cancelWaiter: Promise<void> | null = null;
  private resolveCancel: (() => void) | null = null;
  private fragments: Event[] | null = null;

  constructor(
    readonly request: WatchCreateRequest,
    private readonly onResponse: (response: WatchResponse) => void,
    private readonly onError?: (err: Error) => void,
  ) {
    this.watchId = new Promise<number>((resolve, reject) => {
      this.resolveId = resolve;
      this.rejectId = reject;
    });
    // A caller that never looks at the id must not see an unhandled rejection.
    this.watchId.catch(() => {});
  }

  cancel(): Promise<void> {
    if (this.state === 'done') return Promise.resolve();
    if (this.cancelWaiter === null) {
      this.cancelWaiter = new Promise<void>((resolve) => {
        this.resolveCancel = resolve;
      });
      if (this.state === 'active') this.mux?.send({ cancelRequest: { watchId: this.id } });
    }
    return this.cancelWaiter;
  }

  created(response: WatchResponse): void {
    this.id = response.watchId;
    this.resolveId(response.watchId);
    if (response.canceled) {
      this.finish();
      this.emit(response);
      return;
    }
    this.state = 'active';
    this.emit(response);
    if (this.cancelWaiter !== null && this.state === 'active') this.mux?.send({ cancelRequest: { watchId: this.id } });
  }

  deliver(response: WatchResponse): void {
    if (this.state !== 'active') return;
    if (response.fragment) {
      (this.fragments ??= []).push(...response.events);
      return;
    }
    if (this.fragments !== null) {
      response = { ...response, events: [...this.fragments, ...response.events] };
      this.fragments = null;
    }
    if (response.canceled) this.finish();
    this.emit(response);
  }

  /** The stream carrying the watch failed (or the client closed, report = false). */
  fail(error: KvError, report: boolean): void {
    if (this.state === 'done') return;
    this.state = 'done';
    this.rejectId(error);
    this.resolveCancel?.();
    if (report) this.onError?.(error);
  }

  private finish(): void {
    this.state = 'done';
    this.mux?.forget(this.id);
    this.resolveCancel?.();
  }

  private emit(response: WatchResponse): void {
    try {
      this.onResponse(response);
    } catch (err) {
      // A throwing callback must not break the stream that other watches share.
      queueMicrotask(() => {
        throw err;
      });
    }
  }
}
