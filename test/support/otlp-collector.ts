/**
 * An OTLP/HTTP trace receiver for tests: POST /v1/traces with OTLP Protobuf (what Carina's
 * exporter, @opentelemetry/exporter-trace-otlp-proto, sends: application/x-protobuf) or OTLP
 * JSON (application/json), on 127.0.0.1 on a free port. It keeps every
 * span it receives, flattened with its resource's service.instance.id (which replica sent it).
 * `hang()` makes it accept requests and never answer (a stuck collector); `stop()` closes it.
 */
import * as http from 'node:http';
import { closeWithConnections, listenOn } from './server-lifecycle';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  /** Span events (the request's stages), in the order sent. */
  events: Array<{ name: string; timeNs: bigint; attributes: Record<string, unknown> }>;
  /** The resource's service.instance.id. */
  instance: string;
  statusCode: number;
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** OTLP JSON ids are hex; a base64 id (protobuf-JSON mapping) is turned into hex too. */
function hexId(value: unknown): string {
  if (typeof value !== 'string' || value === '') return '';
  return /^[0-9a-f]+$/i.test(value) && (value.length === 32 || value.length === 16) ? value.toLowerCase() : Buffer.from(value, 'base64').toString('hex');
}

function nanos(value: unknown): bigint {
  if (typeof value === 'string' || typeof value === 'number') return BigInt(value);
  const long = value as { low: number; high: number };
  return (BigInt(long.high >>> 0) << 32n) + BigInt(long.low >>> 0);
}

function attributeValue(value: Json): unknown {
  if (value === undefined || value === null) return undefined;
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('boolValue' in value) return value.boolValue;
  return value;
}

function attributes(list: Json[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, attributeValue(a.value)]));
}

export class OtlpCollector {
  readonly spans: ReceivedSpan[] = [];
  /** Export requests received (answered or not). */
  requests = 0;
  /** Of those answered, the ones in Protobuf. */
  protobufRequests = 0;
  private hanging = false;
  private readonly held: http.ServerResponse[] = [];
  private server: http.Server | undefined;
  port = 0;

  get endpoint(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests++;
        if (this.hanging) {
          this.held.push(res);
          return;
        }
        const type = String(req.headers['content-type']);
        const protobuf = type.startsWith('application/x-protobuf');
        if (req.method !== 'POST' || req.url !== '/v1/traces' || !(protobuf || type.startsWith('application/json'))) {
          res.writeHead(415).end();
          return;
        }
        try {
          const body = Buffer.concat(chunks);
          if (protobuf) {
            this.protobufRequests++;
            this.spans.push(...decodeExportTraceRequest(body));
            res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
          } else {
            this.receive(JSON.parse(body.toString('utf8')) as Json);
            res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
          }
        } catch {
          res.writeHead(400).end();
        }
      });
    });
    this.port = await listenOn(this.server);
  }

  /** From now on, requests are accepted and never answered. */
  hang(): void {
    this.hanging = true;
  }

  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  async stop(): Promise<void> {
    for (const res of this.held.splice(0)) res.destroy();
    const server = this.server;
    this.server = undefined;
    if (server !== undefined) await closeWithConnections(server);
  }

  private receive(body: Json): void {
    for (const resourceSpans of body.resourceSpans ?? []) {
      const instance = String(attributes(resourceSpans.resource?.attributes)['service.instance.id'] ?? '');
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            traceId: hexId(span.traceId),
            spanId: hexId(span.spanId),
            parentSpanId: hexId(span.parentSpanId),
            name: span.name,
            kind: span.kind ?? 0,
            startNs: nanos(span.startTimeUnixNano),
            endNs: nanos(span.endTimeUnixNano),
            attributes: attributes(span.attributes),
            links: (span.links ?? []).map((l: Json) => ({ traceId: hexId(l.traceId), spanId: hexId(l.spanId) })),
            events: (span.events ?? []).map((e: Json) => ({ name: String(e.name), timeNs: nanos(e.timeUnixNano), attributes: attributes(e.attributes) })),
            instance,
            statusCode: span.status?.code ?? 0,
          });
        }
      }
    }
  }
}

/**
 * A Protobuf reader just big enough for OTLP traces, written for this test from the
 * opentelemetry-proto field numbers (not from the exporter under test): every field of a
 * message as (number, wire type, value).
 */
interface Field { field: number; wire: number; varint: bigint; bytes: Buffer }

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (at >= buf.length) throw new Error('protobuf: truncated varint');
      const byte = buf[at++];
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (at < buf.length) {
    const key = Number(varint());
    const field = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ field, wire, varint: varint(), bytes: Buffer.alloc(0) });
    else if (wire === 1) {
      out.push({ field, wire, varint: buf.readBigUInt64LE(at), bytes: buf.subarray(at, at + 8) });
      at += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      if (at + length > buf.length) throw new Error('protobuf: truncated field');
      out.push({ field, wire, varint: 0n, bytes: buf.subarray(at, at + length) });
      at += length;
    } else if (wire === 5) {
      out.push({ field, wire, varint: BigInt(buf.readUInt32LE(at)), bytes: buf.subarray(at, at + 4) });
      at += 4;
    } else throw new Error(`protobuf: wire type ${wire}`);
  }
  return out;
}

function decodeAnyValue(buf: Buffer): unknown {
  for (const f of fields(buf)) {
    if (f.field === 1) return f.bytes.toString('utf8');
    if (f.field === 2) return f.varint !== 0n;
    if (f.field === 3) return Number(BigInt.asIntN(64, f.varint));
    if (f.field === 4) return f.bytes.readDoubleLE(0);
    if (f.field === 5) return fields(f.bytes).filter((v) => v.field === 1).map((v) => decodeAnyValue(v.bytes));
  }
  return undefined;
}

function decodeKeyValues(list: Field[], field: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list.filter((f) => f.field === field)) {
    const parts = fields(kv.bytes);
    const key = parts.find((p) => p.field === 1)?.bytes.toString('utf8') ?? '';
    const value = parts.find((p) => p.field === 2);
    out[key] = value === undefined ? undefined : decodeAnyValue(value.bytes);
  }
  return out;
}

/** The spans of an OTLP ExportTraceServiceRequest in Protobuf, flattened as the collector keeps them. */
export function decodeExportTraceRequest(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of fields(body).filter((f) => f.field === 1)) {
    const rs = fields(resourceSpans.bytes);
    const resource = rs.find((f) => f.field === 1);
    const instance = String((resource === undefined ? {} : decodeKeyValues(fields(resource.bytes), 1))['service.instance.id'] ?? '');
    for (const scopeSpans of rs.filter((f) => f.field === 2)) {
      for (const spanField of fields(scopeSpans.bytes).filter((f) => f.field === 2)) {
        const s = fields(spanField.bytes);
        const one = (n: number) => s.find((f) => f.field === n);
        const status = one(15);
        out.push({
          traceId: one(1)?.bytes.toString('hex') ?? '',
          spanId: one(2)?.bytes.toString('hex') ?? '',
          parentSpanId: one(4)?.bytes.toString('hex') ?? '',
          name: one(5)?.bytes.toString('utf8') ?? '',
          kind: Number(one(6)?.varint ?? 0n),
          startNs: one(7)?.varint ?? 0n,
          endNs: one(8)?.varint ?? 0n,
          attributes: decodeKeyValues(s, 9),
          links: s.filter((f) => f.field === 13).map((l) => {
            const lf = fields(l.bytes);
            return { traceId: lf.find((f) => f.field === 1)?.bytes.toString('hex') ?? '', spanId: lf.find((f) => f.field === 2)?.bytes.toString('hex') ?? '' };
          }),
          events: s.filter((f) => f.field === 11).map((e) => {
            const ef = fields(e.bytes);
            return { name: ef.find((f) => f.field === 2)?.bytes.toString('utf8') ?? '', timeNs: ef.find((f) => f.field === 1)?.varint ?? 0n, attributes: decodeKeyValues(ef, 3) };
          }),
          instance,
          statusCode: status === undefined ? 0 : Number(fields(status.bytes).find((f) => f.field === 3)?.varint ?? 0n),
        });
      }
    }
  }
  return out;
}
