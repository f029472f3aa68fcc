/**
 * Impersonation (apiserver WithImpersonation, spec 02 §5.7): a request carrying
 * `Impersonate-User` (and -Group, -Uid, -Extra-*) acts as that user once the authorizer has
 * allowed the `impersonate` verb for each value; the requester is kept for audit. The checks and
 * the new identity come from src/authn's impersonate(); this filter applies the answer.
 */
import { impersonate, stripImpersonationHeaders, type ImpersonationAuthorize } from '../../authn';
import type { RequestContext } from '../../endpoints';
import type { Filter } from './filter';

export function impersonationFilter(authorize: ImpersonationAuthorize): Filter {
  return {
    name: 'impersonation',
    spanWorthy: (ctx) => Object.keys(ctx.headers).some((name) => name.startsWith('impersonate-')),
    async run(ctx: RequestContext): Promise<void> {
      const outcome = await impersonate({ user: ctx.user, headers: ctx.headers, authorize });
      if (outcome instanceof Error) throw outcome;
      ctx.headers = stripImpersonationHeaders(ctx.headers);
      if (!outcome.impersonated) return;
      ctx.requestingUser = ctx.user;
      ctx.user = outcome.user;
    },
  };
}
