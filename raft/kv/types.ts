/**
 * The request and response shapes of etcd's v3 key-value, lease and watch API, as plain
 * TypeScript values. Both the MVCC state machine (raft/kv) and the wire layer (raft/etcd) speak
 * them, so that the embedded store and a remote etcd sit behind one `KvClient`.
 *
 * Number conventions: revisions, versions, counts, TTLs and terms are JavaScript numbers (safe
 * integers, asserted where decoded); identifiers that etcd draws from the whole 64-bit space
 * (lease, member and cluster ids) are bigint, because a real etcd hands out lease ids above 2^53.
 * Keys and values are bytes; absent optional fields take etcd's proto3 defaults.
 */

import type { Context, SpanContext } from '@opentelemetry/api';

export type Bytes = Uint8Array;

export interface KeyValue {
  key: Bytes;
  createRevision: number;
  modRevision: number;
  version: number;
  value: Bytes;
  lease: bigint;
}

export interface ResponseHeader {
  clusterId: bigint;
  memberId: bigint;
  revision: number;
  raftTerm: number;
}

export type SortOrder = 'NONE' | 'ASCEND' | 'DESCEND';
export type SortTarget = 'KEY' | 'VERSION' | 'CREATE' | 'MOD' | 'VALUE';

export interface RangeRequest {
  key: Bytes;
  /** Empty: the single key. '\0': every key >= key. Otherwise [key, rangeEnd). */
  rangeEnd?: Bytes;
  limit?: number;
  /** 0 or absent: the current revision. */
  revision?: number;
  sortOrder?: SortOrder;
  sortTarget?: SortTarget;
  serializable?: boolean;
  keysOnly?: boolean;
  countOnly?: boolean;
  minModRevision?: number;
  maxModRevision?: number;
  minCreateRevision?: number;
  maxCreateRevision?: number;
}

export interface RangeResponse {
  header: ResponseHeader;
  kvs: KeyValue[];
  more: boolean;
  count: number;
}

export interface PutRequest {
  key: Bytes;
  value: Bytes;
  lease?: bigint;
  prevKv?: boolean;
  ignoreValue?: boolean;
  ignoreLease?: boolean;
}

export interface PutResponse {
  header: ResponseHeader;
  prevKv?: KeyValue;
}

export interface DeleteRangeRequest {
  key: Bytes;
  rangeEnd?: Bytes;
  prevKv?: boolean;
}

export interface DeleteRangeResponse {
  header: ResponseHeader;
  deleted: number;
  prevKvs: KeyValue[];
}

/**
 * Not etcd's (etcd has no rename): moves the live key `key` to `newKey`, which must not be live,
 * keeping its createRevision, modRevision, version and lease, with `value` as its value. Only
 * inside a transaction, and only on Carina's store (KvClient.relocates): raft/kv/mvcc-store.ts
 * says what readers and watchers see.
 */
export interface RelocateRequest {
  key: Bytes;
  newKey: Bytes;
  value: Bytes;
}

export interface RelocateResponse {
  header: ResponseHeader;
}

export type RequestOp =
  | { requestRange: RangeRequest }
  | { requestPut: PutRequest }
  | { requestDeleteRange: DeleteRangeRequest }
  | { requestTxn: TxnRequest }
  | { requestRelocate: RelocateRequest };

export type ResponseOp =
  | { responseRange: RangeResponse }
  | { responsePut: PutResponse }
  | { responseDeleteRange: DeleteRangeResponse }
  | { responseTxn: TxnResponse }
  | { responseRelocate: RelocateResponse };

export type CompareResult = 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';

/** The compared quantity and the value it is compared with, as one union so they cannot disagree. */
export type CompareTarget =
  | { target: 'VERSION'; version: number }
  | { target: 'CREATE'; createRevision: number }
  | { target: 'MOD'; modRevision: number }
  | { target: 'VALUE'; value: Bytes }
  | { target: 'LEASE'; lease: bigint };

export type Compare = CompareTarget & {
  result: CompareResult;
  key: Bytes;
  rangeEnd?: Bytes;
};

export interface TxnRequest {
  compare: Compare[];
  success: RequestOp[];
  failure: RequestOp[];
}

export interface TxnResponse {
  header: ResponseHeader;
  succeeded: boolean;
  responses: ResponseOp[];
}

export interface CompactionRequest {
  revision: number;
  physical?: boolean;
}

export interface CompactionResponse {
  header: ResponseHeader;
}

export interface LeaseGrantRequest {
  ttl: number;
  /** 0 or absent: the store chooses. */
  id?: bigint;
}

export interface LeaseGrantResponse {
  header: ResponseHeader;
  id: bigint;
  ttl: number;
  error: string;
}

export interface LeaseRevokeResponse {
  header: ResponseHeader;
}

export interface LeaseKeepAliveResponse {
  header: ResponseHeader;
  id: bigint;
  /** 0 when the lease no longer exists. */
  ttl: number;
}

export interface LeaseTimeToLiveResponse {
  header: ResponseHeader;
  id: bigint;
  /** -1 when the lease does not exist (or has expired). */
  ttl: number;
  grantedTtl: number;
  keys: Bytes[];
}

export interface LeaseLeasesResponse {
  header: ResponseHeader;
  leases: Array<{ id: bigint }>;
}

export type EventType = 'PUT' | 'DELETE';

export interface Event {
  type: EventType;
  kv: KeyValue;
  prevKv?: KeyValue;
}

export type WatchFilter = 'NOPUT' | 'NODELETE';

export interface WatchCreateRequest {
  key: Bytes;
  rangeEnd?: Bytes;
  /** Inclusive; 0 or absent: from the next revision. */
  startRevision?: number;
  progressNotify?: boolean;
  filters?: WatchFilter[];
  prevKv?: boolean;
  /** 0 or absent: the server chooses. */
  watchId?: number;
  fragment?: boolean;
}

export interface WatchResponse {
  header: ResponseHeader;
  watchId: number;
  created: boolean;
  canceled: boolean;
  compactRevision: number;
  cancelReason: string;
  fragment: boolean;
  events: Event[];
}

export interface Member {
  id: bigint;
  name: string;
  peerUrls: string[];
  clientUrls: string[];
  isLearner: boolean;
}

export interface MemberListResponse {
  header: ResponseHeader;
  members: Member[];
}

export interface StatusResponse {
  header: ResponseHeader;
  version: string;
  dbSize: number;
  leader: bigint;
  raftIndex: number;
  raftTerm: number;
  raftAppliedIndex: number;
  errors: string[];
  dbSizeInUse: number;
  isLearner: boolean;
}

/** A watch opened through a KvClient. Responses arrive in order on the callback given to watch(). */
export interface WatchHandle {
  /** The id the server gave the watch; known once the `created` response has arrived. */
  readonly watchId: Promise<number>;
  /** Asks the server to cancel; resolves when the server confirmed or the stream ended. */
  cancel(): Promise<void>;
}

/**
 * One client interface over etcd v3 semantics, served by the embedded Raft-replicated store or
 * by a remote etcd. Methods reject with a `KvError` whose `code` names the etcd error
 * (raft/kv/errors.ts). Calls may run concurrently; each resolves independently.
 */
/** What a caller tells a KvClient about one call beside its request. */
export interface KvCallOptions {
  /**
   * The caller's trace context, holding the span this call is part of: the store's spans for the
   * call (ReadIndex, propose, forward, commit, apply) become its children, and a remote client
   * sends it as `traceparent` metadata. Passed explicitly rather than read from an ambient
   * context: ambient context needs AsyncLocalStorage, whose promise tracking costs every request
   * (ARCHITECTURE.md, "Tracing"). Absent: the call is not traced.
   */
  readonly trace?: Context;
}

export interface KvClient {
  range(request: RangeRequest, options?: KvCallOptions): Promise<RangeResponse>;
  put(request: PutRequest, options?: KvCallOptions): Promise<PutResponse>;
  deleteRange(request: DeleteRangeRequest, options?: KvCallOptions): Promise<DeleteRangeResponse>;
  txn(request: TxnRequest, options?: KvCallOptions): Promise<TxnResponse>;
  compact(request: CompactionRequest, options?: KvCallOptions): Promise<CompactionResponse>;
  leaseGrant(request: LeaseGrantRequest): Promise<LeaseGrantResponse>;
  leaseRevoke(id: bigint): Promise<LeaseRevokeResponse>;
  leaseKeepAliveOnce(id: bigint): Promise<LeaseKeepAliveResponse>;
  leaseTimeToLive(id: bigint, keys?: boolean): Promise<LeaseTimeToLiveResponse>;
  leaseLeases(): Promise<LeaseLeasesResponse>;
  /**
   * Opens a watch. `onResponse` receives every WatchResponse for it, the `created` one first; a
   * response with `canceled` set is the last (compactRevision > 0 when the start was compacted).
   * `onError` is called once if the stream carrying the watch fails.
   */
  watch(request: WatchCreateRequest, onResponse: (response: WatchResponse) => void, onError?: (err: Error) => void): WatchHandle;
  memberList(): Promise<MemberListResponse>;
  status(): Promise<StatusResponse>;
  close(): Promise<void>;
  /**
   * Optional (the embedded store has it, a remote etcd does not): the span context of the traced
   * write that made `revision`, so that a watch event's delivery can link to the write's trace.
   */
  writeTraceContext?(revision: number): SpanContext | undefined;
  /**
   * True when transactions may carry `requestRelocate`: the store is Carina's (the replica in this
   * process, or a client its owner knows to be of one). etcd has no such op, and nothing on the
   * wire tells a Carina store from an etcd.
   */
  readonly relocates?: boolean;
}

