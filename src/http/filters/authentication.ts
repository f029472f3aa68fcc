/**
 * Authentication (apiserver WithAuthentication, spec 02 §5): the authenticators decide who the
 * request is from. A credential that is present and invalid is a 401 with kube-apiserver's
 * Status, never a fallback to anonymous; no credential at all is anonymous when anonymous
 * requests are enabled. Credentials are removed from the request's headers afterwards, so no
 * later stage (or log line) can see them.
 */
import type { AuthenticationRequest, AuthenticationResult } from '../../authn/authenticator';
import { withAuthenticatedGroup } from '../../authn/user-info';
import { ApiError } from '../../util';
import type { RequestContext } from '../../endpoints';
import type { Filter } from './filter';

/** The union of the configured authenticators, anonymous included (see src/authn). */
export interface RequestAuthentication {
  authenticate(request: AuthenticationRequest): Promise<AuthenticationResult>;
  /** Removes credential headers (Authorization, proxy headers) from a header map. */
  stripCredentials(headers: Record<string, string | string[] | undefined>): void;
}

/** kube-apiserver's 401: the same body whatever failed, so a client learns nothing about the credential. */
export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized', {});
}

export function authenticationFilter(authentication: RequestAuthentication, log?: (line: string) => void): Filter {
  return {
    name: 'authentication',
    async run(ctx: RequestContext): Promise<void> {
      const result = await authentication.authenticate({ headers: ctx.headers, get peerCertificates() { return ctx.peerCertificates; } });
      authentication.stripCredentials(ctx.headers);
      if (result.outcome !== 'authenticated') {
        // The reason names the authenticator and what failed; it never carries the credential.
        if (result.outcome === 'failed') log?.(`authentication failed for ${ctx.method} ${ctx.info.path}: ${result.reason}`);
        throw unauthorized();
      }
      ctx.user = withAuthenticatedGroup(result.user);
      ctx.audiences = result.audiences ?? [];
    },
  };
}
