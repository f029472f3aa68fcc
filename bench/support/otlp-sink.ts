/**
 * A trivial OTLP/HTTP collector for benchmarks: POST /v1/traces on 127.0.0.1, read the body,
 * answer 200 `{}`. It counts export requests and bytes and nothing else (no decoding), so it
 * costs the benchmark as little as a collector can.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export class OtlpSink {
  requests = 0;
  bytes = 0;
  private server: http.Server | undefined;
  port = 0;

  get endpoint(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      req.on('data', (chunk: Buffer) => (this.bytes += chunk.length));
      req.on('end', () => {
        this.requests++;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
