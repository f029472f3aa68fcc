/**
 * Bootstrap tokens (spec 02 §2.2, §5.5, §7 rule 4; `--enable-bootstrap-token-auth`;
 * kubernetes plugin/pkg/auth/authenticator/token/bootstrap/bootstrap.go and
 * cluster-bootstrap's token and secret helpers).
 *
 * A token `<id>.<secret>` (`^[a-z0-9]{6}\.[a-z0-9]{16}$`) names the Secret
 * `kube-system/bootstrap-token-<id>`. It authenticates as user `system:bootstrap:<id>` with groups
 * `system:bootstrappers` plus `auth-extra-groups`, deduplicated and sorted, when the Secret:
 * exists and is not being deleted; has type `bootstrap.kubernetes.io/token` and data; holds
 * `token-secret` equal to the secret (compared in constant time) and `token-id` equal to the id;
 * has no `expiration`, or one that parses as RFC 3339 and is in the future (unparsable counts as
 * expired); has `usage-bootstrap-authentication: "true"`; and every extra group matches
 * `^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$`.
 *
 * v1.25 answers every one of these failures as "not mine" (it only logs them), so the next
 * token authenticator is asked and, if none claims the token, the bearer-token front answers 401
 * "invalid bearer token". We do the same, and keep the reason for the log in `notMineReason`
 * (never the secret). Only a lookup that cannot answer is `failed`.
 *
 * Revalidation for the token cache: the Secret is looked up again on every cache hit and must
 * still be the same object version, not deleted, and not expired.
 */
import { timingSafeEqual } from 'node:crypto';
import type { AuthenticationResult, TokenAuthenticator } from './authenticator';
import { NOT_MINE, authenticationFailed } from './authenticator';
import { errorText } from './errors';
import { deletionTimeOf, secretDataOf, type ObjectLookup } from './object-lookup';
import { BOOTSTRAPPERS_GROUP } from './user-info';
import { type JsonObject, resourceVersionOf, uidOf } from '../apis/object';

export const BOOTSTRAP_TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAP_GROUP_PATTERN = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;
const SYSTEM_NAMESPACE = 'kube-system';

export const BOOTSTRAP_KEYS = {
  tokenId: 'token-id',
  tokenSecret: 'token-secret',
  expiration: 'expiration',
  usageAuthentication: 'usage-bootstrap-authentication',
  extraGroups: 'auth-extra-groups',
} as const;

export interface BootstrapTokenOptions {
  /** Secrets of kube-system (and others; only kube-system is asked). */
  readonly secrets: ObjectLookup;
  readonly now?: () => number;
  /** Told why a well-formed token was not accepted; for the log (never carries the secret). */
  readonly onReject?: (reason: string) => void;
}

/** `expiration` of a bootstrap token Secret: undefined when none, NaN when unparsable. */
function expirationOf(secret: JsonObject): number | undefined {
  const text = secretDataOf(secret, BOOTSTRAP_KEYS.expiration);
  if (text === undefined || text === '') return undefined;
  // RFC 3339 as Go's time.Parse(time.RFC3339) accepts it.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return NaN;
  return Date.parse(text);
}

function isExpired(secret: JsonObject, nowMs: number): boolean {
  const expiration = expirationOf(secret);
  if (expiration === undefined) return false;
  return Number.isNaN(expiration) || expiration - nowMs <= 0;
}

function constantTimeEquals(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  // timingSafeEqual needs equal lengths; comparing against itself keeps the time independent of where they differ.
  if (left.length !== right.length) {
    timingSafeEqual(right, right);
    return false;
  }
  return timingSafeEqual(left, right);
}

export class BootstrapTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'bootstrap-token';
  private readonly now: () => number;

  constructor(private readonly options: BootstrapTokenOptions) {
    this.now = options.now ?? Date.now;
  }

  async authenticateToken(token: string): Promise<AuthenticationResult> {
    const match = BOOTSTRAP_TOKEN_PATTERN.exec(token);
    if (match === null) return NOT_MINE;
    const [, id, tokenSecret] = match;
    const secretName = BOOTSTRAP_TOKEN_SECRET_PREFIX + id;
    let secret: JsonObject | undefined;
    try {
      secret = this.options.secrets(SYSTEM_NAMESPACE, secretName);
    } catch (error) {
      return authenticationFailed(`bootstrap token: cannot look up Secret ${SYSTEM_NAMESPACE}/${secretName}: ${errorText(error)}`);
    }
    const rejected = (why: string): AuthenticationResult => {
      this.options.onReject?.(`bootstrap token Secret ${SYSTEM_NAMESPACE}/${secretName} ${why}`);
      return NOT_MINE;
    };
    if (secret === undefined) return rejected('does not exist');
    if (deletionTimeOf(secret) !== undefined) return rejected('is deleted and awaiting removal');
    if (secret.type !== BOOTSTRAP_TOKEN_SECRET_TYPE || typeof secret.data !== 'object' || secret.data === null) {
      return rejected(`has invalid type, expected ${BOOTSTRAP_TOKEN_SECRET_TYPE}`);
    }
    if (!constantTimeEquals(secretDataOf(secret, BOOTSTRAP_KEYS.tokenSecret) ?? '', tokenSecret)) {
      return rejected(`has invalid value for key ${BOOTSTRAP_KEYS.tokenSecret}`);
    }
    if (secretDataOf(secret, BOOTSTRAP_KEYS.tokenId) !== id) return rejected(`has invalid value for key ${BOOTSTRAP_KEYS.tokenId}`);
    if (isExpired(secret, this.now())) return rejected('has expired');
    if (secretDataOf(secret, BOOTSTRAP_KEYS.usageAuthentication) !== 'true') return rejected(`is not marked ${BOOTSTRAP_KEYS.usageAuthentication}=true`);
    const groups = new Set<string>([BOOTSTRAPPERS_GROUP]);
    const extra = secretDataOf(secret, BOOTSTRAP_KEYS.extraGroups) ?? '';
    if (extra !== '') {
      for (const group of extra.split(',')) {
        if (!BOOTSTRAP_GROUP_PATTERN.test(group)) {
          return rejected(`has invalid value for key ${BOOTSTRAP_KEYS.extraGroups}: bootstrap group ${JSON.stringify(group)} is invalid (must match ${BOOTSTRAP_GROUP_PATTERN.source})`);
        }
        groups.add(group);
      }
    }
    const uid = uidOf(secret);
    const resourceVersion = resourceVersionOf(secret);
    const recheck = (): boolean => {
      try {
        const current = this.options.secrets(SYSTEM_NAMESPACE, secretName);
        return current !== undefined && uidOf(current) === uid && resourceVersionOf(current) === resourceVersion
          && deletionTimeOf(current) === undefined && !isExpired(current, this.now());
      } catch {
        return false;
      }
    };
    return {
      outcome: 'authenticated',
      user: { name: BOOTSTRAP_USER_PREFIX + id, uid: '', groups: [...groups].sort(), extra: {} },
      recheck,
    };
  }
}
