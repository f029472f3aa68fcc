import { expect } from 'chai';
import { Writer } from 'protobufjs';
import { WireWriter } from '../../../../src/codec/protobuf/wire-writer';

/** Writes the same fields through both writers; protobufjs's bytes are the reference. */
function both(write: (w: { uint32(v: number): unknown; int32(v: number): unknown; int64(v: number | string): unknown; bool(v: boolean): unknown; double(v: number): unknown; string(v: string): unknown; bytes(v: Uint8Array): unknown; fork(): unknown; ldelim(): unknown }) => void): [Buffer, Buffer] {
  const ours = new WireWriter();
  write(ours);
  const reference = Writer.create();
  write(reference as never);
  return [Buffer.from(ours.finish()), Buffer.from(reference.finish())];
}

describe('WireWriter', () => {
  it('writes varints of every length, negative int32 and 64-bit values as protobufjs does', () => {
    const [ours, reference] = both((w) => {
      for (const v of [0, 1, 127, 128, 300, 16383, 16384, 2097151, 2097152, 268435455, 268435456, 2147483647, 4294967295]) w.uint32(v);
      for (const v of [0, 5, -1, -2147483648, 2147483647]) w.int32(v);
      for (const v of [0, 1, 4294967296, 9007199254740991, -1, '9223372036854775807', '-9223372036854775808', '1000000000000000000']) w.int64(v);
    });
    expect(ours.toString('hex')).to.equal(reference.toString('hex'));
  });

  it('writes strings (ASCII, accented, emoji), bytes, booleans and doubles as protobufjs does', () => {
    const long = 'x'.repeat(300);
    const [ours, reference] = both((w) => {
      for (const s of ['', 'nginx', 'héllo wörld', 'snow ☃ and 🚀', long]) w.string(s);
      w.bytes(new Uint8Array([0, 1, 2, 255]));
      w.bool(true);
      w.bool(false);
      w.double(3.25);
      w.double(-0.1);
    });
    expect(ours.toString('hex')).to.equal(reference.toString('hex'));
  });

  it('writes nested messages whose lengths need one, two and three varint bytes', () => {
    const [ours, reference] = both((w) => {
      for (const size of [0, 10, 127, 128, 5000, 20000]) {
        w.uint32(0x12);
        w.fork();
        w.uint32(0x0a);
        w.fork();
        w.string('y'.repeat(size));
        w.ldelim();
        w.uint32(0x10);
        w.uint32(size);
        w.ldelim();
      }
    });
    expect(ours.toString('hex')).to.equal(reference.toString('hex'));
  });

  it('grows past its first buffer', () => {
    const [ours, reference] = both((w) => {
      w.fork();
      for (let i = 0; i < 3000; i++) w.string(`item-${i}`);
      w.ldelim();
    });
    expect(ours.length).to.be.greaterThan(16384);
    expect(ours.equals(reference)).to.equal(true);
  });
});
