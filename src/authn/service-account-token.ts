/**
 * Issuing service-account tokens: the claims of v1.25's two kinds of token and the signer
 * (kubernetes pkg/serviceaccount/legacy.go `LegacyClaims`, claims.go `Claims`, jwt.go
 * `JWTTokenGenerator`).
 *
 * - Legacy tokens (the token controller's, stored in `kubernetes.io/service-account-token`
 *   Secrets): issuer `kubernetes/serviceaccount`, `sub` = the user name, and four private claims
 *   `kubernetes.io/serviceaccount/{namespace,secret.name,service-account.name,
 *   service-account.uid}`; no audience, no expiry.
 * - Bound tokens (TokenRequest): issuer = the first `--service-account-issuer`; `aud`; `exp`,
 *   `iat`, `nbf` (seconds); `sub`; and the private claim `kubernetes.io` with `namespace`,
 *   `serviceaccount` {name, uid}, optionally the bound `pod` or `secret` {name, uid}, and
 *   `warnafter` when the expiry was extended (token-request.ts).
 *
 * Payloads are written with keys in sorted order at every level, as go-jose writes its merged
 * claims, so our tokens read like kube-apiserver's byte for byte apart from the signature. The
 * header is `{"alg":...,"kid":...}` with kid from service-account-keys.ts. Signing is jose's
 * compact JWS over the exact payload bytes.
 */
import type { ServiceAccountSigningKey } from './service-account-keys';
import { jose } from '../util';
import { SERVICE_ACCOUNT_USER_PREFIX } from './user-info';

export const LEGACY_ISSUER = 'kubernetes/serviceaccount';

export const LEGACY_CLAIMS = {
  namespace: 'kubernetes.io/serviceaccount/namespace',
  secretName: 'kubernetes.io/serviceaccount/secret.name',
  serviceAccountName: 'kubernetes.io/serviceaccount/service-account.name',
  serviceAccountUid: 'kubernetes.io/serviceaccount/service-account.uid',
} as const;

/** The private claim of bound tokens. */
export const BOUND_CLAIM = 'kubernetes.io';

/** kube-api-access projected tokens ask for this expiry (1 h 7 s); see token-request.ts. */
export const WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7;
/** How long such a token is really valid when --service-account-extend-token-expiration is on (1 year). */
export const EXPIRATION_EXTENSION_SECONDS = 24 * 365 * 60 * 60;

export interface ObjectRef {
  readonly name: string;
  readonly uid: string;
}

export interface BoundPrivateClaims {
  readonly namespace: string;
  readonly serviceaccount: ObjectRef;
  readonly pod?: ObjectRef;
  readonly secret?: ObjectRef;
  /** Seconds since the epoch. */
  readonly warnafter?: number;
}

export interface BoundTokenClaims {
  readonly aud: readonly string[];
  readonly exp: number;
  readonly iat: number;
  readonly iss: string;
  readonly [BOUND_CLAIM]: BoundPrivateClaims;
  readonly nbf: number;
  readonly sub: string;
}

export function serviceAccountUserName(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`;
}

export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
}

/** apiserver serviceaccount.SplitUsername: [namespace, name] of `system:serviceaccount:NS:NAME`, or undefined. */
export function splitServiceAccountUserName(userName: string): [string, string] | undefined {
  if (!userName.startsWith(SERVICE_ACCOUNT_USER_PREFIX)) return undefined;
  const parts = userName.slice(SERVICE_ACCOUNT_USER_PREFIX.length).split(':');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') return undefined;
  return [parts[0], parts[1]];
}

/** JSON with object keys sorted at every level (go-jose's claim maps marshal so). */
export function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${sortedJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export interface LegacyTokenInput {
  readonly namespace: string;
  readonly serviceAccountName: string;
  readonly serviceAccountUid: string;
  readonly secretName: string;
}

export interface BoundTokenInput {
  readonly namespace: string;
  readonly serviceAccountName: string;
  readonly serviceAccountUid: string;
  readonly audiences: readonly string[];
  /** How long the token is valid (after any extension). */
  readonly expirationSeconds: number;
  /** Set (seconds after issue) when the expiry was extended: the point after which use is reported as stale. */
  readonly warnAfterSeconds?: number;
  readonly pod?: ObjectRef;
  readonly secret?: ObjectRef;
  readonly nowMs: number;
}

export function boundTokenClaims(issuer: string, input: BoundTokenInput): BoundTokenClaims {
  const now = Math.floor(input.nowMs / 1000);
  const privateClaims: BoundPrivateClaims = {
    namespace: input.namespace,
    serviceaccount: { name: input.serviceAccountName, uid: input.serviceAccountUid },
    ...(input.pod !== undefined ? { pod: input.pod } : input.secret !== undefined ? { secret: input.secret } : {}),
    ...(input.warnAfterSeconds !== undefined && input.warnAfterSeconds !== 0 ? { warnafter: now + input.warnAfterSeconds } : {}),
  };
  return {
    aud: [...input.audiences],
    exp: now + input.expirationSeconds,
    iat: now,
    iss: issuer,
    [BOUND_CLAIM]: privateClaims,
    nbf: now,
    sub: serviceAccountUserName(input.namespace, input.serviceAccountName),
  };
}

export function legacyTokenClaims(input: LegacyTokenInput): Record<string, string> {
  return {
    iss: LEGACY_ISSUER,
    [LEGACY_CLAIMS.namespace]: input.namespace,
    [LEGACY_CLAIMS.secretName]: input.secretName,
    [LEGACY_CLAIMS.serviceAccountName]: input.serviceAccountName,
    [LEGACY_CLAIMS.serviceAccountUid]: input.serviceAccountUid,
    sub: serviceAccountUserName(input.namespace, input.serviceAccountName),
  };
}

/**
 * Signs service-account tokens with one key. `issuer` is the first --service-account-issuer
 * (bound tokens); legacy tokens always carry `kubernetes/serviceaccount`. Stateless: safe to
 * call concurrently.
 */
export class ServiceAccountTokenSigner {
  constructor(private readonly signingKey: ServiceAccountSigningKey, readonly issuer: string) {}

  get keyId(): string {
    return this.signingKey.kid;
  }

  /** A compact JWS of `payload` exactly as given (keys sorted). */
  async sign(payload: object): Promise<string> {
    return new (jose().CompactSign)(Buffer.from(sortedJson(payload), 'utf8'))
      .setProtectedHeader({ alg: this.signingKey.algorithm, kid: this.signingKey.kid })
      .sign(this.signingKey.privateKey);
  }

  /** A legacy token for the token controller to store in the account's token Secret. */
  async issueLegacyToken(input: LegacyTokenInput): Promise<string> {
    return this.sign(legacyTokenClaims(input));
  }

  /** A bound token; returns its claims too (exp for the TokenRequest status). */
  async issueBoundToken(input: BoundTokenInput): Promise<{ token: string; claims: BoundTokenClaims }> {
    const claims = boundTokenClaims(this.issuer, input);
    return { token: await this.sign(claims), claims };
  }
}
