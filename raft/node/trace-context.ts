/**
 * A proposal's trace context, carried inside its log entry so that the replicas that handle the
 * entry after the proposer (the leader it is forwarded to, every replica that applies it) can
 * put their spans in the proposer's trace. Only entries proposed under a recording span carry
 * one, so a cluster that traces nothing writes exactly the entries it wrote before.
 *
 * Layout: the runtime's 16-byte envelope (proposer id as two uint32, sequence as two uint32,
 * big-endian) has the top bit of its first word set, which no proposer id can (ids are safe
 * integers, far below 2^63), and is followed by 25 bytes: trace id (16), span id (8), trace
 * flags (1). A replica of an earlier version cannot read such an entry: turn tracing on only
 * once every replica runs a version that knows it.
 */
import type { SpanContext } from '@opentelemetry/api';

export const TRACE_CONTEXT_BYTES = 25;
export const TRACE_FLAG_BIT = 0x8000_0000;

export function encodeTraceContext(target: Uint8Array, offset: number, span: SpanContext): void {
  target.set(Buffer.from(span.traceId, 'hex'), offset);
  target.set(Buffer.from(span.spanId, 'hex'), offset + 16);
  target[offset + 24] = span.traceFlags & 0xff;
}

export function decodeTraceContext(source: Uint8Array, offset: number): SpanContext {
  const bytes = Buffer.from(source.buffer, source.byteOffset + offset, TRACE_CONTEXT_BYTES);
  return {
    traceId: bytes.subarray(0, 16).toString('hex'),
    spanId: bytes.subarray(16, 24).toString('hex'),
    traceFlags: bytes[24],
    isRemote: true,
  };
}
