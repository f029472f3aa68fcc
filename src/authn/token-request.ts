/**
 * The TokenRequest subresource: `create` on `serviceaccounts/token` with an
 * authentication.k8s.io/v1 TokenRequest (spec 02 §2.1; kubernetes
 * pkg/registry/core/serviceaccount/storage/token.go, pkg/apis/authentication/validation, v1.25).
 *
 * In v1.25's order:
 * 1. `metadata.name` / `metadata.namespace` of the body, when set, must be the account's
 *    (422 naming the account);
 * 2. the account must exist (404 `serviceaccounts "<name>" not found`);
 * 3. `spec.audiences` defaults to the API audiences, `spec.expirationSeconds` to 3600 (the v1
 *    default); the name, namespace and creationTimestamp are filled in, the status cleared;
 * 4. `expirationSeconds` must be at least 600 and at most 2^32 (422 `TokenRequest... "" is
 *    invalid`); admission runs after this, in the caller;
 * 5. `boundObjectRef`, when set, must name a Pod or a Secret of the core group (400 otherwise)
 *    that exists in the namespace (404), a Pod must run as this account (400), and a uid, when
 *    given, must be the object's (409 Conflict);
 * 6. an expiration above --service-account-max-token-expiration is shortened to it, with the
 *    warning v1.25 sends;
 * 7. with --service-account-extend-token-expiration (default true), a pod-bound token that asks
 *    for exactly 3607 s (what the kube-api-access projected volume asks) for API audiences only
 *    is signed valid for a year, with `warnafter` at the requested expiry. The status still
 *    reports the requested expiry: kubelets refresh on time, while tokens of older clients
 *    that kept using an old token keep working (and are reported as stale);
 * 8. status.token and status.expirationTimestamp (now + the granted seconds).
 */
import { ApiError, errors, type StatusCause } from '../util';
import type { ObjectLookup } from './object-lookup';
import { stringField } from './object-lookup';
import { EXPIRATION_EXTENSION_SECONDS, WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS, type ObjectRef, type ServiceAccountTokenSigner } from './service-account-token';
import { type JsonObject, objectOrEmpty, uidOf } from '../apis/object';

export const TOKEN_REQUEST_API_VERSION = 'authentication.k8s.io/v1';
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 60 * 60;
export const MIN_TOKEN_EXPIRATION_SECONDS = 10 * 60;
export const MAX_TOKEN_EXPIRATION_SECONDS = 2 ** 32;

const GROUP = 'authentication.k8s.io';
const KIND = 'TokenRequest';

export interface TokenRequestInput {
  /** From the URL. */
  readonly namespace: string;
  /** The service account's name, from the URL. */
  readonly name: string;
  /** The decoded request body. */
  readonly body: unknown;
  /** The account, from the watch cache; undefined when it does not exist. */
  readonly serviceAccount: JsonObject | undefined;
  readonly pods: ObjectLookup;
  readonly secrets: ObjectLookup;
  readonly signer: ServiceAccountTokenSigner;
  /** --api-audiences. */
  readonly apiAudiences: readonly string[];
  /** --service-account-max-token-expiration in seconds; 0 or undefined for no limit. */
  readonly maxExpirationSeconds?: number;
  /** --service-account-extend-token-expiration (default true). */
  readonly extendExpiration?: boolean;
  readonly now?: () => number;
}

export interface TokenRequestOutcome {
  /** The TokenRequest to answer with (201). */
  readonly tokenRequest: Record<string, unknown>;
  /** `Warning` header texts. */
  readonly warnings: readonly string[];
}

/** apimachinery NewInvalid with one field error; the name is omitted from details when empty. */
function invalid(name: string, field: string, value: string, detail: string): ApiError {
  const causeMessage = `Invalid value: ${value}: ${detail}`;
  const cause: StatusCause = { reason: 'FieldValueInvalid', message: causeMessage, field };
  return new ApiError(422, 'Invalid', `${KIND}.${GROUP} ${JSON.stringify(name)} is invalid: ${field}: ${causeMessage}`, {
    ...(name === '' ? {} : { name }),
    group: GROUP,
    kind: KIND,
    causes: [cause],
  });
}

/** GroupVersionKind.String() of schema.FromAPIVersionAndKind. */
function groupVersionKind(apiVersion: string, kind: string): { group: string; text: string } {
  const parts = apiVersion.split('/');
  let group = '';
  let version = '';
  if (apiVersion === '') {
    // empty group and version
  } else if (parts.length === 1) {
    version = parts[0];
  } else if (parts.length === 2) {
    [group, version] = parts;
  }
  return { group, text: `${group}/${version}, Kind=${kind}` };
}

function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Evaluates a TokenRequest; the outcome, or the ApiError v1.25 answers. Never throws an ApiError. */
export async function evaluateTokenRequest(input: TokenRequestInput): Promise<TokenRequestOutcome | ApiError> {
  const body = objectOrEmpty(input.body);
  const metadata = { ...objectOrEmpty(body.metadata) };
  const spec = { ...objectOrEmpty(body.spec) };
  const requestName = typeof metadata.name === 'string' ? metadata.name : '';
  const requestNamespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
  if (requestName !== '' && requestName !== input.name) {
    return invalid(input.name, 'metadata.name', JSON.stringify(requestName), 'must match the service account name if specified');
  }
  if (requestNamespace !== '' && requestNamespace !== input.namespace) {
    return invalid(input.name, 'metadata.namespace', JSON.stringify(requestNamespace), 'must match the service account namespace if specified');
  }
  const account = input.serviceAccount;
  if (account === undefined) return errors.notFound({ group: '', resource: 'serviceaccounts' }, input.name);

  const audiences = Array.isArray(spec.audiences) && spec.audiences.length > 0 ? spec.audiences.map(String) : [...input.apiAudiences];
  spec.audiences = audiences;
  if (spec.expirationSeconds === undefined || spec.expirationSeconds === null) spec.expirationSeconds = DEFAULT_TOKEN_EXPIRATION_SECONDS;
  const nowMs = (input.now ?? Date.now)();
  metadata.name = requestName === '' ? stringField(account, 'metadata', 'name') || input.name : requestName;
  metadata.namespace = requestNamespace === '' ? stringField(account, 'metadata', 'namespace') || input.namespace : requestNamespace;
  metadata.creationTimestamp = rfc3339(nowMs);

  const requested = spec.expirationSeconds;
  if (typeof requested !== 'number' || !Number.isSafeInteger(requested)) {
    return invalid('', 'spec.expirationSeconds', JSON.stringify(requested), 'must be an integer');
  }
  if (requested < MIN_TOKEN_EXPIRATION_SECONDS) return invalid('', 'spec.expirationSeconds', String(requested), 'may not specify a duration less than 10 minutes');
  if (requested > MAX_TOKEN_EXPIRATION_SECONDS) return invalid('', 'spec.expirationSeconds', String(requested), 'may not specify a duration larger than 2^32 seconds');

  let pod: ObjectRef | undefined;
  let secret: ObjectRef | undefined;
  const ref = spec.boundObjectRef;
  if (ref !== undefined && ref !== null) {
    const boundRef = objectOrEmpty(ref);
    const kind = typeof boundRef.kind === 'string' ? boundRef.kind : '';
    const refName = typeof boundRef.name === 'string' ? boundRef.name : '';
    const refUid = typeof boundRef.uid === 'string' ? boundRef.uid : '';
    const gvk = groupVersionKind(typeof boundRef.apiVersion === 'string' ? boundRef.apiVersion : '', kind);
    let found: JsonObject | undefined;
    if (gvk.group === '' && kind === 'Pod') {
      found = input.pods(input.namespace, refName);
      if (found === undefined) return errors.notFound({ group: '', resource: 'pods' }, refName);
      if (stringField(found, 'spec', 'serviceAccountName') !== input.name) {
        return errors.badRequest(`cannot bind token for serviceaccount ${JSON.stringify(input.name)} to pod running with different serviceaccount name.`);
      }
      pod = { name: refName, uid: uidOf(found) };
    } else if (gvk.group === '' && kind === 'Secret') {
      found = input.secrets(input.namespace, refName);
      if (found === undefined) return errors.notFound({ group: '', resource: 'secrets' }, refName);
      secret = { name: refName, uid: uidOf(found) };
    } else {
      return errors.badRequest(`cannot bind token to object of type ${gvk.text}`);
    }
    if (refUid !== '' && refUid !== uidOf(found)) {
      return errors.conflict({ group: gvk.group, resource: kind }, refName,
        `the UID in the bound object reference (${refUid}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
  }

  const warnings: string[] = [];
  let granted = requested;
  const max = input.maxExpirationSeconds ?? 0;
  if (max > 0 && granted > max) {
    warnings.push(`requested expiration of ${granted} seconds shortened to ${max} seconds`);
    granted = max;
  }
  spec.expirationSeconds = granted;

  let signedSeconds = granted;
  let warnAfterSeconds: number | undefined;
  const apiAudiences = new Set(input.apiAudiences);
  if ((input.extendExpiration ?? true) && pod !== undefined && granted === WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS
    && audiences.every((audience) => apiAudiences.has(audience))) {
    warnAfterSeconds = granted;
    signedSeconds = EXPIRATION_EXTENSION_SECONDS;
  }

  const { token } = await input.signer.issueBoundToken({
    namespace: input.namespace,
    serviceAccountName: input.name,
    serviceAccountUid: uidOf(account),
    audiences,
    expirationSeconds: signedSeconds,
    warnAfterSeconds,
    pod,
    secret,
    nowMs,
  });
  return {
    tokenRequest: {
      kind: KIND,
      apiVersion: TOKEN_REQUEST_API_VERSION,
      metadata,
      spec,
      status: { token, expirationTimestamp: rfc3339(nowMs + granted * 1000) },
    },
    warnings,
  };
}
