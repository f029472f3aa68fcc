import { expect } from 'chai';
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import type { AuthenticationResult, TokenAuthenticator } from '../../../../src/authn/authenticator';
import type { ServiceAccountLookups } from '../../../../src/authn/object-lookup';
import { boundServiceAccountAuthenticator, legacyServiceAccountAuthenticator } from '../../../../src/authn/service-account-authenticator';
import { parseSigningKeyPem, publicKeyOf, type ServiceAccountSigningKey } from '../../../../src/authn/service-account-keys';
import { ServiceAccountTokenSigner } from '../../../../src/authn/service-account-token';
import type { JsonObject } from '../../../../src/apis/object';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const API_AUDIENCES = [ISSUER];
const T0 = Date.parse('2026-03-01T12:00:00Z');

function rsaSigningKey(): ServiceAccountSigningKey {
  const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
  return parseSigningKeyPem(pem, 'sa.key');
}

function decodePart(token: string, index: number): string {
  return Buffer.from(token.split('.')[index], 'base64url').toString('utf8');
}

function reasonOf(result: AuthenticationResult): string {
  return result.outcome === 'failed' ? result.reason : `(${result.outcome})`;
}

describe('authn: service-account tokens', () => {
  const signingKey = rsaSigningKey();
  const otherKey = rsaSigningKey();
  const signer = new ServiceAccountTokenSigner(signingKey, ISSUER);
  const foreignSigner = new ServiceAccountTokenSigner(otherKey, ISSUER);
  let objects: Map<string, JsonObject>;
  let now: number;

  const lookups: ServiceAccountLookups = {
    serviceAccount: (ns, name) => objects.get(`serviceaccounts/${ns}/${name}`),
    secret: (ns, name) => objects.get(`secrets/${ns}/${name}`),
    pod: (ns, name) => objects.get(`pods/${ns}/${name}`),
  };

  function put(resource: string, namespace: string, name: string, uid: string, extra: Record<string, unknown> = {}): void {
    const { metadata, ...rest } = extra;
    objects.set(`${resource}/${namespace}/${name}`, { metadata: { name, namespace, uid, ...(metadata as object) }, ...rest });
  }

  function bound(keys = [publicKeyOf(signingKey)]): TokenAuthenticator {
    return boundServiceAccountAuthenticator({ issuers: ['https://old.example', ISSUER], keys, apiAudiences: API_AUDIENCES, lookups, now: () => now });
  }

  function legacy(lookup = true): TokenAuthenticator {
    return legacyServiceAccountAuthenticator({ keys: [publicKeyOf(signingKey)], apiAudiences: API_AUDIENCES, lookups, lookup, now: () => now });
  }

  async function podToken(overrides: { expirationSeconds?: number; audiences?: string[]; nowMs?: number } = {}): Promise<string> {
    const { token } = await signer.issueBoundToken({
      namespace: 'apps',
      serviceAccountName: 'builder',
      serviceAccountUid: 'sa-uid',
      audiences: overrides.audiences ?? API_AUDIENCES,
      expirationSeconds: overrides.expirationSeconds ?? 3600,
      pod: { name: 'web-0', uid: 'pod-uid' },
      nowMs: overrides.nowMs ?? T0,
    });
    return token;
  }

  beforeEach(() => {
    objects = new Map();
    now = T0 + 1000;
    put('serviceaccounts', 'apps', 'builder', 'sa-uid');
    put('pods', 'apps', 'web-0', 'pod-uid');
    put('secrets', 'apps', 'builder-token', 'secret-uid');
  });

  describe('issuing', () => {
    it('writes bound claims with sorted keys and a kid header, as kube-apiserver does', async () => {
      const token = await podToken();
      expect(JSON.parse(decodePart(token, 0))).to.deep.equal({ alg: 'RS256', kid: signingKey.kid });
      const seconds = Math.floor(T0 / 1000);
      expect(decodePart(token, 1)).to.equal(
        `{"aud":["${ISSUER}"],"exp":${seconds + 3600},"iat":${seconds},"iss":"${ISSUER}",`
        + '"kubernetes.io":{"namespace":"apps","pod":{"name":"web-0","uid":"pod-uid"},"serviceaccount":{"name":"builder","uid":"sa-uid"}},'
        + `"nbf":${seconds},"sub":"system:serviceaccount:apps:builder"}`,
      );
    });

    it('writes legacy claims: kubernetes/serviceaccount issuer, four private claims, no exp', async () => {
      const token = await signer.issueLegacyToken({ namespace: 'apps', serviceAccountName: 'builder', serviceAccountUid: 'sa-uid', secretName: 'builder-token' });
      expect(decodePart(token, 1)).to.equal(
        '{"iss":"kubernetes/serviceaccount","kubernetes.io/serviceaccount/namespace":"apps","kubernetes.io/serviceaccount/secret.name":"builder-token",'
        + '"kubernetes.io/serviceaccount/service-account.name":"builder","kubernetes.io/serviceaccount/service-account.uid":"sa-uid","sub":"system:serviceaccount:apps:builder"}',
      );
    });
  });

  describe('bound tokens', () => {
    it('authenticate as the account, with its uid, groups, the pod extras and the matched audiences', async () => {
      const result = await bound().authenticateToken(await podToken(), []);
      expect(result.outcome).to.equal('authenticated');
      if (result.outcome !== 'authenticated') return;
      expect(result.user).to.deep.equal({
        name: 'system:serviceaccount:apps:builder',
        uid: 'sa-uid',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:apps'],
        extra: { 'authentication.kubernetes.io/pod-name': ['web-0'], 'authentication.kubernetes.io/pod-uid': ['pod-uid'] },
      });
      expect(result.audiences).to.deep.equal(API_AUDIENCES);
    });

    it('are not mine for another issuer, a legacy token, JSON, bad base64 or bad JSON', async () => {
      const other = new ServiceAccountTokenSigner(signingKey, 'https://elsewhere');
      const legacyToken = await signer.issueLegacyToken({ namespace: 'apps', serviceAccountName: 'builder', serviceAccountUid: 'sa-uid', secretName: 'builder-token' });
      const good = await podToken();
      const [h, , s] = good.split('.');
      for (const token of [
        (await other.issueBoundToken({ namespace: 'apps', serviceAccountName: 'builder', serviceAccountUid: 'sa-uid', audiences: API_AUDIENCES, expirationSeconds: 600, nowMs: T0 })).token,
        legacyToken,
        '{"iss":"x"}',
        `${h}.!!!.${s}`,
        `${h}.${Buffer.from('not json').toString('base64url')}.${s}`,
        `${h}.${Buffer.from(`{"iss":"${ISSUER}"}`).toString('base64url')}=.${s}`,
        'a.b',
      ]) {
        expect(await bound().authenticateToken(token, [])).to.deep.equal({ outcome: 'not-mine' });
      }
    });

    it('fail a tampered signature or payload, and a token from an unknown key, without quoting the token', async () => {
      const token = await podToken();
      const [h, p, s] = token.split('.');
      const flipped = `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BA' : 'AA'}`;
      const forgedPayload = Buffer.from(decodePart(token, 1).replace('builder', 'admin')).toString('base64url');
      for (const bad of [flipped, `${h}.${forgedPayload}.${s}`]) {
        const reason = reasonOf(await bound().authenticateToken(bad, []));
        expect(reason).to.equal('square/go-jose: error in cryptographic primitive');
      }
      const { token: foreign } = await foreignSigner.issueBoundToken({ namespace: 'apps', serviceAccountName: 'builder', serviceAccountUid: 'sa-uid', audiences: API_AUDIENCES, expirationSeconds: 600, nowMs: T0 });
      expect(reasonOf(await bound().authenticateToken(foreign, []))).to.equal('square/go-jose: error in cryptographic primitive');
      expect(reasonOf(await bound().authenticateToken(foreign, []))).to.not.include(foreign);
    });

    it('refuse alg none and HMAC signed with the public key', async () => {
      const payload = decodePart(await podToken(), 1);
      const header = (alg: string): string => Buffer.from(JSON.stringify({ alg, kid: signingKey.kid })).toString('base64url');
      const body = Buffer.from(payload).toString('base64url');
      const none = `${header('none')}.${body}.`;
      expect((await bound().authenticateToken(none, [])).outcome).to.not.equal('authenticated');
      const secret = signingKey.publicKey.export({ type: 'spki', format: 'pem' });
      const mac = createHmac('sha256', secret).update(`${header('HS256')}.${body}`).digest('base64url');
      expect(reasonOf(await bound().authenticateToken(`${header('HS256')}.${body}.${mac}`, []))).to.equal('square/go-jose: unknown/unsupported algorithm');
    });

    it('accept a token whose kid is unknown when a configured key verifies it (v1.25 tries every key)', async () => {
      const token = await podToken();
      const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'rotated-away' })).toString('base64url');
      const resigned = await new SignJWT(JSON.parse(decodePart(token, 1)) as Record<string, unknown>)
        .setProtectedHeader({ alg: 'RS256', kid: 'rotated-away' }).sign(signingKey.privateKey);
      expect(resigned.split('.')[0]).to.equal(header);
      const result = await bound([publicKeyOf(otherKey), publicKeyOf(signingKey)]).authenticateToken(resigned, []);
      expect(result.outcome).to.equal('authenticated');
    });

    it('check exp and nbf with a one-minute leeway', async () => {
      const token = await podToken({ expirationSeconds: 600 });
      now = T0 + 600_000 + 59_000;
      expect((await bound().authenticateToken(token, [])).outcome).to.equal('authenticated');
      now = T0 + 600_000 + 61_000;
      expect(reasonOf(await bound().authenticateToken(token, []))).to.equal('service account token has expired');
      const early = await podToken({ nowMs: T0 + 120_000 });
      now = T0;
      expect(reasonOf(await bound().authenticateToken(early, []))).to.equal('service account token is not valid yet');
    });

    it('check audiences against the API audiences, or those a review asks about', async () => {
      const token = await podToken({ audiences: ['vault'] });
      expect(reasonOf(await bound().authenticateToken(token, []))).to.equal(`token audiences ["vault"] is invalid for the target audiences ["${ISSUER}"]`);
      const review = await bound().authenticateToken(token, ['other', 'vault']);
      expect(review.outcome === 'authenticated' && review.audiences).to.deep.equal(['vault']);
    });

    it('are revoked by deleting or replacing the pod, and by deleting or replacing the account', async () => {
      const token = await podToken();
      const first = await bound().authenticateToken(token, []);
      if (first.outcome !== 'authenticated' || first.recheck === undefined) throw new Error('expected a recheck');

      objects.delete('pods/apps/web-0');
      expect(first.recheck()).to.equal(false);
      expect(reasonOf(await bound().authenticateToken(token, []))).to.equal('service account token has been invalidated');
      put('pods', 'apps', 'web-0', 'new-pod-uid');
      expect(reasonOf(await bound().authenticateToken(token, []))).to.equal('pod UID (new-pod-uid) does not match service account pod ref claim (pod-uid)');
      put('pods', 'apps', 'web-0', 'pod-uid', { metadata: { deletionTimestamp: new Date(now + 30_000).toISOString() } });
      expect(first.recheck()).to.equal(true);
      put('pods', 'apps', 'web-0', 'pod-uid', { metadata: { deletionTimestamp: new Date(now - 61_000).toISOString() } });
      expect(first.recheck()).to.equal(false);
      put('pods', 'apps', 'web-0', 'pod-uid');

      objects.delete('serviceaccounts/apps/builder');
      expect(first.recheck()).to.equal(false);
      expect(reasonOf(await bound().authenticateToken(token, []))).to.equal('serviceaccounts "builder" not found');
      put('serviceaccounts', 'apps', 'builder', 'other-sa-uid');
      expect(reasonOf(await bound().authenticateToken(token, []))).to.equal('service account UID (other-sa-uid) does not match claim (sa-uid)');
    });

    it('bound to a Secret are revoked with the Secret', async () => {
      const { token } = await signer.issueBoundToken({
        namespace: 'apps', serviceAccountName: 'builder', serviceAccountUid: 'sa-uid', audiences: API_AUDIENCES, expirationSeconds: 600,
        secret: { name: 'builder-token', uid: 'secret-uid' }, nowMs: T0,
      });
      const result = await bound().authenticateToken(token, []);
      expect(result.outcome === 'authenticated' && result.user.extra).to.deep.equal({});
      objects.delete('secrets/apps/builder-token');
      expect(reasonOf(await bound().authenticateToken(token, []))).to.equal('service account token has been invalidated');
    });

    it('fail claims of the wrong type even with a good signature', async () => {
      const token = await signer.sign({ iss: ISSUER, aud: API_AUDIENCES, exp: 'tomorrow', 'kubernetes.io': { namespace: 'apps', serviceaccount: { name: 'builder', uid: 'sa-uid' } } });
      const result = await bound().authenticateToken(token, []);
      expect(result.outcome).to.equal('failed');
    });

    it('fail when the watch cache cannot answer', async () => {
      const broken = boundServiceAccountAuthenticator({
        issuers: [ISSUER], keys: [publicKeyOf(signingKey)], apiAudiences: API_AUDIENCES, now: () => now,
        lookups: { ...lookups, serviceAccount: () => { throw new Error('not ready'); } },
      });
      expect((await broken.authenticateToken(await podToken(), [])).outcome).to.equal('failed');
    });
  });

  describe('legacy tokens', () => {
    let token: string;

    beforeEach(async () => {
      token = await signer.issueLegacyToken({ namespace: 'apps', serviceAccountName: 'builder', serviceAccountUid: 'sa-uid', secretName: 'builder-token' });
      put('secrets', 'apps', 'builder-token', 'secret-uid', { type: 'kubernetes.io/service-account-token', data: { token: Buffer.from(token).toString('base64') } });
    });

    it('authenticate while the Secret holds the token and the account exists, with the API audiences', async () => {
      const result = await legacy().authenticateToken(token, []);
      expect(result.outcome).to.equal('authenticated');
      if (result.outcome !== 'authenticated') return;
      expect(result.user).to.deep.equal({ name: 'system:serviceaccount:apps:builder', uid: 'sa-uid', groups: ['system:serviceaccounts', 'system:serviceaccounts:apps'], extra: {} });
      expect(result.audiences).to.deep.equal(API_AUDIENCES);
      expect(await bound().authenticateToken(token, [])).to.deep.equal({ outcome: 'not-mine' });
    });

    it('are revoked by deleting the Secret, changing its token, or replacing the account', async () => {
      const first = await legacy().authenticateToken(token, []);
      if (first.outcome !== 'authenticated' || first.recheck === undefined) throw new Error('expected a recheck');
      put('secrets', 'apps', 'builder-token', 'secret-uid', { data: { token: Buffer.from('other').toString('base64') } });
      expect(first.recheck()).to.equal(false);
      expect(reasonOf(await legacy().authenticateToken(token, []))).to.equal("Token does not match server's copy");
      objects.delete('secrets/apps/builder-token');
      expect(reasonOf(await legacy().authenticateToken(token, []))).to.equal('Token has been invalidated');
      put('secrets', 'apps', 'builder-token', 'secret-uid', { data: { token: Buffer.from(token).toString('base64') } });
      put('serviceaccounts', 'apps', 'builder', 'new-uid');
      expect(reasonOf(await legacy().authenticateToken(token, []))).to.equal('ServiceAccount UID (new-uid) does not match claim (sa-uid)');
    });

    it('with --service-account-lookup=false, survive the Secret', async () => {
      objects.delete('secrets/apps/builder-token');
      expect((await legacy(false).authenticateToken(token, [])).outcome).to.equal('authenticated');
    });

    it('fail without their private claims, or with a sub that disagrees', async () => {
      const missing = await signer.sign({ iss: 'kubernetes/serviceaccount', sub: 'system:serviceaccount:apps:builder' });
      expect(reasonOf(await legacy().authenticateToken(missing, []))).to.equal('namespace claim is missing');
      const wrongSub = await signer.sign({
        iss: 'kubernetes/serviceaccount', sub: 'system:serviceaccount:apps:other',
        'kubernetes.io/serviceaccount/namespace': 'apps', 'kubernetes.io/serviceaccount/secret.name': 'builder-token',
        'kubernetes.io/serviceaccount/service-account.name': 'builder', 'kubernetes.io/serviceaccount/service-account.uid': 'sa-uid',
      });
      expect(reasonOf(await legacy().authenticateToken(wrongSub, []))).to.equal('sub claim is invalid');
    });

    it('are refused for audiences other than the API audiences', async () => {
      expect(reasonOf(await legacy().authenticateToken(token, ['vault']))).to.equal(`token audiences ["${ISSUER}"] is invalid for the target audiences ["vault"]`);
    });
  });
});
