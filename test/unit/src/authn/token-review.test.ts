import { expect } from 'chai';
import type { AuthenticationResult, TokenAuthenticator } from '../../../../src/authn/authenticator';
import { reviewToken } from '../../../../src/authn/token-review';
import { ApiError } from '../../../../src/util/api-error';

class Tokens implements TokenAuthenticator {
  readonly name = 'tokens';
  readonly asked: { token: string; audiences: readonly string[] }[] = [];

  async authenticateToken(token: string, audiences: readonly string[]): Promise<AuthenticationResult> {
    this.asked.push({ token, audiences });
    if (token === 'good') return { outcome: 'authenticated', user: { name: 'jane', uid: '7', groups: ['dev'], extra: { scopes: ['a'] } }, audiences: audiences.length > 0 ? [audiences[0]] : [] };
    if (token === 'odd') return { outcome: 'authenticated', user: { name: 'x', uid: '', groups: [], extra: {} }, audiences: ['elsewhere'] };
    if (token === 'expired-token') return { outcome: 'failed', reason: 'service account token has expired' };
    return { outcome: 'not-mine' };
  }
}

const API = ['https://kubernetes.default.svc'];

describe('authn: TokenReview', () => {
  it('fills status for a token that authenticates, with system:authenticated and the matched audiences', async () => {
    const tokens = new Tokens();
    const review = await reviewToken({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'good' } }, tokens, apiAudiences: API });
    expect(review).to.deep.equal({
      kind: 'TokenReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: { token: 'good' },
      status: { authenticated: true, user: { username: 'jane', uid: '7', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a'] } }, audiences: API },
    });
    expect(tokens.asked).to.deep.equal([{ token: 'good', audiences: API }]);
  });

  it('checks against spec.audiences when given, and answers in v1beta1 when asked in v1beta1', async () => {
    const tokens = new Tokens();
    const review = await reviewToken({ body: { apiVersion: 'authentication.k8s.io/v1beta1', spec: { token: 'good', audiences: ['vault'] } }, tokens, apiAudiences: API });
    expect(review).to.deep.include({ apiVersion: 'authentication.k8s.io/v1beta1' });
    expect((review as { status: { audiences: string[] } }).status.audiences).to.deep.equal(['vault']);
    expect(tokens.asked[0].audiences).to.deep.equal(['vault']);
  });

  it('reports failures in status.error, and an unknown token as invalid bearer token', async () => {
    const tokens = new Tokens();
    expect((await reviewToken({ body: { spec: { token: 'expired-token' } }, tokens, apiAudiences: API }) as { status: unknown }).status).to.deep.equal({ user: {}, error: 'service account token has expired' });
    expect((await reviewToken({ body: { spec: { token: 'nobody' } }, tokens, apiAudiences: API }) as { status: unknown }).status).to.deep.equal({ user: {}, error: 'invalid bearer token' });
  });

  it('reads the token as a Bearer header would: "a b" checks "a"', async () => {
    const tokens = new Tokens();
    await reviewToken({ body: { spec: { token: 'good trailing' } }, tokens, apiAudiences: API });
    expect(tokens.asked[0].token).to.equal('good');
  });

  it('answers v1.25\'s 400s for an empty token and a namespaced request', async () => {
    const empty = await reviewToken({ body: { spec: {} }, tokens: new Tokens(), apiAudiences: API });
    expect(empty).to.be.instanceOf(ApiError);
    expect([(empty as ApiError).code, (empty as ApiError).message]).to.deep.equal([400, 'token is required for TokenReview in authentication']);
    const namespaced = await reviewToken({ body: { spec: { token: 'good' } }, namespace: 'default', tokens: new Tokens(), apiAudiences: API });
    expect((namespaced as ApiError).message).to.equal('namespace is not allowed on this type: default');
  });

  it('answers 500 error validating audiences when a success does not meet the requested audiences', async () => {
    const error = await reviewToken({ body: { spec: { token: 'odd' } }, tokens: new Tokens(), apiAudiences: API });
    expect([(error as ApiError).code, (error as ApiError).message]).to.deep.equal([500, 'Internal error occurred: error validating audiences']);
  });

  it('answers unauthenticated without any token authenticator', async () => {
    const review = await reviewToken({ body: { spec: { token: 'good' } }, tokens: undefined, apiAudiences: API });
    expect((review as { status: unknown }).status).to.deep.equal({ user: {} });
  });
});
