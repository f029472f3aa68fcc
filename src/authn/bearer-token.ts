/**
 * The bearer-token front: how a token is taken from a request and handed to the token
 * authenticators (spec 02 §5.2; apiserver pkg/authentication/request/bearertoken and
 * request/websocket, v1.25).
 *
 * `Authorization` header (its first value): trimmed; split on single spaces into at most three
 * parts; the first must be `bearer` in any case and a second part must exist, else not mine
 * (`Basic ...`, a bare token, `Bearer` alone). The token is the second part: `Bearer a b` offers
 * `a`; `Bearer  a` (two spaces) offers an empty token, which is not mine. A token longer than
 * MAX_BEARER_TOKEN_BYTES fails at once (no authenticator is asked to parse it). When no token
 * authenticator claims the token the request fails with `invalid bearer token`: a bearer token
 * that nobody recognizes is never anonymous.
 *
 * WebSocket (browsers cannot set headers on a WebSocket): only for upgrade requests
 * (`Upgrade: websocket`, `Connection` containing `upgrade`), the `Sec-WebSocket-Protocol`
 * values (all headers, comma-separated, trimmed) may include one
 * `base64url.bearer.authorization.k8s.io.<base64url of the token>`, beside at least one other
 * subprotocol (the one the server echoes). Two such entries, bad base64url, a token that is not
 * UTF-8, or no other subprotocol fail with v1.25's messages. `webSocketProtocolsWithoutToken`
 * gives the header value to forward once the token is consumed.
 *
 * Reasons never contain the token: a token authenticator's reason that quotes it (a webhook
 * echoing what it was sent) has it replaced by `[redacted]`.
 */
import type { AuthenticationRequest, AuthenticationResult, RequestAuthenticator, TokenAuthenticator } from './authenticator';
import { NOT_MINE, authenticationFailed } from './authenticator';
import { errorText } from './errors';
import { firstHeaderValue, headerValues, type HeaderMap } from './headers';

/** Far above any real token (a JWT with hundreds of groups is a few kilobytes); node's default header limit is 16 KiB. */
export const MAX_BEARER_TOKEN_BYTES = 16 * 1024;
export const WEBSOCKET_BEARER_PROTOCOL_PREFIX = 'base64url.bearer.authorization.k8s.io.';
export const INVALID_BEARER_TOKEN = 'invalid bearer token';

export type TokenExtraction =
  | { readonly kind: 'none' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'invalid'; readonly reason: string };

const NONE: TokenExtraction = Object.freeze({ kind: 'none' as const });

/** The bearer token of an `Authorization` header, as v1.25 reads it. */
export function bearerTokenFromHeaders(headers: HeaderMap): TokenExtraction {
  const authorization = firstHeaderValue(headers, 'authorization').trim();
  if (authorization === '') return NONE;
  const parts = authorization.split(' ');
  if (parts.length < 2 || parts[0].toLowerCase() !== 'bearer') return NONE;
  const token = parts[1];
  if (token === '') return NONE;
  if (Buffer.byteLength(token, 'utf8') > MAX_BEARER_TOKEN_BYTES) return { kind: 'invalid', reason: `bearer token is longer than ${MAX_BEARER_TOKEN_BYTES} bytes` };
  return { kind: 'token', token };
}

export function isWebSocketRequest(headers: HeaderMap): boolean {
  if (firstHeaderValue(headers, 'upgrade').toLowerCase() !== 'websocket') return false;
  return headerValues(headers, 'connection').some((value) => value.toLowerCase().includes('upgrade'));
}

function subprotocols(headers: HeaderMap): string[] {
  return headerValues(headers, 'sec-websocket-protocol').flatMap((value) => value.split(',').map((protocol) => protocol.trim()));
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The bearer token carried in a WebSocket subprotocol, as v1.25 reads it. */
export function bearerTokenFromWebSocketProtocols(headers: HeaderMap): TokenExtraction {
  if (!isWebSocketRequest(headers)) return NONE;
  let token = '';
  let sawToken = false;
  let others = 0;
  for (const protocol of subprotocols(headers)) {
    if (!protocol.startsWith(WEBSOCKET_BEARER_PROTOCOL_PREFIX)) {
      others += 1;
      continue;
    }
    if (sawToken) return { kind: 'invalid', reason: 'multiple base64.bearer.authorization tokens specified' };
    sawToken = true;
    const encoded = protocol.slice(WEBSOCKET_BEARER_PROTOCOL_PREFIX.length);
    if (!/^[A-Za-z0-9_-]*$/.test(encoded) || encoded.length % 4 === 1) return { kind: 'invalid', reason: 'invalid base64.bearer.authorization token encoding' };
    try {
      token = STRICT_UTF8.decode(Buffer.from(encoded, 'base64url'));
    } catch {
      return { kind: 'invalid', reason: 'invalid base64.bearer.authorization token' };
    }
  }
  if (token !== '' && others === 0) return { kind: 'invalid', reason: 'missing additional subprotocol' };
  if (token === '') return NONE;
  if (Buffer.byteLength(token, 'utf8') > MAX_BEARER_TOKEN_BYTES) return { kind: 'invalid', reason: `bearer token is longer than ${MAX_BEARER_TOKEN_BYTES} bytes` };
  return { kind: 'token', token };
}

/** The `Sec-WebSocket-Protocol` value to keep once the bearer subprotocol has been consumed. */
export function webSocketProtocolsWithoutToken(headers: HeaderMap): string {
  return subprotocols(headers).filter((protocol) => !protocol.startsWith(WEBSOCKET_BEARER_PROTOCOL_PREFIX)).join(',');
}

/**
 * Shorter tokens are not searched for: they would match ordinary words of a reason ("expired"),
 * and no authenticator of ours quotes a token anyway; this guards against a webhook echoing one.
 */
const MIN_REDACTED_TOKEN_LENGTH = 12;

/** `reason` with every occurrence of `token` replaced, so no reason can carry the credential. */
export function redactToken(reason: string, token: string): string {
  if (token.length < MIN_REDACTED_TOKEN_LENGTH || !reason.includes(token)) return reason;
  return reason.split(token).join('[redacted]');
}

/** A token authenticator's answer as the front gives it: not mine becomes `invalid bearer token`. */
export async function authenticateBearerToken(authenticator: TokenAuthenticator, token: string, audiences: readonly string[]): Promise<AuthenticationResult> {
  let result: AuthenticationResult;
  try {
    result = await authenticator.authenticateToken(token, audiences);
  } catch (error) {
    return authenticationFailed(redactToken(errorText(error), token));
  }
  if (result.outcome === 'authenticated') return result;
  if (result.outcome === 'not-mine') return authenticationFailed(INVALID_BEARER_TOKEN);
  const failures = result.failures?.map((failure) => ({ authenticator: failure.authenticator, reason: redactToken(failure.reason, token) }));
  return { outcome: 'failed', reason: redactToken(result.reason, token), ...(failures === undefined ? {} : { failures }) };
}

abstract class TokenFront implements RequestAuthenticator {
  abstract readonly name: string;

  constructor(private readonly tokens: TokenAuthenticator, private readonly apiAudiences: readonly string[]) {}

  protected abstract extract(headers: HeaderMap): TokenExtraction;

  async authenticate(request: AuthenticationRequest): Promise<AuthenticationResult> {
    const extraction = this.extract(request.headers);
    if (extraction.kind === 'none') return NOT_MINE;
    if (extraction.kind === 'invalid') return authenticationFailed(extraction.reason);
    return authenticateBearerToken(this.tokens, extraction.token, this.apiAudiences);
  }
}

/** `Authorization: Bearer <token>`. */
export class BearerTokenAuthenticator extends TokenFront {
  readonly name = 'bearer-token';

  protected extract(headers: HeaderMap): TokenExtraction {
    return bearerTokenFromHeaders(headers);
  }
}

/** `Sec-WebSocket-Protocol: base64url.bearer.authorization.k8s.io.<token>, <other>`. */
export class WebSocketProtocolAuthenticator extends TokenFront {
  readonly name = 'websocket-bearer-token';

  protected extract(headers: HeaderMap): TokenExtraction {
    return bearerTokenFromWebSocketProtocols(headers);
  }
}
