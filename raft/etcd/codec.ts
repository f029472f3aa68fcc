/**
 * The protobuf wire format of etcd's v3 API (proto/etcd/rpc.proto and kv.proto), to and from the
 * plain TypeScript shapes of raft/kv/types.ts, for the client (raft/etcd/etcd-client.ts) and the
 * server side alike.
 *
 * The .proto files are loaded with protobufjs once, on first use, and are the single source of
 * field numbers, wire types, enum values and RPC paths. The encoding and decoding themselves do
 * not go through protobufjs's message objects: each message type gets a plan (its fields with
 * their TS names and kinds) from which an encoder and a decoder are compiled, as protobufjs
 * compiles its own, writing into a reused buffer and reading straight into the TS shapes. This
 * avoids the Long objects and the toObject/fromObject copies protobufjs would make; the codec
 * sits on the hot path of every request. (Measured on the development machine: a PutRequest
 * and a PutResponse encoded and decoded in about 1.5 µs together; a RangeResponse of 100
 * key-values of 300 bytes encoded in about 20 µs and decoded in about 15 µs, most of it the 200
 * Uint8Array views.)
 *
 * Mapping rules (one place, applied to every message):
 * - Field names: proto names in camelCase, with the acronyms ID, TTL and URL spelled as words
 *   (`ID` -> `id`, `grantedTTL` -> `grantedTtl`, `peerURLs` -> `peerUrls`, `memberID` -> `memberId`).
 * - int64/uint64: JS numbers (revisions, versions, counts, TTLs, terms, indexes, sizes, watch ids),
 *   refused with WireFormatError if not a safe integer; bigint for identifiers etcd draws from the
 *   whole 64-bit space: fields named `id`, `*Id` (except `watchId`), `lease` and `leader`.
 *   int64 is signed (a TTL of -1 decodes as -1), uint64 unsigned.
 * - Enums: their names as strings; an unknown number is refused.
 * - Absent fields decode to proto3 defaults (0, 0n, false, '', empty bytes, the enum's zero
 *   name, []); message fields decode to a default message when absent, except `prevKv`, which
 *   is left out. Oneof members are present only when set (a union in TS).
 * - Encoding leaves out fields equal to their default (undefined counts as default), except
 *   oneof members, which are written whenever present, as proto3 requires.
 * - Decoded bytes are views into the decoded buffer, not copies: the deframer of
 *   grpc-framing.ts hands over one buffer per message, so a view pins that message only. A
 *   store that keeps a value for long should still copy it if the message was much larger.
 * - Encoded bytes are a Buffer that small messages take from Node's shared pool (cheap to
 *   allocate); whoever keeps one for long keeps its 8 KiB pool slab alive with it.
 *
 * Invariant: decode(encode(v)) deep-equals v for every value of the declared shapes whose
 * optional fields are given (missing optional scalars come back as their defaults).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as protobuf from 'protobufjs';
import type {
  Bytes,
  CompactionRequest,
  CompactionResponse,
  Compare,
  DeleteRangeRequest,
  DeleteRangeResponse,
  Event,
  KeyValue,
  LeaseGrantRequest,
  LeaseGrantResponse,
  LeaseKeepAliveResponse,
  LeaseLeasesResponse,
  LeaseRevokeResponse,
  LeaseTimeToLiveResponse,
  Member,
  MemberListResponse,
  PutRequest,
  PutResponse,
  RelocateRequest,
  RelocateResponse,
  RangeRequest,
  RangeResponse,
  RequestOp,
  ResponseHeader,
  ResponseOp,
  StatusResponse,
  TxnRequest,
  TxnResponse,
  WatchCreateRequest,
  WatchResponse,
} from '../kv';
import { WireFormatError } from '../transport';

export { WireFormatError };

// --- Wire-only shapes (messages that raft/kv/types.ts has no use for) --------------------------------

export interface WatchCancelRequest {
  watchId: number;
}

export type WatchProgressRequest = Record<string, never>;

/** One message on the Watch stream, client to server: exactly one of the three. */
export type WatchRequest =
  | { createRequest: WatchCreateRequest }
  | { cancelRequest: WatchCancelRequest }
  | { progressRequest: WatchProgressRequest };

export type Empty = Record<string, never>;

export interface LeaseRevokeRequest {
  id: bigint;
}

export interface LeaseKeepAliveRequest {
  id: bigint;
}

export interface LeaseTimeToLiveRequest {
  id: bigint;
  keys?: boolean;
}

export interface LeaseStatus {
  id: bigint;
}

export interface MemberAddRequest {
  peerUrls: string[];
  isLearner?: boolean;
}

export interface MemberAddResponse {
  header: ResponseHeader;
  member: Member;
  members: Member[];
}

export interface MemberRemoveRequest {
  id: bigint;
}

export interface MemberUpdateRequest {
  id: bigint;
  peerUrls: string[];
}

export interface MemberPromoteRequest {
  id: bigint;
}

/** The answer of MemberRemove, MemberUpdate and MemberPromote. */
export interface MembersResponse {
  header: ResponseHeader;
  members: Member[];
}

export type AlarmType = 'NONE' | 'NOSPACE' | 'CORRUPT';
export type AlarmAction = 'GET' | 'ACTIVATE' | 'DEACTIVATE';

export interface AlarmRequest {
  action: AlarmAction;
  /** 0: every member. */
  memberId?: bigint;
  alarm?: AlarmType;
}

export interface AlarmMember {
  memberId: bigint;
  alarm: AlarmType;
}

export interface AlarmResponse {
  header: ResponseHeader;
  alarms: AlarmMember[];
}

export interface HashResponse {
  header: ResponseHeader;
  hash: number;
}

export interface HashKVRequest {
  revision?: number;
}

export interface HashKVResponse {
  header: ResponseHeader;
  hash: number;
  compactRevision: number;
}

export interface SnapshotResponse {
  header: ResponseHeader;
  remainingBytes: number;
  blob: Bytes;
}

export interface MoveLeaderRequest {
  targetId: bigint;
}

export interface HeaderOnlyResponse {
  header: ResponseHeader;
}

/** Every message of the API by its proto name, with its TS shape. */
export interface EtcdMessages {
  KeyValue: KeyValue;
  Event: Event;
  ResponseHeader: ResponseHeader;
  RangeRequest: RangeRequest;
  RangeResponse: RangeResponse;
  PutRequest: PutRequest;
  PutResponse: PutResponse;
  DeleteRangeRequest: DeleteRangeRequest;
  DeleteRangeResponse: DeleteRangeResponse;
  RequestOp: RequestOp;
  ResponseOp: ResponseOp;
  RelocateRequest: RelocateRequest;
  RelocateResponse: RelocateResponse;
  Compare: Compare;
  TxnRequest: TxnRequest;
  TxnResponse: TxnResponse;
  CompactionRequest: CompactionRequest;
  CompactionResponse: CompactionResponse;
  HashRequest: Empty;
  HashResponse: HashResponse;
  HashKVRequest: HashKVRequest;
  HashKVResponse: HashKVResponse;
  SnapshotRequest: Empty;
  SnapshotResponse: SnapshotResponse;
  WatchRequest: WatchRequest;
  WatchCreateRequest: WatchCreateRequest;
  WatchCancelRequest: WatchCancelRequest;
  WatchProgressRequest: WatchProgressRequest;
  WatchResponse: WatchResponse;
  LeaseGrantRequest: LeaseGrantRequest;
  LeaseGrantResponse: LeaseGrantResponse;
  LeaseRevokeRequest: LeaseRevokeRequest;
  LeaseRevokeResponse: LeaseRevokeResponse;
  LeaseKeepAliveRequest: LeaseKeepAliveRequest;
  LeaseKeepAliveResponse: LeaseKeepAliveResponse;
  LeaseTimeToLiveRequest: LeaseTimeToLiveRequest;
  LeaseTimeToLiveResponse: LeaseTimeToLiveResponse;
  LeaseLeasesRequest: Empty;
  LeaseStatus: LeaseStatus;
  LeaseLeasesResponse: LeaseLeasesResponse;
  Member: Member;
  MemberAddRequest: MemberAddRequest;
  MemberAddResponse: MemberAddResponse;
  MemberRemoveRequest: MemberRemoveRequest;
  MemberRemoveResponse: MembersResponse;
  MemberUpdateRequest: MemberUpdateRequest;
  MemberUpdateResponse: MembersResponse;
  MemberListRequest: Empty;
  MemberListResponse: MemberListResponse;
  MemberPromoteRequest: MemberPromoteRequest;
  MemberPromoteResponse: MembersResponse;
  DefragmentRequest: Empty;
  DefragmentResponse: HeaderOnlyResponse;
  MoveLeaderRequest: MoveLeaderRequest;
  MoveLeaderResponse: HeaderOnlyResponse;
  AlarmRequest: AlarmRequest;
  AlarmMember: AlarmMember;
  AlarmResponse: AlarmResponse;
  StatusRequest: Empty;
  StatusResponse: StatusResponse;
}

export type EtcdMessageName = keyof EtcdMessages;

export interface MessageCodec<T> {
  readonly name: EtcdMessageName;
  encode(value: T): Uint8Array;
  /**
   * The same encoding placed after `prefixBytes` bytes left zero for the caller to fill, such as
   * the 5-byte header of a gRPC frame; saves a copy on the way to the socket.
   */
  encodeWithPrefix(value: T, prefixBytes: number): Uint8Array;
  /** Throws WireFormatError for bytes that are not a valid message of this type. */
  decode(bytes: Uint8Array): T;
}

// --- RPC methods ------------------------------------------------------------------------------------

/** The RPCs of the API: gRPC path and message types, checked against the .proto on load. */
export const ETCD_METHODS = {
  range: { service: 'KV', method: 'Range', request: 'RangeRequest', response: 'RangeResponse', stream: false },
  put: { service: 'KV', method: 'Put', request: 'PutRequest', response: 'PutResponse', stream: false },
  deleteRange: { service: 'KV', method: 'DeleteRange', request: 'DeleteRangeRequest', response: 'DeleteRangeResponse', stream: false },
  txn: { service: 'KV', method: 'Txn', request: 'TxnRequest', response: 'TxnResponse', stream: false },
  compact: { service: 'KV', method: 'Compact', request: 'CompactionRequest', response: 'CompactionResponse', stream: false },
  watch: { service: 'Watch', method: 'Watch', request: 'WatchRequest', response: 'WatchResponse', stream: true },
  leaseGrant: { service: 'Lease', method: 'LeaseGrant', request: 'LeaseGrantRequest', response: 'LeaseGrantResponse', stream: false },
  leaseRevoke: { service: 'Lease', method: 'LeaseRevoke', request: 'LeaseRevokeRequest', response: 'LeaseRevokeResponse', stream: false },
  leaseKeepAlive: { service: 'Lease', method: 'LeaseKeepAlive', request: 'LeaseKeepAliveRequest', response: 'LeaseKeepAliveResponse', stream: true },
  leaseTimeToLive: { service: 'Lease', method: 'LeaseTimeToLive', request: 'LeaseTimeToLiveRequest', response: 'LeaseTimeToLiveResponse', stream: false },
  leaseLeases: { service: 'Lease', method: 'LeaseLeases', request: 'LeaseLeasesRequest', response: 'LeaseLeasesResponse', stream: false },
  memberAdd: { service: 'Cluster', method: 'MemberAdd', request: 'MemberAddRequest', response: 'MemberAddResponse', stream: false },
  memberRemove: { service: 'Cluster', method: 'MemberRemove', request: 'MemberRemoveRequest', response: 'MemberRemoveResponse', stream: false },
  memberUpdate: { service: 'Cluster', method: 'MemberUpdate', request: 'MemberUpdateRequest', response: 'MemberUpdateResponse', stream: false },
  memberList: { service: 'Cluster', method: 'MemberList', request: 'MemberListRequest', response: 'MemberListResponse', stream: false },
  memberPromote: { service: 'Cluster', method: 'MemberPromote', request: 'MemberPromoteRequest', response: 'MemberPromoteResponse', stream: false },
  alarm: { service: 'Maintenance', method: 'Alarm', request: 'AlarmRequest', response: 'AlarmResponse', stream: false },
  status: { service: 'Maintenance', method: 'Status', request: 'StatusRequest', response: 'StatusResponse', stream: false },
  defragment: { service: 'Maintenance', method: 'Defragment', request: 'DefragmentRequest', response: 'DefragmentResponse', stream: false },
  hash: { service: 'Maintenance', method: 'Hash', request: 'HashRequest', response: 'HashResponse', stream: false },
  hashKV: { service: 'Maintenance', method: 'HashKV', request: 'HashKVRequest', response: 'HashKVResponse', stream: false },
  snapshot: { service: 'Maintenance', method: 'Snapshot', request: 'SnapshotRequest', response: 'SnapshotResponse', stream: true },
  moveLeader: { service: 'Maintenance', method: 'MoveLeader', request: 'MoveLeaderRequest', response: 'MoveLeaderResponse', stream: false },
} as const satisfies Record<string, { service: string; method: string; request: EtcdMessageName; response: EtcdMessageName; stream: boolean }>;

export type EtcdMethodName = keyof typeof ETCD_METHODS;
export type EtcdRequestOf<M extends EtcdMethodName> = EtcdMessages[(typeof ETCD_METHODS)[M]['request']];
export type EtcdResponseOf<M extends EtcdMethodName> = EtcdMessages[(typeof ETCD_METHODS)[M]['response']];

export const ETCD_PROTO_PACKAGE = 'etcdserverpb';
const MVCC_PROTO_PACKAGE = 'mvccpb';

/** The HTTP/2 path of an RPC, e.g. `/etcdserverpb.KV/Range`. */
export function methodPath(name: EtcdMethodName): string {
  const m = ETCD_METHODS[name];
  return `/${ETCD_PROTO_PACKAGE}.${m.service}/${m.method}`;
}

// --- Loading the schema -----------------------------------------------------------------------------

/** Found by walking up, as raft/transport does: the code runs from the sources and from dist/. */
export function locateEtcdProtoFile(startDir: string = __dirname): string {
  let dir = path.resolve(startDir);
  for (;;) {
    const candidate = path.join(dir, 'proto', 'etcd', 'rpc.proto');
    if (fs.existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`proto/etcd/rpc.proto not found above ${startDir}`);
    dir = parent;
  }
}

const enum Kind {
  Int64Number,
  Uint64Number,
  Int64Bigint,
  Uint64Bigint,
  Uint32,
  Int32,
  Bool,
  Bytes,
  String,
  Enum,
  Message,
}

interface FieldPlan {
  readonly id: number;
  readonly protoName: string;
  readonly name: string;
  readonly kind: Kind;
  readonly repeated: boolean;
  /** The tag written for one value (a packed repeated field writes its own length-delimited tag). */
  readonly tag: number;
  readonly wireType: number;
  /** Index of the oneof this field belongs to in its message, or -1. */
  readonly oneof: number;
  /** Message fields: left out when absent rather than defaulted. */
  readonly optionalMessage: boolean;
  enumByName: Map<string, number> | null;
  enumByNumber: Map<number, string> | null;
  enumZero: string;
  message: MessagePlan | null;
}

interface MessagePlan {
  readonly name: string;
  readonly fields: FieldPlan[];
  /** The oneofs of the message, each as its member plans. */
  readonly oneofs: FieldPlan[][];
  /** Message-specific checks and completions after decoding. */
  readonly finish: ((value: Record<string, unknown>) => void) | null;
  /** Compiled from the plan once every plan is known (see compile()). */
  encode: (w: Writer, value: Record<string, unknown>) => void;
  decode: (r: Reader, end: number) => Record<string, unknown>;
}

const EMPTY_BYTES = new Uint8Array(0);

function tsFieldName(protoName: string): string {
  const camel = protoName.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  const words = camel.replace(/ID|TTL|URL/g, (m) => m[0] + m.slice(1).toLowerCase());
  return words[0].toLowerCase() + words.slice(1);
}

function isBigintField(name: string): boolean {
  return name === 'id' || (name.endsWith('Id') && name !== 'watchId') || name === 'lease' || name === 'leader';
}

function scalarKind(type: string, name: string): { kind: Kind; wireType: number } {
  const big = isBigintField(name);
  switch (type) {
    case 'int64':
      return { kind: big ? Kind.Int64Bigint : Kind.Int64Number, wireType: 0 };
    case 'uint64':
      return { kind: big ? Kind.Uint64Bigint : Kind.Uint64Number, wireType: 0 };
    case 'uint32':
      return { kind: Kind.Uint32, wireType: 0 };
    case 'int32':
      return { kind: Kind.Int32, wireType: 0 };
    case 'bool':
      return { kind: Kind.Bool, wireType: 0 };
    case 'bytes':
      return { kind: Kind.Bytes, wireType: 2 };
    case 'string':
      return { kind: Kind.String, wireType: 2 };
    default:
      throw new Error(`etcd codec: field ${name} has unsupported type ${type}`);
  }
}

/** Checks and completions per message after decoding, where TS shapes say more than proto3 can. */
const FINISHERS: Partial<Record<EtcdMessageName, (value: Record<string, unknown>) => void>> = {
  RequestOp: (v) => requireOneMember(v, 'RequestOp'),
  ResponseOp: (v) => requireOneMember(v, 'ResponseOp'),
  WatchRequest: (v) => requireOneMember(v, 'WatchRequest'),
  // Compare: the TS union pairs the target with its value, so the value for the target is
  // always present (a sender may have left a zero out) and a value for another target is dropped.
  Compare: (v) => {
    const member = COMPARE_MEMBER[v['target'] as string];
    for (const other of COMPARE_MEMBERS) {
      if (other !== member && other in v) delete v[other];
    }
    if (!(member in v)) v[member] = member === 'value' ? EMPTY_BYTES : member === 'lease' ? 0n : 0;
  },
};

const COMPARE_MEMBER: Record<string, string> = {
  VERSION: 'version',
  CREATE: 'createRevision',
  MOD: 'modRevision',
  VALUE: 'value',
  LEASE: 'lease',
};
const COMPARE_MEMBERS = Object.values(COMPARE_MEMBER);

function requireOneMember(v: Record<string, unknown>, what: string): void {
  for (const key in v) {
    if (v[key] !== undefined) return;
  }
  fail(`${what} carries none of its alternatives`);
}

/** Message fields left out of the decoded object when absent (TS: optional). */
const OPTIONAL_MESSAGE_FIELDS = new Set(['prevKv']);

interface Schema {
  plans: Map<string, MessagePlan>;
}

let schema: Schema | null = null;

function loadSchema(): Schema {
  if (schema !== null) return schema;
  const root = new protobuf.Root();
  root.loadSync(locateEtcdProtoFile(), { keepCase: true });
  root.resolveAll();
  const plans = new Map<string, MessagePlan>();
  const byFullName = new Map<string, MessagePlan>();
  const pending: Array<[FieldPlan, protobuf.Field]> = [];

  const typeNames = new Set<string>();
  for (const name of Object.keys(EXPECTED_NAMES)) typeNames.add(name);
  for (const name of typeNames) {
    const type = lookupMessage(root, name);
    const plan = buildPlan(type, name as EtcdMessageName, pending);
    plans.set(name, plan);
    byFullName.set(type.fullName, plan);
  }
  for (const [plan, field] of pending) {
    const target = field.resolvedType;
    if (target instanceof protobuf.Type) {
      const nested = byFullName.get(target.fullName);
      if (nested === undefined) throw new Error(`etcd codec: message ${target.fullName} has no plan`);
      plan.message = nested;
    }
  }
  for (const [name, m] of Object.entries(ETCD_METHODS)) {
    const method = root.lookup(`${ETCD_PROTO_PACKAGE}.${m.service}.${m.method}`);
    if (!(method instanceof protobuf.Method)) throw new Error(`etcd codec: rpc ${m.service}.${m.method} (${name}) is not in the proto`);
    const requestName = method.resolvedRequestType?.name;
    const responseName = method.resolvedResponseType?.name;
    if (requestName !== m.request || responseName !== m.response || Boolean(method.responseStream) !== m.stream) {
      throw new Error(`etcd codec: rpc ${m.service}.${m.method} does not match ETCD_METHODS`);
    }
  }
  loadingPlans = plans;
  for (const p of plans.values()) compile(p);
  schema = { plans };
  return schema;
}

/** The message names of EtcdMessages, as a value (so that the loader can check them all). */
const EXPECTED_NAMES: Record<EtcdMessageName, true> = {
  KeyValue: true, Event: true, ResponseHeader: true, RangeRequest: true, RangeResponse: true,
  PutRequest: true, PutResponse: true, DeleteRangeRequest: true, DeleteRangeResponse: true,
  RequestOp: true, ResponseOp: true, RelocateRequest: true, RelocateResponse: true, Compare: true, TxnRequest: true, TxnResponse: true,
  CompactionRequest: true, CompactionResponse: true, HashRequest: true, HashResponse: true,
  HashKVRequest: true, HashKVResponse: true, SnapshotRequest: true, SnapshotResponse: true,
  WatchRequest: true, WatchCreateRequest: true, WatchCancelRequest: true, WatchProgressRequest: true,
  WatchResponse: true, LeaseGrantRequest: true, LeaseGrantResponse: true, LeaseRevokeRequest: true,
  LeaseRevokeResponse: true, LeaseKeepAliveRequest: true, LeaseKeepAliveResponse: true,
  LeaseTimeToLiveRequest: true, LeaseTimeToLiveResponse: true, LeaseLeasesRequest: true,
  LeaseStatus: true, LeaseLeasesResponse: true, Member: true, MemberAddRequest: true,
  MemberAddResponse: true, MemberRemoveRequest: true, MemberRemoveResponse: true,
  MemberUpdateRequest: true, MemberUpdateResponse: true, MemberListRequest: true,
  MemberListResponse: true, MemberPromoteRequest: true, MemberPromoteResponse: true,
  DefragmentRequest: true, DefragmentResponse: true, MoveLeaderRequest: true, MoveLeaderResponse: true,
  AlarmRequest: true, AlarmMember: true, AlarmResponse: true, StatusRequest: true, StatusResponse: true,
};

function lookupMessage(root: protobuf.Root, name: string): protobuf.Type {
  for (const pkg of [ETCD_PROTO_PACKAGE, MVCC_PROTO_PACKAGE]) {
    const found = root.lookup(`${pkg}.${name}`);
    if (found instanceof protobuf.Type) return found;
  }
  throw new Error(`etcd codec: message ${name} is not in proto/etcd`);
}

function buildPlan(type: protobuf.Type, name: EtcdMessageName, pending: Array<[FieldPlan, protobuf.Field]>): MessagePlan {
  const oneofNames = type.oneofsArray.map((o) => o.name);
  const fields: FieldPlan[] = [];
  for (const field of type.fieldsArray) {
    if (field.map) throw new Error(`etcd codec: map field ${type.name}.${field.name} is not supported`);
    const fieldName = tsFieldName(field.name);
    if (!/^[a-z][A-Za-z0-9]*$/.test(fieldName)) throw new Error(`etcd codec: odd field name ${field.name}`);
    const oneof = field.partOf === null ? -1 : oneofNames.indexOf(field.partOf.name);
    let kind: Kind;
    let wireType: number;
    let enumByName: Map<string, number> | null = null;
    let enumByNumber: Map<number, string> | null = null;
    let enumZero = '';
    if (field.resolvedType instanceof protobuf.Enum) {
      kind = Kind.Enum;
      wireType = 0;
      enumByName = new Map(Object.entries(field.resolvedType.values));
      enumByNumber = new Map(Object.entries(field.resolvedType.values).map(([k, v]) => [v, k]));
      const zero = enumByNumber.get(0);
      if (zero === undefined) throw new Error(`etcd codec: enum of ${type.name}.${field.name} has no zero value`);
      enumZero = zero;
    } else if (field.resolvedType instanceof protobuf.Type) {
      kind = Kind.Message;
      wireType = 2;
    } else {
      ({ kind, wireType } = scalarKind(field.type, fieldName));
    }
    const plan: FieldPlan = {
      id: field.id,
      protoName: field.name,
      name: fieldName,
      kind,
      repeated: field.repeated,
      tag: ((field.id << 3) | wireType) >>> 0,
      wireType,
      oneof,
      optionalMessage: kind === Kind.Message && OPTIONAL_MESSAGE_FIELDS.has(fieldName),
      enumByName,
      enumByNumber,
      enumZero,
      message: null,
    };
    if (kind === Kind.Message) pending.push([plan, field]);
    fields.push(plan);
  }
  const oneofs = oneofNames.map((_, i) => fields.filter((f) => f.oneof === i));
  return { name, fields, oneofs, finish: FINISHERS[name] ?? null, encode: notCompiled, decode: notCompiled };
}

function plan(name: EtcdMessageName): MessagePlan {
  const p = loadSchema().plans.get(name);
  if (p === undefined) throw new Error(`etcd codec: no message ${name}`);
  return p;
}

// --- Writing ----------------------------------------------------------------------------------------

/** Thrown for a value that does not fit its field: a bug in the caller, not bad bytes received. */
export class EtcdEncodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EtcdEncodeError';
  }
}

function bad(what: string, message: string): never {
  throw new EtcdEncodeError(`${what}: ${message}`);
}

function notCompiled(): never {
  throw new Error('etcd codec: message plan used before compilation');
}

const TWO_32 = 4294967296;
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder('utf-8');

/**
 * One growable buffer reused by every encode (encoding is synchronous, so it is never shared by
 * two encodes in flight). Values are checked as they are written.
 */
class Writer {
  buf = new Uint8Array(64 * 1024);
  pos = 0;

  reset(prefix: number): void {
    if (this.buf.length > 4 * 1024 * 1024) this.buf = new Uint8Array(64 * 1024);
    this.ensure(prefix);
    this.buf.fill(0, 0, prefix);
    this.pos = prefix;
  }

  /**
   * A copy of what was written. Buffer.allocUnsafe draws small buffers from Node's pool, several
   * times cheaper than a fresh ArrayBuffer; encoded messages are short-lived (they go to a socket).
   */
  finish(): Uint8Array {
    const out = Buffer.allocUnsafe(this.pos);
    out.set(this.buf.subarray(0, this.pos));
    return out;
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  uint32(value: number): void {
    this.ensure(5);
    const buf = this.buf;
    let pos = this.pos;
    while (value > 0x7f) {
      buf[pos++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    buf[pos++] = value;
    this.pos = pos;
  }

  /** A 64-bit varint from its two 32-bit halves (unsigned). */
  varint64(lo: number, hi: number): void {
    if (hi === 0) {
      this.uint32(lo);
      return;
    }
    this.ensure(10);
    const buf = this.buf;
    let pos = this.pos;
    while (hi > 0 || lo > 0x7f) {
      buf[pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    buf[pos++] = lo;
    this.pos = pos;
  }

  int64n(value: unknown, what: string): void {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) bad(what, `not a safe integer: ${String(value)}`);
    if (value >= 0) {
      if (value < TWO_32) this.uint32(value);
      else this.varint64(value >>> 0, Math.floor(value / TWO_32) >>> 0);
      return;
    }
    // Two's complement over 64 bits: ten bytes.
    const abs = -value;
    const lo = (~(abs >>> 0) + 1) >>> 0;
    const hi = (~(Math.floor(abs / TWO_32) >>> 0) + (lo === 0 ? 1 : 0)) >>> 0;
    this.varint64(lo, hi);
  }

  uint64n(value: unknown, what: string): void {
    if (typeof value === 'number' && value < 0) bad(what, `negative value ${value} for an unsigned field`);
    this.int64n(value, what);
  }

  int64b(value: unknown, what: string): void {
    if (typeof value !== 'bigint') bad(what, `not a bigint: ${String(value)}`);
    if (value < -0x8000000000000000n || value > 0x7fffffffffffffffn) bad(what, `${value} does not fit int64`);
    this.bigint(value);
  }

  uint64b(value: unknown, what: string): void {
    if (typeof value !== 'bigint') bad(what, `not a bigint: ${String(value)}`);
    if (value < 0n || value > 0xffffffffffffffffn) bad(what, `${value} does not fit uint64`);
    this.bigint(value);
  }

  private bigint(value: bigint): void {
    if (value >= 0n && value < 0x80000000n) {
      this.uint32(Number(value));
      return;
    }
    const u = BigInt.asUintN(64, value);
    this.varint64(Number(u & 0xffffffffn), Number(u >> 32n));
  }

  uint32v(value: unknown, what: string): void {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0xffffffff) bad(what, `not a uint32: ${String(value)}`);
    this.uint32(value);
  }

  int32v(value: unknown, what: string): void {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff) bad(what, `not an int32: ${String(value)}`);
    this.int64n(value, what);
  }

  boolv(value: unknown, what: string): void {
    if (typeof value !== 'boolean') bad(what, 'not a boolean');
    this.ensure(1);
    this.buf[this.pos++] = value ? 1 : 0;
  }

  bytes(value: unknown, what: string): void {
    if (!(value instanceof Uint8Array)) bad(what, 'not bytes (Uint8Array)');
    const length = value.length;
    this.uint32(length);
    this.ensure(length);
    this.buf.set(value, this.pos);
    this.pos += length;
  }

  string(value: unknown, what: string): void {
    if (typeof value !== 'string') bad(what, 'not a string');
    // At most three bytes per UTF-16 unit; the length is patched like a nested message's.
    this.ensure(value.length * 3 + 5);
    const start = this.beginLength();
    this.pos += textEncoder.encodeInto(value, this.buf.subarray(this.pos)).written;
    this.endLength(start);
  }

  enumv(value: unknown, numbers: Map<string, number>, what: string): void {
    const n = typeof value === 'string' ? numbers.get(value) : undefined;
    if (n === undefined) bad(what, `unknown enum value ${String(value)}`);
    this.uint32(n);
  }

  /** Reserves one byte for a length prefix; endLength fills it in, moving the body if needed. */
  beginLength(): number {
    this.ensure(1);
    return this.pos++;
  }

  endLength(start: number): void {
    const length = this.pos - start - 1;
    if (length < 0x80) {
      this.buf[start] = length;
      return;
    }
    let extra = 1;
    for (let n = length >>> 14; n > 0; n >>>= 7) extra++;
    this.ensure(extra);
    const buf = this.buf;
    buf.copyWithin(start + 1 + extra, start + 1, this.pos);
    let pos = start;
    let n = length;
    while (n > 0x7f) {
      buf[pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    buf[pos] = n;
    this.pos += extra;
  }
}

// --- Reading ----------------------------------------------------------------------------------------

function fail(message: string): never {
  throw new WireFormatError(message);
}

/** A cursor over one buffer; every read is bounded by the end of the enclosing message. */
class Reader {
  buf: Uint8Array = EMPTY_BYTES;
  pos = 0;
  /** The halves of the last 64-bit varint read. */
  lo = 0;
  hi = 0;

  /** A field tag (a varint that must fit 32 bits). */
  tag(end: number): number {
    const pos = this.pos;
    if (pos < end) {
      const b = this.buf[pos];
      if (b < 0x80) {
        this.pos = pos + 1;
        return b;
      }
    }
    this.varint64(end);
    if (this.hi !== 0) fail('field tag does not fit 32 bits');
    return this.lo;
  }

  /** Reads a varint of up to 64 bits into lo/hi. */
  varint64(end: number): void {
    const buf = this.buf;
    let pos = this.pos;
    if (pos >= end) fail('truncated varint');
    let b = buf[pos++];
    if (b < 0x80) {
      this.lo = b;
      this.hi = 0;
      this.pos = pos;
      return;
    }
    let lo = b & 0x7f;
    for (let shift = 7; shift < 28; shift += 7) {
      if (pos >= end) fail('truncated varint');
      b = buf[pos++];
      lo |= (b & 0x7f) << shift;
      if (b < 0x80) {
        this.lo = lo >>> 0;
        this.hi = 0;
        this.pos = pos;
        return;
      }
    }
    if (pos >= end) fail('truncated varint');
    b = buf[pos++];
    lo |= (b & 0x0f) << 28;
    let hi = (b & 0x7f) >>> 4;
    if (b >= 0x80) {
      for (let shift = 3; ; shift += 7) {
        if (shift > 31) fail('varint longer than 10 bytes');
        if (pos >= end) fail('truncated varint');
        b = buf[pos++];
        hi |= (b & 0x7f) << shift;
        if (b < 0x80) break;
      }
    }
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
    this.pos = pos;
  }

  int64n(end: number, what: string): number {
    this.varint64(end);
    const lo = this.lo;
    const hi = this.hi;
    if (hi === 0) return lo;
    if (hi >= 0x80000000) {
      const nh = ~hi >>> 0;
      const value = -(nh * TWO_32 + (~lo >>> 0) + 1);
      if (nh > 0x1fffff || !Number.isSafeInteger(value)) fail(`${what} is not a safe integer`);
      return value;
    }
    if (hi > 0x1fffff) fail(`${what} is not a safe integer`);
    return hi * TWO_32 + lo;
  }

  uint64n(end: number, what: string): number {
    this.varint64(end);
    if (this.hi === 0) return this.lo;
    if (this.hi > 0x1fffff) fail(`${what} is not a safe integer`);
    return this.hi * TWO_32 + this.lo;
  }

  int64b(end: number): bigint {
    this.varint64(end);
    if (this.hi === 0) return BigInt(this.lo);
    return BigInt.asIntN(64, (BigInt(this.hi) << 32n) | BigInt(this.lo));
  }

  uint64b(end: number): bigint {
    this.varint64(end);
    if (this.hi === 0) return BigInt(this.lo);
    return (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }

  uint32v(end: number): number {
    this.varint64(end);
    return this.lo;
  }

  int32v(end: number): number {
    this.varint64(end);
    return this.lo | 0;
  }

  bool(end: number): boolean {
    this.varint64(end);
    return this.lo !== 0 || this.hi !== 0;
  }

  /** A view into the buffer (a plain Uint8Array, whatever the buffer's class). */
  bytes(end: number): Uint8Array {
    const stop = this.lengthEnd(end);
    const start = this.pos;
    this.pos = stop;
    if (stop === start) return EMPTY_BYTES;
    const buf = this.buf;
    return new Uint8Array(buf.buffer, buf.byteOffset + start, stop - start);
  }

  string(end: number): string {
    const stop = this.lengthEnd(end);
    const start = this.pos;
    this.pos = stop;
    return stop === start ? '' : textDecoder.decode(this.buf.subarray(start, stop));
  }

  enumv(end: number, names: ReadonlyArray<string | undefined>, what: string): string {
    this.varint64(end);
    const name = this.hi === 0 ? names[this.lo] : undefined;
    if (name === undefined) fail(`${what}: unknown enum value ${this.lo}`);
    return name;
  }

  /** The end of a length-delimited field whose length prefix starts at pos. */
  lengthEnd(end: number): number {
    this.varint64(end);
    const stop = this.pos + this.lo;
    if (this.hi !== 0 || stop > end) fail('length-delimited field runs past its message');
    return stop;
  }

  /** Skips a field the message does not declare; refuses a declared one of the wrong wire type. */
  skip(tag: number, end: number, known: ReadonlySet<number>, what: string): void {
    const id = tag >>> 3;
    const wireType = tag & 7;
    if (id === 0) fail(`${what}: field number 0`);
    if (known.has(id)) fail(`${what}: field ${id} has wire type ${wireType}, not the declared one`);
    switch (wireType) {
      case 0:
        this.varint64(end);
        return;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.pos = this.lengthEnd(end);
        return;
      case 5:
        this.pos += 4;
        break;
      default:
        fail(`${what}: unsupported wire type ${wireType}`);
    }
    if (this.pos > end) fail(`${what}: field runs past its message`);
  }
}

// --- Compiling a plan -------------------------------------------------------------------------------

/**
 * Each message type gets an encoder and a decoder compiled from its plan into straight-line code,
 * as protobufjs does for its own message classes: property accesses with fixed names, a switch on
 * the tag, the default object as one literal (so every decoded message of a type has one V8
 * shape). Only plan data goes into the source: message names come from the .proto (identifiers),
 * field names are checked against /^[a-z][A-Za-z0-9]*$/ in buildPlan, and descriptions are
 * JSON-quoted.
 */
function compile(p: MessagePlan): void {
  const plans = loadingPlans;
  const runtime = {
    fail,
    bad,
    EMPTY: EMPTY_BYTES,
    finish: p.finish,
    // Nested messages, looked up when called: every plan is compiled by then.
    D: (name: string) => plans.get(name)!.decode,
    E: (name: string) => plans.get(name)!.encode,
    DUMMY: new Reader(),
    known: new Set(p.fields.map((f) => f.id)),
    enums: p.fields.map((f) => (f.enumByNumber === null ? null : enumNames(f.enumByNumber))),
    enumNumbers: p.fields.map((f) => f.enumByName),
  };
  const q = JSON.stringify;
  const what = (f: FieldPlan) => q(`${p.name}.${f.protoName}`);

  // Decoder.
  const literal: string[] = [];
  const cases: string[] = [];
  const after: string[] = [];
  p.fields.forEach((f, i) => {
    const read = readExpression(f, i, what(f));
    if (f.oneof < 0) {
      if (f.repeated) literal.push(`${f.name}: []`);
      else if (f.kind === Kind.Message) {
        if (!f.optionalMessage) {
          literal.push(`${f.name}: undefined`);
          after.push(`if (v.${f.name} === undefined) v.${f.name} = D_${f.message!.name}(DUMMY, 0);`);
        }
      } else literal.push(`${f.name}: ${defaultLiteral(f)}`);
    }
    if (f.repeated) {
      cases.push(`case ${f.tag}: v.${f.name}.push(${read}); break;`);
      if (f.wireType === 0) {
        const packed = ((f.id << 3) | 2) >>> 0;
        cases.push(`case ${packed}: { const stop = r.lengthEnd(end); while (r.pos < stop) v.${f.name}.push(${readExpression(f, i, what(f), 'stop')}); break; }`);
      }
    } else if (f.oneof >= 0) {
      const others = p.oneofs[f.oneof].filter((o) => o !== f).map((o) => `if (v.${o.name} !== undefined) delete v.${o.name};`);
      cases.push(`case ${f.tag}: ${others.join(' ')} v.${f.name} = ${read}; break;`);
    } else {
      cases.push(`case ${f.tag}: v.${f.name} = ${read}; break;`);
    }
  });
  const nestedNames = [...new Set(p.fields.filter((f) => f.kind === Kind.Message).map((f) => f.message!.name))];
  const decoderSource = `
    ${nestedNames.map((n) => `let D_${n} = null;`).join('\n')}
    return function decode_${p.name}(r, end) {
      ${nestedNames.map((n) => `if (D_${n} === null) D_${n} = D(${q(n)});`).join('\n')}
      const v = { ${literal.join(', ')} };
      while (r.pos < end) {
        const tag = r.tag(end);
        switch (tag) {
          ${cases.join('\n          ')}
          default: r.skip(tag, end, known, ${q(p.name)});
        }
      }
      ${after.join('\n      ')}
      ${p.finish !== null ? 'finish(v);' : ''}
      return v;
    };`;

  // Encoder.
  const writes: string[] = [];
  p.fields.forEach((f, i) => {
    const tagWrite = `w.uint32(${f.tag});`;
    if (f.repeated) {
      const item = writeStatement(f, i, 'x[i]', what(f));
      const body =
        f.wireType === 0
          ? `if (x.length !== 0) { w.uint32(${((f.id << 3) | 2) >>> 0}); const s = w.beginLength(); for (let i = 0; i < x.length; i++) { ${item} } w.endLength(s); }`
          : `for (let i = 0; i < x.length; i++) { ${tagWrite} ${item} }`;
      writes.push(`x = v.${f.name}; if (x !== undefined && x !== null) { if (!Array.isArray(x)) bad(${what(f)}, 'not an array'); ${body} }`);
      return;
    }
    const skipDefault = f.oneof >= 0 ? '' : defaultTest(f);
    writes.push(`x = v.${f.name}; if (x !== undefined && x !== null${skipDefault}) { ${tagWrite} ${writeStatement(f, i, 'x', what(f))} }`);
  });
  for (const members of p.oneofs) {
    const set = members.map((m) => `(v.${m.name} !== undefined && v.${m.name} !== null ? 1 : 0)`).join(' + ');
    writes.push(`if (${set} > 1) bad(${q(p.name)}, ${q(`more than one of ${members.map((m) => m.name).join(', ')} is set`)});`);
  }
  const encoderSource = `
    ${nestedNames.map((n) => `let E_${n} = null;`).join('\n')}
    return function encode_${p.name}(w, v) {
      ${nestedNames.map((n) => `if (E_${n} === null) E_${n} = E(${q(n)});`).join('\n')}
      let x;
      ${writes.join('\n      ')}
    };`;

  const names = Object.keys(runtime);
  const values = Object.values(runtime);
  p.decode = new Function(...names, decoderSource)(...values) as MessagePlan['decode'];
  p.encode = new Function(...names, encoderSource)(...values) as MessagePlan['encode'];
}

/** The plans being loaded, for compile() to resolve nested messages by name. */
let loadingPlans: Map<string, MessagePlan> = new Map();

function enumNames(byNumber: Map<number, string>): Array<string | undefined> {
  const names: Array<string | undefined> = [];
  for (const [n, name] of byNumber) {
    if (n < 0 || n > 1024) throw new Error(`etcd codec: enum value ${n} is out of the supported range`);
    names[n] = name;
  }
  return names;
}

function defaultLiteral(f: FieldPlan): string {
  switch (f.kind) {
    case Kind.Int64Bigint:
    case Kind.Uint64Bigint:
      return '0n';
    case Kind.Bool:
      return 'false';
    case Kind.Bytes:
      return 'EMPTY';
    case Kind.String:
      return "''";
    case Kind.Enum:
      return JSON.stringify(f.enumZero);
    default:
      return '0';
  }
}

/** The condition (appended with &&) under which a present value differs from the default. */
function defaultTest(f: FieldPlan): string {
  switch (f.kind) {
    case Kind.Int64Bigint:
    case Kind.Uint64Bigint:
      return ' && x !== 0n';
    case Kind.Bool:
      return ' && x !== false';
    case Kind.Bytes:
    case Kind.String:
      return ' && x.length !== 0';
    case Kind.Enum:
      return ` && x !== ${JSON.stringify(f.enumZero)}`;
    case Kind.Message:
      return '';
    default:
      return ' && x !== 0';
  }
}

function readExpression(f: FieldPlan, index: number, what: string, end = 'end'): string {
  switch (f.kind) {
    case Kind.Int64Number:
      return `r.int64n(${end}, ${what})`;
    case Kind.Uint64Number:
      return `r.uint64n(${end}, ${what})`;
    case Kind.Int64Bigint:
      return `r.int64b(${end})`;
    case Kind.Uint64Bigint:
      return `r.uint64b(${end})`;
    case Kind.Uint32:
      return `r.uint32v(${end})`;
    case Kind.Int32:
      return `r.int32v(${end})`;
    case Kind.Bool:
      return `r.bool(${end})`;
    case Kind.Bytes:
      return `r.bytes(${end})`;
    case Kind.String:
      return `r.string(${end})`;
    case Kind.Enum:
      return `r.enumv(${end}, enums[${index}], ${what})`;
    case Kind.Message:
      return `D_${f.message!.name}(r, r.lengthEnd(${end}))`;
  }
}

function writeStatement(f: FieldPlan, index: number, value: string, what: string): string {
  switch (f.kind) {
    case Kind.Int64Number:
      return `w.int64n(${value}, ${what});`;
    case Kind.Uint64Number:
      return `w.uint64n(${value}, ${what});`;
    case Kind.Int64Bigint:
      return `w.int64b(${value}, ${what});`;
    case Kind.Uint64Bigint:
      return `w.uint64b(${value}, ${what});`;
    case Kind.Uint32:
      return `w.uint32v(${value}, ${what});`;
    case Kind.Int32:
      return `w.int32v(${value}, ${what});`;
    case Kind.Bool:
      return `w.boolv(${value}, ${what});`;
    case Kind.Bytes:
      return `w.bytes(${value}, ${what});`;
    case Kind.String:
      return `w.string(${value}, ${what});`;
    case Kind.Enum:
      return `w.enumv(${value}, enumNumbers[${index}], ${what});`;
    case Kind.Message:
      return `{ const y = ${value}; if (typeof y !== 'object') bad(${what}, 'not a message object'); const s = w.beginLength(); E_${f.message!.name}(w, y); w.endLength(s); }`;
  }
}

// --- Codecs -----------------------------------------------------------------------------------------

const writer = new Writer();
const reader = new Reader();
const codecs = new Map<EtcdMessageName, MessageCodec<unknown>>();

/**
 * The codec of one message type. Cheap to call at module load: the .proto is read on the first
 * encode or decode of any message.
 */
export function codecFor<N extends EtcdMessageName>(name: N): MessageCodec<EtcdMessages[N]> {
  const known = codecs.get(name);
  if (known !== undefined) return known as MessageCodec<EtcdMessages[N]>;
  if (!(name in EXPECTED_NAMES)) throw new Error(`etcd codec: no message ${String(name)}`);
  let p: MessagePlan | null = null;
  const codec: MessageCodec<EtcdMessages[N]> = {
    name,
    encode(value) {
      return codec.encodeWithPrefix(value, 0);
    },
    encodeWithPrefix(value, prefixBytes) {
      if (p === null) p = plan(name);
      if (typeof value !== 'object' || value === null) bad(name, 'not a message object');
      writer.reset(prefixBytes);
      p.encode(writer, value as unknown as Record<string, unknown>);
      return writer.finish();
    },
    decode(bytes) {
      if (p === null) p = plan(name);
      const r = reader;
      r.buf = bytes;
      r.pos = 0;
      try {
        return p.decode(r, bytes.length) as unknown as EtcdMessages[N];
      } finally {
        r.buf = EMPTY_BYTES;
      }
    },
  };
  codecs.set(name, codec as MessageCodec<unknown>);
  return codec;
}

/** The default value of a message type, as decoding an empty buffer gives it. */
export function defaultOf<N extends EtcdMessageName>(name: N): EtcdMessages[N] {
  return codecFor(name).decode(EMPTY_BYTES);
}

/** Loads and checks the schema now rather than on first use (e.g. at server start). */
export function loadEtcdSchema(): void {
  loadSchema();
}

/** The proto name and TS name of every field of a message, for tests and diagnostics. */
export function describeMessage(name: EtcdMessageName): Array<{ id: number; protoName: string; name: string; repeated: boolean }> {
  return plan(name).fields.map((f) => ({ id: f.id, protoName: f.protoName, name: f.name, repeated: f.repeated }));
}
