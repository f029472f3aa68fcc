/**
 * Authentication (apiserver WithAuthentication, spec 02 §5): the authenticators of src/authn
 * decide who the request is from. A credential that is present and invalid is a 401 with
 * kube-apiserver's Status, never a fallback to anonymous; no credential at all is anonymous when
 * --anonymous-auth allows it. Credentials (Authorization, the proxy's headers) are removed from
 * the request's headers afterwards, so no later stage or log line can see them.
 */
import { describeFailures, stripAuthenticationHeaders, type RequestAuthentication, type RequestHeaderNames } from '../../authn';
import { ApiError } from '../../util';
import type { RequestContext } from '../../endpoints';
import type { Filter } from './filter';
import type { LogLine } from '../../observability/logger';

/** kube-apiserver's 401: the same body whatever failed, so a client learns nothing about the credential. */
export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized', {});
}

export function authenticationFilter(authentication: RequestAuthentication, requestHeaderNames: RequestHeaderNames | undefined, log?: LogLine): Filter {
  return {
    name: 'authentication',
    async run(ctx: RequestContext): Promise<void> {
      const outcome = await authentication.authenticate({ headers: ctx.headers, peerCertificates: ctx.peerCertificates });
      ctx.headers = stripAuthenticationHeaders(ctx.headers, requestHeaderNames);
      if (outcome.outcome === 'unauthorized') {
        // The reasons name the authenticator and what failed; they never carry the credential.
        log?.(`authentication failed for ${ctx.method} ${ctx.info.path}: ${describeFailures(outcome.failures)}`, ctx.trace);
        throw unauthorized();
      }
      ctx.user = outcome.user;
      if (outcome.outcome === 'authenticated') ctx.audiences = outcome.audiences;
    },
  };
}
