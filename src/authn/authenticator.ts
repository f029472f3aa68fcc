/**
 * The contract every authenticator keeps (spec 02 §5; apiserver
 * pkg/authentication/authenticator/interfaces.go). An authenticator answers one of three
 * outcomes, as a return value, never as an exception:
 *
 * - `authenticated`: the request (or token) is this user's;
 * - `not-mine`: it carries no credential of this authenticator's kind, so the next one is asked;
 * - `failed`: it carries such a credential and the credential is invalid (bad signature, expired,
 *   wrong audience, revoked, ...). The request is answered 401 at once: an invalid credential
 *   never falls back to anonymous.
 *
 * `reason` is for the server's log and the audit trail. It must never contain the credential
 * itself (no token, no key, no Secret value): callers may log it as is.
 *
 * Authenticators may be called concurrently for different requests and must not keep
 * per-request state. Thrown errors are bugs or unavailable dependencies (a webhook or an OIDC
 * provider that cannot be reached) and are answered 401 as well, after logging.
 */
import type { X509Certificate } from 'node:crypto';
import type { UserInfo } from './user-info';

export type AuthenticationResult =
  | {
    readonly outcome: 'authenticated';
    readonly user: UserInfo;
    readonly audiences?: readonly string[];
    /**
     * Optional, for the token cache (token-cache.ts): a cheap synchronous check that the
     * credential still holds (its account, Secret or Pod still exists with the same uid; it has
     * not expired). An entry that carries one is rechecked on every cache hit and may be kept
     * longer; false evicts it and the token is verified again from scratch.
     */
    readonly recheck?: () => boolean;
  }
  | { readonly outcome: 'not-mine' }
  | {
    readonly outcome: 'failed';
    readonly reason: string;
    /** Optional: which authenticators failed and why, when a union speaks for several. */
    readonly failures?: readonly AuthenticatorFailure[];
  };

/** One authenticator's failure, for the log and metrics (the reason never holds a credential). */
export interface AuthenticatorFailure {
  readonly authenticator: string;
  readonly reason: string;
}

export const NOT_MINE: AuthenticationResult = Object.freeze({ outcome: 'not-mine' as const });

export function authenticationFailed(reason: string): AuthenticationResult {
  return { outcome: 'failed', reason };
}

/** What an authenticator may look at: headers and the TLS client certificate chain. */
export interface AuthenticationRequest {
  /**
   * Header names in lower case, as node:http gives them. Repeated headers should arrive as
   * lists (`distinctHeaders(req.rawHeaders)` or `req.headersDistinct`): node's `headers` joins
   * them with ", ", which would merge two groups of the authenticating proxy into one.
   */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** The chain the client presented, leaf first; empty when it presented none. Not yet verified. */
  readonly peerCertificates: readonly X509Certificate[];
}

export interface RequestAuthenticator {
  /** For logs and metrics: `x509`, `bearer-token`, `requestheader`, ... */
  readonly name: string;
  authenticate(request: AuthenticationRequest): Promise<AuthenticationResult>;
}

/**
 * A bearer-token authenticator. `audiences` are the audiences the server accepts
 * (--api-audiences) or, for a TokenReview, the ones the review asks about; an authenticator of
 * audience-bound tokens reports in `audiences` the ones it matched.
 */
export interface TokenAuthenticator {
  readonly name: string;
  authenticateToken(token: string, audiences: readonly string[]): Promise<AuthenticationResult>;
}
