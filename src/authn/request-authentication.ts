/**
 * The authentication of a request: the request authenticators in kube-apiserver's order, the
 * outcome rules, `system:authenticated`, anonymous (spec 02 §1.3, §5.7; kubernetes
 * pkg/kubeapiserver/authenticator/config.go, apiserver pkg/authentication/request/union,
 * group.AuthenticatedGroupAdder, request/anonymous, endpoints/filters/authentication.go).
 *
 * Order (see README.md): authenticating proxy, client certificate, `Authorization: Bearer`,
 * WebSocket bearer subprotocol. The two token fronts share one cached token union.
 *
 * Outcomes:
 * - the first authenticator that authenticates wins, even after an earlier one failed (a
 *   client certificate of another CA with a valid bearer token is the bearer token's user); the
 *   user gets `system:authenticated` (once); if the API audiences and the result's audiences
 *   are both non-empty they must meet (`unable to match the audience`);
 * - otherwise, if any failed: unauthorized (401), with every failure for the log;
 * - otherwise, no credential at all: anonymous (`system:anonymous`, `system:unauthenticated`)
 *   when --anonymous-auth (default true), else unauthorized.
 *
 * A thrown error from an authenticator is its failure (logged by the caller from `failures`);
 * an authenticated result never follows from an error.
 */
import type { AuthenticationRequest, AuthenticationResult, AuthenticatorFailure, RequestAuthenticator } from './authenticator';
import { errorText, quotedList } from './errors';
import { ANONYMOUS, withAuthenticatedGroup, type UserInfo } from './user-info';

export type RequestAuthenticationOutcome =
  | {
    readonly outcome: 'authenticated';
    /** With `system:authenticated`. */
    readonly user: UserInfo;
    /** Which authenticator: `x509`, `requestheader`, `bearer-token`, `websocket-bearer-token`. */
    readonly authenticator: string;
    readonly audiences: readonly string[];
  }
  | { readonly outcome: 'anonymous'; readonly user: UserInfo }
  | {
    readonly outcome: 'unauthorized';
    /** Empty when there was no credential and anonymous requests are off. */
    readonly failures: readonly AuthenticatorFailure[];
  };

export interface RequestAuthenticationOptions {
  /** In kube-apiserver's order (authentication-config.ts builds it). */
  readonly authenticators: readonly RequestAuthenticator[];
  /** --anonymous-auth; default true. */
  readonly anonymous?: boolean;
  /** --api-audiences. */
  readonly apiAudiences?: readonly string[];
}

function audiencesAcceptable(apiAudiences: readonly string[], audiences: readonly string[] | undefined): boolean {
  if (apiAudiences.length === 0 || audiences === undefined || audiences.length === 0) return true;
  return audiences.some((audience) => apiAudiences.includes(audience));
}

export class RequestAuthentication {
  private readonly anonymous: boolean;
  private readonly apiAudiences: readonly string[];

  constructor(private readonly options: RequestAuthenticationOptions) {
    this.anonymous = options.anonymous ?? true;
    this.apiAudiences = options.apiAudiences ?? [];
  }

  get authenticatorNames(): readonly string[] {
    return this.options.authenticators.map((authenticator) => authenticator.name);
  }

  async authenticate(request: AuthenticationRequest): Promise<RequestAuthenticationOutcome> {
    const failures: AuthenticatorFailure[] = [];
    for (const authenticator of this.options.authenticators) {
      let result: AuthenticationResult;
      try {
        result = await authenticator.authenticate(request);
      } catch (error) {
        result = { outcome: 'failed', reason: errorText(error) };
      }
      if (result.outcome === 'authenticated') {
        if (!audiencesAcceptable(this.apiAudiences, result.audiences)) {
          return {
            outcome: 'unauthorized',
            failures: [...failures, {
              authenticator: authenticator.name,
              reason: `unable to match the audience: ${quotedList(result.audiences ?? [])} , accepted: ${quotedList(this.apiAudiences)}`,
            }],
          };
        }
        return { outcome: 'authenticated', user: withAuthenticatedGroup(result.user), authenticator: authenticator.name, audiences: result.audiences ?? [] };
      }
      if (result.outcome === 'failed') {
        if (result.failures !== undefined && result.failures.length > 0) {
          failures.push(...result.failures.map((failure) => ({ authenticator: `${authenticator.name}/${failure.authenticator}`, reason: failure.reason })));
        } else {
          failures.push({ authenticator: authenticator.name, reason: result.reason });
        }
      }
    }
    if (failures.length > 0) return { outcome: 'unauthorized', failures };
    if (this.anonymous) return { outcome: 'anonymous', user: ANONYMOUS };
    return { outcome: 'unauthorized', failures: [] };
  }
}

/** One log line's worth of failures: `x509: ...; bearer-token/serviceaccount: ...`. */
export function describeFailures(failures: readonly AuthenticatorFailure[]): string {
  return failures.length === 0 ? 'no credentials and anonymous requests are disabled' : failures.map((failure) => `${failure.authenticator}: ${failure.reason}`).join('; ');
}
