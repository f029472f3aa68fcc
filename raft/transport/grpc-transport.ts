/**
 * The Raft transport over gRPC (proto/raft.proto, service RaftTransport).
 *
 * Sending, per peer: one long-lived SendMessages client stream, and a bounded FIFO of messages
 * already encoded. One batch is in flight at a time; everything queued when it completes goes
 * out as the next batch (up to maxBatchBytes), so a busy peer gets few large writes and an idle
 * one gets each message at once. Nothing is written until the receiver has answered the stream
 * with its headers: until then messages wait in the queue, where the bound applies, rather than
 * in gRPC's buffers, where they would silently die with a connection that never came up.
 * Snapshots go on a SendSnapshot stream of their own, in chunks, respecting the stream's
 * backpressure.
 *
 * Failure: Raft tolerates loss and retransmits, so the transport never retries a message. When
 * a stream breaks or cannot be opened it tells the node (onUnreachable) and opens a new one after
 * an exponential backoff with jitter; messages that do not fit in the queue meanwhile are
 * dropped and reported the same way.
 *
 * Receiving: each batch is decoded whole before any of its messages is delivered, so a malformed
 * batch is refused (INVALID_ARGUMENT, which breaks the sender's stream) without half of it
 * having been acted on. Messages addressed to another node are dropped: an address can outlive
 * the member that used it.
 *
 * Security: with `tls`, both directions use TLS with client-certificate authentication (etcd's
 * --peer-client-cert-auth): the server asks every connecting peer for a certificate from the
 * peer CA and ends the handshake of one without it before a byte of gRPC is read; a sender
 * checks the receiver's certificate against the same CA and the peer's address. Without `tls`
 * (the library's in-process tests only) the transport is plaintext.
 *
 * Callbacks (onUnreachable, onSnapshotStatus) never run inside send(): the node calls send()
 * from its drive loop, which must not be re-entered.
 */
import * as grpc from '@grpc/grpc-js';
import type { Message, NodeId } from '../core';
import { isLocalMessage } from '../core';
import type { Transport } from '../node';
import type { MutualTls } from './mutual-tls';
import {
  decodeMessage,
  encodeMessage,
  batchOverheadBytes,
  raftTransportService,
  SnapshotAssembler,
  snapshotChunks,
  sendMessagesMethod,
  sendSnapshotMethod,
  type EmptyReply,
  type SnapshotAck,
  type SnapshotChunk,
} from './codec';

export interface ReconnectBackoff {
  initialMs: number;
  maxMs: number;
}

export interface GrpcTransportOptions {
  id: NodeId;
  /** "host:port"; port 0 picks a free one, which start() returns. */
  listenAddress: string;
  /** Every message received for this node. Must not throw. */
  onMessage: (m: Message) => void;
  /** A 'snap' message whose snapshot data is complete. A throw makes the sender's snapshot fail. */
  onSnapshot: (m: Message) => void;
  onUnreachable?: (peer: NodeId) => void;
  onSnapshotStatus?: (peer: NodeId, ok: boolean) => void;
  /** Default 512 KiB. */
  snapshotChunkBytes?: number;
  /** Target size of one MessageBatch; a single larger message travels alone. Default 1 MiB. */
  maxBatchBytes?: number;
  /** Per-peer queue bound in messages. Default 4096. */
  maxQueueMessages?: number;
  /** Per-peer queue bound in bytes. Default 64 MiB. */
  maxQueueBytes?: number;
  /** Default { initialMs: 50, maxMs: 2000 }. */
  reconnectBackoff?: ReconnectBackoff;
  /** Largest snapshot accepted from a peer. Default 1 GiB. */
  maxSnapshotBytes?: number;
  /** How long a new stream may wait for the receiver's answer before it counts as failed. Default 5 s. */
  connectTimeoutMs?: number;
  /**
   * Mutual TLS on the peer port, in both directions: this member's peer certificate (presented
   * as server and as client) and the peer CA. Absent: plaintext (in-process tests only).
   */
  tls?: MutualTls;
  /**
   * With tls: the only subject CN a sending peer's certificate may have (etcd's
   * --peer-cert-allowed-cn), so that a client certificate from the same CA cannot act as a
   * peer. A stream from another certificate is refused before any of its messages is read.
   */
  allowedPeerCommonName?: string;
}

/** Counters for tests and metrics; they only grow. */
export interface GrpcTransportStats {
  messagesSent: number;
  batchesSent: number;
  bytesSent: number;
  /** Dropped on the way out: unknown peer, full queue, local type, unencodable, oversized. */
  messagesDropped: number;
  snapshotsSent: number;
  snapshotChunksSent: number;
  snapshotsFailed: number;
  /** Times a snapshot sender waited for its stream to drain: backpressure at work. */
  snapshotDrainWaits: number;
  /** SendMessages streams the receiver answered. */
  streamsOpened: number;
  /** SendMessages streams that ended other than by our own close. */
  streamFailures: number;
  messagesReceived: number;
  batchesReceived: number;
  /** Received, but addressed to another node. */
  messagesMisrouted: number;
  /** Batches refused as malformed. */
  batchesRejected: number;
  /** Streams refused because the sender's certificate is not a peer's (allowedPeerCommonName). */
  streamsRefused: number;
  snapshotsReceived: number;
  snapshotsRejected: number;
  /** Messages to a peer dropped on the way out (unknown peer, full queue, oversized, failed snapshot): etcd_network_peer_sent_failures_total. */
  sendFailuresByPeer: Map<NodeId, number>;
  /** Heartbeats among those (etcd_server_heartbeat_send_failures_total). */
  heartbeatSendFailures: number;
}

function newStats(): GrpcTransportStats {
  return {
    messagesSent: 0,
    batchesSent: 0,
    bytesSent: 0,
    messagesDropped: 0,
    snapshotsSent: 0,
    snapshotChunksSent: 0,
    snapshotsFailed: 0,
    snapshotDrainWaits: 0,
    streamsOpened: 0,
    streamFailures: 0,
    messagesReceived: 0,
    batchesReceived: 0,
    messagesMisrouted: 0,
    sendFailuresByPeer: new Map(),
    heartbeatSendFailures: 0,
    batchesRejected: 0,
    streamsRefused: 0,
    snapshotsReceived: 0,
    snapshotsRejected: 0,
  };
}

export const DEFAULT_SNAPSHOT_CHUNK_BYTES = 512 * 1024;
export const DEFAULT_MAX_BATCH_BYTES = 1024 * 1024;
export const DEFAULT_MAX_QUEUE_MESSAGES = 4096;
export const DEFAULT_MAX_QUEUE_BYTES = 64 * 1024 * 1024;
export const DEFAULT_RECONNECT_BACKOFF: ReconnectBackoff = { initialMs: 50, maxMs: 2000 };
export const DEFAULT_MAX_SNAPSHOT_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

/**
 * gRPC's default 4 MiB receive limit would break a stream on the first large batch; the floor
 * leaves room for a message larger than maxBatchBytes (it travels alone), and both sides use the
 * same floor so that a default sender never exceeds a default receiver.
 */
const MIN_GRPC_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Room for a snapshot chunk's header and framing beyond its data. */
const CHUNK_HEADER_ALLOWANCE = 1024 * 1024;

/**
 * Clients ping every 10 s so that a peer that vanished without closing its connection (power
 * loss, partition) breaks the stream within seconds rather than at the next TCP timeout; the
 * server pings less often because every client already does.
 */
const CLIENT_KEEPALIVE_TIME_MS = 10_000;
const CLIENT_KEEPALIVE_TIMEOUT_MS = 5_000;
const SERVER_KEEPALIVE_TIME_MS = 30_000;
const SERVER_KEEPALIVE_TIMEOUT_MS = 10_000;

interface Settings {
  snapshotChunkBytes: number;
  maxBatchBytes: number;
  maxQueueMessages: number;
  maxQueueBytes: number;
  backoff: ReconnectBackoff;
  maxSnapshotBytes: number;
  connectTimeoutMs: number;
  maxGrpcMessageBytes: number;
  tls: MutualTls | undefined;
}

function positiveInteger(value: number | undefined, fallback: number, what: string): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v <= 0) throw new RangeError(`${what} must be a positive integer, got ${v}`);
  return v;
}

function settingsFrom(o: GrpcTransportOptions): Settings {
  const snapshotChunkBytes = positiveInteger(o.snapshotChunkBytes, DEFAULT_SNAPSHOT_CHUNK_BYTES, 'snapshotChunkBytes');
  const maxBatchBytes = positiveInteger(o.maxBatchBytes, DEFAULT_MAX_BATCH_BYTES, 'maxBatchBytes');
  const backoff = o.reconnectBackoff ?? DEFAULT_RECONNECT_BACKOFF;
  const initialMs = positiveInteger(backoff.initialMs, 0, 'reconnectBackoff.initialMs');
  const maxMs = positiveInteger(backoff.maxMs, 0, 'reconnectBackoff.maxMs');
  return {
    snapshotChunkBytes,
    maxBatchBytes,
    maxQueueMessages: positiveInteger(o.maxQueueMessages, DEFAULT_MAX_QUEUE_MESSAGES, 'maxQueueMessages'),
    maxQueueBytes: positiveInteger(o.maxQueueBytes, DEFAULT_MAX_QUEUE_BYTES, 'maxQueueBytes'),
    backoff: { initialMs, maxMs: Math.max(initialMs, maxMs) },
    maxSnapshotBytes: positiveInteger(o.maxSnapshotBytes, DEFAULT_MAX_SNAPSHOT_BYTES, 'maxSnapshotBytes'),
    connectTimeoutMs: positiveInteger(o.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, 'connectTimeoutMs'),
    maxGrpcMessageBytes: Math.max(MIN_GRPC_MESSAGE_BYTES, 2 * maxBatchBytes, snapshotChunkBytes + CHUNK_HEADER_ALLOWANCE),
    tls: o.tls,
  };
}

/** The receiver's certificate must come from the peer CA and name the address dialled. */
function clientCredentials(tls: MutualTls | undefined): grpc.ChannelCredentials {
  if (tls === undefined) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(Buffer.from(tls.ca), Buffer.from(tls.key), Buffer.from(tls.cert));
}

/** `true` is gRPC's checkClientCertificate: a peer without a certificate from the CA fails the handshake. */
function serverCredentials(tls: MutualTls | undefined): grpc.ServerCredentials {
  if (tls === undefined) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(Buffer.from(tls.ca), [{ cert_chain: Buffer.from(tls.cert), private_key: Buffer.from(tls.key) }], true);
}

/** What a PeerLink needs from its transport. */
interface LinkContext {
  readonly settings: Settings;
  readonly stats: GrpcTransportStats;
  reportUnreachable(peer: NodeId): void;
  reportSnapshotStatus(peer: NodeId, ok: boolean): void;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function statusError(code: grpc.status, details: string): grpc.ServerErrorResponse {
  return Object.assign(new Error(details), { code, details });
}

interface SnapshotOutcome {
  error: grpc.ServiceError | null;
  ack: SnapshotAck | null;
}

/** The sending half towards one peer. */
class PeerLink {
  private readonly client: grpc.Client;
  /** Encoded messages; [head, length) are waiting. A head index keeps dequeueing O(1). */
  private queue: Uint8Array[] = [];
  private head = 0;
  private queuedBytes = 0;
  private stream: grpc.ClientWritableStream<Uint8Array[]> | null = null;
  /** The receiver answered the current stream: writes may go. */
  private ready = false;
  /** A batch is in flight on the current stream. */
  private writing = false;
  private flushScheduled = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private connectTimer: NodeJS.Timeout | null = null;
  private readonly snapshotStreams = new Set<grpc.ClientWritableStream<SnapshotChunk>>();
  private closed = false;

  constructor(
    readonly id: NodeId,
    readonly address: string,
    private readonly ctx: LinkContext,
  ) {
    const s = ctx.settings;
    this.client = new grpc.Client(address, clientCredentials(s.tls), {
      'grpc.max_send_message_length': s.maxGrpcMessageBytes,
      'grpc.max_receive_message_length': s.maxGrpcMessageBytes,
      'grpc.keepalive_time_ms': CLIENT_KEEPALIVE_TIME_MS,
      'grpc.keepalive_timeout_ms': CLIENT_KEEPALIVE_TIMEOUT_MS,
      'grpc.keepalive_permit_without_calls': 1,
      // The channel's own reconnection must not lag behind ours, or a retried stream would keep
      // failing fast on a channel still waiting out gRPC's default 1 s to 120 s backoff.
      'grpc.initial_reconnect_backoff_ms': s.backoff.initialMs,
      'grpc.max_reconnect_backoff_ms': s.backoff.maxMs,
      // Raft retransmits; a transparent gRPC retry would only add a second, stale copy.
      'grpc.enable_retries': 0,
      // A private connection per link: two transports in one process (tests, tools) must not
      // share one, and close() must really close it.
      'grpc.use_local_subchannel_pool': 1,
    });
  }

  private get queueLength(): number {
    return this.queue.length - this.head;
  }

  /** Queues one encoded message; false if the queue is full (the caller drops and reports). */
  enqueue(encoded: Uint8Array): boolean {
    if (this.closed) return false;
    const s = this.ctx.settings;
    if (this.queueLength >= s.maxQueueMessages || this.queuedBytes + encoded.length > s.maxQueueBytes) return false;
    this.queue.push(encoded);
    this.queuedBytes += encoded.length;
    if (this.stream === null && this.retryTimer === null) {
      this.open();
    } else if (!this.flushScheduled) {
      // Deferred to the end of the current job so that everything sent in it shares one batch.
      this.flushScheduled = true;
      queueMicrotask(() => {
        this.flushScheduled = false;
        this.flush();
      });
    }
    return true;
  }

  private open(): void {
    if (this.closed || this.stream !== null) return;
    const stream = this.client.makeClientStreamRequest<Uint8Array[], EmptyReply>(
      sendMessagesMethod.path,
      sendMessagesMethod.requestSerialize,
      sendMessagesMethod.responseDeserialize,
      new grpc.Metadata(),
      {},
      (err) => this.onStreamEnd(stream, err),
    );
    this.stream = stream;
    this.ready = false;
    this.writing = false;
    stream.on('metadata', () => {
      if (this.stream !== stream || this.ready) return;
      this.clearConnectTimer();
      this.ready = true;
      this.failures = 0;
      this.ctx.stats.streamsOpened++;
      this.flush();
    });
    // Failures arrive through the call's callback; without a listener an 'error' would throw.
    stream.on('error', () => undefined);
    this.connectTimer = setTimeout(() => {
      this.connectTimer = null;
      if (this.stream === stream && !this.ready) stream.cancel();
    }, this.ctx.settings.connectTimeoutMs);
    this.connectTimer.unref();
  }

  private onStreamEnd(stream: grpc.ClientWritableStream<Uint8Array[]>, err: grpc.ServiceError | null): void {
    if (this.stream !== stream) return;
    this.clearConnectTimer();
    this.stream = null;
    this.ready = false;
    this.writing = false;
    if (this.closed) return;
    // Even a clean end is unexpected: the receiver only ends a stream when it shuts down.
    this.ctx.stats.streamFailures++;
    this.ctx.reportUnreachable(this.id);
    const b = this.ctx.settings.backoff;
    const ceiling = Math.min(b.maxMs, b.initialMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    // Jitter spreads the reconnections of many nodes after a shared outage.
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      // Reconnect even with nothing queued: the stream is long-lived, and an open one is how we
      // learn that the peer is back before the next message needs it.
      this.open();
    }, delay);
    this.retryTimer.unref();
  }

  private flush(): void {
    const stream = this.stream;
    if (stream === null || !this.ready || this.writing || this.queueLength === 0) return;
    const maxBatchBytes = this.ctx.settings.maxBatchBytes;
    const batch: Uint8Array[] = [];
    let batchBytes = 0;
    while (this.head < this.queue.length) {
      const encoded = this.queue[this.head] as Uint8Array;
      const size = encoded.length + batchOverheadBytes(encoded.length);
      if (batch.length > 0 && batchBytes + size > maxBatchBytes) break;
      batch.push(encoded);
      batchBytes += size;
      this.queuedBytes -= encoded.length;
      this.head++;
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.writing = true;
    const stats = this.ctx.stats;
    stats.batchesSent++;
    stats.messagesSent += batch.length;
    stats.bytesSent += batchBytes;
    // The next batch waits for this write's callback, which gRPC delays while HTTP/2 flow control
    // holds the data back: that is the backpressure, and meanwhile the queue coalesces.
    stream.write(batch, (err: Error | null | undefined) => {
      if (this.stream !== stream) return;
      this.writing = false;
      if (err === null || err === undefined) this.flush();
    });
  }

  private clearConnectTimer(): void {
    if (this.connectTimer !== null) {
      clearTimeout(this.connectTimer);
      this.connectTimer = null;
    }
  }

  async sendSnapshot(m: Message): Promise<void> {
    const stats = this.ctx.stats;
    let resolveOutcome: (outcome: SnapshotOutcome) => void = () => undefined;
    const outcome = new Promise<SnapshotOutcome>((resolve) => {
      resolveOutcome = resolve;
    });
    const call = this.client.makeClientStreamRequest<SnapshotChunk, SnapshotAck>(
      sendSnapshotMethod.path,
      sendSnapshotMethod.requestSerialize,
      sendSnapshotMethod.responseDeserialize,
      new grpc.Metadata(),
      {},
      (err, ack) => resolveOutcome({ error: err, ack: ack ?? null }),
    );
    call.on('error', () => undefined);
    this.snapshotStreams.add(call);
    let ended = false;
    void outcome.then(() => {
      ended = true;
    });
    try {
      for (const chunk of snapshotChunks(m, this.ctx.settings.snapshotChunkBytes)) {
        if (ended || this.closed) break;
        const more = call.write(chunk);
        stats.snapshotChunksSent++;
        if (!more) {
          stats.snapshotDrainWaits++;
          // Either the buffer drains or the call ends (failed, cancelled): never wait forever.
          await new Promise<void>((resolve) => {
            const onDrain = (): void => resolve();
            call.once('drain', onDrain);
            void outcome.then(() => {
              call.off('drain', onDrain);
              resolve();
            });
          });
        }
      }
      if (!ended) call.end();
    } catch {
      call.cancel();
    }
    const { error, ack } = await outcome;
    this.snapshotStreams.delete(call);
    if (this.closed) return;
    const ok = error === null && ack !== null && ack.ok;
    if (ok) {
      stats.snapshotsSent++;
    } else {
      stats.snapshotsFailed++;
      // A refusal by the receiver is not unreachability; a broken call is.
      if (error !== null && error.code !== grpc.status.INVALID_ARGUMENT) this.ctx.reportUnreachable(this.id);
    }
    this.ctx.reportSnapshotStatus(this.id, ok);
  }

  /** Drops everything queued and closes the connection; no callback fires for this peer after. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.clearConnectTimer();
    if (this.retryTimer !== null) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    this.queue = [];
    this.head = 0;
    this.queuedBytes = 0;
    this.stream?.cancel();
    this.stream = null;
    for (const s of this.snapshotStreams) s.cancel();
    this.snapshotStreams.clear();
    this.client.close();
  }
}

export class GrpcTransport implements Transport {
  readonly stats: GrpcTransportStats = newStats();
  private readonly settings: Settings;
  private readonly peers = new Map<NodeId, PeerLink>();
  private server: grpc.Server | null = null;
  private stopped = false;
  private pendingUnreachable = new Set<NodeId>();
  private readonly ctx: LinkContext;

  constructor(private readonly options: GrpcTransportOptions) {
    this.settings = settingsFrom(options);
    this.ctx = {
      settings: this.settings,
      stats: this.stats,
      reportUnreachable: (peer) => this.reportUnreachable(peer),
      reportSnapshotStatus: (peer, ok) => {
        if (!this.stopped) this.options.onSnapshotStatus?.(peer, ok);
      },
    };
  }

  get id(): NodeId {
    return this.options.id;
  }

  /** Listens on listenAddress; resolves to the bound "host:port" (the real port if 0 was asked). */
  async start(): Promise<string> {
    if (this.stopped) throw new Error('GrpcTransport: start() after stop()');
    if (this.server !== null) throw new Error('GrpcTransport: already started');
    const s = this.settings;
    const server = new grpc.Server({
      'grpc.max_send_message_length': s.maxGrpcMessageBytes,
      'grpc.max_receive_message_length': s.maxGrpcMessageBytes,
      'grpc.keepalive_time_ms': SERVER_KEEPALIVE_TIME_MS,
      'grpc.keepalive_timeout_ms': SERVER_KEEPALIVE_TIMEOUT_MS,
    });
    const handlers: grpc.UntypedServiceImplementation = {
      sendMessages: (call: grpc.ServerReadableStream<Uint8Array[], EmptyReply>, callback: grpc.sendUnaryData<EmptyReply>) =>
        this.receiveMessages(call, callback),
      sendSnapshot: (call: grpc.ServerReadableStream<SnapshotChunk, SnapshotAck>, callback: grpc.sendUnaryData<SnapshotAck>) =>
        this.receiveSnapshot(call, callback),
    };
    server.addService(raftTransportService, handlers);
    this.server = server;
    const address = this.options.listenAddress;
    const port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(address, serverCredentials(s.tls), (err, boundPort) => (err ? reject(err) : resolve(boundPort)));
    });
    if (this.stopped) {
      server.forceShutdown();
      throw new Error('GrpcTransport: stopped while starting');
    }
    const colon = address.lastIndexOf(':');
    return `${colon < 0 ? address : address.slice(0, colon)}:${port}`;
  }

  addPeer(id: NodeId, address: string): void {
    if (this.stopped) return;
    const existing = this.peers.get(id);
    if (existing !== undefined) {
      if (existing.address === address) return;
      existing.close();
    }
    this.peers.set(id, new PeerLink(id, address, this.ctx));
  }

  removePeer(id: NodeId): void {
    const link = this.peers.get(id);
    if (link === undefined) return;
    this.peers.delete(id);
    link.close();
  }

  send(messages: Message[]): void {
    for (const m of messages) {
      try {
        this.sendOne(m);
      } catch {
        // Unencodable (an unsafe number, say): dropping it is what the contract allows.
        this.stats.messagesDropped++;
      }
    }
  }

  private sendOne(m: Message): void {
    if (this.stopped || isLocalMessage(m.type)) {
      this.stats.messagesDropped++;
      return;
    }
    const link = this.peers.get(m.to);
    if (link === undefined) {
      this.countSendFailure(m);
      this.reportUnreachable(m.to);
      if (m.type === 'snap') this.deferSnapshotStatus(m.to, false);
      return;
    }
    if (m.type === 'snap') {
      try {
        // Checked before a call is opened, so that a bad message is not mistaken for a bad peer.
        encodeMessage(m);
      } catch {
        this.stats.messagesDropped++;
        this.deferSnapshotStatus(m.to, false);
        return;
      }
      void link.sendSnapshot(m).catch(() => {
        this.stats.snapshotsFailed++;
        this.stats.sendFailuresByPeer.set(m.to, (this.stats.sendFailuresByPeer.get(m.to) ?? 0) + 1);
        this.ctx.reportSnapshotStatus(m.to, false);
      });
      return;
    }
    // Encoded now, so that what goes out is the message as it was when sent.
    const encoded = encodeMessage(m);
    if (encoded.length + batchOverheadBytes(encoded.length) > this.settings.maxGrpcMessageBytes) {
      this.countSendFailure(m);
      return;
    }
    if (!link.enqueue(encoded)) {
      this.countSendFailure(m);
      this.reportUnreachable(m.to);
    }
  }

  private countSendFailure(m: Message): void {
    this.stats.messagesDropped++;
    this.stats.sendFailuresByPeer.set(m.to, (this.stats.sendFailuresByPeer.get(m.to) ?? 0) + 1);
    if (m.type === 'heartbeat') this.stats.heartbeatSendFailures++;
  }

  /** Coalesced per job and delivered after it, never from inside send(). */
  private reportUnreachable(peer: NodeId): void {
    if (this.stopped || this.options.onUnreachable === undefined) return;
    if (this.pendingUnreachable.size === 0) {
      queueMicrotask(() => {
        const peers = this.pendingUnreachable;
        this.pendingUnreachable = new Set();
        if (this.stopped) return;
        for (const p of peers) this.options.onUnreachable?.(p);
      });
    }
    this.pendingUnreachable.add(peer);
  }

  private deferSnapshotStatus(peer: NodeId, ok: boolean): void {
    queueMicrotask(() => this.ctx.reportSnapshotStatus(peer, ok));
  }

  /** Whether the stream's sender presented a peer's certificate; answers the call and counts it when not. */
  private refusedPeer(call: grpc.ServerReadableStream<unknown, unknown>, callback: (err: grpc.ServerErrorResponse) => void): boolean {
    const allowed = this.options.allowedPeerCommonName;
    if (allowed === undefined || this.options.tls === undefined) return false;
    const subject = call.getAuthContext()?.sslPeerCertificate?.subject as { CN?: string | string[] } | undefined;
    const cn = subject?.CN;
    if (cn === allowed) return false;
    this.stats.streamsRefused++;
    callback(statusError(grpc.status.PERMISSION_DENIED, 'the peer certificate is not one the peers accept'));
    return true;
  }

  private receiveMessages(call: grpc.ServerReadableStream<Uint8Array[], EmptyReply>, callback: grpc.sendUnaryData<EmptyReply>): void {
    if (this.refusedPeer(call, (err) => callback(err, null))) return;
    let done = false;
    const finish = (err: grpc.ServerErrorResponse | null): void => {
      if (done) return;
      done = true;
      if (err === null) callback(null, {});
      else callback(err, null);
    };
    // Answering at once is what tells the sender that the stream is up and writes may flow.
    call.sendMetadata(new grpc.Metadata());
    call.on('data', (encodedMessages: Uint8Array[]) => {
      if (done) return;
      let messages: Message[];
      try {
        messages = encodedMessages.map((encoded) => {
          const m = decodeMessage(encoded);
          if (m.type === 'snap') throw new Error('a snap message arrived in a MessageBatch');
          return m;
        });
      } catch (err) {
        this.stats.batchesRejected++;
        finish(statusError(grpc.status.INVALID_ARGUMENT, `malformed batch: ${errorMessage(err)}`));
        return;
      }
      this.stats.batchesReceived++;
      for (const m of messages) {
        if (this.stopped) return;
        if (m.to !== this.options.id) {
          this.stats.messagesMisrouted++;
          continue;
        }
        this.stats.messagesReceived++;
        this.options.onMessage(m);
      }
    });
    call.on('end', () => finish(null));
    call.on('cancelled', () => {
      done = true;
    });
    call.on('error', () => {
      done = true;
    });
  }

  private receiveSnapshot(call: grpc.ServerReadableStream<SnapshotChunk, SnapshotAck>, callback: grpc.sendUnaryData<SnapshotAck>): void {
    if (this.refusedPeer(call, (err) => callback(err, null))) return;
    const assembler = new SnapshotAssembler(this.settings.maxSnapshotBytes);
    let done = false;
    const reject = (reason: string): void => {
      if (done) return;
      done = true;
      this.stats.snapshotsRejected++;
      callback(statusError(grpc.status.INVALID_ARGUMENT, reason), null);
    };
    call.on('data', (chunk: SnapshotChunk) => {
      if (done) return;
      // Checked on the first chunk so that a misrouted snapshot is refused before it is buffered.
      if (chunk.header !== null && chunk.header.to !== this.options.id) {
        reject(`snapshot for node ${chunk.header.to} arrived at node ${this.options.id}`);
        return;
      }
      try {
        assembler.push(chunk);
      } catch (err) {
        reject(`malformed snapshot stream: ${errorMessage(err)}`);
      }
    });
    call.on('end', () => {
      if (done) return;
      let m: Message;
      try {
        m = assembler.finish();
      } catch (err) {
        reject(`malformed snapshot stream: ${errorMessage(err)}`);
        return;
      }
      done = true;
      let ok = !this.stopped;
      if (ok) {
        try {
          this.options.onSnapshot(m);
          this.stats.snapshotsReceived++;
        } catch {
          ok = false;
        }
      }
      callback(null, { ok });
    });
    call.on('cancelled', () => {
      done = true;
    });
    call.on('error', () => {
      done = true;
    });
  }

  /** Closes every stream and the server. Queued messages are dropped; no callback fires after. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const link of this.peers.values()) link.close();
    this.peers.clear();
    this.pendingUnreachable.clear();
    const server = this.server;
    this.server = null;
    if (server !== null) {
      // Not a graceful shutdown: senders must not wait on a node that is going away, and Raft
      // does not need in-flight messages delivered.
      server.forceShutdown();
    }
  }
}
