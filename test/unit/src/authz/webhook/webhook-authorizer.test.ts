import { expect } from 'chai';
import { promises as fs } from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { createClusterCa, issueClientCertificate, issueServingCertificate, type CertificateAndKey } from '../../../../../src/certificates';
import { WebhookAuthorizer } from '../../../../../src/authz/webhook/webhook-authorizer';
import { readWebhookKubeconfig } from '../../../../../src/authz/webhook/webhook-config';
import { nonResourceAttributes, resourceAttributes } from '../memory-feed';

interface Seen { body: Record<string, unknown>; headers: Record<string, unknown>; clientCn: string }

describe('authz/webhook WebhookAuthorizer', function () {
  this.timeout(60_000);
  let ca: CertificateAndKey;
  let client: CertificateAndKey;
  let server: https.Server;
  let url: string;
  let dir: string;
  const seen: Seen[] = [];
  let answer: (body: Record<string, unknown>) => { code: number; text: string; delayMs?: number } = () => ({ code: 200, text: '{}' });

  before(async () => {
    ca = await createClusterCa();
    const serving = await issueServingCertificate(ca);
    client = await issueClientCertificate(ca, { user: 'kube-apiserver', groups: [] });
    server = https.createServer({ key: serving.keyPem, cert: serving.certPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      let data = '';
      req.on('data', (chunk) => (data += chunk));
      req.on('end', () => {
        const body = JSON.parse(data) as Record<string, unknown>;
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        seen.push({ body, headers: req.headers, clientCn: String(peer.subject?.CN ?? '') });
        const { code, text, delayMs } = answer(body);
        setTimeout(() => {
          if (res.destroyed) return;
          res.writeHead(code, { 'content-type': 'application/json' });
          res.end(text);
        }, delayMs ?? 0);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`;
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'authz-webhook-'));
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await fs.rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    seen.length = 0;
  });

  const review = (status: object) => ({ code: 200, text: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', status }) });
  const endpoint = () => ({ server: url, caPem: ca.certPem, clientCertPem: client.certPem, clientKeyPem: client.keyPem, insecureSkipTlsVerify: false });
  const jane = { name: 'jane', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a', 'b'] } };

  it('POSTs a v1 SubjectAccessReview as v1.25 sends it, over mutual TLS, and caches an allow', async () => {
    answer = () => review({ allowed: true, reason: 'ok by policy' });
    const authz = new WebhookAuthorizer({ endpoint: endpoint(), version: 'v1' });
    const attrs = resourceAttributes({ user: jane, verb: 'get', resource: 'pods', subresource: 'log', namespace: 'dev', name: 'web' });
    expect(await authz.authorize(attrs)).to.deep.equal({ decision: 'allow', reason: 'ok by policy' });
    expect(await authz.authorize(attrs)).to.deep.equal({ decision: 'allow', reason: 'ok by policy' });
    expect(seen).to.have.length(1);
    expect(seen[0].clientCn).to.equal('kube-apiserver');
    expect(seen[0].headers['content-type']).to.equal('application/json');
    expect(JSON.stringify(seen[0].body)).to.equal(JSON.stringify({
      kind: 'SubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: {
        resourceAttributes: { namespace: 'dev', verb: 'get', version: 'v1', resource: 'pods', subresource: 'log', name: 'web' },
        user: 'jane',
        groups: ['devs', 'system:authenticated'],
        extra: { scopes: ['a', 'b'] },
        uid: 'u-1',
      },
      status: { allowed: false },
    }));
    await authz.close();
  });

  it('spells groups "group" in v1beta1 and sends non-resource attributes', async () => {
    answer = () => review({ allowed: false, denied: true, reason: 'nope' });
    const authz = new WebhookAuthorizer({ endpoint: endpoint(), version: 'v1beta1' });
    expect(await authz.authorize(nonResourceAttributes(jane, 'get', '/metrics'))).to.deep.equal({ decision: 'deny', reason: 'nope' });
    const spec = seen[0].body.spec as Record<string, unknown>;
    expect(seen[0].body.apiVersion).to.equal('authorization.k8s.io/v1beta1');
    expect(spec).to.deep.equal({ nonResourceAttributes: { path: '/metrics', verb: 'get' }, user: 'jane', group: ['devs', 'system:authenticated'], extra: { scopes: ['a', 'b'] }, uid: 'u-1' });
    await authz.close();
  });

  it('keeps a no-opinion answer for the unauthorized TTL only', async () => {
    answer = () => review({ allowed: false, reason: 'no rule' });
    let now = 1_000_000;
    const authz = new WebhookAuthorizer({ endpoint: endpoint(), version: 'v1', unauthorizedTtlMs: 30_000, now: () => now });
    const attrs = resourceAttributes({ user: jane, verb: 'list', namespace: 'x' });
    expect(await authz.authorize(attrs)).to.deep.equal({ decision: 'no-opinion', reason: 'no rule' });
    now += 29_000;
    await authz.authorize(attrs);
    expect(seen).to.have.length(1);
    now += 2_000;
    await authz.authorize(attrs);
    expect(seen).to.have.length(2);
    await authz.close();
  });

  it('answers garbage and HTTP errors with no opinion, an error and a log line; retries 500s', async () => {
    const lines: string[] = [];
    const fast = { initialDelayMs: 1, factor: 1.5, jitter: 0.2, attempts: 5 };
    answer = () => ({ code: 200, text: 'this is not json' });
    const authz = new WebhookAuthorizer({ endpoint: endpoint(), version: 'v1', retryBackoff: fast, log: (l) => lines.push(l) });
    const garbage = await authz.authorize(resourceAttributes({ user: jane, verb: 'get', name: 'a', namespace: 'n' }));
    expect(garbage.decision).to.equal('no-opinion');
    expect(garbage.error).to.match(/answered something that is not JSON/);
    expect(seen).to.have.length(1);
    answer = () => ({ code: 500, text: '{}' });
    const failed = await authz.authorize(resourceAttributes({ user: jane, verb: 'get', name: 'b', namespace: 'n' }));
    expect(failed.error).to.match(/answered HTTP 500$/);
    expect(seen).to.have.length(1 + 5);
    expect(lines.filter((l) => l.includes('Failed to make webhook authorizer request'))).to.have.length(2);
    expect(lines.join('\n')).to.not.include(client.keyPem.slice(40, 80));
    await authz.close();
  });

  it('gives up on a webhook that does not answer in time', async () => {
    answer = () => ({ ...review({ allowed: true }), delayMs: 2_000 });
    const authz = new WebhookAuthorizer({ endpoint: endpoint(), version: 'v1', timeoutMs: 200 });
    const result = await authz.authorize(resourceAttributes({ user: jane, verb: 'get', name: 'slow', namespace: 'n' }));
    expect(result).to.deep.equal({ decision: 'no-opinion', reason: '', error: `Post ${JSON.stringify(url)}: context deadline exceeded` });
    await authz.close();
  });

  it('reads the kubeconfig with files relative to it and sends its bearer token', async () => {
    await fs.writeFile(path.join(dir, 'ca.crt'), ca.certPem);
    await fs.writeFile(path.join(dir, 'token'), 'sekret-token\n');
    const kubeconfig = path.join(dir, 'webhook.kubeconfig');
    await fs.writeFile(kubeconfig, [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: authz',
      '  cluster:',
      `    server: ${url}`,
      '    certificate-authority: ca.crt',
      'users:',
      '- name: apiserver',
      '  user:',
      `    client-certificate-data: ${Buffer.from(client.certPem).toString('base64')}`,
      `    client-key-data: ${Buffer.from(client.keyPem).toString('base64')}`,
      '    tokenFile: token',
      'contexts:',
      '- name: webhook',
      '  context: {cluster: authz, user: apiserver}',
      'current-context: webhook',
      '',
    ].join('\n'));
    const ep = readWebhookKubeconfig(kubeconfig);
    expect(ep).to.include({ server: url, bearerToken: 'sekret-token', insecureSkipTlsVerify: false });
    answer = () => review({ allowed: true });
    const authz = new WebhookAuthorizer({ endpoint: ep, version: 'v1' });
    expect((await authz.authorize(resourceAttributes({ user: jane, verb: 'get', name: 'x', namespace: 'n' }))).decision).to.equal('allow');
    expect(seen[0].headers.authorization).to.equal('Bearer sekret-token');
    await authz.close();
    expect(() => readWebhookKubeconfig(path.join(dir, 'missing'))).to.throw(/^invalid authorization webhook config file .*missing: cannot read it$/);
  });

  it('says its rules cannot be listed', async () => {
    const authz = new WebhookAuthorizer({ endpoint: endpoint() });
    expect(await authz.rulesFor(jane)).to.deep.equal({ resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'webhook authorizer does not support user rule resolution' });
    await authz.close();
  });
});
