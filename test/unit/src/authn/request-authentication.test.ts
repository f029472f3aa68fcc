import { expect } from 'chai';
import type { AuthenticationRequest, AuthenticationResult, RequestAuthenticator, TokenAuthenticator } from '../../../../src/authn/authenticator';
import {
  BearerTokenAuthenticator,
  WebSocketProtocolAuthenticator,
  bearerTokenFromHeaders,
  bearerTokenFromWebSocketProtocols,
  webSocketProtocolsWithoutToken,
} from '../../../../src/authn/bearer-token';
import { distinctHeaders } from '../../../../src/authn/headers';
import { RequestAuthentication, describeFailures } from '../../../../src/authn/request-authentication';
import { AudienceAgnosticTokenAuthenticator, TokenAuthenticatorUnion } from '../../../../src/authn/token-union';

const jane = { name: 'jane', uid: '', groups: ['dev'], extra: {} };
const SECRET = 'sekrit-token-value';

class TableTokens implements TokenAuthenticator {
  readonly seen: string[] = [];

  constructor(readonly name: string, private readonly answers: Record<string, AuthenticationResult>) {}

  async authenticateToken(token: string): Promise<AuthenticationResult> {
    this.seen.push(token);
    const answer = this.answers[token];
    if (answer === undefined) return { outcome: 'not-mine' };
    if (answer.outcome === 'failed' && answer.reason === 'throw') throw new Error(`cannot reach the service for ${token}`);
    return answer;
  }
}

class Fixed implements RequestAuthenticator {
  constructor(readonly name: string, private readonly result: AuthenticationResult) {}

  async authenticate(): Promise<AuthenticationResult> {
    return this.result;
  }
}

function request(raw: string[]): AuthenticationRequest {
  return { headers: distinctHeaders(raw), peerCertificates: [] };
}

describe('authn: bearer tokens and the request union', () => {
  describe('Authorization header', () => {
    const cases: [string, ReturnType<typeof bearerTokenFromHeaders>][] = [
      ['Bearer abc', { kind: 'token', token: 'abc' }],
      ['bearer abc', { kind: 'token', token: 'abc' }],
      ['BEARER abc', { kind: 'token', token: 'abc' }],
      ['  Bearer abc  ', { kind: 'token', token: 'abc' }],
      ['Bearer abc def', { kind: 'token', token: 'abc' }],
      ['Bearer  abc', { kind: 'none' }],
      ['Bearer', { kind: 'none' }],
      ['Bearer ', { kind: 'none' }],
      ['Basic amFuZTpwdw==', { kind: 'none' }],
      ['abc', { kind: 'none' }],
      ['Bearer\tabc', { kind: 'none' }],
      ['', { kind: 'none' }],
    ];
    for (const [header, expected] of cases) {
      it(`reads ${JSON.stringify(header)} as v1.25 does`, () => {
        expect(bearerTokenFromHeaders({ authorization: header })).to.deep.equal(expected);
      });
    }

    it('uses the first Authorization header only, and refuses oversized tokens', () => {
      expect(bearerTokenFromHeaders({ authorization: ['Bearer first', 'Bearer second'] })).to.deep.equal({ kind: 'token', token: 'first' });
      expect(bearerTokenFromHeaders({ authorization: `Bearer ${'x'.repeat(20_000)}` }).kind).to.equal('invalid');
    });
  });

  describe('WebSocket subprotocol', () => {
    const encoded = Buffer.from(SECRET).toString('base64url');
    const upgrade = ['Upgrade', 'websocket', 'Connection', 'keep-alive, Upgrade'];

    it('takes the token from base64url.bearer.authorization.k8s.io.<token> beside another subprotocol', () => {
      const headers = distinctHeaders([...upgrade, 'Sec-WebSocket-Protocol', `v4.channel.k8s.io, base64url.bearer.authorization.k8s.io.${encoded}`]);
      expect(bearerTokenFromWebSocketProtocols(headers)).to.deep.equal({ kind: 'token', token: SECRET });
      expect(webSocketProtocolsWithoutToken(headers)).to.equal('v4.channel.k8s.io');
    });

    it('ignores the subprotocol on a request that is not a WebSocket upgrade', () => {
      expect(bearerTokenFromWebSocketProtocols(distinctHeaders(['Sec-WebSocket-Protocol', `x, base64url.bearer.authorization.k8s.io.${encoded}`]))).to.deep.equal({ kind: 'none' });
    });

    it('fails two tokens, bad encoding, non-UTF-8 and a token without another subprotocol, with v1.25\'s messages', () => {
      const reason = (protocols: string): unknown => {
        const result = bearerTokenFromWebSocketProtocols(distinctHeaders([...upgrade, 'Sec-WebSocket-Protocol', protocols]));
        return result.kind === 'invalid' ? result.reason : result.kind;
      };
      expect(reason(`x, base64url.bearer.authorization.k8s.io.${encoded}, base64url.bearer.authorization.k8s.io.${encoded}`)).to.equal('multiple base64.bearer.authorization tokens specified');
      expect(reason('x, base64url.bearer.authorization.k8s.io.abc=')).to.equal('invalid base64.bearer.authorization token encoding');
      expect(reason(`x, base64url.bearer.authorization.k8s.io.${Buffer.from([0xff, 0xfe]).toString('base64url')}`)).to.equal('invalid base64.bearer.authorization token');
      expect(reason(`base64url.bearer.authorization.k8s.io.${encoded}`)).to.equal('missing additional subprotocol');
    });
  });

  describe('the union', () => {
    const tokens = new TokenAuthenticatorUnion([
      new TableTokens('token-file', { good: { outcome: 'authenticated', user: jane } }),
      new TableTokens('serviceaccount', {
        expired: { outcome: 'failed', reason: 'service account token has expired' },
        [SECRET]: { outcome: 'failed', reason: `token ${SECRET} is revoked` },
        both: { outcome: 'failed', reason: 'first' },
      }),
      new TableTokens('webhook', { 'webhook-down-token': { outcome: 'failed', reason: 'throw' }, both: { outcome: 'failed', reason: 'second' } }),
    ]);

    function union(authenticators: RequestAuthenticator[], anonymous = true): RequestAuthentication {
      return new RequestAuthentication({ authenticators, anonymous, apiAudiences: ['api'] });
    }
    const fronts = (): RequestAuthenticator[] => [new BearerTokenAuthenticator(tokens, ['api']), new WebSocketProtocolAuthenticator(tokens, ['api'])];

    it('authenticates a known token and adds system:authenticated', async () => {
      const outcome = await union(fronts()).authenticate(request(['Authorization', 'Bearer good']));
      expect(outcome).to.deep.equal({ outcome: 'authenticated', user: { ...jane, groups: ['dev', 'system:authenticated'] }, authenticator: 'bearer-token', audiences: [] });
    });

    it('answers an unknown bearer token 401 invalid bearer token, never anonymous', async () => {
      const outcome = await union(fronts()).authenticate(request(['Authorization', 'Bearer unknown']));
      expect(outcome).to.deep.equal({ outcome: 'unauthorized', failures: [{ authenticator: 'bearer-token', reason: 'invalid bearer token' }] });
    });

    it('is anonymous without credentials, or with a scheme other than Bearer; 401 with --anonymous-auth=false', async () => {
      expect((await union(fronts()).authenticate(request([]))).outcome).to.equal('anonymous');
      const basic = await union(fronts()).authenticate(request(['Authorization', 'Basic amFuZTpwdw==']));
      expect(basic).to.deep.equal({ outcome: 'anonymous', user: { name: 'system:anonymous', uid: '', groups: ['system:unauthenticated'], extra: {} } });
      expect(await union(fronts(), false).authenticate(request([]))).to.deep.equal({ outcome: 'unauthorized', failures: [] });
    });

    it('names each token authenticator that failed, and aggregates reasons as v1.25 prints them', async () => {
      const outcome = await union(fronts()).authenticate(request(['Authorization', 'Bearer both']));
      expect(outcome).to.deep.equal({
        outcome: 'unauthorized',
        failures: [{ authenticator: 'bearer-token/serviceaccount', reason: 'first' }, { authenticator: 'bearer-token/webhook', reason: 'second' }],
      });
      expect((await tokens.authenticateToken('both', [])).outcome === 'failed' && (await tokens.authenticateToken('both', []))).to.deep.include({ reason: '[first, second]' });
      expect(describeFailures(outcome.outcome === 'unauthorized' ? outcome.failures : [])).to.equal('bearer-token/serviceaccount: first; bearer-token/webhook: second');
    });

    it('never lets a reason carry the token, even when an authenticator quotes it or throws with it', async () => {
      const quoted = await union(fronts()).authenticate(request(['Authorization', `Bearer ${SECRET}`]));
      expect(JSON.stringify(quoted)).to.not.include(SECRET);
      expect(JSON.stringify(quoted)).to.include('[redacted]');
      const thrown = await union(fronts()).authenticate(request(['Authorization', 'Bearer webhook-down-token']));
      expect(thrown.outcome).to.equal('unauthorized');
      expect(JSON.stringify(thrown)).to.not.include('webhook-down-token');
      expect(JSON.stringify(thrown)).to.include('cannot reach the service for [redacted]');
    });

    it('lets the first success win even after a failure (a foreign client certificate with a good token)', async () => {
      const outcome = await union([new Fixed('x509', { outcome: 'failed', reason: 'x509: certificate signed by unknown authority' }), ...fronts()])
        .authenticate(request(['Authorization', 'Bearer good']));
      expect(outcome.outcome === 'authenticated' && outcome.authenticator).to.equal('bearer-token');
    });

    it('fails a failed client certificate without a token rather than falling back to anonymous', async () => {
      const outcome = await union([new Fixed('x509', { outcome: 'failed', reason: 'expired' }), ...fronts()]).authenticate(request([]));
      expect(outcome).to.deep.equal({ outcome: 'unauthorized', failures: [{ authenticator: 'x509', reason: 'expired' }] });
    });

    it('refuses a success whose audiences do not meet the API audiences', async () => {
      const outcome = await union([new Fixed('odd', { outcome: 'authenticated', user: jane, audiences: ['elsewhere'] })]).authenticate(request([]));
      expect(outcome).to.deep.equal({ outcome: 'unauthorized', failures: [{ authenticator: 'odd', reason: 'unable to match the audience: ["elsewhere"] , accepted: ["api"]' }] });
    });

    it('authenticates through the WebSocket subprotocol', async () => {
      const encoded = Buffer.from('good').toString('base64url');
      const outcome = await union(fronts()).authenticate(request(['Upgrade', 'websocket', 'Connection', 'Upgrade', 'Sec-WebSocket-Protocol', `channel.k8s.io, base64url.bearer.authorization.k8s.io.${encoded}`]));
      expect(outcome.outcome === 'authenticated' && outcome.authenticator).to.equal('websocket-bearer-token');
    });
  });

  describe('audience-agnostic authenticators', () => {
    it('answer only for audiences that meet the API audiences, and report the intersection', async () => {
      const inner = new TableTokens('token-file', { good: { outcome: 'authenticated', user: jane } });
      const wrapped = new AudienceAgnosticTokenAuthenticator(inner, ['api', 'api2']);
      expect(await wrapped.authenticateToken('good', [])).to.deep.equal({ outcome: 'authenticated', user: jane });
      expect(await wrapped.authenticateToken('good', ['vault'])).to.deep.equal({ outcome: 'not-mine' });
      expect(inner.seen).to.deep.equal(['good']);
      expect(await wrapped.authenticateToken('good', ['api2', 'vault'])).to.deep.equal({ outcome: 'authenticated', user: jane, audiences: ['api2'] });
    });
  });
});
