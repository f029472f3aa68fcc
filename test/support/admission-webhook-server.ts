/**
 * A local admission webhook for tests: HTTPS with a serving certificate from a CA the test
 * makes (its PEM is the configurations' caBundle), valid for localhost, 127.0.0.1, the host's
 * non-loopback address and `<service>.<namespace>.svc` names. Each path has its own handler;
 * every call is recorded (path, parsed AdmissionReview, Authorization header). A handler
 * answers with a review response, or with raw status/body/delay for the failure modes.
 *
 * It listens on 127.0.0.1 on a free port; `host` selects another address (webhooks reached
 * through a Service's Endpoints need one that Endpoints accept, which loopback is not).
 */
import * as https from 'node:https';
import { networkInterfaces } from 'node:os';
import { createTestCa, issueTestCertificate, type TestCertificate } from './test-pki';
import { closeWithConnections, listenOn } from './server-lifecycle';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface AdmissionCall {
  readonly path: string;
  /** The AdmissionReview's request. */
  readonly request: Json;
  readonly review: Json;
  readonly authorization: string | undefined;
  /** The W3C trace context the call carried (a traced request's), if any. */
  readonly traceparent: string | undefined;
}

export interface RawAnswer {
  readonly status?: number;
  /** Sent as is when a string, as JSON otherwise. */
  readonly body: unknown;
  readonly delayMs?: number;
}

export type AdmissionHandler = (call: AdmissionCall) => Json | RawAnswer;

/** The host's first non-loopback IPv4 address, if it has one (for Endpoints). */
export function externalIpv4(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === 'IPv4' && !address.internal) return address.address;
    }
  }
  return undefined;
}

export class TestAdmissionWebhook {
  readonly ca: TestCertificate;
  readonly serving: TestCertificate;
  readonly calls: AdmissionCall[] = [];
  private readonly handlers = new Map<string, AdmissionHandler>();
  private server: https.Server | undefined;
  port = 0;

  /** `pki`: another webhook's CA and certificate, to stand in for it. */
  constructor(readonly host = '127.0.0.1', serviceNames: readonly string[] = [], pki?: { ca: TestCertificate; serving: TestCertificate }) {
    this.ca = pki?.ca ?? createTestCa({ commonName: 'admission-webhook-test-ca' });
    const ips = ['127.0.0.1', ...(host !== '127.0.0.1' ? [host] : [])];
    this.serving = pki?.serving ?? issueTestCertificate(this.ca, { commonName: 'admission-webhook', dnsNames: ['localhost', ...serviceNames], ipAddresses: ips, extKeyUsages: ['serverAuth'], keyIndex: 2 });
  }

  /** base64 of the CA's PEM, as clientConfig.caBundle holds it. */
  get caBundle(): string {
    return Buffer.from(this.ca.certPem).toString('base64');
  }

  url(path: string): string {
    return `https://${this.host === '127.0.0.1' ? '127.0.0.1' : this.host}:${this.port}${path}`;
  }

  on(path: string, handler: AdmissionHandler): void {
    this.handlers.set(path, handler);
  }

  /** The calls to `path` (the query, `?timeout=10s`, left aside). */
  callsTo(path: string): AdmissionCall[] {
    return this.calls.filter((c) => c.path.split('?')[0] === path);
  }

  /** Starts on a free port, or on `port` (a webhook coming up where one was down). */
  async start(port = 0): Promise<void> {
    this.server = https.createServer({ cert: this.serving.certPem, key: this.serving.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        let review: Json = {};
        try {
          review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
        } catch {
          // Recorded as empty.
        }
        const path = (req.url ?? '').split('?')[0];
        const call: AdmissionCall = { path: req.url ?? '', request: review.request ?? {}, review, authorization: req.headers.authorization, traceparent: req.headers.traceparent as string | undefined };
        this.calls.push(call);
        const handler = this.handlers.get(path) ?? ((c: AdmissionCall) => TestAdmissionWebhook.allow(c));
        const answer = handler(call);
        const raw: RawAnswer = 'body' in answer ? (answer as RawAnswer) : { body: answer };
        const send = () => {
          if (res.destroyed) return;
          const text = typeof raw.body === 'string' ? raw.body : JSON.stringify(raw.body);
          res.writeHead(raw.status ?? 200, { 'content-type': 'application/json' }).end(text);
        };
        if (raw.delayMs !== undefined) setTimeout(send, raw.delayMs).unref();
        else send();
      });
    });
    this.port = await listenOn(this.server, port, this.host);
  }

  async stop(): Promise<void> {
    if (this.server !== undefined) await closeWithConnections(this.server);
  }

  static response(call: AdmissionCall, response: Json): Json {
    return { apiVersion: call.review.apiVersion ?? 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: call.request.uid, ...response } };
  }

  static allow(call: AdmissionCall, extra: Json = {}): Json {
    return TestAdmissionWebhook.response(call, { allowed: true, ...extra });
  }

  static deny(call: AdmissionCall, status: Json): Json {
    return TestAdmissionWebhook.response(call, { allowed: false, status });
  }

  static patch(call: AdmissionCall, operations: unknown[], extra: Json = {}): Json {
    return TestAdmissionWebhook.allow(call, { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(operations)).toString('base64'), ...extra });
  }
}
