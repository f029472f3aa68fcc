import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { boundServiceAccountAuthenticator } from '../../../../src/authn/service-account-authenticator';
import { parseSigningKeyPem, publicKeyOf } from '../../../../src/authn/service-account-keys';
import { ServiceAccountTokenSigner } from '../../../../src/authn/service-account-token';
import { evaluateTokenRequest, type TokenRequestInput, type TokenRequestOutcome } from '../../../../src/authn/token-request';
import { ApiError } from '../../../../src/util/api-error';
import type { JsonObject } from '../../../../src/apis/object';

const ISSUER = 'https://kubernetes.default.svc';
const NOW = Date.parse('2026-05-01T10:00:00.500Z');
const signingKey = parseSigningKeyPem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, 'sa.key');
const signer = new ServiceAccountTokenSigner(signingKey, ISSUER);

function claims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as Record<string, unknown>;
}

describe('authn: TokenRequest', () => {
  let objects: Map<string, JsonObject>;

  beforeEach(() => {
    objects = new Map([
      ['serviceaccounts/apps/builder', { metadata: { name: 'builder', namespace: 'apps', uid: 'sa-uid' } }],
      ['pods/apps/web-0', { metadata: { name: 'web-0', namespace: 'apps', uid: 'pod-uid' }, spec: { serviceAccountName: 'builder' } }],
      ['pods/apps/other-0', { metadata: { name: 'other-0', namespace: 'apps', uid: 'other-uid' }, spec: { serviceAccountName: 'default' } }],
      ['secrets/apps/builder-token', { metadata: { name: 'builder-token', namespace: 'apps', uid: 'secret-uid' } }],
    ]);
  });

  function input(body: unknown, overrides: Partial<TokenRequestInput> = {}): TokenRequestInput {
    return {
      namespace: 'apps',
      name: 'builder',
      body,
      serviceAccount: objects.get('serviceaccounts/apps/builder'),
      pods: (ns, name) => objects.get(`pods/${ns}/${name}`),
      secrets: (ns, name) => objects.get(`secrets/${ns}/${name}`),
      signer,
      apiAudiences: [ISSUER],
      now: () => NOW,
      ...overrides,
    };
  }

  async function ok(body: unknown, overrides: Partial<TokenRequestInput> = {}): Promise<TokenRequestOutcome> {
    const outcome = await evaluateTokenRequest(input(body, overrides));
    if (outcome instanceof ApiError) throw new Error(`unexpected ${outcome.code}: ${outcome.message}`);
    return outcome;
  }

  async function refused(body: unknown, overrides: Partial<TokenRequestInput> = {}): Promise<ApiError> {
    const outcome = await evaluateTokenRequest(input(body, overrides));
    if (!(outcome instanceof ApiError)) throw new Error('expected an ApiError');
    return outcome;
  }

  it('defaults audiences to the API audiences and expiry to an hour, and fills metadata and status', async () => {
    const { tokenRequest, warnings } = await ok({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
    expect(warnings).to.deep.equal([]);
    expect(tokenRequest).to.deep.include({ kind: 'TokenRequest', apiVersion: 'authentication.k8s.io/v1' });
    expect(tokenRequest.metadata).to.deep.equal({ name: 'builder', namespace: 'apps', creationTimestamp: '2026-05-01T10:00:00Z' });
    expect(tokenRequest.spec).to.deep.equal({ audiences: [ISSUER], expirationSeconds: 3600 });
    const status = tokenRequest.status as { token: string; expirationTimestamp: string };
    expect(status.expirationTimestamp).to.equal('2026-05-01T11:00:00Z');
    const c = claims(status.token);
    expect(c).to.deep.include({ aud: [ISSUER], iss: ISSUER, sub: 'system:serviceaccount:apps:builder', exp: Math.floor(NOW / 1000) + 3600 });
    expect(c['kubernetes.io']).to.deep.equal({ namespace: 'apps', serviceaccount: { name: 'builder', uid: 'sa-uid' } });
  });

  it('issues a token the bound authenticator accepts for the requested audience', async () => {
    const { tokenRequest } = await ok({ spec: { audiences: ['vault'], expirationSeconds: 600 } });
    const token = (tokenRequest.status as { token: string }).token;
    const authenticator = boundServiceAccountAuthenticator({
      issuers: [ISSUER], keys: [publicKeyOf(signingKey)], apiAudiences: [ISSUER], now: () => NOW,
      lookups: { serviceAccount: (ns, n) => objects.get(`serviceaccounts/${ns}/${n}`), pod: () => undefined, secret: () => undefined },
    });
    const result = await authenticator.authenticateToken(token, ['vault']);
    expect(result.outcome === 'authenticated' && result.user.name).to.equal('system:serviceaccount:apps:builder');
  });

  it('refuses a name or namespace in the body other than the URL\'s with v1.25\'s 422', async () => {
    const error = await refused({ metadata: { name: 'default' }, spec: {} });
    expect(error.code).to.equal(422);
    expect(error.message).to.equal('TokenRequest.authentication.k8s.io "builder" is invalid: metadata.name: Invalid value: "default": must match the service account name if specified');
    expect(error.details).to.deep.equal({
      name: 'builder', group: 'authentication.k8s.io', kind: 'TokenRequest',
      causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: "default": must match the service account name if specified', field: 'metadata.name' }],
    });
    expect((await refused({ metadata: { namespace: 'other' }, spec: {} })).message).to.include('metadata.namespace: Invalid value: "other": must match the service account namespace if specified');
  });

  it('answers 404 for a missing account', async () => {
    const error = await refused({ spec: {} }, { serviceAccount: undefined });
    expect(error.code).to.equal(404);
    expect(error.message).to.equal('serviceaccounts "builder" not found');
  });

  it('refuses expirations under 10 minutes or over 2^32 seconds', async () => {
    const short = await refused({ spec: { expirationSeconds: 599 } });
    expect(short.code).to.equal(422);
    expect(short.message).to.equal('TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes');
    expect(short.details?.name).to.equal(undefined);
    expect((await refused({ spec: { expirationSeconds: 0 } })).message).to.include('less than 10 minutes');
    expect((await refused({ spec: { expirationSeconds: 2 ** 32 + 1 } })).message).to.include('may not specify a duration larger than 2^32 seconds');
  });

  it('shortens to --service-account-max-token-expiration with a warning', async () => {
    const { tokenRequest, warnings } = await ok({ spec: { expirationSeconds: 86400 } }, { maxExpirationSeconds: 7200 });
    expect(warnings).to.deep.equal(['requested expiration of 86400 seconds shortened to 7200 seconds']);
    expect((tokenRequest.spec as { expirationSeconds: number }).expirationSeconds).to.equal(7200);
    expect(claims((tokenRequest.status as { token: string }).token).exp).to.equal(Math.floor(NOW / 1000) + 7200);
  });

  it('binds to a pod of this account, and to a Secret', async () => {
    const { tokenRequest } = await ok({ spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web-0', uid: 'pod-uid' } } });
    expect((claims((tokenRequest.status as { token: string }).token)['kubernetes.io'] as Record<string, unknown>).pod).to.deep.equal({ name: 'web-0', uid: 'pod-uid' });
    const { tokenRequest: secretBound } = await ok({ spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: 'builder-token' } } });
    expect((claims((secretBound.status as { token: string }).token)['kubernetes.io'] as Record<string, unknown>).secret).to.deep.equal({ name: 'builder-token', uid: 'secret-uid' });
  });

  it('refuses bindings v1.25 refuses, with its status and message', async () => {
    const missing = await refused({ spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'gone' } } });
    expect([missing.code, missing.message]).to.deep.equal([404, 'pods "gone" not found']);
    const otherAccount = await refused({ spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'other-0' } } });
    expect([otherAccount.code, otherAccount.message]).to.deep.equal([400, 'cannot bind token for serviceaccount "builder" to pod running with different serviceaccount name.']);
    const kind = await refused({ spec: { boundObjectRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } } });
    expect([kind.code, kind.message]).to.deep.equal([400, 'cannot bind token to object of type apps/v1, Kind=Deployment']);
    const uid = await refused({ spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web-0', uid: 'stale' } } });
    expect([uid.code, uid.reason, uid.message]).to.deep.equal([409, 'Conflict',
      'Operation cannot be fulfilled on Pod "web-0": the UID in the bound object reference (stale) does not match the UID in record. The object might have been deleted and then recreated']);
  });

  it('extends a pod-bound 3607 s token for API audiences to a year with warnafter, reporting the requested expiry', async () => {
    const { tokenRequest } = await ok({ spec: { expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web-0' } } });
    const seconds = Math.floor(NOW / 1000);
    const c = claims((tokenRequest.status as { token: string }).token);
    expect(c.exp).to.equal(seconds + 365 * 24 * 3600);
    expect((c['kubernetes.io'] as Record<string, unknown>).warnafter).to.equal(seconds + 3607);
    expect((tokenRequest.status as { expirationTimestamp: string }).expirationTimestamp).to.equal('2026-05-01T11:00:07Z');

    const off = await ok({ spec: { expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web-0' } } }, { extendExpiration: false });
    expect(claims((off.tokenRequest.status as { token: string }).token).exp).to.equal(seconds + 3607);
    const foreignAudience = await ok({ spec: { audiences: ['vault'], expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web-0' } } });
    expect(claims((foreignAudience.tokenRequest.status as { token: string }).token).exp).to.equal(seconds + 3607);
  });
});
