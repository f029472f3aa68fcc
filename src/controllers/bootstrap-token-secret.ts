/**
 * Reading bootstrap token Secrets as the bootstrap signer and the token cleaner do (spec 02
 * §2.2, §5.5, §8; k8s.io/cluster-bootstrap token/api and secret helpers, kube-controller-manager
 * pkg/controller/bootstrap): Secrets of type `bootstrap.kubernetes.io/token` in kube-system,
 * named `bootstrap-token-<token id>`, the token being `<id>.<secret>` with a 6-character id and a
 * 16-character secret of `[a-z0-9]`. `expiration` is RFC 3339; one that does not parse counts as
 * expired, as cluster-bootstrap treats it.
 */
import { BOOTSTRAP_KEYS, BOOTSTRAP_TOKEN_SECRET_PREFIX, BOOTSTRAP_TOKEN_SECRET_TYPE } from '../authn';
import type { JsonObject } from '../apis/object';
import { resourceKeyPrefix } from '../apis/catalogue';

export const TOKEN_NAMESPACE = 'kube-system';
export const TOKEN_SECRETS_PREFIX = `${resourceKeyPrefix({ group: '', resource: 'secrets' })}${TOKEN_NAMESPACE}/`;
export const TOKEN_ID_PATTERN = /^[a-z0-9]{6}$/;
export const TOKEN_SECRET_PATTERN = /^[a-z0-9]{16}$/;
export const USAGE_BOOTSTRAP_SIGNING = 'usage-bootstrap-signing';

export { BOOTSTRAP_TOKEN_SECRET_TYPE };

function dataOf(secret: JsonObject, key: string): string {
  const data = secret.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return '';
  const value = (data as JsonObject)[key];
  return typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : '';
}

export function isBootstrapTokenSecret(secret: JsonObject): boolean {
  const metadata = (secret.metadata ?? {}) as JsonObject;
  return secret.type === BOOTSTRAP_TOKEN_SECRET_TYPE && metadata.namespace === TOKEN_NAMESPACE;
}

/** ParseName: the token id a Secret's name carries, when the name is `bootstrap-token-<6 of [a-z0-9]>`. */
export function tokenIdFromSecretName(name: string): string | undefined {
  if (!name.startsWith(BOOTSTRAP_TOKEN_SECRET_PREFIX)) return undefined;
  const id = name.slice(BOOTSTRAP_TOKEN_SECRET_PREFIX.length);
  return TOKEN_ID_PATTERN.test(id) ? id : undefined;
}

export type Expiration =
  /** No `expiration`: the token never expires. */
  | { kind: 'never' }
  | { kind: 'expired' }
  | { kind: 'at'; atMs: number };

/** GetExpiration. */
export function expirationOf(secret: JsonObject, nowMs: number): Expiration {
  const text = dataOf(secret, BOOTSTRAP_KEYS.expiration);
  if (text === '') return { kind: 'never' };
  // time.RFC3339 as Go parses it: seconds required, fraction and offset optional in form.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return { kind: 'expired' };
  const atMs = Date.parse(text);
  if (Number.isNaN(atMs) || nowMs > atMs) return { kind: 'expired' };
  return { kind: 'at', atMs };
}

/**
 * validateSecretForSigning: the token a Secret lends to cluster-info's signature, or why not.
 * Unlike v1.25, which checks only the id's form, the secret part must have its 16 characters of
 * [a-z0-9] too: a signature made with a token no client can present (kubeadm join checks the
 * token's form first) would only mislead.
 */
export function signingToken(secret: JsonObject, nowMs: number): { ok: true; id: string; token: string } | { ok: false; reason: string } {
  const metadata = (secret.metadata ?? {}) as JsonObject;
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  const nameId = tokenIdFromSecretName(name);
  if (nameId === undefined) return { ok: false, reason: `Invalid secret name: ${name}. Must be of form ${BOOTSTRAP_TOKEN_SECRET_PREFIX}<secret-id>.` };
  const id = dataOf(secret, BOOTSTRAP_KEYS.tokenId);
  if (id === '') return { ok: false, reason: `No ${BOOTSTRAP_KEYS.tokenId} key in ${TOKEN_NAMESPACE}/${name} Secret` };
  if (id !== nameId) return { ok: false, reason: `Token ID (${id}) doesn't match secret name: ${nameId}` };
  const tokenSecret = dataOf(secret, BOOTSTRAP_KEYS.tokenSecret);
  if (tokenSecret === '') return { ok: false, reason: `No ${BOOTSTRAP_KEYS.tokenSecret} key in ${TOKEN_NAMESPACE}/${name} Secret` };
  if (!TOKEN_SECRET_PATTERN.test(tokenSecret)) return { ok: false, reason: `${BOOTSTRAP_KEYS.tokenSecret} of ${TOKEN_NAMESPACE}/${name} is not 16 characters of [a-z0-9]` };
  if (expirationOf(secret, nowMs).kind === 'expired') return { ok: false, reason: `${TOKEN_NAMESPACE}/${name} has expired` };
  if (dataOf(secret, USAGE_BOOTSTRAP_SIGNING) !== 'true') return { ok: false, reason: `${TOKEN_NAMESPACE}/${name} is not marked ${USAGE_BOOTSTRAP_SIGNING}=true` };
  return { ok: true, id, token: `${id}.${tokenSecret}` };
}
