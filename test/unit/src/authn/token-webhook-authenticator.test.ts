import { expect } from 'chai';
import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AuthenticationResult } from '../../../../src/authn/authenticator';
import { AuthnError } from '../../../../src/authn/errors';
import { TokenWebhookAuthenticator, tokenWebhookAuthenticator, type TokenWebhookOptions } from '../../../../src/authn/token-webhook-authenticator';
import { loadWebhookKubeconfig, parseWebhookKubeconfig, type WebhookClientConfig } from '../../../../src/authn/webhook-kubeconfig';
import { TestTokenWebhook } from '../../../support/token-webhook-server';

const TOKEN = 'opaque-webhook-token-123';
const FAST_RETRIES = { initialMs: 5, factor: 1.5, jitter: 0.2, steps: 5 };

function reasonOf(result: AuthenticationResult): string {
  return result.outcome === 'failed' ? result.reason : `(${result.outcome})`;
}

describe('authn: token webhook', () => {
  const webhook = new TestTokenWebhook();
  const clients: TokenWebhookAuthenticator[] = [];
  let dir: string;
  let client: WebhookClientConfig;
  let logs: string[];

  before(async () => {
    await webhook.start();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'authn-webhook-'));
    await fs.writeFile(path.join(dir, 'ca.crt'), webhook.ca.certPem);
    await fs.writeFile(path.join(dir, 'client.crt'), webhook.client.certPem);
    await fs.writeFile(path.join(dir, 'client.key'), webhook.client.keyPem);
    await fs.writeFile(path.join(dir, 'webhook.kubeconfig'), [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: authn',
      '  cluster:',
      `    server: ${webhook.url}`,
      '    certificate-authority: ca.crt',
      'users:',
      '- name: apiserver',
      '  user:',
      '    client-certificate: client.crt',
      '    client-key: client.key',
      'contexts:',
      '- name: webhook',
      '  context: {cluster: authn, user: apiserver}',
      'current-context: webhook',
      '',
    ].join('\n'));
    client = await loadWebhookKubeconfig(path.join(dir, 'webhook.kubeconfig'));
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await webhook.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    webhook.calls.length = 0;
    logs = [];
  });

  function authenticator(options: Partial<TokenWebhookOptions> = {}): TokenWebhookAuthenticator {
    const created = new TokenWebhookAuthenticator({ client, apiAudiences: ['https://api'], retryBackoff: FAST_RETRIES, log: (m) => logs.push(m), ...options });
    clients.push(created);
    return created;
  }

  const jane = { authenticated: true, user: { username: 'jane', uid: '42', groups: ['dev'], extra: { scopes: ['a', 'b'] } } };

  it('reads the kubeconfig: server, CA and client certificate files relative to it', () => {
    expect(client.server).to.equal(webhook.url);
    expect(client.caPem).to.equal(webhook.ca.certPem);
    expect(client.clientCertPem).to.equal(webhook.client.certPem);
    expect(client.insecureSkipTlsVerify).to.equal(false);
  });

  it('refuses kubeconfigs it cannot use, naming the file (and the line of a YAML error)', async () => {
    const attempt = (text: string): Promise<AuthnError> => parseWebhookKubeconfig(text, '/etc/webhook.kubeconfig').then(
      () => { throw new Error('expected an error'); },
      (error: unknown) => error as AuthnError,
    );
    expect((await attempt('clusters: []\n')).message).to.equal('/etc/webhook.kubeconfig: invalid configuration: no current-context is set');
    expect((await attempt('current-context: x\ncontexts: []\n')).message).to.include('context "x" not found');
    const yamlError = await attempt('current-context: x\nclusters:\n  - name: [unclosed\n');
    expect(yamlError.code).to.equal('INVALID_WEBHOOK_CONFIG');
    expect(yamlError.line).to.be.a('number');
    const secret = await attempt('current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n  cluster: {server: "https://x"}\nusers:\n- name: u\n  user: {token: 12345}\n');
    expect(secret.message).to.equal('/etc/webhook.kubeconfig: user.token is not a string');
    expect(secret.message).to.not.include('12345');
  });

  it('POSTs a v1beta1 TokenReview by default with the client certificate, and reads the user', async () => {
    webhook.handler = (call) => ({ body: TestTokenWebhook.review(call, jane) });
    const result = await authenticator().authenticateToken(TOKEN, []);
    expect(result).to.deep.equal({ outcome: 'authenticated', user: { name: 'jane', uid: '42', groups: ['dev'], extra: { scopes: ['a', 'b'] } } });
    expect(webhook.calls).to.have.length(1);
    expect(webhook.calls[0].path).to.equal('/authenticate');
    expect(webhook.calls[0].clientCommonName).to.equal('kube-apiserver');
    expect(webhook.calls[0].body).to.deep.equal({
      kind: 'TokenReview', apiVersion: 'authentication.k8s.io/v1beta1', metadata: { creationTimestamp: null }, spec: { token: TOKEN }, status: { user: {} },
    });
  });

  it('speaks v1 when configured, and refuses an answer in another version or kind without retrying', async () => {
    webhook.handler = (call) => ({ body: TestTokenWebhook.review(call, jane) });
    const v1 = authenticator({ version: 'v1' });
    expect((await v1.authenticateToken(TOKEN, [])).outcome).to.equal('authenticated');
    expect(webhook.calls[0].body.apiVersion).to.equal('authentication.k8s.io/v1');

    webhook.handler = () => ({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', status: jane.user } });
    expect(reasonOf(await authenticator().authenticateToken(TOKEN, []))).to.include('the webhook answered apiVersion "authentication.k8s.io/v1"');
    webhook.handler = () => ({ body: 'this is not json' });
    webhook.calls.length = 0;
    expect(reasonOf(await authenticator().authenticateToken(TOKEN, []))).to.equal('the webhook answer is not a JSON object');
    expect(webhook.calls).to.have.length(1);
  });

  it('fails with the webhook\'s error text; is not mine when it says no without one', async () => {
    webhook.handler = (call) => ({ body: TestTokenWebhook.review(call, { authenticated: false, error: 'token revoked' }) });
    expect(await authenticator().authenticateToken(TOKEN, [])).to.deep.equal({ outcome: 'failed', reason: 'token revoked' });
    webhook.handler = (call) => ({ body: TestTokenWebhook.review(call, { authenticated: false }) });
    expect(await authenticator().authenticateToken(TOKEN, [])).to.deep.equal({ outcome: 'not-mine' });
  });

  it('retries a 500 and succeeds; fails after 5 attempts; never retries a 403', async () => {
    let attempts = 0;
    webhook.handler = (call) => {
      attempts += 1;
      return attempts < 3 ? { status: 500, body: 'busy' } : { body: TestTokenWebhook.review(call, jane) };
    };
    expect((await authenticator().authenticateToken(TOKEN, [])).outcome).to.equal('authenticated');
    expect(webhook.calls).to.have.length(3);

    webhook.calls.length = 0;
    webhook.handler = () => ({ status: 500, body: { kind: 'Status', message: 'internal' } });
    expect(reasonOf(await authenticator().authenticateToken(TOKEN, []))).to.equal('the webhook answered HTTP 500: internal');
    expect(webhook.calls).to.have.length(5);

    webhook.calls.length = 0;
    webhook.handler = () => ({ status: 403, body: 'forbidden' });
    expect(reasonOf(await authenticator().authenticateToken(TOKEN, []))).to.equal('the webhook answered HTTP 403');
    expect(webhook.calls).to.have.length(1);
    expect(logs.join('\n')).to.include('Failed to make webhook authenticator request');
    expect(logs.join('\n')).to.not.include(TOKEN);
  });

  it('fails a webhook that is down or too slow', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = authenticator({ client: { ...client, server: `https://127.0.0.1:${port}/authenticate` } });
    expect((await down.authenticateToken(TOKEN, [])).outcome).to.equal('failed');

    webhook.handler = (call) => ({ body: TestTokenWebhook.review(call, jane), delayMs: 2_000 });
    const slow = authenticator({ requestTimeoutMs: 200 });
    const result = await slow.authenticateToken(TOKEN, []);
    expect(result.outcome).to.equal('failed');
    expect(reasonOf(result)).to.not.include(TOKEN);
  });

  it('sends requested audiences and keeps only those the answer (or the API audiences) meet', async () => {
    webhook.handler = (call) => ({ body: TestTokenWebhook.review(call, jane) });
    const implicit = await authenticator().authenticateToken(TOKEN, ['https://api', 'vault']);
    expect(webhook.calls[0].body.spec).to.deep.equal({ token: TOKEN, audiences: ['https://api', 'vault'] });
    expect(implicit.outcome === 'authenticated' && implicit.audiences).to.deep.equal(['https://api']);
    webhook.handler = (call) => ({ body: TestTokenWebhook.review(call, { ...jane, audiences: ['elsewhere'] }) });
    expect(await authenticator().authenticateToken(TOKEN, ['vault'])).to.deep.equal({ outcome: 'not-mine' });
  });

  it('caches decisions for the TTL, but not errors', async () => {
    let now = 0;
    const cached = tokenWebhookAuthenticator({ client, apiAudiences: [], retryBackoff: FAST_RETRIES, cacheTtlMs: 120_000, now: () => now });
    try {
      webhook.handler = (call) => ({ body: TestTokenWebhook.review(call, jane) });
      await cached.authenticator.authenticateToken(TOKEN, []);
      await cached.authenticator.authenticateToken(TOKEN, []);
      expect(webhook.calls).to.have.length(1);
      now = 120_001;
      await cached.authenticator.authenticateToken(TOKEN, []);
      expect(webhook.calls).to.have.length(2);

      webhook.handler = (call) => ({ body: TestTokenWebhook.review(call, { authenticated: false }) });
      await cached.authenticator.authenticateToken('other', []);
      await cached.authenticator.authenticateToken('other', []);
      expect(webhook.calls).to.have.length(3);
      webhook.handler = (call) => ({ body: TestTokenWebhook.review(call, { authenticated: false, error: 'down' }) });
      await cached.authenticator.authenticateToken('third', []);
      await cached.authenticator.authenticateToken('third', []);
      expect(webhook.calls).to.have.length(5);
    } finally {
      await cached.close();
    }
  });
});
