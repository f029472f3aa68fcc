/**
 * Verifying service-account tokens (spec 02 §2.1, §5.4; kubernetes pkg/serviceaccount/jwt.go
 * `jwtTokenAuthenticator`, claims.go `validator`, legacy.go `legacyValidator`, as of v1.25).
 *
 * kube-apiserver runs two of these in its token union, told apart by the unverified `iss` claim:
 * the legacy authenticator (`iss` = `kubernetes/serviceaccount`, enabled by
 * --service-account-key-file) and the bound one (`iss` among --service-account-issuer). For
 * either:
 *
 * 1. Not mine unless the token is a compact JWS (not JSON) whose payload decodes (strict
 *    base64url) to JSON with the right `iss`, and whose header parses.
 * 2. The signature must verify with one of the configured public keys (keys whose kid matches
 *    the header are tried first; v1.25 tries them all). `alg: none`, HMAC, and algorithms that
 *    do not fit a key are refused. Failure: go-jose's messages, aggregated as v1.25 does.
 * 3. Audiences: a token without `aud` (legacy) counts as having the API audiences; the token's
 *    audiences must meet the requested ones (the API audiences unless a TokenReview names
 *    others), else `token audiences [..] is invalid for the target audiences [..]`.
 * 4. Bound tokens: `exp` and `nbf` checked with go-jose's 1 minute leeway; the account must exist
 *    with the token's uid (and not be deleted more than a leeway ago); a bound Secret or Pod must
 *    exist with its uid likewise. Legacy tokens: the four private claims must be present and
 *    `sub` must agree; with --service-account-lookup (default true) the Secret must exist, not be
 *    deleting, and hold exactly this token, and the account must exist with the claimed uid.
 *    Messages are v1.25's.
 * 5. User `system:serviceaccount:<ns>:<name>`, uid = the account uid claim, groups
 *    `system:serviceaccounts` and `system:serviceaccounts:<ns>`; a pod-bound token adds extra
 *    `authentication.kubernetes.io/pod-name` and `pod-uid`.
 *
 * Every authenticated result carries `recheck`: step 4 again without the cryptography, so the
 * token cache can keep the entry and still see a deleted account, Secret or Pod, or an expiry,
 * at once.
 */
import type { KeyObject } from 'node:crypto';
import { jose } from '../util';
import type { AuthenticationResult, TokenAuthenticator } from './authenticator';
import { NOT_MINE, authenticationFailed } from './authenticator';
import { aggregateMessage, errorText, quotedList } from './errors';
import { deletionTimeOf, secretDataOf, type ObjectLookup, type ServiceAccountLookups } from './object-lookup';
import type { ServiceAccountPublicKey } from './service-account-keys';
import {
  BOUND_CLAIM,
  LEGACY_CLAIMS,
  LEGACY_ISSUER,
  serviceAccountGroups,
  serviceAccountUserName,
  splitServiceAccountUserName,
  type ObjectRef,
} from './service-account-token';
import type { UserInfo } from './user-info';
import { type JsonObject, uidOf } from '../apis/object';

export const POD_NAME_EXTRA = 'authentication.kubernetes.io/pod-name';
export const POD_UID_EXTRA = 'authentication.kubernetes.io/pod-uid';

/** go-jose's jwt.DefaultLeeway. */
export const CLAIM_LEEWAY_MS = 60_000;

const CRYPTO_FAILURE = 'square/go-jose: error in cryptographic primitive';
const UNSUPPORTED_ALGORITHM = 'square/go-jose: unknown/unsupported algorithm';

const RSA_ALGORITHMS = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']);
const EC_ALGORITHMS: Readonly<Record<string, string>> = { ES256: 'ES256', ES384: 'ES384', ES512: 'ES512' };

export interface ServiceAccountAuthenticatorOptions {
  /** Public keys of every --service-account-key-file (and the signing key's public half). */
  readonly keys: readonly ServiceAccountPublicKey[];
  /** --api-audiences: the audiences a token without a TokenReview's own must meet. */
  readonly apiAudiences: readonly string[];
  readonly lookups: ServiceAccountLookups;
  readonly now?: () => number;
}

export interface BoundServiceAccountOptions extends ServiceAccountAuthenticatorOptions {
  /** --service-account-issuer values: all accepted. */
  readonly issuers: readonly string[];
}

export interface LegacyServiceAccountOptions extends ServiceAccountAuthenticatorOptions {
  /** --service-account-lookup (default true). */
  readonly lookup?: boolean;
}

/** Go's base64.RawURLEncoding.DecodeString: no padding, URL alphabet only. */
function rawBase64Url(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  return Buffer.from(text, 'base64url');
}

function jsonObject(bytes: Buffer | undefined): Record<string, unknown> | undefined {
  if (bytes === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

interface ParsedToken {
  readonly header: Record<string, unknown>;
  readonly payload: Record<string, unknown>;
}

/** The unverified header and payload, or undefined when the token is not a JWS we would look at. */
function parseToken(token: string): ParsedToken | undefined {
  if (token.trimStart().startsWith('{')) return undefined;
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const header = jsonObject(rawBase64Url(parts[0]));
  const payload = jsonObject(rawBase64Url(parts[1]));
  if (header === undefined || payload === undefined || rawBase64Url(parts[2]) === undefined) return undefined;
  return { header, payload };
}

function keyAccepts(key: ServiceAccountPublicKey, alg: string): boolean {
  if (key.key.asymmetricKeyType === 'rsa') return RSA_ALGORITHMS.has(alg);
  return EC_ALGORITHMS[alg] === key.algorithm;
}

async function verifyWith(token: string, key: KeyObject, alg: string): Promise<boolean> {
  try {
    await jose().compactVerify(token, key, { algorithms: [alg] });
    return true;
  } catch {
    return false;
  }
}

class ClaimError extends Error {}

function stringClaim(claims: Record<string, unknown>, name: string): string {
  const value = claims[name];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new ClaimError(`json: cannot unmarshal ${typeof value} into Go value of type string (claim ${JSON.stringify(name)})`);
  return value;
}

function numericClaim(claims: Record<string, unknown>, name: string): number | undefined {
  const value = claims[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new ClaimError(`json: cannot unmarshal ${typeof value} into Go value of type jwt.NumericDate (claim ${JSON.stringify(name)})`);
  return Math.trunc(value);
}

/** `aud` as go-jose reads it: a string or a list of strings. */
function audienceClaim(claims: Record<string, unknown>): string[] {
  const value = claims.aud;
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value as string[];
  throw new ClaimError('square/go-jose/jwt: expected string or array value to unmarshal to Audience');
}

function refClaim(value: unknown, name: string): ObjectRef | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new ClaimError(`json: cannot unmarshal ${typeof value} into Go struct field of type serviceaccount.ref (claim ${JSON.stringify(name)})`);
  const ref = value as Record<string, unknown>;
  return { name: stringClaim(ref, 'name'), uid: stringClaim(ref, 'uid') };
}

function intersect(a: readonly string[], b: readonly string[]): string[] {
  return a.filter((value, index) => b.includes(value) && a.indexOf(value) === index);
}

interface Validated {
  readonly user: UserInfo;
}

type Validation = Validated | { readonly error: string };

/**
 * The shared steps 1-3 and 5 (module comment); `validate` is step 4, run once now and again by
 * every recheck.
 */
class ServiceAccountTokenAuthenticator implements TokenAuthenticator {
  protected readonly now: () => number;
  private readonly issuers: ReadonlySet<string>;

  constructor(
    readonly name: string,
    issuers: readonly string[],
    private readonly options: ServiceAccountAuthenticatorOptions,
    private readonly validate: (claims: Record<string, unknown>, token: string, nowMs: number) => Validation,
  ) {
    this.issuers = new Set(issuers);
    this.now = options.now ?? Date.now;
  }

  async authenticateToken(token: string, audiences: readonly string[]): Promise<AuthenticationResult> {
    const parsed = parseToken(token);
    if (parsed === undefined || typeof parsed.payload.iss !== 'string' || !this.issuers.has(parsed.payload.iss)) return NOT_MINE;

    const signatureError = await this.verifySignature(token, parsed.header);
    if (signatureError !== undefined) return authenticationFailed(signatureError);

    const claims = parsed.payload;
    let tokenAudiences: string[];
    try {
      tokenAudiences = audienceClaim(claims);
    } catch (error) {
      return authenticationFailed(errorText(error));
    }
    const implicit = this.options.apiAudiences;
    if (tokenAudiences.length === 0) tokenAudiences = [...implicit];
    const requested = audiences.length > 0 ? audiences : implicit;
    const matched = intersect(tokenAudiences, requested);
    if (matched.length === 0 && implicit.length > 0) {
      return authenticationFailed(`token audiences ${quotedList(tokenAudiences)} is invalid for the target audiences ${quotedList(requested)}`);
    }

    let first: Validation;
    try {
      first = this.validate(claims, token, this.now());
    } catch (error) {
      return authenticationFailed(error instanceof ClaimError ? error.message : `service account token could not be validated: ${errorText(error)}`);
    }
    if ('error' in first) return authenticationFailed(first.error);
    const recheck = (): boolean => {
      try {
        return !('error' in this.validate(claims, token, this.now()));
      } catch {
        return false;
      }
    };
    return { outcome: 'authenticated', user: first.user, audiences: matched, recheck };
  }

  /** undefined when some key verifies the signature; otherwise v1.25's aggregated reason. */
  private async verifySignature(token: string, header: Record<string, unknown>): Promise<string | undefined> {
    const keys = this.options.keys;
    if (keys.length === 0) return 'invalid signature, no keys found';
    const alg = typeof header.alg === 'string' ? header.alg : '';
    const kid = typeof header.kid === 'string' ? header.kid : '';
    const ordered = kid === '' ? keys : [...keys.filter((key) => key.kid === kid), ...keys.filter((key) => key.kid !== kid)];
    const errors: string[] = [];
    for (const key of ordered) {
      if (!keyAccepts(key, alg)) {
        errors.push(UNSUPPORTED_ALGORITHM);
        continue;
      }
      if (await verifyWith(token, key.key, alg)) return undefined;
      errors.push(CRYPTO_FAILURE);
    }
    return aggregateMessage(errors);
  }
}

function lookupObject(lookup: ObjectLookup, namespace: string, name: string, kind: string): JsonObject | undefined {
  try {
    return lookup(namespace, name);
  } catch (error) {
    throw new Error(`cannot look up ${kind} ${namespace}/${name}: ${errorText(error)}`);
  }
}

function deletedLongAgo(object: JsonObject, nowMs: number): boolean {
  const deletion = deletionTimeOf(object);
  return deletion !== undefined && deletion < nowMs - CLAIM_LEEWAY_MS;
}

function boundValidator(lookups: ServiceAccountLookups): (claims: Record<string, unknown>, token: string, nowMs: number) => Validation {
  return (claims, _token, nowMs) => {
    const nbf = numericClaim(claims, 'nbf');
    const exp = numericClaim(claims, 'exp');
    if (nbf !== undefined && nowMs + CLAIM_LEEWAY_MS < nbf * 1000) return { error: 'service account token is not valid yet' };
    if (exp !== undefined && nowMs - CLAIM_LEEWAY_MS > exp * 1000) return { error: 'service account token has expired' };
    const raw = claims[BOUND_CLAIM];
    const privateClaims = (typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
    const namespace = stringClaim(privateClaims, 'namespace');
    const account = refClaim(privateClaims.serviceaccount, 'serviceaccount') ?? { name: '', uid: '' };
    const podRef = refClaim(privateClaims.pod, 'pod');
    const secretRef = refClaim(privateClaims.secret, 'secret');

    const serviceAccount = lookupObject(lookups.serviceAccount, namespace, account.name, 'ServiceAccount');
    if (serviceAccount === undefined) return { error: `serviceaccounts ${JSON.stringify(account.name)} not found` };
    if (deletedLongAgo(serviceAccount, nowMs)) return { error: `service account ${namespace}/${account.name} has been deleted` };
    if (uidOf(serviceAccount) !== account.uid) return { error: `service account UID (${uidOf(serviceAccount)}) does not match claim (${account.uid})` };

    if (secretRef !== undefined) {
      const secret = lookupObject(lookups.secret, namespace, secretRef.name, 'Secret');
      if (secret === undefined || deletedLongAgo(secret, nowMs)) return { error: 'service account token has been invalidated' };
      if (uidOf(secret) !== secretRef.uid) return { error: `secret UID (${uidOf(secret)}) does not match service account secret ref claim (${secretRef.uid})` };
    }
    let extra: Record<string, string[]> = {};
    if (podRef !== undefined) {
      const pod = lookupObject(lookups.pod, namespace, podRef.name, 'Pod');
      if (pod === undefined || deletedLongAgo(pod, nowMs)) return { error: 'service account token has been invalidated' };
      if (uidOf(pod) !== podRef.uid) return { error: `pod UID (${uidOf(pod)}) does not match service account pod ref claim (${podRef.uid})` };
      if (podRef.name !== '' && podRef.uid !== '') extra = { [POD_NAME_EXTRA]: [podRef.name], [POD_UID_EXTRA]: [podRef.uid] };
    }
    return { user: { name: serviceAccountUserName(namespace, account.name), uid: account.uid, groups: serviceAccountGroups(namespace), extra } };
  };
}

function legacyValidator(lookups: ServiceAccountLookups, lookup: boolean): (claims: Record<string, unknown>, token: string, nowMs: number) => Validation {
  return (claims, token) => {
    const subject = stringClaim(claims, 'sub');
    if (subject === '') return { error: 'sub claim is missing' };
    const namespace = stringClaim(claims, LEGACY_CLAIMS.namespace);
    if (namespace === '') return { error: 'namespace claim is missing' };
    const secretName = stringClaim(claims, LEGACY_CLAIMS.secretName);
    if (secretName === '') return { error: 'secretName claim is missing' };
    const accountName = stringClaim(claims, LEGACY_CLAIMS.serviceAccountName);
    if (accountName === '') return { error: 'serviceAccountName claim is missing' };
    const accountUid = stringClaim(claims, LEGACY_CLAIMS.serviceAccountUid);
    if (accountUid === '') return { error: 'serviceAccountUID claim is missing' };
    const split = splitServiceAccountUserName(subject);
    if (split === undefined || split[0] !== namespace || split[1] !== accountName) return { error: 'sub claim is invalid' };

    if (lookup) {
      const secret = lookupObject(lookups.secret, namespace, secretName, 'Secret');
      if (secret === undefined || deletionTimeOf(secret) !== undefined) return { error: 'Token has been invalidated' };
      if (secretDataOf(secret, 'token') !== token) return { error: "Token does not match server's copy" };
      const serviceAccount = lookupObject(lookups.serviceAccount, namespace, accountName, 'ServiceAccount');
      if (serviceAccount === undefined) return { error: `serviceaccounts ${JSON.stringify(accountName)} not found` };
      if (deletionTimeOf(serviceAccount) !== undefined) return { error: `ServiceAccount ${namespace}/${accountName} has been deleted` };
      if (uidOf(serviceAccount) !== accountUid) return { error: `ServiceAccount UID (${uidOf(serviceAccount)}) does not match claim (${accountUid})` };
    }
    return { user: { name: serviceAccountUserName(namespace, accountName), uid: accountUid, groups: serviceAccountGroups(namespace), extra: {} } };
  };
}

export type { ServiceAccountTokenAuthenticator };

/** The bound-token authenticator (--service-account-issuer). */
export function boundServiceAccountAuthenticator(options: BoundServiceAccountOptions): TokenAuthenticator {
  return new ServiceAccountTokenAuthenticator('serviceaccount', options.issuers, options, boundValidator(options.lookups));
}

/** The legacy-token authenticator (--service-account-key-file, --service-account-lookup). */
export function legacyServiceAccountAuthenticator(options: LegacyServiceAccountOptions): TokenAuthenticator {
  return new ServiceAccountTokenAuthenticator('serviceaccount-legacy', [LEGACY_ISSUER], options, legacyValidator(options.lookups, options.lookup ?? true));
}
