import { expect } from 'chai';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { CallingWebhookError } from '../../../../../src/admission/webhook/errors';
import { EndpointsServiceResolver } from '../../../../../src/admission/webhook/service-resolver';
import { webhooksOf, type WebhookAccessor } from '../../../../../src/admission/webhook/webhook-accessor';
import { WebhookClient } from '../../../../../src/admission/webhook/webhook-client';
import { KubeconfigCredentialsResolver } from '../../../../../src/admission/webhook/webhook-credentials';
import { createTestCa, issueClientCertificate, issueTestCertificate } from '../../../../support/test-pki';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Seen {
  url: string;
  body: Json;
  authorization?: string;
  clientCn: string;
  userAgent?: string;
  contentType?: string;
}

describe('admission/webhook: the HTTPS client', function () {
  this.timeout(20_000);
  const ca = createTestCa({ commonName: 'webhook-ca' });
  const otherCa = createTestCa({ commonName: 'other-ca', keyIndex: 3 });
  const serving = issueTestCertificate(ca, { commonName: 'hook', dnsNames: ['localhost', 'hook.webhooks.svc'], ipAddresses: ['127.0.0.1'], extKeyUsages: ['serverAuth'], keyIndex: 2 });
  const client = issueClientCertificate(ca, 'kube-apiserver', [], { keyIndex: 3 });
  let server: https.Server;
  let port = 0;
  const seen: Seen[] = [];
  let answer: (url: string) => { status: number; body: string; delayMs?: number } = () => ({ status: 200, body: '{}' });

  before(async () => {
    server = https.createServer({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        seen.push({ url: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString() || '{}') as Json, authorization: req.headers.authorization, clientCn: String(peer?.subject?.CN ?? ''), userAgent: req.headers['user-agent'], contentType: req.headers['content-type'] });
        const a = answer(req.url ?? '');
        const send = () => { if (!res.destroyed) res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body); };
        if (a.delayMs !== undefined) setTimeout(send, a.delayMs).unref();
        else send();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    seen.length = 0;
    answer = () => ({ status: 200, body: '{"ok":true}' });
  });

  const hookWith = (clientConfig: Json, extra: Json = {}): WebhookAccessor => webhooksOf({ metadata: { name: 'cfg' }, webhooks: [{ name: 'w.example.com', clientConfig, timeoutSeconds: 2, ...extra }] }, 'validating')[0];
  const caBundle = Buffer.from(ca.certPem).toString('base64');
  const noServices = new EndpointsServiceResolver({ service: async () => undefined, endpoints: async () => undefined });
  const plainClient = () => new WebhookClient({ credentials: KubeconfigCredentialsResolver.none, services: noServices });

  async function failure(work: Promise<unknown>): Promise<CallingWebhookError> {
    try {
      await work;
    } catch (err) {
      if (err instanceof CallingWebhookError) return err;
      throw err;
    }
    expect.fail('expected a calling error');
  }

  it('POSTs JSON to the URL with ?timeout=<n>s, verifying TLS with the caBundle', async () => {
    const c = plainClient();
    try {
      const answerGot = await c.call(hookWith({ url: `https://localhost:${port}/validate`, caBundle }), '{"kind":"AdmissionReview"}');
      expect(answerGot).to.deep.equal({ statusCode: 200, body: { ok: true } });
      expect(seen[0].url).to.equal('/validate?timeout=2s');
      expect(seen[0].body).to.deep.equal({ kind: 'AdmissionReview' });
      expect(seen[0].contentType).to.equal('application/json');
      expect(seen[0].userAgent).to.equal('kube-apiserver-admission');
    } finally {
      await c.close();
    }
  });

  it('refuses a server whose certificate the caBundle does not vouch for', async () => {
    const c = plainClient();
    try {
      const err = await failure(c.call(hookWith({ url: `https://localhost:${port}/validate`, caBundle: Buffer.from(otherCa.certPem).toString('base64') }), '{}'));
      expect(err.statusCode).to.equal(503);
      expect(err.message).to.match(/^failed calling webhook "w.example.com": failed to call webhook: Post "https:\/\/localhost:\d+\/validate\?timeout=2s": /);
      expect(seen).to.have.length(0);
    } finally {
      await c.close();
    }
  });

  it('gives up after timeoutSeconds with context deadline exceeded', async () => {
    answer = () => ({ status: 200, body: '{}', delayMs: 5000 });
    const c = plainClient();
    try {
      const err = await failure(c.call(hookWith({ url: `https://localhost:${port}/slow`, caBundle }, { timeoutSeconds: 1 }), '{}'));
      expect(err.message).to.equal(`failed calling webhook "w.example.com": failed to call webhook: Post "https://localhost:${port}/slow?timeout=1s": context deadline exceeded`);
    } finally {
      await c.close();
    }
  });

  it('turns an error status into a calling error with its code, reading a Status body when there is one', async () => {
    const c = plainClient();
    try {
      answer = () => ({ status: 500, body: 'boom' });
      const plain = await failure(c.call(hookWith({ url: `https://localhost:${port}/x`, caBundle }), '{}'));
      expect(plain.statusCode).to.equal(500);
      expect(plain.reason).to.equal('failed to call webhook: an error on the server ("boom") has prevented the request from succeeding');
      answer = () => ({ status: 429, body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'slow down', code: 429 }) });
      const status = await failure(c.call(hookWith({ url: `https://localhost:${port}/x`, caBundle }), '{}'));
      expect(status.statusCode).to.equal(429);
      expect(status.reason).to.equal('failed to call webhook: slow down');
    } finally {
      await c.close();
    }
  });

  it('calls an answer that is not JSON a calling error', async () => {
    answer = () => ({ status: 200, body: 'garbage' });
    const c = plainClient();
    try {
      const err = await failure(c.call(hookWith({ url: `https://localhost:${port}/x`, caBundle }), '{}'));
      expect(err.statusCode).to.equal(503);
      expect(err.reason).to.match(/^failed to call webhook: couldn't get version\/kind; json parse error: /);
    } finally {
      await c.close();
    }
  });

  it('reports a refused connection', async () => {
    const c = plainClient();
    try {
      const err = await failure(c.call(hookWith({ url: 'https://127.0.0.1:1/x', caBundle }), '{}'));
      expect(err.reason).to.equal('failed to call webhook: Post "https://127.0.0.1:1/x?timeout=2s": connect ECONNREFUSED 127.0.0.1:1');
    } finally {
      await c.close();
    }
  });

  it('presents the credentials the kubeconfig gives the host', async () => {
    const credentials = new KubeconfigCredentialsResolver(new Map([
      [`localhost:${port}`, { entry: 'cert', clientCertPem: client.certPem, clientKeyPem: client.keyPem }],
      ['*', { entry: 'star', bearerToken: 'star-token' }],
    ]), undefined);
    const c = new WebhookClient({ credentials, services: noServices });
    try {
      await c.call(hookWith({ url: `https://localhost:${port}/a`, caBundle }), '{}');
      await c.call(hookWith({ url: `https://127.0.0.1:${port}/b`, caBundle }), '{}');
      expect(seen.map((s) => [s.clientCn, s.authorization])).to.deep.equal([['kube-apiserver', undefined], ['', 'Bearer star-token']]);
    } finally {
      await c.close();
    }
  });

  describe('webhooks named by a Service', () => {
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hook', namespace: 'webhooks' }, spec: { type: 'ClusterIP', ports: [{ name: 'https', port: 443, targetPort: 8443 }] } };
    const endpoints = () => ({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'hook', namespace: 'webhooks' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port }] }] });

    it('goes to an address of the Endpoints and verifies the certificate for <name>.<namespace>.svc', async () => {
      const c = new WebhookClient({ credentials: KubeconfigCredentialsResolver.none, services: new EndpointsServiceResolver({ service: async () => service, endpoints: async () => endpoints() }) });
      try {
        await c.call(hookWith({ service: { namespace: 'webhooks', name: 'hook', path: '/mutate', port: 443 }, caBundle }), '{}');
        expect(seen[0].url).to.equal('/mutate?timeout=2s');
      } finally {
        await c.close();
      }
    });

    it('fails when the certificate is not valid for the Service name', async () => {
      const wrong = { ...service, metadata: { name: 'other', namespace: 'webhooks' } };
      const c = new WebhookClient({ credentials: KubeconfigCredentialsResolver.none, services: new EndpointsServiceResolver({ service: async () => wrong, endpoints: async () => endpoints() }) });
      try {
        const err = await failure(c.call(hookWith({ service: { namespace: 'webhooks', name: 'other', port: 443 }, caBundle }), '{}'));
        expect(err.reason).to.match(/^failed to call webhook: Post "https:\/\/other.webhooks.svc:443\/\?timeout=2s": .*other.webhooks.svc/);
      } finally {
        await c.close();
      }
    });

    it('fails without endpoints, naming the Service', async () => {
      const c = new WebhookClient({ credentials: KubeconfigCredentialsResolver.none, services: new EndpointsServiceResolver({ service: async () => service, endpoints: async () => ({ ...endpoints(), subsets: [] }) }) });
      try {
        const err = await failure(c.call(hookWith({ service: { namespace: 'webhooks', name: 'hook', port: 443 }, caBundle }), '{}'));
        expect(err.reason).to.equal('failed to call webhook: Post "https://hook.webhooks.svc:443/?timeout=2s": no endpoints available for service "hook"');
        expect(err.statusCode).to.equal(503);
      } finally {
        await c.close();
      }
    });

    it('fails for a port the Service does not have, and for a missing Service', async () => {
      const resolver = new EndpointsServiceResolver({ service: async (_ns, name) => (name === 'hook' ? service : undefined), endpoints: async () => endpoints() });
      let caught: unknown;
      await resolver.resolveEndpoint('webhooks', 'hook', 9443).catch((err) => (caught = err));
      expect((caught as Error).message).to.equal('no service port 9443 found for service "hook"');
      await resolver.resolveEndpoint('webhooks', 'missing', 443).catch((err) => (caught = err));
      expect((caught as Error).message).to.equal('services "missing" not found');
    });
  });
});
