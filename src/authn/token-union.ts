/**
 * Token authenticators tried in order (apiserver pkg/authentication/token/union), and the
 * wrapper kube-apiserver puts around the authenticators that know nothing of audiences
 * (authenticator.WrapAudienceAgnosticToken: static tokens, bootstrap tokens, OIDC).
 *
 * Union: the first `authenticated` wins, even after another failed; otherwise, if any failed,
 * the union fails with their reasons aggregated as v1.25 prints them (`[a, b]`), the details
 * kept per authenticator; otherwise it is not mine. A thrown error counts as that
 * authenticator's failure (an unreachable dependency), with its message as the reason.
 *
 * Audience-agnostic wrapper: with no requested audiences the delegate answers as it is. With
 * requested audiences it answers only if they meet the API audiences (else not mine), and a
 * success reports that intersection as its audiences.
 */
import type { AuthenticationResult, AuthenticatorFailure, TokenAuthenticator } from './authenticator';
import { NOT_MINE } from './authenticator';
import { aggregateMessage, errorText } from './errors';

export class TokenAuthenticatorUnion implements TokenAuthenticator {
  readonly name = 'token-union';

  constructor(readonly authenticators: readonly TokenAuthenticator[]) {}

  async authenticateToken(token: string, audiences: readonly string[]): Promise<AuthenticationResult> {
    const failures: AuthenticatorFailure[] = [];
    for (const authenticator of this.authenticators) {
      let result: AuthenticationResult;
      try {
        result = await authenticator.authenticateToken(token, audiences);
      } catch (error) {
        result = { outcome: 'failed', reason: errorText(error) };
      }
      if (result.outcome === 'authenticated') return result;
      if (result.outcome === 'failed') {
        if (result.failures !== undefined && result.failures.length > 0) failures.push(...result.failures);
        else failures.push({ authenticator: authenticator.name, reason: result.reason });
      }
    }
    if (failures.length === 0) return NOT_MINE;
    return { outcome: 'failed', reason: aggregateMessage(failures.map((failure) => failure.reason)), failures };
  }
}

export class AudienceAgnosticTokenAuthenticator implements TokenAuthenticator {
  readonly name: string;

  constructor(private readonly delegate: TokenAuthenticator, private readonly apiAudiences: readonly string[]) {
    this.name = delegate.name;
  }

  async authenticateToken(token: string, audiences: readonly string[]): Promise<AuthenticationResult> {
    if (audiences.length === 0) return this.delegate.authenticateToken(token, audiences);
    const matched = this.apiAudiences.filter((audience, index) => audiences.includes(audience) && this.apiAudiences.indexOf(audience) === index);
    if (matched.length === 0) return NOT_MINE;
    const result = await this.delegate.authenticateToken(token, []);
    if (result.outcome !== 'authenticated') return result;
    if (result.audiences !== undefined && result.audiences.length > 0) {
      return { outcome: 'failed', reason: `audience agnostic authenticator wrapped an authenticator that returned audiences: ${JSON.stringify(result.audiences)}` };
    }
    return { ...result, audiences: matched };
  }
}
