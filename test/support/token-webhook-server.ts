/**
 * A local TokenReview webhook for tests: HTTPS on 127.0.0.1 (a free port), serving certificate
 * from a test CA, client certificates required and verified against that CA. Each request's
 * parsed body, path and client CN are recorded; the test decides the answer.
 */
import * as https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { createTestCa, issueClientCertificate, issueServingCertificate, type TestCertificate } from './test-pki';
import { closeWithConnections, listenOn } from './server-lifecycle';

export interface WebhookCall {
  readonly path: string;
  readonly body: Record<string, unknown>;
  readonly clientCommonName: string;
  readonly authorization: string | undefined;
}

export interface WebhookAnswer {
  readonly status?: number;
  /** A value to send as JSON, or a string sent as is. */
  readonly body: unknown;
  readonly headers?: Record<string, string>;
  /** Wait this long before answering (for timeout tests). */
  readonly delayMs?: number;
}

export type WebhookHandler = (call: WebhookCall) => WebhookAnswer;

export class TestTokenWebhook {
  readonly ca: TestCertificate;
  /** The client certificate the API server presents. */
  readonly client: TestCertificate;
  readonly calls: WebhookCall[] = [];
  handler: WebhookHandler = () => ({ body: {} });
  private server: https.Server | undefined;
  private port = 0;

  constructor() {
    this.ca = createTestCa({ commonName: 'webhook-test-ca' });
    this.client = issueClientCertificate(this.ca, 'kube-apiserver', [], { keyIndex: 3 });
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}/authenticate`;
  }

  async start(): Promise<void> {
    const serving = issueServingCertificate(this.ca);
    this.server = https.createServer({ cert: serving.certPem, key: serving.keyPem, ca: this.ca.certPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        } catch {
          // Recorded as empty.
        }
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        const call: WebhookCall = { path: req.url ?? '', body, clientCommonName: String(peer?.subject?.CN ?? ''), authorization: req.headers.authorization };
        this.calls.push(call);
        const answer = this.handler(call);
        const send = (): void => {
          const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
          if (!res.destroyed) res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers }).end(text);
        };
        if (answer.delayMs !== undefined) setTimeout(send, answer.delayMs).unref();
        else send();
      });
    });
    this.port = await listenOn(this.server);
  }

  async stop(): Promise<void> {
    if (this.server !== undefined) await closeWithConnections(this.server);
  }

  /** A TokenReview answer in the version the request came in. */
  static review(call: WebhookCall, status: Record<string, unknown>): Record<string, unknown> {
    return { apiVersion: call.body.apiVersion, kind: 'TokenReview', status };
  }
}
