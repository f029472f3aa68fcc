/** The trace context a traced proposal carries in its log entry: 25 bytes, read back exactly. */
import { expect } from 'chai';
import { TRACE_CONTEXT_BYTES, TRACE_FLAG_BIT, decodeTraceContext, encodeTraceContext } from '../../../../raft/node/trace-context';

describe('trace context in a log entry', () => {
  it('round-trips trace id, span id and flags at an offset', () => {
    const buffer = new Uint8Array(16 + TRACE_CONTEXT_BYTES + 3);
    const span = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };
    encodeTraceContext(buffer, 16, span);
    expect(decodeTraceContext(buffer, 16)).to.deep.equal({ ...span, isRemote: true });
    expect(decodeTraceContext(buffer.subarray(0), 16).traceFlags).to.equal(1);
  });

  it('uses a flag bit no proposer id can set', () => {
    expect(TRACE_FLAG_BIT).to.equal(0x8000_0000);
    // Proposer ids are safe integers: their high 32 bits stay below 2^21.
    expect(Math.floor(Number.MAX_SAFE_INTEGER / 0x1_0000_0000) & TRACE_FLAG_BIT).to.equal(0);
  });
});
