/**
 * The conf change payload codec: [kind][node id, 8 bytes big-endian][context].
 */
import { expect } from 'chai';
import { AssertionError } from '../../../../raft/core/assert';
import { decodeConfChange, encodeConfChange } from '../../../../raft/core/conf-change';
import { EMPTY_BYTES, type ConfChange, type ConfChangeType } from '../../../../raft/core/types';
import { bytes } from './harness';

describe('raft core: conf change codec', () => {
  for (const type of ['addNode', 'addLearnerNode', 'removeNode'] as ConfChangeType[]) {
    it(`round-trips ${type} with its context`, () => {
      const change: ConfChange = { type, nodeId: 7, context: bytes('10.0.0.7:2380') };
      expect(decodeConfChange(encodeConfChange(change))).to.deep.equal(change);
    });
  }

  it('round-trips an empty context', () => {
    const change: ConfChange = { type: 'addNode', nodeId: 1, context: EMPTY_BYTES };
    const encoded = encodeConfChange(change);
    expect(encoded.length).to.equal(9);
    expect(decodeConfChange(encoded)).to.deep.equal({ ...change, context: new Uint8Array(0) });
  });

  it('round-trips node ids above 32 bits up to the largest safe integer', () => {
    for (const nodeId of [2 ** 32, 2 ** 32 + 5, 2 ** 40 + 123, Number.MAX_SAFE_INTEGER]) {
      const decoded = decodeConfChange(encodeConfChange({ type: 'removeNode', nodeId, context: EMPTY_BYTES }));
      expect(decoded.nodeId).to.equal(nodeId);
    }
  });

  it('writes the node id big-endian after the kind byte', () => {
    const encoded = encodeConfChange({ type: 'addLearnerNode', nodeId: 0x0102030405, context: bytes('c') });
    expect([...encoded]).to.deep.equal([2, 0, 0, 0, 0x01, 0x02, 0x03, 0x04, 0x05, 'c'.charCodeAt(0)]);
  });

  it('decodes from a view into a larger buffer', () => {
    const encoded = encodeConfChange({ type: 'addNode', nodeId: 42, context: bytes('ctx') });
    const backing = new Uint8Array(encoded.length + 8);
    backing.set(encoded, 5);
    const view = backing.subarray(5, 5 + encoded.length);
    expect(decodeConfChange(view)).to.deep.equal({ type: 'addNode', nodeId: 42, context: bytes('ctx') });
  });

  it('the decoded context is a copy, not a view of the payload', () => {
    const encoded = encodeConfChange({ type: 'addNode', nodeId: 42, context: bytes('ctx') });
    const decoded = decodeConfChange(encoded);
    encoded[9] = 0;
    expect(decoded.context[0]).to.equal('c'.charCodeAt(0));
  });

  it('refuses a payload shorter than the header', () => {
    expect(() => decodeConfChange(new Uint8Array(8))).to.throw(AssertionError);
    expect(() => decodeConfChange(new Uint8Array(0))).to.throw(AssertionError);
  });

  it('refuses an unknown kind byte', () => {
    for (const kind of [0, 4, 255]) {
      const payload = new Uint8Array(9);
      payload[0] = kind;
      payload[8] = 1;
      expect(() => decodeConfChange(payload)).to.throw(AssertionError);
    }
  });

  it('refuses a node id beyond the safe integer range', () => {
    const payload = new Uint8Array(9).fill(0xff);
    payload[0] = 1;
    expect(() => decodeConfChange(payload)).to.throw(AssertionError);
  });

  it('refuses to encode a negative, fractional or unsafe node id', () => {
    for (const nodeId of [-1, 1.5, 2 ** 53, Number.NaN]) {
      expect(() => encodeConfChange({ type: 'addNode', nodeId, context: EMPTY_BYTES })).to.throw(AssertionError);
    }
  });
});
