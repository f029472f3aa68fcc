/**
 * Service-account issuer discovery: the bodies of `/.well-known/openid-configuration` and
 * `/openid/v1/jwks` (kubernetes pkg/serviceaccount/openidmetadata.go, v1.25), which let other
 * parties verify bound tokens as an OIDC relying party would.
 *
 * Rules kept from v1.25:
 * - the issuer is the first --service-account-issuer and must be an https URL without query or
 *   fragment;
 * - `jwks_uri` is --service-account-jwks-uri (https) or, by default,
 *   `https://<external address>/openid/v1/jwks`;
 * - the key set holds every verification key (service-account-keys.ts) as a public JWK with
 *   `use: sig`, its kid and alg; `id_token_signing_alg_values_supported` is the sorted set of
 *   their algorithms; `response_types_supported: ["id_token"]`, `subject_types_supported:
 *   ["public"]`;
 * - JSON is compact, fields in Go's order, `<`, `>` and `&` escaped as Go escapes them;
 * - both are served with `Cache-Control: public, max-age=3600`.
 *
 * Built once at start: the keys do not change while the server runs.
 */
import { AuthnError } from './errors';
import type { ServiceAccountPublicKey } from './service-account-keys';

export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';
export const DISCOVERY_CACHE_CONTROL = 'public, max-age=3600';
export const OPENID_CONFIGURATION_CONTENT_TYPE = 'application/json';
export const JWKS_CONTENT_TYPE = 'application/jwk-set+json';

export interface DiscoveryDocument {
  readonly body: string;
  readonly contentType: string;
  readonly cacheControl: string;
}

export interface IssuerDiscovery {
  readonly openidConfiguration: DiscoveryDocument;
  readonly jwks: DiscoveryDocument;
}

export interface IssuerDiscoveryOptions {
  /** The first --service-account-issuer. */
  readonly issuer: string;
  /** --service-account-jwks-uri; '' or undefined to derive it from `externalAddress`. */
  readonly jwksUri?: string;
  /** host[:port] clients reach the API server at (--external-hostname or the advertise address). */
  readonly externalAddress?: string;
  readonly keys: readonly ServiceAccountPublicKey[];
}

/** Go's json.Marshal escapes these inside strings. */
function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function invalidOption(message: string): AuthnError {
  return new AuthnError('INVALID_OPTIONS', message);
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function resolveJwksUri(options: IssuerDiscoveryOptions): string {
  const given = options.jwksUri ?? '';
  if (given !== '') {
    const url = parseUrl(given);
    if (url === undefined || url.protocol !== 'https:') throw invalidOption(`jwksURI requires https scheme, parsed as: ${given}`);
    return given;
  }
  const address = options.externalAddress ?? '';
  const attempted = `attempted to build jwks_uri from external address ${address}, but could not construct a valid URL. Error:`;
  if (address === '') throw invalidOption('either the JWKS URI or the default external address, or both, must be set');
  const derived = `https://${address}${JWKS_PATH}`;
  const url = parseUrl(derived);
  if (url === undefined || url.pathname !== JWKS_PATH || url.search !== '' || url.hash !== '' || url.username !== '') {
    throw invalidOption(`${attempted} got ${derived}`);
  }
  return derived;
}

/**
 * The public JWK of a key in go-jose's field order: use, kty, kid, crv, alg, x, y, n, e. Node
 * exports it itself (jose's exportJWK does the same for a KeyObject): the documents are built at
 * every start, which then need not load jose (issue 32).
 */
function publicJwk(key: ServiceAccountPublicKey): Record<string, string> {
  const jwk = key.key.export({ format: 'jwk' });
  const out: Record<string, string> = { use: 'sig', kty: String(jwk.kty), kid: key.kid };
  if (jwk.crv !== undefined) out.crv = jwk.crv;
  out.alg = key.algorithm;
  for (const field of ['x', 'y', 'n', 'e'] as const) {
    const value = jwk[field];
    if (typeof value === 'string') out[field] = value;
  }
  return out;
}

/** Both documents; AuthnError INVALID_OPTIONS with v1.25's messages when the options cannot serve. */
export async function buildIssuerDiscovery(options: IssuerDiscoveryOptions): Promise<IssuerDiscovery> {
  if (options.issuer === '') throw invalidOption('empty issuer URL');
  if (options.keys.length === 0) throw invalidOption('no keys provided for validating keyset');
  const issuer = parseUrl(options.issuer);
  if (issuer === undefined || issuer.protocol !== 'https:') throw invalidOption(`issuer URL must use https scheme, got: ${options.issuer}`);
  if (issuer.search !== '' || options.issuer.includes('?')) throw invalidOption(`issuer URL may not include a query, got: ${options.issuer}`);
  if (issuer.hash !== '' || options.issuer.includes('#')) throw invalidOption(`issuer URL may not include a fragment, got: ${options.issuer}`);
  const jwksUri = resolveJwksUri(options);
  const keys = options.keys.map(publicJwk);
  const algorithms = [...new Set(options.keys.map((key) => key.algorithm as string))].sort();
  return {
    openidConfiguration: {
      body: goJson({
        issuer: options.issuer,
        jwks_uri: jwksUri,
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: algorithms,
      }),
      contentType: OPENID_CONFIGURATION_CONTENT_TYPE,
      cacheControl: DISCOVERY_CACHE_CONTROL,
    },
    jwks: { body: goJson({ keys }), contentType: JWKS_CONTENT_TYPE, cacheControl: DISCOVERY_CACHE_CONTROL },
  };
}
