/**
 * Spans encoded as OTLP Protobuf when they end, not when their batch is exported: a finished
 * span is written at once into its batch's bytes (EncodedSpanBatch.add) and the span object is
 * let go. The export request is those bytes inside the batch's envelope (ExportTraceServiceRequest,
 * ResourceSpans, ScopeSpans), byte for byte what the SDK's ProtobufTraceSerializer makes of the
 * same spans in the same order (test/unit/src/observability/otlp-span-encoding.test.ts compares).
 *
 * Why (bench/RESULTS.md, issue 34): at full sampling the SDK's serialiser was the largest
 * OpenTelemetry cost per request, and the spans waiting in the queue for it (hundreds, for up to
 * 5 s) outlived V8's young generation, so each was copied and promoted before it died. Encoded
 * at the end, a span is garbage young, and the batch holds a few large buffers instead of tens of
 * thousands of small objects; the encoding is one pass (a nested message's length is written
 * after it, its reserved byte widened when the length needs more), where the SDK's makes two.
 *
 * The transport (HTTP, retries, timeouts, one export at a time) stays the SDK's: tracing.ts hands
 * its OTLP/HTTP export delegate a serializer that returns these bytes.
 */
import type { Attributes, AttributeValue, HrTime, Link, SpanContext } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';

/** The wire types this encoder writes. */
const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;

/** OTLP span flags: the W3C trace flags, and whether the parent's remoteness is known and true. */
const FLAGS_HAS_IS_REMOTE = 0x100;
const FLAGS_IS_REMOTE = 0x200;

/** int_value's range (int64); integers outside it go as double_value, as the SDK's encoder does. */
const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;

const INITIAL_BYTES = 16 * 1024;

function varintSize(value: number): number {
  if (value < 0) return 10;
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  if (value < 0x10000000) return 4;
  if (value < 0x800000000) return 5;
  if (value < 0x40000000000) return 6;
  if (value < 0x2000000000000) return 7;
  if (value < 0x100000000000000) return 8;
  return 9;
}

function hexDigit(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return code - 55;
}

/** The byte of every pair of ASCII hex digits, at (first << 7) | second: one lookup per byte of an id. */
const HEX_PAIRS = new Uint8Array(128 * 128);
for (let first = 0; first < 128; first++) for (let second = 0; second < 128; second++) HEX_PAIRS[(first << 7) | second] = (hexDigit(first) << 4) | hexDigit(second);

/** A growing Protobuf writer over one Buffer. */
class ProtobufBytes {
  bytes: Buffer = Buffer.allocUnsafeSlow(INITIAL_BYTES);
  pos = 0;

  private reserve(count: number): void {
    if (this.pos + count <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.pos + count) size *= 2;
    const grown = Buffer.allocUnsafeSlow(size);
    this.bytes.copy(grown, 0, 0, this.pos);
    this.bytes = grown;
  }

  varint(value: number): void {
    this.reserve(10);
    const bytes = this.bytes;
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 0x7f) {
        bytes[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      bytes[this.pos++] = v;
      return;
    }
    // 64 bits, a negative number as its two's complement.
    const abs = Math.abs(value);
    let low = abs >>> 0;
    let high = (abs / 0x100000000) >>> 0;
    if (value < 0) {
      low = ~low >>> 0;
      high = ~high >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 0x7f) {
      bytes[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    bytes[this.pos++] = low & 0x7f;
  }

  tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  fixed32(value: number): void {
    this.reserve(4);
    this.bytes.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  /** An HrTime ([seconds, nanoseconds]) as nanoseconds since the epoch, fixed64, exact beyond 2^53. */
  hrTime(time: HrTime): void {
    const seconds = time[0];
    // seconds = upper * 2^16 + lower: each part times 1e9 stays an exact double.
    const lowerNanos = (seconds & 0xffff) * 1e9 + time[1];
    const upperNanos = ((seconds / 0x10000) >>> 0) * 1e9;
    // upperNanos * 2^16 + lowerNanos, split into 32-bit halves.
    const sum = (upperNanos % 0x10000) * 0x10000 + lowerNanos;
    const low = sum % 0x100000000;
    const high = (Math.floor(upperNanos / 0x10000) + Math.floor(sum / 0x100000000)) >>> 0;
    this.reserve(8);
    const bytes = this.bytes;
    const at = this.pos;
    bytes[at] = low;
    bytes[at + 1] = low >>> 8;
    bytes[at + 2] = low >>> 16;
    bytes[at + 3] = low >>> 24;
    bytes[at + 4] = high;
    bytes[at + 5] = high >>> 8;
    bytes[at + 6] = high >>> 16;
    bytes[at + 7] = high >>> 24;
    this.pos = at + 8;
  }

  double(value: number): void {
    this.reserve(8);
    this.bytes.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  string(value: string): void {
    // Written as ASCII while it is (nearly every string here is); rewritten as UTF-8 if not.
    const length = value.length;
    const start = this.pos;
    this.varint(length);
    this.reserve(length);
    const bytes = this.bytes;
    let at = this.pos;
    for (let i = 0; i < length; i++) {
      const code = value.charCodeAt(i);
      if (code > 127) {
        this.pos = start;
        this.utf8(value);
        return;
      }
      bytes[at++] = code;
    }
    this.pos = at;
  }

  private utf8(value: string): void {
    const size = Buffer.byteLength(value, 'utf8');
    this.varint(size);
    this.reserve(size);
    this.pos += this.bytes.write(value, this.pos, size, 'utf8');
  }

  /** A trace or span id's hex as bytes (length-delimited). */
  hexBytes(hex: string): void {
    const size = hex.length >>> 1;
    this.varint(size);
    this.reserve(size);
    const bytes = this.bytes;
    for (let i = 0; i < size; i++) {
      const first = hex.charCodeAt(2 * i);
      const second = hex.charCodeAt(2 * i + 1);
      bytes[this.pos++] = (first | second) < 128 ? HEX_PAIRS[(first << 7) | second] : (hexDigit(first) << 4) | hexDigit(second);
    }
  }

  rawBytes(value: Uint8Array): void {
    this.varint(value.length);
    this.reserve(value.length);
    this.bytes.set(value, this.pos);
    this.pos += value.length;
  }

  /** Appends what `other` holds. */
  append(other: ProtobufBytes): void {
    this.reserve(other.pos);
    other.bytes.copy(this.bytes, this.pos, 0, other.pos);
    this.pos += other.pos;
  }

  /** Starts a length-delimited message, `reserved` bytes kept for its length; returns where it starts. */
  begin(reserved = 1): number {
    this.reserve(reserved);
    const start = this.pos;
    this.pos += reserved;
    return start;
  }

  /** Writes the length of the message begun at `start`, moving it when its length takes other than `reserved` bytes. */
  end(start: number, reserved = 1): void {
    const length = this.pos - start - reserved;
    const size = varintSize(length);
    if (size !== reserved) {
      this.reserve(size - reserved);
      this.bytes.copyWithin(start + size, start + reserved, this.pos);
      this.pos += size - reserved;
    }
    let at = start;
    let v = length;
    while (v > 0x7f) {
      this.bytes[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.bytes[at] = v;
  }
}

function anyValue(out: ProtobufBytes, value: unknown): void {
  switch (typeof value) {
    case 'string':
      out.tag(1, LENGTH_DELIMITED);
      out.string(value);
      return;
    case 'boolean':
      out.tag(2, VARINT);
      out.varint(value ? 1 : 0);
      return;
    case 'number':
      if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
        out.tag(3, VARINT);
        out.varint(value);
      } else {
        out.tag(4, FIXED64);
        out.double(value);
      }
      return;
  }
  if (value instanceof Uint8Array) {
    out.tag(7, LENGTH_DELIMITED);
    out.rawBytes(value);
  } else if (Array.isArray(value)) {
    out.tag(5, LENGTH_DELIMITED);
    const array = out.begin();
    for (const item of value) {
      out.tag(1, LENGTH_DELIMITED);
      const element = out.begin();
      anyValue(out, item);
      out.end(element);
    }
    out.end(array);
  } else if (typeof value === 'object' && value !== null) {
    out.tag(6, LENGTH_DELIMITED);
    const list = out.begin();
    const record = value as Record<string, unknown>;
    for (const key in record) {
      if (!Object.prototype.hasOwnProperty.call(record, key)) continue;
      out.tag(1, LENGTH_DELIMITED);
      keyValue(out, key, record[key]);
    }
    out.end(list);
  }
  // Anything else (undefined, null) is an empty AnyValue, as the SDK writes it.
}

function keyValue(out: ProtobufBytes, key: string, value: unknown): void {
  const pair = out.begin();
  out.tag(1, LENGTH_DELIMITED);
  out.string(key);
  out.tag(2, LENGTH_DELIMITED);
  const inner = out.begin();
  anyValue(out, value);
  out.end(inner);
  out.end(pair);
}

function attributes(out: ProtobufBytes, values: Attributes, field: number): void {
  for (const key in values) {
    if (!Object.prototype.hasOwnProperty.call(values, key)) continue;
    out.tag(field, LENGTH_DELIMITED);
    keyValue(out, key, values[key] as AttributeValue | undefined);
  }
}

function spanFlags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | FLAGS_HAS_IS_REMOTE | (isRemote === true ? FLAGS_IS_REMOTE : 0);
}

function event(out: ProtobufBytes, timed: TimedEvent): void {
  const start = out.begin();
  out.tag(1, FIXED64);
  out.hrTime(timed.time);
  out.tag(2, LENGTH_DELIMITED);
  out.string(timed.name);
  if (timed.attributes) attributes(out, timed.attributes, 3);
  out.tag(4, VARINT);
  out.varint(timed.droppedAttributesCount || 0);
  out.end(start);
}

/** trace_id, span_id and trace_state (fields 1-3), which a Span and a Link write alike. */
function contextFields(out: ProtobufBytes, context: SpanContext): void {
  out.tag(1, LENGTH_DELIMITED);
  out.hexBytes(context.traceId);
  out.tag(2, LENGTH_DELIMITED);
  out.hexBytes(context.spanId);
  const traceState = context.traceState?.serialize();
  if (traceState) {
    out.tag(3, LENGTH_DELIMITED);
    out.string(traceState);
  }
}

function link(out: ProtobufBytes, linked: Link): void {
  const start = out.begin();
  const context = linked.context;
  contextFields(out, context);
  if (linked.attributes) attributes(out, linked.attributes, 4);
  out.tag(5, VARINT);
  out.varint(linked.droppedAttributesCount || 0);
  out.tag(6, FIXED32);
  out.fixed32(spanFlags(context.traceFlags, context.isRemote));
  out.end(start);
}

/** Most spans take 128 to 16,383 bytes: two bytes kept for a span's length move it least often. */
const SPAN_LENGTH_BYTES = 2;

/** A ScopeSpans' `spans` entry (field 2): tag, length and the Span message. */
function span(out: ProtobufBytes, finished: ReadableSpan): void {
  out.tag(2, LENGTH_DELIMITED);
  const start = out.begin(SPAN_LENGTH_BYTES);
  const context: SpanContext = finished.spanContext();
  contextFields(out, context);
  const parent = finished.parentSpanContext;
  if (parent?.spanId) {
    out.tag(4, LENGTH_DELIMITED);
    out.hexBytes(parent.spanId);
  }
  out.tag(5, LENGTH_DELIMITED);
  out.string(finished.name);
  // OTLP's kinds count from 1 (0 is unspecified); the API's from 0.
  const kind = finished.kind == null ? 0 : finished.kind + 1;
  if (kind !== 0) {
    out.tag(6, VARINT);
    out.varint(kind);
  }
  out.tag(7, FIXED64);
  out.hrTime(finished.startTime);
  out.tag(8, FIXED64);
  out.hrTime(finished.endTime);
  if (finished.attributes) attributes(out, finished.attributes, 9);
  out.tag(10, VARINT);
  out.varint(finished.droppedAttributesCount);
  for (const timed of finished.events) {
    out.tag(11, LENGTH_DELIMITED);
    event(out, timed);
  }
  out.tag(12, VARINT);
  out.varint(finished.droppedEventsCount);
  for (const linked of finished.links) {
    out.tag(13, LENGTH_DELIMITED);
    link(out, linked);
  }
  out.tag(14, VARINT);
  out.varint(finished.droppedLinksCount);
  out.tag(15, LENGTH_DELIMITED);
  const status = out.begin();
  if (finished.status.message) {
    out.tag(2, LENGTH_DELIMITED);
    out.string(finished.status.message);
  }
  out.tag(3, VARINT);
  out.varint(finished.status.code);
  out.end(status);
  out.tag(16, FIXED32);
  out.fixed32(spanFlags(context.traceFlags, parent?.isRemote));
  out.end(start, SPAN_LENGTH_BYTES);
}

type Resource = ReadableSpan['resource'];
type Scope = ReadableSpan['instrumentationScope'];

/**
 * A batch of finished spans, encoded as they are added and grouped as the SDK's serialiser
 * groups them (by resource, then by instrumentation scope, each in order of first appearance).
 * `length` is its span count (the SDK exporter's metrics helper counts items by it).
 */
export class EncodedSpanBatch {
  length = 0;
  private readonly groups = new Map<Resource, Map<Scope, ProtobufBytes>>();

  add(finished: ReadableSpan): void {
    let scopes = this.groups.get(finished.resource);
    if (scopes === undefined) this.groups.set(finished.resource, (scopes = new Map()));
    let out = scopes.get(finished.instrumentationScope);
    if (out === undefined) scopes.set(finished.instrumentationScope, (out = new ProtobufBytes()));
    const before = out.pos;
    try {
      span(out, finished);
    } catch (err) {
      // A span that cannot be encoded leaves nothing of itself in the batch.
      out.pos = before;
      throw err;
    }
    this.length++;
  }

  /** The ExportTraceServiceRequest holding this batch's spans. */
  exportRequest(): Uint8Array {
    const out = new ProtobufBytes();
    for (const [resource, scopes] of this.groups) {
      out.tag(1, LENGTH_DELIMITED);
      const resourceSpans = out.begin(3);
      out.tag(1, LENGTH_DELIMITED);
      const resourceStart = out.begin();
      if (resource.attributes) attributes(out, resource.attributes, 1);
      out.tag(2, VARINT);
      out.varint(0);
      out.end(resourceStart);
      for (const [scope, spans] of scopes) {
        out.tag(2, LENGTH_DELIMITED);
        const scopeSpans = out.begin(3);
        out.tag(1, LENGTH_DELIMITED);
        const scopeStart = out.begin();
        out.tag(1, LENGTH_DELIMITED);
        out.string(scope.name);
        if (scope.version) {
          out.tag(2, LENGTH_DELIMITED);
          out.string(scope.version);
        }
        const scopeAttributes = (scope as { attributes?: Attributes }).attributes;
        if (scopeAttributes) attributes(out, scopeAttributes, 3);
        const scopeDropped = (scope as { droppedAttributesCount?: number }).droppedAttributesCount;
        if (scopeDropped) {
          out.tag(4, VARINT);
          out.varint(scopeDropped);
        }
        out.end(scopeStart);
        out.append(spans);
        if (scope.schemaUrl) {
          out.tag(3, LENGTH_DELIMITED);
          out.string(scope.schemaUrl);
        }
        out.end(scopeSpans, 3);
      }
      if (resource.schemaUrl) {
        out.tag(3, LENGTH_DELIMITED);
        out.string(resource.schemaUrl);
      }
      out.end(resourceSpans, 3);
    }
    return out.bytes.subarray(0, out.pos);
  }
}

/**
 * An exporter that takes batches encoded as their spans ended (tracing.ts makes one on the SDK's
 * OTLP/HTTP export delegate); BoundedSpanProcessor then encodes instead of queueing span objects.
 */
export interface EncodedSpanExporter {
  readonly takesEncodedSpans: true;
  export(batch: EncodedSpanBatch, done: (result: ExportResult) => void): void;
  shutdown(): Promise<void>;
}
