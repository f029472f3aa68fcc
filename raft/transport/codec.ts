/**
 * The wire format of raft/transport: core `Message`s to and from the protobuf messages of
 * proto/raft.proto, snapshot chunking and reassembly, and the gRPC service definition whose
 * serializers use them.
 *
 * The .proto file is loaded with protobufjs at run time (no generated code to keep in step with
 * it). Decoders turn uint64 into JavaScript numbers and refuse anything that is not a
 * non-negative safe integer, an unknown enum value, or a field that makes no sense for the
 * message's type: a peer that sends those runs different code than ours, and guessing would be
 * worse than dropping. Such problems throw WireFormatError, never an assertion, because the bug
 * is in the bytes received rather than in this process.
 *
 * Invariant: decodeMessage(encodeMessage(m)) deep-equals m for every non-local message type,
 * except that a 'snap' message's snapshot data is left out (it travels in SnapshotChunks).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import * as protobuf from 'protobufjs';
import { assert, assertSafeInteger } from '../core';
import {
  EMPTY_BYTES,
  isLocalMessage,
  type ConfState,
  type Entry,
  type EntryType,
  type Message,
  type MessageType,
  type SnapshotMetadata,
} from '../core';

/** Bytes received that do not form a valid message of this protocol. */
export class WireFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireFormatError';
  }
}

export const PROTO_PACKAGE = 'carina.raft.v1';
export const SERVICE_NAME = `${PROTO_PACKAGE}.RaftTransport`;

/**
 * The same code runs from raft/transport/*.ts (ts-node, editors) and from
 * dist/raft/transport/*.js, at different depths below the repository, so the proto is found by
 * walking up rather than by a fixed relative path.
 */
export function locateProtoFile(startDir: string = __dirname): string {
  let dir = path.resolve(startDir);
  for (;;) {
    const candidate = path.join(dir, 'proto', 'raft.proto');
    if (fs.existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`proto/raft.proto not found above ${startDir}`);
    dir = parent;
  }
}

interface ProtoTypes {
  message: protobuf.Type;
  messageBatch: protobuf.Type;
  snapshotChunk: protobuf.Type;
  empty: protobuf.Type;
  snapshotAck: protobuf.Type;
  messageTypeEnum: protobuf.Enum;
  entryTypeEnum: protobuf.Enum;
  /** The tag (field number and wire type) of MessageBatch.messages, read from the proto. */
  batchMessagesTag: number;
}

let loaded: ProtoTypes | null = null;

/** Loaded on first use so that importing the module costs nothing and a missing file names itself. */
function types(): ProtoTypes {
  if (loaded !== null) return loaded;
  const root = protobuf.loadSync(locateProtoFile());
  const messageBatch = root.lookupType(`${PROTO_PACKAGE}.MessageBatch`);
  const messagesField = messageBatch.fields['messages'];
  assert(messagesField !== undefined && messagesField.repeated, 'MessageBatch.messages must be a repeated field');
  loaded = {
    message: root.lookupType(`${PROTO_PACKAGE}.Message`),
    messageBatch,
    snapshotChunk: root.lookupType(`${PROTO_PACKAGE}.SnapshotChunk`),
    empty: root.lookupType(`${PROTO_PACKAGE}.Empty`),
    snapshotAck: root.lookupType(`${PROTO_PACKAGE}.SnapshotAck`),
    messageTypeEnum: root.lookupEnum(`${PROTO_PACKAGE}.Message.Type`),
    entryTypeEnum: root.lookupEnum(`${PROTO_PACKAGE}.Entry.Type`),
    // Wire type 2: an embedded message is length-delimited.
    batchMessagesTag: ((messagesField.id << 3) | 2) >>> 0,
  };
  return loaded;
}

// --- Enum names ---------------------------------------------------------------------------------

type WireMessageType =
  | 'PROP' | 'APP' | 'APP_RESP' | 'VOTE' | 'VOTE_RESP' | 'PRE_VOTE' | 'PRE_VOTE_RESP' | 'SNAP'
  | 'HEARTBEAT' | 'HEARTBEAT_RESP' | 'TRANSFER_LEADER' | 'TIMEOUT_NOW' | 'READ_INDEX' | 'READ_INDEX_RESP';

type RemoteMessageType = Exclude<MessageType, 'hup' | 'beat' | 'unreachable' | 'snapStatus' | 'checkQuorum'>;

const WIRE_MESSAGE_TYPE: Record<RemoteMessageType, WireMessageType> = {
  prop: 'PROP',
  app: 'APP',
  appResp: 'APP_RESP',
  vote: 'VOTE',
  voteResp: 'VOTE_RESP',
  preVote: 'PRE_VOTE',
  preVoteResp: 'PRE_VOTE_RESP',
  snap: 'SNAP',
  heartbeat: 'HEARTBEAT',
  heartbeatResp: 'HEARTBEAT_RESP',
  transferLeader: 'TRANSFER_LEADER',
  timeoutNow: 'TIMEOUT_NOW',
  readIndex: 'READ_INDEX',
  readIndexResp: 'READ_INDEX_RESP',
};

const CORE_MESSAGE_TYPE = new Map<string, RemoteMessageType>(
  (Object.entries(WIRE_MESSAGE_TYPE) as [RemoteMessageType, WireMessageType][]).map(([core, wireName]) => [wireName, core]),
);

const WIRE_ENTRY_TYPE: Record<EntryType, string> = { normal: 'NORMAL', confChange: 'CONF_CHANGE' };
const CORE_ENTRY_TYPE = new Map<string, EntryType>([
  ['NORMAL', 'normal'],
  ['CONF_CHANGE', 'confChange'],
]);

// --- Plain-object shapes handed to protobufjs ----------------------------------------------------

interface WireEntry {
  term?: number;
  index?: number;
  type?: number;
  data?: Uint8Array;
}

interface WireSnapshotMetadata {
  index?: number;
  term?: number;
  confState: { voters: number[]; learners: number[] };
}

interface WireMessage {
  type: number;
  to?: number;
  from?: number;
  term?: number;
  logTerm?: number;
  index?: number;
  entries?: WireEntry[];
  commit?: number;
  reject?: boolean;
  rejectHint?: number;
  context?: Uint8Array;
  snapshotMetadata?: WireSnapshotMetadata;
}

/** What toObject() yields with DECODE_OPTIONS; typed loosely because the bytes are untrusted. */
type Decoded = Record<string, unknown>;

/**
 * longs: Number turns uint64 into numbers (precision lost above 2^53, which the checks below then
 * refuse); defaults fill absent proto3 fields so absence and zero decode alike.
 */
const DECODE_OPTIONS: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: true, arrays: true };

// --- Encoding -------------------------------------------------------------------------------------

function safe(value: number, what: string): number {
  assertSafeInteger(value, what);
  return value;
}

function entryToWire(e: Entry, enumValues: Record<string, number>): WireEntry {
  const wireType = enumValues[WIRE_ENTRY_TYPE[e.type]];
  assert(wireType !== undefined, () => `unknown entry type ${String(e.type)}`);
  const out: WireEntry = { term: safe(e.term, 'entry term'), index: safe(e.index, 'entry index') };
  // Zero and empty are proto3 defaults: leaving them out keeps heartbeats small.
  if (wireType !== 0) out.type = wireType;
  if (e.data.length > 0) out.data = e.data;
  return out;
}

function metadataToWire(md: SnapshotMetadata): WireSnapshotMetadata {
  return {
    index: safe(md.index, 'snapshot index'),
    term: safe(md.term, 'snapshot term'),
    confState: {
      voters: md.confState.voters.map((v) => safe(v, 'voter id')),
      learners: md.confState.learners.map((v) => safe(v, 'learner id')),
    },
  };
}

function messageToWire(m: Message): WireMessage {
  assert(!isLocalMessage(m.type), () => `local message type ${m.type} cannot be sent`);
  const t = types();
  const wireName = WIRE_MESSAGE_TYPE[m.type as RemoteMessageType];
  const wireType = wireName === undefined ? undefined : t.messageTypeEnum.values[wireName];
  assert(wireType !== undefined, () => `unknown message type ${String(m.type)}`);
  assert((m.snapshot !== null) === (m.type === 'snap'), () => `a ${m.type} message ${m.snapshot === null ? 'lacks' : 'carries'} a snapshot`);
  const out: WireMessage = { type: wireType };
  const numbers = [
    ['to', m.to],
    ['from', m.from],
    ['term', m.term],
    ['logTerm', m.logTerm],
    ['index', m.index],
    ['commit', m.commit],
    ['rejectHint', m.rejectHint],
  ] as const;
  for (const [key, value] of numbers) {
    if (safe(value, key) !== 0) out[key] = value;
  }
  if (m.entries.length > 0) out.entries = m.entries.map((e) => entryToWire(e, t.entryTypeEnum.values));
  if (m.reject) out.reject = true;
  if (m.context.length > 0) out.context = m.context;
  if (m.snapshot !== null) out.snapshotMetadata = metadataToWire(m.snapshot.metadata);
  return out;
}

/**
 * One Message in protobuf form. A 'snap' message carries its snapshot's metadata only: its data
 * is sent separately in chunks. Throws an AssertionError for a message that must not be sent
 * (local type, unsafe number, snapshot on a message that is not 'snap').
 */
export function encodeMessage(m: Message): Uint8Array {
  return types().message.encode(messageToWire(m)).finish();
}

/** The bytes a MessageBatch spends on one encoded message beyond the message itself. */
export function batchOverheadBytes(encodedMessageBytes: number): number {
  let varint = 1;
  for (let n = encodedMessageBytes >>> 7; n > 0; n >>>= 7) varint++;
  return 1 + varint;
}

/**
 * A MessageBatch made of messages already encoded by encodeMessage. The transport encodes each
 * message once, when it is queued (its size decides the batching), so the batch is framed from
 * those bytes rather than encoded a second time; the result is byte for byte what
 * MessageBatch.encode would produce.
 */
export function encodeBatch(encodedMessages: readonly Uint8Array[]): Uint8Array {
  const writer = protobuf.Writer.create();
  const tag = types().batchMessagesTag;
  for (const bytes of encodedMessages) writer.uint32(tag).bytes(bytes);
  return writer.finish();
}

// --- Decoding -------------------------------------------------------------------------------------

function fail(message: string): never {
  throw new WireFormatError(message);
}

function wireNumber(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    fail(`${what} is not a non-negative safe integer: ${String(value)}`);
  }
  return value;
}

function wireBool(value: unknown, what: string): boolean {
  if (typeof value !== 'boolean') fail(`${what} is not a boolean`);
  return value;
}

/** A view, not a copy: the buffer gRPC handed over is never reused. */
function wireBytes(value: unknown, what: string): Uint8Array {
  if (!(value instanceof Uint8Array)) fail(`${what} is not bytes`);
  if (value.length === 0) return EMPTY_BYTES;
  return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}

function wireArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) fail(`${what} is not a list`);
  return value;
}

function wireObject(value: unknown, what: string): Decoded {
  if (typeof value !== 'object' || value === null) fail(`${what} is missing`);
  return value as Decoded;
}

function entryFromWire(value: unknown): Entry {
  const e = wireObject(value, 'entry');
  const type = CORE_ENTRY_TYPE.get(String(e['type']));
  if (type === undefined) fail(`unknown entry type ${String(e['type'])}`);
  return {
    term: wireNumber(e['term'], 'entry term'),
    index: wireNumber(e['index'], 'entry index'),
    type,
    data: wireBytes(e['data'], 'entry data'),
  };
}

function confStateFromWire(value: unknown): ConfState {
  const cs = wireObject(value, 'conf state');
  return {
    voters: wireArray(cs['voters'], 'voters').map((v) => wireNumber(v, 'voter id')),
    learners: wireArray(cs['learners'], 'learners').map((v) => wireNumber(v, 'learner id')),
  };
}

function metadataFromWire(value: unknown): SnapshotMetadata {
  const md = wireObject(value, 'snapshot metadata');
  return {
    index: wireNumber(md['index'], 'snapshot index'),
    term: wireNumber(md['term'], 'snapshot term'),
    confState: confStateFromWire(md['confState']),
  };
}

function messageFromWire(value: unknown): Message {
  const w = wireObject(value, 'message');
  const type = CORE_MESSAGE_TYPE.get(String(w['type']));
  if (type === undefined) fail(`unknown message type ${String(w['type'])}`);
  const metadata = w['snapshotMetadata'] === null || w['snapshotMetadata'] === undefined ? null : metadataFromWire(w['snapshotMetadata']);
  if ((metadata !== null) !== (type === 'snap')) {
    fail(`a ${type} message ${metadata === null ? 'lacks' : 'carries'} snapshot metadata`);
  }
  return {
    type,
    to: wireNumber(w['to'], 'to'),
    from: wireNumber(w['from'], 'from'),
    term: wireNumber(w['term'], 'term'),
    logTerm: wireNumber(w['logTerm'], 'logTerm'),
    index: wireNumber(w['index'], 'index'),
    entries: wireArray(w['entries'], 'entries').map(entryFromWire),
    commit: wireNumber(w['commit'], 'commit'),
    snapshot: metadata === null ? null : { metadata, data: EMPTY_BYTES },
    reject: wireBool(w['reject'], 'reject'),
    rejectHint: wireNumber(w['rejectHint'], 'rejectHint'),
    context: wireBytes(w['context'], 'context'),
  };
}

function decodeWith(type: protobuf.Type, bytes: Uint8Array): Decoded {
  let decoded: protobuf.Message;
  try {
    decoded = type.decode(bytes);
  } catch (err) {
    fail(`malformed ${type.name}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return type.toObject(decoded, DECODE_OPTIONS);
}

/** The inverse of encodeMessage; a 'snap' message comes back with empty snapshot data. */
export function decodeMessage(bytes: Uint8Array): Message {
  return messageFromWire(decodeWith(types().message, bytes));
}

/**
 * The messages of a MessageBatch, each still encoded. Splitting the frame is cheap and lets the
 * receiver decode message by message, so one bad message is reported as such.
 */
export function splitBatch(bytes: Uint8Array): Uint8Array[] {
  const t = types();
  const reader = protobuf.Reader.create(bytes);
  const out: Uint8Array[] = [];
  try {
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      if (tag === t.batchMessagesTag) {
        out.push(reader.bytes());
      } else {
        // Unknown fields are skipped, as any proto3 decoder would: a newer peer may add some.
        reader.skipType(tag & 7);
      }
    }
  } catch (err) {
    fail(`malformed MessageBatch: ${err instanceof Error ? err.message : String(err)}`);
  }
  return out;
}

/**
 * Every message of a MessageBatch, decoded. A 'snap' message is refused here: without its data
 * it is not a snapshot, and snapshots only travel on SendSnapshot.
 */
export function decodeBatch(bytes: Uint8Array): Message[] {
  return splitBatch(bytes).map((encoded) => {
    const m = decodeMessage(encoded);
    if (m.type === 'snap') fail('a snap message arrived in a MessageBatch');
    return m;
  });
}

// --- Snapshots ------------------------------------------------------------------------------------

export interface SnapshotChunk {
  /** The 'snap' message without its data; only in the first chunk. */
  header: Message | null;
  offset: number;
  data: Uint8Array;
  last: boolean;
  totalBytes: number;
}

export function encodeSnapshotChunk(chunk: SnapshotChunk): Uint8Array {
  const t = types();
  const wire: Record<string, unknown> = {
    offset: safe(chunk.offset, 'chunk offset'),
    totalBytes: safe(chunk.totalBytes, 'chunk totalBytes'),
  };
  if (chunk.header !== null) {
    assert(chunk.header.type === 'snap', () => `a snapshot chunk's header is a ${chunk.header?.type} message`);
    wire['header'] = messageToWire(chunk.header);
  }
  if (chunk.data.length > 0) wire['data'] = chunk.data;
  if (chunk.last) wire['last'] = true;
  return t.snapshotChunk.encode(wire).finish();
}

export function decodeSnapshotChunk(bytes: Uint8Array): SnapshotChunk {
  const w = decodeWith(types().snapshotChunk, bytes);
  const header = w['header'] === null || w['header'] === undefined ? null : messageFromWire(w['header']);
  if (header !== null && header.type !== 'snap') fail(`a snapshot chunk's header is a ${header.type} message`);
  return {
    header,
    offset: wireNumber(w['offset'], 'chunk offset'),
    data: wireBytes(w['data'], 'chunk data'),
    last: wireBool(w['last'], 'chunk last'),
    totalBytes: wireNumber(w['totalBytes'], 'chunk totalBytes'),
  };
}

/**
 * The chunks of a 'snap' message, each `chunkBytes` of data at most; the data are views into the
 * snapshot, not copies. An empty snapshot is one chunk with the header and `last` set.
 */
export function* snapshotChunks(m: Message, chunkBytes: number): Generator<SnapshotChunk> {
  assert(m.type === 'snap' && m.snapshot !== null, () => `cannot chunk a ${m.type} message`);
  assert(Number.isSafeInteger(chunkBytes) && chunkBytes > 0, () => `bad chunk size ${chunkBytes}`);
  const data = m.snapshot.data;
  const total = data.length;
  let offset = 0;
  do {
    const end = Math.min(total, offset + chunkBytes);
    yield { header: offset === 0 ? m : null, offset, data: data.subarray(offset, end), last: end === total, totalBytes: total };
    offset = end;
  } while (offset < total);
}

/**
 * Rebuilds a 'snap' message from its chunks, refusing any stream that is not exactly what
 * snapshotChunks produces: header first and only first, contiguous offsets, the same total in
 * every chunk, nothing past the total, nothing after the last chunk. The buffer is allocated
 * once, from the first chunk's total, so each chunk costs one copy and no reassembly is left
 * for the end.
 */
export class SnapshotAssembler {
  private header: Message | null = null;
  private buffer: Uint8Array = EMPTY_BYTES;
  private received = 0;
  private lastSeen = false;

  constructor(private readonly maxSnapshotBytes: number) {}

  get complete(): boolean {
    return this.lastSeen;
  }

  push(chunk: SnapshotChunk): void {
    if (this.lastSeen) fail('snapshot chunk after the last one');
    if (this.header === null) {
      if (chunk.header === null) fail('the first snapshot chunk has no header');
      if (chunk.totalBytes > this.maxSnapshotBytes) {
        fail(`snapshot of ${chunk.totalBytes} bytes exceeds the limit of ${this.maxSnapshotBytes}`);
      }
      this.header = chunk.header;
      this.buffer = chunk.totalBytes === 0 ? EMPTY_BYTES : new Uint8Array(chunk.totalBytes);
    } else if (chunk.header !== null) {
      fail('a snapshot chunk after the first carries a header');
    }
    const total = this.buffer.length;
    if (chunk.totalBytes !== total) fail(`snapshot chunk says ${chunk.totalBytes} bytes in total, the first said ${total}`);
    if (chunk.offset !== this.received) fail(`snapshot chunk at offset ${chunk.offset}, expected ${this.received}`);
    if (chunk.data.length > total - this.received) fail(`snapshot chunk at ${chunk.offset} runs past the total of ${total}`);
    this.buffer.set(chunk.data, chunk.offset);
    this.received += chunk.data.length;
    if (chunk.last) {
      if (this.received !== total) fail(`last snapshot chunk ends at ${this.received} of ${total} bytes`);
      this.lastSeen = true;
    }
  }

  /** The whole 'snap' message; throws if the stream ended before its last chunk. */
  finish(): Message {
    if (this.header === null || this.header.snapshot === null) fail('snapshot stream ended before its first chunk');
    if (!this.lastSeen) fail(`snapshot stream ended after ${this.received} of ${this.buffer.length} bytes`);
    return { ...this.header, snapshot: { metadata: this.header.snapshot.metadata, data: this.buffer } };
  }
}

// --- gRPC service ---------------------------------------------------------------------------------

/** The response of SendMessages; it carries nothing, the stream ending is the answer. */
export type EmptyReply = Record<string, never>;

export interface SnapshotAck {
  ok: boolean;
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * SendMessages carries lists of encoded messages (encodeMessage's output) on both sides, framed
 * as a MessageBatch on the wire: the sender has them encoded already, and the receiver decodes
 * each one itself so that a bad message fails the stream with INVALID_ARGUMENT rather than a
 * generic deserialization error.
 */
export const sendMessagesMethod: grpc.MethodDefinition<Uint8Array[], EmptyReply> = {
  path: `/${SERVICE_NAME}/SendMessages`,
  requestStream: true,
  responseStream: false,
  requestSerialize: (messages) => toBuffer(encodeBatch(messages)),
  requestDeserialize: (bytes) => splitBatch(bytes),
  responseSerialize: () => toBuffer(types().empty.encode({}).finish()),
  responseDeserialize: (bytes) => {
    types().empty.decode(bytes);
    return {};
  },
  originalName: 'sendMessages',
};

/**
 * SendSnapshot chunks are decoded by the deserializer: a chunk that fails decoding ends the call
 * with INTERNAL before the handler sees it, which the sender reports as a failed snapshot.
 * Checks across chunks (offsets, totals) are the handler's, through SnapshotAssembler.
 */
export const sendSnapshotMethod: grpc.MethodDefinition<SnapshotChunk, SnapshotAck> = {
  path: `/${SERVICE_NAME}/SendSnapshot`,
  requestStream: true,
  responseStream: false,
  requestSerialize: (chunk) => toBuffer(encodeSnapshotChunk(chunk)),
  requestDeserialize: (bytes) => decodeSnapshotChunk(bytes),
  responseSerialize: (ack) => toBuffer(types().snapshotAck.encode({ ok: ack.ok }).finish()),
  responseDeserialize: (bytes) => {
    const decoded = types().snapshotAck.toObject(types().snapshotAck.decode(bytes), DECODE_OPTIONS);
    return { ok: decoded['ok'] === true };
  },
  originalName: 'sendSnapshot',
};

export const raftTransportService: grpc.ServiceDefinition = {
  sendMessages: sendMessagesMethod,
  sendSnapshot: sendSnapshotMethod,
};
