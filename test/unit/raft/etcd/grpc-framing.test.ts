/**
 * gRPC framing: messages survive any cut of the byte stream into chunks, oversize and compressed
 * frames are refused, and grpc-message / grpc-timeout follow the gRPC HTTP/2 protocol text.
 */
import { expect } from 'chai';
import {
  decodeGrpcMessage,
  encodeGrpcMessage,
  formatGrpcTimeout,
  frameMessage,
  GrpcDeframer,
  GrpcProtocolError,
  isGrpcContentType,
  parseGrpcTimeout,
  Status,
  statusFromHeaders,
  statusFromHttp,
  statusTrailers,
  writeFrameHeader,
} from '../../../../raft/etcd/grpc-framing';

/** A deterministic message of `length` bytes whose content depends on `seed`. */
function message(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = (seed * 31 + i * 7) & 0xff;
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Cuts `bytes` at the given offsets. */
function cut(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const o of [...offsets, bytes.length]) {
    chunks.push(bytes.subarray(start, o));
    start = o;
  }
  return chunks;
}

function feed(deframer: GrpcDeframer, chunks: Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const c of chunks) out.push(...deframer.push(c));
  return out;
}

/** Messages as hex strings: cheap to compare, readable when they differ. */
const plain = (bytes: readonly Uint8Array[]): string[] => bytes.map((b) => Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex'));

function expectProtocolError(fn: () => unknown, code: number, pattern: RegExp): void {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(GrpcProtocolError);
    expect((err as GrpcProtocolError).code).to.equal(code);
    expect((err as Error).message).to.match(pattern);
    return;
  }
  expect.fail('expected a GrpcProtocolError');
}

describe('gRPC framing', () => {
  describe('frames', () => {
    it('prefixes a message with flag 0 and its big-endian length', () => {
      const frame = frameMessage(message(300, 1));
      expect(Array.from(frame.subarray(0, 5))).to.deep.equal([0, 0, 0, 1, 44]);
      expect(Array.from(frame.subarray(5))).to.deep.equal(Array.from(message(300, 1)));
      expect(Array.from(frameMessage(new Uint8Array(0)))).to.deep.equal([0, 0, 0, 0, 0]);
    });

    it('fills the header of a buffer encoded with room for it', () => {
      const frame = new Uint8Array(5 + 0x010203);
      writeFrameHeader(frame);
      expect(Array.from(frame.subarray(0, 5))).to.deep.equal([0, 0, 1, 2, 3]);
    });
  });

  describe('deframer', () => {
    const messages = [message(0, 1), message(1, 2), message(4, 3), message(5, 4), message(200, 5), message(70_000, 6)];
    const stream = concat(messages.map(frameMessage));

    it('returns the messages of one chunk that holds several, in order', () => {
      const deframer = new GrpcDeframer(1 << 20);
      expect(plain(feed(deframer, [stream]))).to.deep.equal(plain(messages));
      expect(deframer.atBoundary).to.equal(true);
      deframer.end();
    });

    it('reassembles messages from chunks cut at every offset, headers split included', () => {
      for (let at = 1; at < 240; at++) {
        const deframer = new GrpcDeframer(1 << 20);
        expect(plain(feed(deframer, cut(stream, [at])))).to.deep.equal(plain(messages), `cut at ${at}`);
      }
    });

    it('reassembles messages fed one byte at a time', () => {
      const small = concat(messages.slice(0, 5).map(frameMessage));
      const deframer = new GrpcDeframer(1 << 20);
      const out: Uint8Array[] = [];
      for (let i = 0; i < small.length; i++) {
        const got = deframer.push(small.subarray(i, i + 1));
        out.push(...got);
        // A byte either completes a message (and ends between messages) or leaves one unfinished.
        expect(deframer.atBoundary).to.equal(got.length > 0);
      }
      expect(plain(out)).to.deep.equal(plain(messages.slice(0, 5)));
    });

    it('reassembles messages from random cuts', () => {
      let seed = 7;
      const random = (n: number) => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return seed % n;
      };
      for (let round = 0; round < 200; round++) {
        const offsets = Array.from({ length: 1 + random(12) }, () => random(stream.length)).sort((a, b) => a - b);
        const deframer = new GrpcDeframer(1 << 20);
        expect(plain(feed(deframer, cut(stream, offsets)))).to.deep.equal(plain(messages), `cuts ${offsets.join(',')}`);
      }
    });

    it('hands out copies: changing a chunk afterwards does not change a message', () => {
      const chunk = Uint8Array.from(frameMessage(message(10, 9)));
      const [got] = new GrpcDeframer().push(chunk);
      chunk.fill(0);
      expect(Array.from(got)).to.deep.equal(Array.from(message(10, 9)));
      expect(got.buffer).to.not.equal(chunk.buffer);
    });

    it('refuses a message longer than the limit, from its header alone, and stays broken', () => {
      const deframer = new GrpcDeframer(100);
      expect(plain(deframer.push(frameMessage(message(100, 1))))).to.deep.equal(plain([message(100, 1)]));
      const header = frameMessage(message(101, 1)).subarray(0, 5);
      expectProtocolError(() => deframer.push(header), Status.RESOURCE_EXHAUSTED, /larger than max \(101 vs\. 100\)/);
      expectProtocolError(() => deframer.push(frameMessage(message(1, 1))), Status.RESOURCE_EXHAUSTED, /larger than max/);
    });

    it('refuses an oversize length split across chunks', () => {
      const deframer = new GrpcDeframer(1000);
      deframer.push(new Uint8Array([0, 0, 0]));
      expectProtocolError(() => deframer.push(new Uint8Array([0x10, 0x00])), Status.RESOURCE_EXHAUSTED, /4096 vs\. 1000/);
    });

    it('refuses a compressed message and an unknown flag', () => {
      const compressed = frameMessage(message(3, 1));
      compressed[0] = 1;
      expectProtocolError(() => new GrpcDeframer().push(compressed), Status.INTERNAL, /compressed/);
      const odd = frameMessage(message(3, 1));
      odd[0] = 2;
      expectProtocolError(() => new GrpcDeframer().push(odd), Status.INTERNAL, /flag 2/);
    });

    it('reports a stream that ends inside a message', () => {
      const deframer = new GrpcDeframer();
      deframer.push(frameMessage(message(10, 1)).subarray(0, 8));
      expect(deframer.atBoundary).to.equal(false);
      expect(deframer.bufferedBytes).to.equal(3);
      expectProtocolError(() => deframer.end(), Status.INTERNAL, /ended inside a message/);
    });
  });

  describe('grpc-message', () => {
    it('leaves printable ASCII other than % as it is', () => {
      const text = 'etcdserver: mvcc: required revision has been compacted ~!{}';
      expect(encodeGrpcMessage(text)).to.equal(text);
    });

    it('percent-encodes %, control characters and the UTF-8 bytes of non-ASCII text', () => {
      expect(encodeGrpcMessage('100% sure')).to.equal('100%25 sure');
      expect(encodeGrpcMessage('line\nbreak\ttab')).to.equal('line%0Abreak%09tab');
      expect(encodeGrpcMessage('héllo ✓')).to.equal('h%C3%A9llo %E2%9C%93');
      expect(encodeGrpcMessage('\u007f')).to.equal('%7F');
    });

    it('decodes what it encodes', () => {
      for (const text of ['', 'plain', '100% sure', 'a\r\nb', 'héllo ✓ 日本', '%%%', 'emoji 😀']) {
        expect(decodeGrpcMessage(encodeGrpcMessage(text))).to.equal(text);
      }
    });

    it('decodes leniently: a % without two hex digits stays, lower-case hex is accepted', () => {
      expect(decodeGrpcMessage('50%')).to.equal('50%');
      expect(decodeGrpcMessage('%zz and %4')).to.equal('%zz and %4');
      expect(decodeGrpcMessage('%c3%a9')).to.equal('é');
      expect(decodeGrpcMessage('%FF')).to.equal('\ufffd');
    });

    it('puts the status and encoded message in trailers and reads them back', () => {
      const trailers = statusTrailers(Status.OUT_OF_RANGE, 'revision 5% gone');
      expect(trailers).to.deep.equal({ 'grpc-status': '11', 'grpc-message': 'revision 5%25 gone' });
      expect(statusFromHeaders(trailers as Record<string, string>)).to.deep.equal({ code: 11, message: 'revision 5% gone' });
      expect(statusTrailers(Status.OK)).to.deep.equal({ 'grpc-status': '0' });
      expect(statusFromHeaders({})).to.equal(null);
      expect(statusFromHeaders({ 'grpc-status': 'x' })!.code).to.equal(Status.UNKNOWN);
      expect(statusFromHeaders({ 'grpc-status': '99' })!.code).to.equal(Status.UNKNOWN);
    });
  });

  describe('grpc-timeout and headers', () => {
    it('writes at most 8 digits in the finest unit that fits, rounding up', () => {
      expect(formatGrpcTimeout(1)).to.equal('1000000n');
      expect(formatGrpcTimeout(99)).to.equal('99000000n');
      expect(formatGrpcTimeout(100)).to.equal('100000u');
      expect(formatGrpcTimeout(30_000)).to.equal('30000000u');
      expect(formatGrpcTimeout(100_000)).to.equal('100000m');
      expect(formatGrpcTimeout(0.25)).to.equal('250000n');
      expect(formatGrpcTimeout(200_000_000)).to.equal('200000S');
      expect(formatGrpcTimeout(1e12)).to.equal('16666667M');
      expect(formatGrpcTimeout(1e13)).to.equal('2777778H');
      expect(formatGrpcTimeout(1e20)).to.equal('99999999H');
      for (const ms of [1, 7, 99, 100, 1234, 30_000, 86_400_000]) expect(parseGrpcTimeout(formatGrpcTimeout(ms))).to.equal(ms);
    });

    it('parses every unit and refuses malformed values', () => {
      expect(parseGrpcTimeout('2H')).to.equal(7_200_000);
      expect(parseGrpcTimeout('3M')).to.equal(180_000);
      expect(parseGrpcTimeout('4S')).to.equal(4_000);
      expect(parseGrpcTimeout('5m')).to.equal(5);
      expect(parseGrpcTimeout('6000u')).to.equal(6);
      expect(parseGrpcTimeout('7000000n')).to.equal(7);
      for (const bad of ['', 'S', '10', '1s', '123456789S', '-1S', '1.5S']) expect(parseGrpcTimeout(bad), bad).to.equal(null);
    });

    it('maps HTTP statuses without a gRPC status as the gRPC documentation lists them', () => {
      expect(statusFromHttp(400).code).to.equal(Status.INTERNAL);
      expect(statusFromHttp(401).code).to.equal(Status.UNAUTHENTICATED);
      expect(statusFromHttp(403).code).to.equal(Status.PERMISSION_DENIED);
      expect(statusFromHttp(404).code).to.equal(Status.UNIMPLEMENTED);
      for (const s of [429, 502, 503, 504]) expect(statusFromHttp(s).code).to.equal(Status.UNAVAILABLE);
      expect(statusFromHttp(500).code).to.equal(Status.UNKNOWN);
    });

    it('recognises gRPC content types', () => {
      expect(isGrpcContentType('application/grpc')).to.equal(true);
      expect(isGrpcContentType('application/grpc+proto')).to.equal(true);
      expect(isGrpcContentType('application/grpc;charset=utf-8')).to.equal(true);
      expect(isGrpcContentType('application/grpcx')).to.equal(false);
      expect(isGrpcContentType('text/html')).to.equal(false);
      expect(isGrpcContentType(undefined)).to.equal(false);
    });
  });
});
