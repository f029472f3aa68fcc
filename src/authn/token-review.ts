/**
 * TokenReview (spec 02 §2.3a; kubernetes pkg/registry/authentication/tokenreview/storage.go,
 * v1.25): `create` of an authentication.k8s.io/v1 (or v1beta1, same shape) TokenReview asks
 * whether a token authenticates, and as whom.
 *
 * As v1.25's REST handler:
 * - 400 `namespace is not allowed on this type: <ns>` for a namespaced path;
 * - 400 `token is required for TokenReview in authentication` for an empty `spec.token`;
 * - the token is checked as `Authorization: Bearer <token>` would be (so `a b` checks `a`), by the
 *   token authenticators only (client certificates and proxy headers play no part), against
 *   `spec.audiences` or, when none are given, the API audiences;
 * - `status.authenticated`, `status.user` (with `system:authenticated`), `status.audiences`, and
 *   `status.error` with the failure's text (v1.25 shows it to the reviewer; it never carries the
 *   token);
 * - a success whose audiences do not meet the requested ones is a 500 `error validating
 *   audiences` (an authenticator bug, not an answer); so is the anonymous answer v1.25 gives for
 *   a token the bearer parser reads as empty (` x`) when audiences are in force.
 *
 * Admission (createValidation) is the caller's, between the checks above and the review.
 */
import { ApiError, errors } from '../util';
import type { AuthenticationResult, TokenAuthenticator } from './authenticator';
import { authenticateBearerToken, bearerTokenFromHeaders } from './bearer-token';
import { ANONYMOUS, withAuthenticatedGroup } from './user-info';
import { type JsonObject, objectOrEmpty } from '../apis/object';

export const TOKEN_REVIEW_VERSIONS = ['authentication.k8s.io/v1', 'authentication.k8s.io/v1beta1'] as const;

export interface TokenReviewInput {
  /** The decoded TokenReview. */
  readonly body: unknown;
  /** The namespace of the request path; '' for the cluster-scoped path. */
  readonly namespace?: string;
  /** The version served, which the answer carries; the body's, else v1. */
  readonly apiVersion?: (typeof TOKEN_REVIEW_VERSIONS)[number];
  /** The (cached) token union; undefined when no token authenticator is configured. */
  readonly tokens: TokenAuthenticator | undefined;
  /** --api-audiences. */
  readonly apiAudiences: readonly string[];
  /** --anonymous-auth. */
  readonly anonymous?: boolean;
}

/** The reviewed TokenReview (201), or the ApiError v1.25 answers. Never throws an ApiError. */
export async function reviewToken(input: TokenReviewInput): Promise<JsonObject | ApiError> {
  const body = objectOrEmpty(input.body);
  const spec = objectOrEmpty(body.spec);
  const apiVersion = input.apiVersion ?? (TOKEN_REVIEW_VERSIONS.includes(body.apiVersion as never) ? (body.apiVersion as string) : TOKEN_REVIEW_VERSIONS[0]);
  const namespace = input.namespace ?? '';
  if (namespace !== '') return errors.badRequest(`namespace is not allowed on this type: ${namespace}`);
  const token = typeof spec.token === 'string' ? spec.token : '';
  if (token === '') return errors.badRequest('token is required for TokenReview in authentication');

  const metadata = { ...objectOrEmpty(body.metadata) };
  if (!('creationTimestamp' in metadata)) metadata.creationTimestamp = null;
  const review = (status: JsonObject): JsonObject => ({ kind: 'TokenReview', apiVersion, metadata, spec, status });
  if (input.tokens === undefined) return review({ user: {} });

  const requested = Array.isArray(spec.audiences) ? spec.audiences.filter((item): item is string => typeof item === 'string') : [];
  const audiences = requested.length > 0 ? requested : [...input.apiAudiences];

  const extraction = bearerTokenFromHeaders({ authorization: `Bearer ${token}` });
  let result: AuthenticationResult;
  if (extraction.kind === 'token') result = await authenticateBearerToken(input.tokens, extraction.token, audiences);
  else if (extraction.kind === 'invalid') result = { outcome: 'failed', reason: extraction.reason };
  else if (input.anonymous ?? true) result = { outcome: 'authenticated', user: ANONYMOUS };
  else result = { outcome: 'not-mine' };

  if (result.outcome !== 'authenticated') {
    return review({ user: {}, ...(result.outcome === 'failed' ? { error: result.reason } : {}) });
  }
  const resultAudiences = result.audiences ?? [];
  if (audiences.length > 0 && !audiences.some((audience) => resultAudiences.includes(audience))) {
    return new ApiError(500, 'InternalError', 'Internal error occurred: error validating audiences', { causes: [{ message: 'error validating audiences' }] });
  }
  const user = withAuthenticatedGroup(result.user);
  const userInfo: JsonObject = {};
  if (user.name !== '') userInfo.username = user.name;
  if (user.uid !== '') userInfo.uid = user.uid;
  if (user.groups.length > 0) userInfo.groups = [...user.groups];
  if (Object.keys(user.extra).length > 0) userInfo.extra = Object.fromEntries(Object.entries(user.extra).map(([key, values]) => [key, [...values]]));
  return review({ authenticated: true, user: userInfo, ...(resultAudiences.length > 0 ? { audiences: [...resultAudiences] } : {}) });
}
