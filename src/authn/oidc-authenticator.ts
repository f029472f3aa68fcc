/**
 * OpenID Connect id-tokens (spec 02 §5.3; kubernetes
 * staging/src/k8s.io/apiserver/plugin/pkg/authenticator/token/oidc/oidc.go on coreos/go-oidc,
 * and kube-apiserver's username-prefix rule, v1.25).
 *
 * Provider: `<issuer>/.well-known/openid-configuration` and its `jwks_uri` are fetched with
 * undici over TLS verified by --oidc-ca-file (else the system roots). `start()` begins this in
 * the background and retries every `retryIntervalMs` (10 s, as v1.25) until it succeeds; a
 * token that arrives before then triggers one immediate attempt. The discovery document's
 * `issuer` must equal the configured URL exactly. A token whose `kid` is not in the key set, or
 * that no key verifies, refetches the key set (at most once per `keyRefreshIntervalMs`, so a
 * stream of forged kids cannot make us hammer the provider), which is how rotations are seen.
 *
 * A token (in v1.25's order):
 * 1. not mine unless a JWT whose unverified `iss` is the issuer URL;
 * 2. `oidc: authenticator not initialized` while the provider is not known yet;
 * 3. go-oidc's checks: `aud` contains the client id, `exp` is in the future, `nbf` (if present)
 *    within 5 minutes of skew, `alg` among --oidc-signing-algs (default RS256: HMAC and `none`
 *    can never be listed), a signature by a provider key; failures read `oidc: verify token: ...`;
 * 4. user name from --oidc-username-claim (default `sub`), a string; with the `email` claim, an
 *    `email_verified` claim that is present must be `true`; the prefix: --oidc-username-prefix,
 *    or `<issuer>#` when it is unset and the claim is not `email`, none when it is `-`;
 * 5. groups from --oidc-groups-claim, a string or a list of strings, each with
 *    --oidc-groups-prefix;
 * 6. every --oidc-required-claim `key=value` must be present with that string value.
 *
 * Successes carry a recheck of `exp`, so the token cache never serves an expired id-token.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { Agent } from 'undici';
import { jose, undici } from '../util';
import type { AuthenticationResult, TokenAuthenticator } from './authenticator';
import { NOT_MINE, authenticationFailed } from './authenticator';
import { AuthnError, errorText, fileMessage, quotedList } from './errors';

export const OIDC_ALLOWED_SIGNING_ALGS: readonly string[] = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'];
const NBF_LEEWAY_MS = 5 * 60 * 1000;

export interface OidcOptions {
  /** --oidc-issuer-url (https). */
  readonly issuerUrl: string;
  /** --oidc-client-id. */
  readonly clientId: string;
  /** --oidc-ca-file content (PEM); the system roots when absent. */
  readonly caPem?: string;
  /** --oidc-username-claim; default `sub`. */
  readonly usernameClaim?: string;
  /** --oidc-username-prefix; '-' disables prefixing. */
  readonly usernamePrefix?: string;
  /** --oidc-groups-claim. */
  readonly groupsClaim?: string;
  /** --oidc-groups-prefix. */
  readonly groupsPrefix?: string;
  /** --oidc-required-claim values, `key=value` each (or a map). */
  readonly requiredClaims?: readonly string[] | Readonly<Record<string, string>>;
  /** --oidc-signing-algs; default RS256. */
  readonly signingAlgs?: readonly string[];
  readonly now?: () => number;
  readonly retryIntervalMs?: number;
  readonly keyRefreshIntervalMs?: number;
  /** Per HTTP request to the provider. */
  readonly requestTimeoutMs?: number;
  /** Told about failed discovery attempts (no token in the text). */
  readonly log?: (message: string) => void;
}

/** Reads --oidc-ca-file for OidcOptions.caPem. */
export async function loadOidcCaFile(file: string): Promise<string> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (error) {
    throw new AuthnError('IO_ERROR', fileMessage(file, undefined, `cannot read: ${errorText(error)}`), { file, cause: error });
  }
}

/** `key=value` list → map; AuthnError INVALID_OPTIONS for a pair without '='. */
export function parseRequiredClaims(values: readonly string[] | Readonly<Record<string, string>> | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (values === undefined) return out;
  if (!Array.isArray(values)) {
    for (const [key, value] of Object.entries(values as Record<string, string>)) out.set(key, value);
    return out;
  }
  for (const pair of values as readonly string[]) {
    const at = pair.indexOf('=');
    if (at < 0) throw new AuthnError('INVALID_OPTIONS', `--oidc-required-claim: malformed pair, expect string=string: ${JSON.stringify(pair)}`);
    out.set(pair.slice(0, at), pair.slice(at + 1));
  }
  return out;
}

/** kube-apiserver's rule for the username prefix. */
export function effectiveUsernamePrefix(issuerUrl: string, usernameClaim: string, usernamePrefix: string | undefined): string {
  if (usernamePrefix === '-') return '';
  if ((usernamePrefix ?? '') === '' && usernameClaim !== 'email') return `${issuerUrl}#`;
  return usernamePrefix ?? '';
}

/** Go's default formatting of a time.Time in UTC: `2006-01-02 15:04:05 +0000 UTC`. */
function goTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  const fraction = iso.slice(20, 23).replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction === '' ? '' : `.${fraction}`} +0000 UTC`;
}

function decodeSegment(segment: string): Record<string, unknown> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(segment)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Go's json error text for a claim of the wrong type. */
function typeError(value: unknown, goType: string): string {
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value === 'object' ? 'object' : typeof value;
  return `json: cannot unmarshal ${kind} into Go value of type ${goType}`;
}

interface ProviderKey {
  readonly kid: string;
  readonly key: KeyObject;
}

interface KeySet {
  readonly keys: readonly ProviderKey[];
  readonly fetchedAtMs: number;
}

export class OidcAuthenticator implements TokenAuthenticator {
  readonly name = 'oidc';
  private readonly usernameClaim: string;
  private readonly usernamePrefix: string;
  private readonly requiredClaims: Map<string, string>;
  private readonly signingAlgs: readonly string[];
  private readonly now: () => number;
  private readonly retryIntervalMs: number;
  private readonly keyRefreshIntervalMs: number;
  private readonly requestTimeoutMs: number;
  private readonly agent: Agent;
  private jwksUri: string | undefined;
  private keySet: KeySet | undefined;
  private lastKeyFetchMs = -Infinity;
  private initializing: Promise<boolean> | undefined;
  private keyFetch: Promise<void> | undefined;
  private lastInitAttemptMs = -Infinity;
  private stopped = true;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: OidcOptions) {
    let url: URL;
    try {
      url = new URL(options.issuerUrl);
    } catch {
      throw new AuthnError('INVALID_OPTIONS', `oidc-issuer-url (${JSON.stringify(options.issuerUrl)}) is not a valid URL`);
    }
    if (url.protocol !== 'https:') {
      throw new AuthnError('INVALID_OPTIONS', `'oidc-issuer' (${JSON.stringify(options.issuerUrl)}) has invalid scheme (${JSON.stringify(url.protocol.slice(0, -1))}), require 'https'`);
    }
    if (options.clientId === '') throw new AuthnError('INVALID_OPTIONS', 'oidc-issuer-url and oidc-client-id should be specified together');
    this.usernameClaim = options.usernameClaim ?? 'sub';
    if (this.usernameClaim === '') throw new AuthnError('INVALID_OPTIONS', 'no username claim provided');
    this.signingAlgs = options.signingAlgs === undefined || options.signingAlgs.length === 0 ? ['RS256'] : [...options.signingAlgs];
    for (const alg of this.signingAlgs) {
      if (!OIDC_ALLOWED_SIGNING_ALGS.includes(alg)) throw new AuthnError('INVALID_OPTIONS', `oidc: unsupported signing alg: ${JSON.stringify(alg)}`);
    }
    this.usernamePrefix = effectiveUsernamePrefix(options.issuerUrl, this.usernameClaim, options.usernamePrefix);
    this.requiredClaims = parseRequiredClaims(options.requiredClaims);
    this.now = options.now ?? Date.now;
    this.retryIntervalMs = options.retryIntervalMs ?? 10_000;
    this.keyRefreshIntervalMs = options.keyRefreshIntervalMs ?? 10_000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.agent = new (undici().Agent)({ connect: options.caPem === undefined ? {} : { ca: options.caPem } });
  }

  /** True once the provider's discovery document and keys have been read. */
  get isInitialized(): boolean {
    return this.keySet !== undefined;
  }

  /** Begins fetching the provider's configuration in the background, retrying until it works. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.initLoop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await this.agent.close().catch(() => undefined);
  }

  private async initLoop(): Promise<void> {
    if (this.stopped || this.isInitialized) return;
    const ok = await this.initialize();
    if (ok || this.stopped) return;
    this.retryTimer = setTimeout(() => void this.initLoop(), this.retryIntervalMs);
    this.retryTimer.unref();
  }

  /** One attempt at discovery plus keys (shared by concurrent callers); true on success. */
  initialize(): Promise<boolean> {
    if (this.isInitialized) return Promise.resolve(true);
    this.initializing ??= (async (): Promise<boolean> => {
      this.lastInitAttemptMs = this.now();
      try {
        const discoveryUrl = `${this.options.issuerUrl.replace(/\/$/, '')}/.well-known/openid-configuration`;
        const document = await this.fetchJson(discoveryUrl);
        if (document.issuer !== this.options.issuerUrl) {
          throw new Error(`oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(this.options.issuerUrl)} got ${JSON.stringify(document.issuer)}`);
        }
        if (typeof document.jwks_uri !== 'string' || document.jwks_uri === '') throw new Error('oidc: provider discovery document has no jwks_uri');
        this.jwksUri = document.jwks_uri;
        await this.fetchKeys();
        return true;
      } catch (error) {
        this.options.log?.(`oidc authenticator: initializing plugin: ${errorText(error)}`);
        return false;
      } finally {
        this.initializing = undefined;
      }
    })();
    return this.initializing;
  }

  private async fetchJson(url: string): Promise<Record<string, unknown>> {
    const response = await undici().request(url, {
      method: 'GET',
      dispatcher: this.agent,
      headers: { accept: 'application/json' },
      headersTimeout: this.requestTimeoutMs,
      bodyTimeout: this.requestTimeoutMs,
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode}: ${text.slice(0, 200)}`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new Error(`${url}: failed to decode provider response: ${errorText(error)}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${url}: expected a JSON object`);
    return value as Record<string, unknown>;
  }

  private async fetchKeys(): Promise<void> {
    const uri = this.jwksUri;
    if (uri === undefined) throw new Error('oidc: no jwks_uri known');
    this.lastKeyFetchMs = this.now();
    const document = await this.fetchJson(uri);
    if (!Array.isArray(document.keys)) throw new Error(`${uri}: not a JSON Web Key Set`);
    const keys: ProviderKey[] = [];
    for (const jwk of document.keys as unknown[]) {
      if (typeof jwk !== 'object' || jwk === null) continue;
      const record = jwk as Record<string, unknown>;
      try {
        keys.push({ kid: typeof record.kid === 'string' ? record.kid : '', key: createPublicKey({ key: record as never, format: 'jwk' }) });
      } catch {
        // A key node cannot read (a symmetric key, an unknown curve) cannot verify our tokens: skipped.
      }
    }
    this.keySet = { keys, fetchedAtMs: this.lastKeyFetchMs };
  }

  /** Refetches the key set unless that was done less than keyRefreshIntervalMs ago; shared by callers. */
  private async maybeRefreshKeys(): Promise<boolean> {
    if (this.keyFetch !== undefined) {
      await this.keyFetch;
      return true;
    }
    if (this.now() - this.lastKeyFetchMs < this.keyRefreshIntervalMs) return false;
    this.keyFetch = this.fetchKeys().finally(() => {
      this.keyFetch = undefined;
    });
    await this.keyFetch;
    return true;
  }

  private async verifiedBy(token: string, alg: string, keys: readonly ProviderKey[]): Promise<boolean> {
    for (const { key } of keys) {
      try {
        await jose().compactVerify(token, key, { algorithms: [alg] });
        return true;
      } catch {
        // Next key.
      }
    }
    return false;
  }

  private async verifySignature(token: string, alg: string, kid: string): Promise<string | undefined> {
    const candidates = (): readonly ProviderKey[] => {
      const all = this.keySet?.keys ?? [];
      return kid === '' ? all : all.filter((key) => key.kid === kid);
    };
    const first = candidates();
    if (first.length > 0 && (await this.verifiedBy(token, alg, first))) return undefined;
    try {
      if (!(await this.maybeRefreshKeys())) return 'failed to verify signature: failed to verify id token signature';
    } catch (error) {
      return `failed to verify signature: fetching keys ${errorText(error)}`;
    }
    const second = candidates();
    if (second.length > 0 && (await this.verifiedBy(token, alg, second))) return undefined;
    return 'failed to verify signature: failed to verify id token signature';
  }

  async authenticateToken(token: string): Promise<AuthenticationResult> {
    const parts = token.split('.');
    if (parts.length !== 3) return NOT_MINE;
    const payload = decodeSegment(parts[1]);
    if (payload === undefined || payload.iss !== this.options.issuerUrl) return NOT_MINE;
    const header = decodeSegment(parts[0]);
    if (header === undefined) return authenticationFailed('oidc: verify token: oidc: malformed jwt: malformed header');

    if (!this.isInitialized && this.now() - this.lastInitAttemptMs >= Math.min(this.retryIntervalMs, 1000)) await this.initialize();
    if (!this.isInitialized) return authenticationFailed('oidc: authenticator not initialized');

    const verifyError = await this.verify(token, header, payload);
    if (verifyError !== undefined) return authenticationFailed(`oidc: verify token: ${verifyError}`);
    return this.userFrom(payload);
  }

  /** go-oidc's IDTokenVerifier.Verify after the issuer check; undefined when the token verifies. */
  private async verify(token: string, header: Record<string, unknown>, payload: Record<string, unknown>): Promise<string | undefined> {
    const aud = payload.aud;
    const audiences = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((item): item is string => typeof item === 'string') : [];
    if (!audiences.includes(this.options.clientId)) return `oidc: expected audience ${JSON.stringify(this.options.clientId)} got ${quotedList(audiences)}`;
    const nowMs = this.now();
    const exp = typeof payload.exp === 'number' ? payload.exp * 1000 : undefined;
    if (exp === undefined || exp < nowMs) return `oidc: token is expired (Token Expiry: ${exp === undefined ? '0001-01-01 00:00:00 +0000 UTC' : goTime(exp)})`;
    if (typeof payload.nbf === 'number' && nowMs + NBF_LEEWAY_MS < payload.nbf * 1000) {
      return `oidc: current time ${goTime(nowMs)} before the nbf (not before) time: ${goTime(payload.nbf * 1000)}`;
    }
    const alg = typeof header.alg === 'string' ? header.alg : '';
    if (!this.signingAlgs.includes(alg)) return `oidc: id token signed with unsupported algorithm, expected ${quotedList(this.signingAlgs)} got ${JSON.stringify(alg)}`;
    return this.verifySignature(token, alg, typeof header.kid === 'string' ? header.kid : '');
  }

  private userFrom(claims: Record<string, unknown>): AuthenticationResult {
    const claim = this.usernameClaim;
    if (!(claim in claims)) return authenticationFailed(`oidc: parse username claims ${JSON.stringify(claim)}: claim not present`);
    const rawName = claims[claim];
    if (typeof rawName !== 'string') return authenticationFailed(`oidc: parse username claims ${JSON.stringify(claim)}: ${typeError(rawName, 'string')}`);
    if (claim === 'email' && 'email_verified' in claims) {
      const verified = claims.email_verified;
      if (typeof verified !== 'boolean') return authenticationFailed(`oidc: parse 'email_verified' claim: ${typeError(verified, 'bool')}`);
      if (!verified) return authenticationFailed('oidc: email not verified');
    }
    const name = this.usernamePrefix + rawName;
    let groups: string[] = [];
    const groupsClaim = this.options.groupsClaim ?? '';
    if (groupsClaim !== '' && groupsClaim in claims) {
      const value = claims[groupsClaim];
      if (typeof value === 'string') groups = [value];
      else if (value === null) groups = [];
      else if (Array.isArray(value) && value.every((item) => typeof item === 'string')) groups = [...(value as string[])];
      else return authenticationFailed(`oidc: parse groups claim ${JSON.stringify(groupsClaim)}: ${typeError(value, '[]string')}`);
    }
    const groupsPrefix = this.options.groupsPrefix ?? '';
    if (groupsPrefix !== '') groups = groups.map((group) => groupsPrefix + group);
    for (const [key, want] of this.requiredClaims) {
      if (!(key in claims)) return authenticationFailed(`oidc: required claim ${key} not present in ID token`);
      const got = claims[key];
      if (typeof got !== 'string') return authenticationFailed(`oidc: parse claim ${key}: ${typeError(got, 'string')}`);
      if (got !== want) return authenticationFailed(`oidc: required claim ${key} value does not match. Got = ${got}, want = ${want}`);
    }
    const expMs = (claims.exp as number) * 1000;
    return { outcome: 'authenticated', user: { name, uid: '', groups, extra: {} }, recheck: () => this.now() <= expMs };
  }
}
