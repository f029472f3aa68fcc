/**
 * The wire codec: every message type survives a round trip field for field, snapshots survive
 * chunking and reassembly, and bytes that no correct peer would send are refused.
 */
import { expect } from 'chai';
import * as protobuf from 'protobufjs';
import { AssertionError } from '../../../../raft/core/assert';
import { EMPTY_BYTES, emptyMessage, MESSAGE_TYPES, isLocalMessage, type Message, type MessageType } from '../../../../raft/core/types';
import {
  decodeBatch,
  decodeMessage,
  decodeSnapshotChunk,
  encodeBatch,
  encodeMessage,
  encodeSnapshotChunk,
  locateProtoFile,
  SnapshotAssembler,
  snapshotChunks,
  splitBatch,
  WireFormatError,
  type SnapshotChunk,
} from '../../../../raft/transport/codec';

const bytes = (...values: number[]): Uint8Array => new Uint8Array(values);
const text = (s: string): Uint8Array => new TextEncoder().encode(s);

const REMOTE_TYPES: MessageType[] = MESSAGE_TYPES.filter((t) => !isLocalMessage(t));

/** A message with every field away from its default, so that a dropped field shows. */
function fullMessage(type: MessageType): Message {
  return emptyMessage({
    type,
    to: 2,
    from: 3,
    term: 7,
    logTerm: 6,
    index: 41,
    entries: [
      { term: 6, index: 42, type: 'normal', data: text('put a=1') },
      { term: 7, index: 43, type: 'confChange', data: bytes(1, 0, 4, 255) },
      { term: 7, index: 44, type: 'normal', data: EMPTY_BYTES },
    ],
    commit: 40,
    snapshot:
      type === 'snap'
        ? { metadata: { index: 40, term: 6, confState: { voters: [1, 2, 3], learners: [4] } }, data: EMPTY_BYTES }
        : null,
    reject: true,
    rejectHint: 39,
    context: text('read-ctx-1'),
  });
}

function expectWireError(work: () => unknown, fragment: string): void {
  let thrown: unknown = null;
  try {
    work();
  } catch (err) {
    thrown = err;
  }
  expect(thrown, 'expected a WireFormatError').to.be.instanceOf(WireFormatError);
  expect((thrown as Error).message).to.contain(fragment);
}

/** Hand-built Message bytes, for values our own encoder refuses to produce. */
function rawMessage(build: (w: protobuf.Writer) => void): Uint8Array {
  const w = protobuf.Writer.create();
  build(w);
  return w.finish();
}

const TAG_TYPE = (1 << 3) | 0;
const TAG_TERM = (4 << 3) | 0;
const TAG_ENTRIES = (7 << 3) | 2;
const TAG_ENTRY_INDEX = (2 << 3) | 0;
const MESSAGE_TYPE_APP = 2;

describe('raft/transport codec', () => {
  it('finds proto/raft.proto from the compiled and the source directory', () => {
    expect(locateProtoFile()).to.match(/proto[/\\]raft\.proto$/);
  });

  describe('messages', () => {
    for (const type of REMOTE_TYPES) {
      it(`round-trips a ${type} message with every field set`, () => {
        const m = fullMessage(type);
        expect(decodeMessage(encodeMessage(m))).to.deep.equal(m);
      });
    }

    it('round-trips a message with every field at its default', () => {
      const m = emptyMessage({ type: 'heartbeat', to: 1, from: 2 });
      const encoded = encodeMessage(m);
      expect(decodeMessage(encoded)).to.deep.equal(m);
      // Defaults are left out: heartbeats are the most frequent message.
      expect(encoded.length).to.be.lessThan(8);
    });

    it('round-trips reject hints and the largest safe integers', () => {
      const max = Number.MAX_SAFE_INTEGER;
      const m = emptyMessage({ type: 'appResp', to: max, from: 1, term: max, logTerm: max - 1, index: max, reject: true, rejectHint: max, commit: max });
      expect(decodeMessage(encodeMessage(m))).to.deep.equal(m);
    });

    it('round-trips a snapshot message without its data, which travels in chunks', () => {
      const m = fullMessage('snap');
      const withData: Message = { ...m, snapshot: { metadata: m.snapshot!.metadata, data: text('image') } };
      expect(decodeMessage(encodeMessage(withData))).to.deep.equal(m);
    });

    it('round-trips an empty conf state in snapshot metadata', () => {
      const m = emptyMessage({
        type: 'snap',
        to: 2,
        from: 1,
        snapshot: { metadata: { index: 0, term: 0, confState: { voters: [], learners: [] } }, data: EMPTY_BYTES },
      });
      expect(decodeMessage(encodeMessage(m))).to.deep.equal(m);
    });

    it('refuses to encode local message types', () => {
      for (const type of MESSAGE_TYPES.filter(isLocalMessage)) {
        expect(() => encodeMessage(emptyMessage({ type, to: 2, from: 1 })), type).to.throw(AssertionError, 'local');
      }
    });

    it('refuses to encode unsafe or negative numbers', () => {
      expect(() => encodeMessage(emptyMessage({ type: 'app', to: 2, from: 1, term: 2 ** 53 }))).to.throw(AssertionError, 'term');
      expect(() => encodeMessage(emptyMessage({ type: 'app', to: 2, from: 1, index: -1 }))).to.throw(AssertionError, 'index');
      expect(() =>
        encodeMessage(emptyMessage({ type: 'app', to: 2, from: 1, entries: [{ term: 1, index: 1.5, type: 'normal', data: EMPTY_BYTES }] })),
      ).to.throw(AssertionError, 'entry index');
    });

    it('refuses to encode a snapshot on a message that is not snap, or a snap without one', () => {
      const snapshot = { metadata: { index: 1, term: 1, confState: { voters: [1], learners: [] } }, data: EMPTY_BYTES };
      expect(() => encodeMessage(emptyMessage({ type: 'app', to: 2, from: 1, snapshot }))).to.throw(AssertionError, 'snapshot');
      expect(() => encodeMessage(emptyMessage({ type: 'snap', to: 2, from: 1 }))).to.throw(AssertionError, 'snapshot');
    });
  });

  describe('decoding untrusted bytes', () => {
    it('refuses a number one past the safe integer range', () => {
      const encoded = rawMessage((w) => w.uint32(TAG_TYPE).uint32(MESSAGE_TYPE_APP).uint32(TAG_TERM).uint64('9007199254740992'));
      expectWireError(() => decodeMessage(encoded), 'term is not a non-negative safe integer');
    });

    it('accepts the largest safe integer written by another encoder', () => {
      const encoded = rawMessage((w) => w.uint32(TAG_TYPE).uint32(MESSAGE_TYPE_APP).uint32(TAG_TERM).uint64('9007199254740991'));
      expect(decodeMessage(encoded).term).to.equal(Number.MAX_SAFE_INTEGER);
    });

    it('refuses the largest uint64', () => {
      const encoded = rawMessage((w) => w.uint32(TAG_TYPE).uint32(MESSAGE_TYPE_APP).uint32(TAG_TERM).uint64('18446744073709551615'));
      expectWireError(() => decodeMessage(encoded), 'term');
    });

    it('refuses an unsafe number nested in an entry', () => {
      const entry = rawMessage((w) => w.uint32(TAG_ENTRY_INDEX).uint64('18014398509481984'));
      const encoded = rawMessage((w) => w.uint32(TAG_TYPE).uint32(MESSAGE_TYPE_APP).uint32(TAG_ENTRIES).bytes(entry));
      expectWireError(() => decodeMessage(encoded), 'entry index');
    });

    it('refuses an unsafe number in a batch', () => {
      const bad = rawMessage((w) => w.uint32(TAG_TYPE).uint32(MESSAGE_TYPE_APP).uint32(TAG_TERM).uint64('9007199254740993'));
      const good = encodeMessage(emptyMessage({ type: 'app', to: 2, from: 1 }));
      expectWireError(() => decodeBatch(encodeBatch([good, bad])), 'term');
    });

    it('refuses a missing, unknown or local message type', () => {
      expectWireError(() => decodeMessage(rawMessage((w) => w.uint32(TAG_TERM).uint64(3))), 'unknown message type UNSPECIFIED');
      expectWireError(() => decodeMessage(rawMessage((w) => w.uint32(TAG_TYPE).uint32(99))), 'unknown message type 99');
    });

    it('refuses snapshot metadata on a message that is not snap', () => {
      const snap = encodeMessage(fullMessage('snap'));
      // Patch the type field (first two bytes: tag, SNAP) to APP; the metadata stays.
      const patched = Uint8Array.from(snap);
      expect(patched[0]).to.equal(TAG_TYPE);
      patched[1] = MESSAGE_TYPE_APP;
      expectWireError(() => decodeMessage(patched), 'carries snapshot metadata');
    });

    it('refuses truncated bytes', () => {
      const encoded = encodeMessage(fullMessage('app'));
      expectWireError(() => decodeMessage(encoded.subarray(0, encoded.length - 3)), 'malformed Message');
    });
  });

  describe('batches', () => {
    it('round-trips messages in order, framed exactly as MessageBatch', () => {
      const messages = REMOTE_TYPES.filter((t) => t !== 'snap').map(fullMessage);
      const encoded = messages.map(encodeMessage);
      const batch = encodeBatch(encoded);
      expect(decodeBatch(batch)).to.deep.equal(messages);
      expect(splitBatch(batch).map((b) => Array.from(b))).to.deep.equal(encoded.map((b) => Array.from(b)));

      const root = protobuf.loadSync(locateProtoFile());
      const batchType = root.lookupType('carina.raft.v1.MessageBatch');
      const messageType = root.lookupType('carina.raft.v1.Message');
      const viaProtobufjs = batchType.encode({ messages: encoded.map((b) => messageType.decode(b)) }).finish();
      expect(Array.from(batch)).to.deep.equal(Array.from(viaProtobufjs));
    });

    it('round-trips an empty batch', () => {
      expect(decodeBatch(encodeBatch([]))).to.deep.equal([]);
    });

    it('refuses a snap message inside a batch', () => {
      expectWireError(() => decodeBatch(encodeBatch([encodeMessage(fullMessage('snap'))])), 'snap message arrived in a MessageBatch');
    });
  });

  describe('snapshots', () => {
    function snapMessage(dataBytes: number): Message {
      const data = new Uint8Array(dataBytes);
      for (let i = 0; i < data.length; i++) data[i] = (i * 31 + 7) & 0xff;
      return emptyMessage({
        type: 'snap',
        to: 2,
        from: 1,
        term: 9,
        snapshot: { metadata: { index: 100, term: 8, confState: { voters: [1, 2, 3], learners: [5, 6] } }, data },
      });
    }

    function reassemble(chunks: SnapshotChunk[], maxBytes = 1 << 30): Message {
      const assembler = new SnapshotAssembler(maxBytes);
      for (const chunk of chunks) assembler.push(decodeSnapshotChunk(encodeSnapshotChunk(chunk)));
      expect(assembler.complete).to.equal(true);
      return assembler.finish();
    }

    for (const size of [0, 1, 999, 1000, 1001, 25_000]) {
      it(`round-trips a ${size}-byte snapshot through chunks of 1000 bytes`, () => {
        const m = snapMessage(size);
        const chunks = [...snapshotChunks(m, 1000)];
        expect(chunks.length).to.equal(Math.max(1, Math.ceil(size / 1000)));
        expect(chunks.filter((c) => c.header !== null)).to.have.length(1);
        expect(chunks.filter((c) => c.last)).to.have.length(1);
        expect(reassemble(chunks)).to.deep.equal(m);
      });
    }

    it('round-trips a chunk field for field', () => {
      const m = snapMessage(10);
      const chunk: SnapshotChunk = { header: m, offset: 0, data: bytes(1, 2, 3), last: false, totalBytes: 10 };
      const decoded = decodeSnapshotChunk(encodeSnapshotChunk(chunk));
      expect(decoded).to.deep.equal({ ...chunk, header: { ...m, snapshot: { metadata: m.snapshot!.metadata, data: EMPTY_BYTES } } });
    });

    function expectRefused(chunks: SnapshotChunk[], fragment: string, maxBytes = 1 << 30): void {
      const assembler = new SnapshotAssembler(maxBytes);
      expectWireError(() => {
        for (const chunk of chunks) assembler.push(chunk);
        assembler.finish();
      }, fragment);
    }

    it('refuses malformed chunk streams', () => {
      const m = snapMessage(3000);
      const good = [...snapshotChunks(m, 1000)];
      const [c0, c1, c2] = good as [SnapshotChunk, SnapshotChunk, SnapshotChunk];
      expectRefused([c1, c2], 'has no header');
      expectRefused([c0, c2], 'offset 2000, expected 1000');
      expectRefused([c0, c0], 'after the first carries a header');
      expectRefused([c0, { ...c1, totalBytes: 4000 }], 'says 4000 bytes in total');
      expectRefused([c0, c1, { ...c2, data: new Uint8Array(1001) }], 'runs past the total');
      expectRefused([c0, { ...c1, last: true }], 'ends at 2000 of 3000');
      expectRefused([c0, c1], 'ended after 2000 of 3000');
      expectRefused([c0, c1, c2, { ...c2, header: null }], 'after the last one');
      expectRefused([], 'before its first chunk');
      expectRefused(good, 'exceeds the limit', 2999);
    });
  });
});
