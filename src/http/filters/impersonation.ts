/**
 * Impersonation (apiserver WithImpersonation, spec 02 §5.7): a request carrying
 * `Impersonate-User` (and -Group, -Uid, -Extra-*) acts as that user once the authorizer has
 * allowed the `impersonate` verb for each value; the requester is kept for audit. The checks and
 * the new identity come from the impersonator (src/authn); this filter only applies the answer.
 */
import type { UserInfo } from '../../authn/user-info';
import type { AuthorizationAttributes, AuthorizationResult } from '../../authz/authorizer';
import type { RequestContext } from '../../endpoints';
import type { Filter } from './filter';

export interface Impersonator {
  /**
   * undefined when the request impersonates no one; else the identity to act as. Throws the
   * ApiError to answer (403 without permission, 400/500 for malformed headers, as v1.25).
   */
  impersonate(requester: UserInfo, headers: Record<string, string | string[] | undefined>, authorize: (attributes: AuthorizationAttributes) => Promise<AuthorizationResult>): Promise<UserInfo | undefined>;
  /** Removes the Impersonate-* headers. */
  stripHeaders(headers: Record<string, string | string[] | undefined>): void;
}

export function impersonationFilter(impersonator: Impersonator, authorize: (attributes: AuthorizationAttributes) => Promise<AuthorizationResult>): Filter {
  return {
    name: 'impersonation',
    async run(ctx: RequestContext): Promise<void> {
      const target = await impersonator.impersonate(ctx.user, ctx.headers, authorize);
      impersonator.stripHeaders(ctx.headers);
      if (target === undefined) return;
      ctx.requestingUser = ctx.user;
      ctx.user = target;
    },
  };
}
