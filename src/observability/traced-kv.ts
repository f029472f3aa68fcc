/**
 * The object store's calls to its key-value store as client spans, one per call: `etcd.Range`,
 * `etcd.Txn`, `etcd.Put`, `etcd.DeleteRange`, `etcd.Compact`, with db.system.name `etcd`,
 * db.operation.name and the (first) key, as kube-apiserver v1.25's etcd3 store records the key
 * of each of its traced calls. Keys are storage paths (/registry/<resource>/<namespace>/<name>):
 * names, never values.
 *
 * Installed by the composition root only when tracing runs, around whichever KvClient the server
 * uses (the embedded replica, whose own spans then become children of these, or an etcd
 * client). Without tracing the store gets the bare client and pays nothing. Streams (watch) and
 * lease calls are not wrapped: they outlive requests or are the server's own upkeep.
 *
 * A class that delegates, not a Proxy: every store call of a server with tracing configured
 * passes here, sampled or not, and a Proxy's trap is a slow path on each of them.
 */
import { SpanKind, type Attributes, type SpanContext } from '@opentelemetry/api';
import type {
  Bytes, CompactionRequest, CompactionResponse, DeleteRangeRequest, DeleteRangeResponse, KvCallOptions, KvClient, LeaseGrantRequest, LeaseGrantResponse,
  LeaseKeepAliveResponse, LeaseLeasesResponse, LeaseRevokeResponse, LeaseTimeToLiveResponse, MemberListResponse, PutRequest, PutResponse, RangeRequest,
  RangeResponse, StatusResponse, TxnRequest, TxnResponse, WatchCreateRequest, WatchHandle, WatchResponse,
} from '../../raft';
import { inSpan } from './spans';

function keyOfTxn(txn: TxnRequest): Bytes | undefined {
  const op = txn.success[0] as Record<string, { key?: Bytes }> | undefined;
  return txn.compare[0]?.key ?? (op === undefined ? undefined : Object.values(op)[0]?.key);
}

function traced<T>(operation: string, key: Bytes | undefined, options: KvCallOptions | undefined, call: (options: KvCallOptions | undefined) => Promise<T>): Promise<T> {
  const parent = options?.trace;
  if (parent === undefined) return call(options);
  const attributes: Attributes = { 'db.system.name': 'etcd', 'db.operation.name': operation };
  if (key !== undefined) attributes['carina.store.key'] = Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('utf8');
  return inSpan(`etcd.${operation}`, parent, (trace) => call({ ...options, trace }), { kind: SpanKind.CLIENT, attributes });
}

class TracedKvClient implements KvClient {
  readonly writeTraceContext?: (revision: number) => SpanContext | undefined;

  constructor(private readonly kv: KvClient) {
    const writeTraceContext = kv.writeTraceContext;
    if (writeTraceContext !== undefined) this.writeTraceContext = (revision) => writeTraceContext.call(kv, revision);
  }

  range(request: RangeRequest, options?: KvCallOptions): Promise<RangeResponse> {
    return traced('Range', request.key, options, (o) => this.kv.range(request, o));
  }

  put(request: PutRequest, options?: KvCallOptions): Promise<PutResponse> {
    return traced('Put', request.key, options, (o) => this.kv.put(request, o));
  }

  deleteRange(request: DeleteRangeRequest, options?: KvCallOptions): Promise<DeleteRangeResponse> {
    return traced('DeleteRange', request.key, options, (o) => this.kv.deleteRange(request, o));
  }

  txn(request: TxnRequest, options?: KvCallOptions): Promise<TxnResponse> {
    return traced('Txn', options?.trace === undefined ? undefined : keyOfTxn(request), options, (o) => this.kv.txn(request, o));
  }

  compact(request: CompactionRequest, options?: KvCallOptions): Promise<CompactionResponse> {
    return traced('Compact', undefined, options, (o) => this.kv.compact(request, o));
  }

  leaseGrant(request: LeaseGrantRequest): Promise<LeaseGrantResponse> {
    return this.kv.leaseGrant(request);
  }

  leaseRevoke(id: bigint): Promise<LeaseRevokeResponse> {
    return this.kv.leaseRevoke(id);
  }

  leaseKeepAliveOnce(id: bigint): Promise<LeaseKeepAliveResponse> {
    return this.kv.leaseKeepAliveOnce(id);
  }

  leaseTimeToLive(id: bigint, keys?: boolean): Promise<LeaseTimeToLiveResponse> {
    return this.kv.leaseTimeToLive(id, keys);
  }

  leaseLeases(): Promise<LeaseLeasesResponse> {
    return this.kv.leaseLeases();
  }

  watch(request: WatchCreateRequest, onResponse: (response: WatchResponse) => void, onError?: (err: Error) => void): WatchHandle {
    return this.kv.watch(request, onResponse, onError);
  }

  memberList(): Promise<MemberListResponse> {
    return this.kv.memberList();
  }

  status(): Promise<StatusResponse> {
    return this.kv.status();
  }

  close(): Promise<void> {
    return this.kv.close();
  }
}

export function tracedKvClient(kv: KvClient): KvClient {
  return new TracedKvClient(kv);
}
