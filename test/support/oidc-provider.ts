/**
 * A local OpenID Connect provider for tests: HTTPS on 127.0.0.1 (a free port) with a serving
 * certificate from a test CA, serving `/.well-known/openid-configuration` and `/keys`, and
 * signing id-tokens with jose. Keys can be rotated; the provider can be made to fail; it counts
 * the requests it answers so tests can see discovery retries and key refetches.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import * as https from 'node:https';
import { SignJWT, exportJWK, type JWTPayload } from 'jose';
import { createTestCa, issueServingCertificate, type TestCertificate } from './test-pki';
import { closeWithConnections, listenOn } from './server-lifecycle';

interface SigningKey {
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

function newKey(): SigningKey {
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid: randomBytes(6).toString('hex'), privateKey: pair.privateKey, publicKey: pair.publicKey };
}

export class TestOidcProvider {
  readonly ca: TestCertificate;
  /** Requests answered, by path. */
  readonly hits = new Map<string, number>();
  /** While true, every request is answered 500. */
  failing = false;
  /** Overrides the `issuer` of the discovery document. */
  advertisedIssuer: string | undefined;
  private keys: SigningKey[] = [newKey()];
  private server: https.Server | undefined;
  private port = 0;

  constructor() {
    this.ca = createTestCa({ commonName: 'oidc-test-ca' });
  }

  get issuerUrl(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  get currentKid(): string {
    return this.keys[0].kid;
  }

  hitCount(path: string): number {
    return this.hits.get(path) ?? 0;
  }

  async start(): Promise<void> {
    const serving = issueServingCertificate(this.ca);
    this.server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      if (this.failing) {
        res.writeHead(500).end('unavailable');
        return;
      }
      if (path === '/.well-known/openid-configuration') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
          issuer: this.advertisedIssuer ?? this.issuerUrl,
          jwks_uri: `${this.issuerUrl}/keys`,
          id_token_signing_alg_values_supported: ['RS256'],
        }));
        return;
      }
      if (path === '/keys') {
        void Promise.all(this.keys.map(async (key) => ({ ...(await exportJWK(key.publicKey)), kid: key.kid, use: 'sig', alg: 'RS256' }))).then((jwks) => {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: jwks }));
        });
        return;
      }
      res.writeHead(404).end();
    });
    this.port = await listenOn(this.server);
  }

  async stop(): Promise<void> {
    if (this.server !== undefined) await closeWithConnections(this.server);
  }

  /** A new current key; the old ones are dropped unless `keepOld`. */
  rotate(keepOld = false): void {
    this.keys = keepOld ? [newKey(), ...this.keys] : [newKey()];
  }

  /**
   * An id-token with `claims` over defaults (iss, aud, sub, iat, exp in an hour), signed by the
   * current key; `key: 'foreign'` signs with a key the provider does not publish.
   */
  async idToken(claims: JWTPayload & Record<string, unknown>, options: { key?: 'current' | 'foreign'; kid?: string; alg?: string } = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const key = options.key === 'foreign' ? newKey() : this.keys[0];
    return new SignJWT({ iss: this.issuerUrl, aud: 'carina', sub: 'alice-id', iat: now, exp: now + 3600, ...claims })
      .setProtectedHeader({ alg: options.alg ?? 'RS256', kid: options.kid ?? key.kid })
      .sign(createPrivateKey(key.privateKey.export({ type: 'pkcs8', format: 'pem' })));
  }

  /** The current public key, for tests that forge tokens with other algorithms. */
  get publicKey(): KeyObject {
    return createPublicKey(this.keys[0].publicKey);
  }
}
