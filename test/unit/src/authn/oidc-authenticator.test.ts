import { expect } from 'chai';
import { AuthnError } from '../../../../src/authn/errors';
import type { AuthenticationResult } from '../../../../src/authn/authenticator';
import { OidcAuthenticator, effectiveUsernamePrefix, parseRequiredClaims, type OidcOptions } from '../../../../src/authn/oidc-authenticator';
import { TestOidcProvider } from '../../../support/oidc-provider';
import { until } from '../../../support/until';

function reasonOf(result: AuthenticationResult): string {
  return result.outcome === 'failed' ? result.reason : `(${result.outcome})`;
}

describe('authn: OpenID Connect', () => {
  const provider = new TestOidcProvider();
  const started: OidcAuthenticator[] = [];

  before(async () => {
    await provider.start();
  });

  after(async () => {
    await Promise.all(started.map((authenticator) => authenticator.stop()));
    await provider.stop();
  });

  beforeEach(() => {
    provider.failing = false;
    provider.advertisedIssuer = undefined;
  });

  async function ready(options: Partial<OidcOptions> = {}): Promise<OidcAuthenticator> {
    const authenticator = new OidcAuthenticator({ issuerUrl: provider.issuerUrl, clientId: 'carina', caPem: provider.ca.certPem, retryIntervalMs: 50, ...options });
    started.push(authenticator);
    authenticator.start();
    await until('the OIDC authenticator to initialize', async () => authenticator.isInitialized, 10_000);
    return authenticator;
  }

  it('authenticates an id-token: user <issuer>#sub by default, groups with their prefix, a recheck of exp', async () => {
    const oidc = await ready({ groupsClaim: 'groups', groupsPrefix: 'oidc:' });
    const result = await oidc.authenticateToken(await provider.idToken({ groups: ['dev', 'ops'] }));
    expect(result.outcome).to.equal('authenticated');
    if (result.outcome !== 'authenticated') return;
    expect(result.user).to.deep.equal({ name: `${provider.issuerUrl}#alice-id`, uid: '', groups: ['oidc:dev', 'oidc:ops'], extra: {} });
    expect(result.recheck?.()).to.equal(true);
  });

  it('applies the username prefix rules: email unprefixed, "-" for none, an explicit prefix', () => {
    expect(effectiveUsernamePrefix('https://i', 'sub', undefined)).to.equal('https://i#');
    expect(effectiveUsernamePrefix('https://i', 'sub', '')).to.equal('https://i#');
    expect(effectiveUsernamePrefix('https://i', 'email', undefined)).to.equal('');
    expect(effectiveUsernamePrefix('https://i', 'sub', '-')).to.equal('');
    expect(effectiveUsernamePrefix('https://i', 'email', 'oidc:')).to.equal('oidc:');
  });

  it('reads the email claim only when email_verified, if present, is true', async () => {
    const oidc = await ready({ usernameClaim: 'email', usernamePrefix: '-' });
    const ok = await oidc.authenticateToken(await provider.idToken({ email: 'alice@example.com', email_verified: true }));
    expect(ok.outcome === 'authenticated' && ok.user.name).to.equal('alice@example.com');
    expect((await oidc.authenticateToken(await provider.idToken({ email: 'alice@example.com' }))).outcome).to.equal('authenticated');
    expect(reasonOf(await oidc.authenticateToken(await provider.idToken({ email: 'alice@example.com', email_verified: false })))).to.equal('oidc: email not verified');
    expect(reasonOf(await oidc.authenticateToken(await provider.idToken({ email: 'alice@example.com', email_verified: 'true' })))).to.equal(
      "oidc: parse 'email_verified' claim: json: cannot unmarshal string into Go value of type bool",
    );
    expect(reasonOf(await oidc.authenticateToken(await provider.idToken({})))).to.equal('oidc: parse username claims "email": claim not present');
  });

  it('takes a groups claim that is a single string; refuses one of another type', async () => {
    const oidc = await ready({ groupsClaim: 'role', usernamePrefix: '-' });
    const single = await oidc.authenticateToken(await provider.idToken({ role: 'admin' }));
    expect(single.outcome === 'authenticated' && single.user.groups).to.deep.equal(['admin']);
    expect(reasonOf(await oidc.authenticateToken(await provider.idToken({ role: 7 })))).to.include('oidc: parse groups claim "role"');
  });

  it('requires every --oidc-required-claim with its value', async () => {
    const oidc = await ready({ requiredClaims: ['hd=example.com', 'tier=gold'] });
    expect((await oidc.authenticateToken(await provider.idToken({ hd: 'example.com', tier: 'gold' }))).outcome).to.equal('authenticated');
    expect(reasonOf(await oidc.authenticateToken(await provider.idToken({ hd: 'example.com' })))).to.equal('oidc: required claim tier not present in ID token');
    expect(reasonOf(await oidc.authenticateToken(await provider.idToken({ hd: 'example.com', tier: 'bronze' })))).to.equal(
      'oidc: required claim tier value does not match. Got = bronze, want = gold',
    );
    expect(() => parseRequiredClaims(['novalue'])).to.throw(AuthnError, 'malformed pair');
  });

  it('is not mine for tokens of another issuer or that are not JWTs', async () => {
    const oidc = await ready();
    expect(await oidc.authenticateToken(await provider.idToken({ iss: 'https://elsewhere' }))).to.deep.equal({ outcome: 'not-mine' });
    expect(await oidc.authenticateToken('abc')).to.deep.equal({ outcome: 'not-mine' });
  });

  it('fails a wrong audience, an expired token, a future nbf, a foreign signature and an algorithm not allowed', async () => {
    const oidc = await ready();
    const now = Math.floor(Date.now() / 1000);
    expect(reasonOf(await oidc.authenticateToken(await provider.idToken({ aud: ['other', 'x'] })))).to.equal('oidc: verify token: oidc: expected audience "carina" got ["other" "x"]');
    expect(reasonOf(await oidc.authenticateToken(await provider.idToken({ exp: now - 10 })))).to.match(/^oidc: verify token: oidc: token is expired \(Token Expiry: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC\)$/);
    expect(reasonOf(await oidc.authenticateToken(await provider.idToken({ nbf: now + 600 })))).to.include('before the nbf (not before) time');
    expect((await oidc.authenticateToken(await provider.idToken({ nbf: now + 60 }))).outcome).to.equal('authenticated');
    expect(reasonOf(await oidc.authenticateToken(await provider.idToken({}, { key: 'foreign', kid: provider.currentKid })))).to.equal(
      'oidc: verify token: failed to verify signature: failed to verify id token signature',
    );
    expect(reasonOf(await oidc.authenticateToken(await provider.idToken({}, { alg: 'PS256' })))).to.equal(
      'oidc: verify token: oidc: id token signed with unsupported algorithm, expected ["RS256"] got "PS256"',
    );
    const ps = await ready({ signingAlgs: ['RS256', 'PS256'] });
    expect((await ps.authenticateToken(await provider.idToken({}, { alg: 'PS256' }))).outcome).to.equal('authenticated');
  });

  it('refuses unsupported signing algorithms and http issuers at construction', () => {
    expect(() => new OidcAuthenticator({ issuerUrl: 'https://x', clientId: 'c', signingAlgs: ['HS256'] })).to.throw(AuthnError, 'oidc: unsupported signing alg: "HS256"');
    expect(() => new OidcAuthenticator({ issuerUrl: 'https://x', clientId: 'c', signingAlgs: ['none'] })).to.throw(AuthnError);
    expect(() => new OidcAuthenticator({ issuerUrl: 'http://x', clientId: 'c' })).to.throw(AuthnError, "require 'https'");
  });

  it('sees a key rotation by refetching the key set for an unknown kid, at most once per interval', async () => {
    const oidc = await ready({ keyRefreshIntervalMs: 60_000 });
    const before = provider.hitCount('/keys');
    expect((await oidc.authenticateToken(await provider.idToken({}))).outcome).to.equal('authenticated');
    expect(provider.hitCount('/keys')).to.equal(before);

    const oldToken = await provider.idToken({});
    provider.rotate();
    const newToken = await provider.idToken({});
    // The first fetch happened at initialization, within the interval: no refetch yet.
    expect(reasonOf(await oidc.authenticateToken(newToken))).to.include('failed to verify signature');
    expect(provider.hitCount('/keys')).to.equal(before);

    const fresh = await ready({ keyRefreshIntervalMs: 0 });
    provider.rotate();
    const rotated = await provider.idToken({});
    const base = provider.hitCount('/keys');
    expect((await fresh.authenticateToken(rotated)).outcome).to.equal('authenticated');
    expect(provider.hitCount('/keys')).to.equal(base + 1);
    expect(reasonOf(await fresh.authenticateToken(oldToken))).to.include('failed to verify signature');
  });

  it('does not refetch keys for a stream of forged kids within the interval', async () => {
    const oidc = await ready({ keyRefreshIntervalMs: 60_000 });
    const base = provider.hitCount('/keys');
    for (let i = 0; i < 5; i += 1) {
      expect((await oidc.authenticateToken(await provider.idToken({}, { key: 'foreign', kid: `forged-${i}` }))).outcome).to.equal('failed');
    }
    expect(provider.hitCount('/keys')).to.equal(base);
  });

  it('fails tokens until the provider can be reached, retrying discovery in the background', async () => {
    provider.failing = true;
    const oidc = new OidcAuthenticator({ issuerUrl: provider.issuerUrl, clientId: 'carina', caPem: provider.ca.certPem, retryIntervalMs: 50 });
    started.push(oidc);
    oidc.start();
    const token = await provider.idToken({});
    expect(reasonOf(await oidc.authenticateToken(token))).to.equal('oidc: authenticator not initialized');
    const attempts = provider.hitCount('/.well-known/openid-configuration');
    await until('a retried discovery', async () => provider.hitCount('/.well-known/openid-configuration') > attempts + 1);
    provider.failing = false;
    await until('the authenticator to initialize', async () => oidc.isInitialized);
    expect((await oidc.authenticateToken(token)).outcome).to.equal('authenticated');
  });

  it('refuses a provider whose discovery document names another issuer, and one it cannot verify over TLS', async () => {
    const logs: string[] = [];
    provider.advertisedIssuer = 'https://impostor.example';
    const mismatch = new OidcAuthenticator({ issuerUrl: provider.issuerUrl, clientId: 'carina', caPem: provider.ca.certPem, log: (m) => logs.push(m) });
    started.push(mismatch);
    expect(await mismatch.initialize()).to.equal(false);
    expect(logs.join('\n')).to.include(`oidc: issuer did not match the issuer returned by provider, expected "${provider.issuerUrl}" got "https://impostor.example"`);
    provider.advertisedIssuer = undefined;

    const systemRoots = new OidcAuthenticator({ issuerUrl: provider.issuerUrl, clientId: 'carina' });
    started.push(systemRoots);
    expect(await systemRoots.initialize()).to.equal(false);
    expect(reasonOf(await systemRoots.authenticateToken(await provider.idToken({})))).to.equal('oidc: authenticator not initialized');
  });
});
