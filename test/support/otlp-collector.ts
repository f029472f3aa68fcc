/**
 * An OTLP/HTTP trace receiver for tests: POST /v1/traces with OTLP JSON (what
 * @opentelemetry/exporter-trace-otlp-http sends), on 127.0.0.1 on a free port. It keeps every
 * span it receives, flattened with its resource's service.instance.id (which replica sent it).
 * `hang()` makes it accept requests and never answer (a stuck collector); `stop()` closes it.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

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
        if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
          res.writeHead(415).end();
          return;
        }
        try {
          this.receive(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json);
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch {
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
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
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
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
            instance,
            statusCode: span.status?.code ?? 0,
          });
        }
      }
    }
  }
}
