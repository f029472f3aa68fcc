import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCredentialsResolver } from '../../../../../src/admission/webhook/webhook-credentials';
import { WebhookConfigurationError } from '../../../../../src/admission/webhook/errors';

describe('admission/webhook: credentials by host (spec 02 §4.4 point 10)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'webhook-creds-'));
    writeFileSync(join(dir, 'token'), 'from-file\n');
    writeFileSync(join(dir, 'kubeconfig'), [
      'apiVersion: v1',
      'kind: Config',
      'users:',
      '- name: exact.example.com:8443',
      '  user: { token: exact }',
      '- name: "*.example.com:8443"',
      '  user: { token: wildcard-with-port }',
      '- name: plain.example.com',
      '  user: { token: without-port }',
      '- name: "*.example.org"',
      '  user: { tokenFile: token }',
      '- name: hook.ns.svc:8443',
      '  user: { username: u, password: p }',
      '- name: "*.svc"',
      '  user: { token: any-service }',
      '- name: "*"',
      '  user: { token: default }',
      '- name: current',
      '  user: { token: current }',
      '- name: provider.example.com:443',
      '  user: { auth-provider: { name: gcp } }',
      'contexts:',
      '- name: c',
      '  context: { cluster: x, user: current }',
      'current-context: c',
    ].join('\n'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const token = (resolver: ReturnType<typeof loadCredentialsResolver>, host: string) => resolver.forHost(host).bearerToken;

  it('prefers the exact host:port', () => {
    expect(token(loadCredentialsResolver(join(dir, 'kubeconfig')), 'exact.example.com:8443')).to.equal('exact');
  });

  it('then the longest *.suffix with the port', () => {
    expect(token(loadCredentialsResolver(join(dir, 'kubeconfig')), 'other.example.com:8443')).to.equal('wildcard-with-port');
  });

  it('tries entries without the port only for port 443', () => {
    const resolver = loadCredentialsResolver(join(dir, 'kubeconfig'));
    expect(token(resolver, 'plain.example.com:443')).to.equal('without-port');
    expect(token(resolver, 'x.example.org:443')).to.equal('from-file');
    expect(token(resolver, 'plain.example.com:9443')).to.equal('default');
  });

  it('names a Service <name>.<namespace>.svc:<port>', () => {
    const resolver = loadCredentialsResolver(join(dir, 'kubeconfig'));
    expect(resolver.forService('hook', 'ns', 8443).basicAuth).to.deep.equal({ username: 'u', password: 'p' });
    expect(resolver.forService('other', 'ns', 443).bearerToken).to.equal('any-service');
  });

  it('falls back to * and, without one, to the current context\'s user', () => {
    expect(token(loadCredentialsResolver(join(dir, 'kubeconfig')), 'elsewhere:1')).to.equal('default');
    writeFileSync(join(dir, 'no-star'), 'users:\n- name: current\n  user: { token: current }\ncontexts:\n- name: c\n  context: { user: current }\ncurrent-context: c\n');
    expect(token(loadCredentialsResolver(join(dir, 'no-star')), 'elsewhere:1')).to.equal('current');
  });

  it('sends nothing when no entry applies', () => {
    writeFileSync(join(dir, 'empty'), 'users: []\n');
    expect(loadCredentialsResolver(join(dir, 'empty')).forHost('a:1')).to.deep.equal({ entry: '' });
  });

  it('marks an auth provider unusable rather than calling without credentials', () => {
    expect(loadCredentialsResolver(join(dir, 'kubeconfig')).forHost('provider.example.com:443').unusable).to.equal('auth provider not supported');
  });

  it('refuses a file that cannot be read, without quoting its content', () => {
    expect(() => loadCredentialsResolver(join(dir, 'missing'))).to.throw(WebhookConfigurationError, 'cannot read');
    writeFileSync(join(dir, 'half'), 'users:\n- name: a\n  user: { client-certificate-data: c2VjcmV0 }\n');
    expect(() => loadCredentialsResolver(join(dir, 'half'))).to.throw(WebhookConfigurationError, 'client certificate and key must be given together');
  });
});
