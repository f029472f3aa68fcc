/**
 * Authentication (spec 02 §1, §2.1, §2.2, §2.3a, §4.2, §5.1-§5.7): who a request is from.
 * README.md gives the order of authenticators and the outcome table. Other folders use only
 * what is exported here.
 *
 * Typical wiring (src/server):
 * @example
 * ```ts
 * const auth = await buildAuthentication(optionsFromFlags, { lookups, log });
 * auth.start();
 * // per request, in the authentication filter:
 * const outcome = await auth.requests.authenticate({ headers: distinctHeaders(req.rawHeaders), peerCertificates });
 * ```
 */

export {
  NOT_MINE,
  authenticationFailed,
  type AuthenticationRequest,
  type AuthenticationResult,
  type AuthenticatorFailure,
  type RequestAuthenticator,
  type TokenAuthenticator,
} from './authenticator';
export {
  ANONYMOUS,
  ANONYMOUS_USER,
  AUTHENTICATED_GROUP,
  BOOTSTRAPPERS_GROUP,
  MASTERS_GROUP,
  NODES_GROUP,
  NODE_USER_PREFIX,
  SERVICE_ACCOUNTS_GROUP,
  SERVICE_ACCOUNT_USER_PREFIX,
  UNAUTHENTICATED_GROUP,
  withAuthenticatedGroup,
  type UserInfo,
} from './user-info';
export { AuthnError, isAuthnError, type AuthnErrorCode } from './errors';
export { distinctHeaders, type HeaderMap } from './headers';
export type { ObjectLookup, ServiceAccountLookups } from './object-lookup';

export { buildAuthentication, type Authentication, type AuthenticationDependencies, type AuthenticationOptions } from './authentication-config';
export { RequestAuthentication, describeFailures, type RequestAuthenticationOptions, type RequestAuthenticationOutcome } from './request-authentication';

export { X509Authenticator, type X509AuthenticatorOptions } from './x509-authenticator';
export { CertificatePool, certificateIdentifier, loadCaBundle, parseCaBundle, verifyCertificateChain, type ChainVerification } from './x509-verifier';
export { RequestHeaderAuthenticator, stripAuthenticationHeaders, type RequestHeaderNames, type RequestHeaderOptions } from './request-header-authenticator';
export {
  BearerTokenAuthenticator,
  INVALID_BEARER_TOKEN,
  MAX_BEARER_TOKEN_BYTES,
  WebSocketProtocolAuthenticator,
  bearerTokenFromHeaders,
  bearerTokenFromWebSocketProtocols,
  isWebSocketRequest,
  webSocketProtocolsWithoutToken,
} from './bearer-token';
export { AudienceAgnosticTokenAuthenticator, TokenAuthenticatorUnion } from './token-union';
export { CachedTokenAuthenticator, DEFAULT_TOKEN_CACHE_ENTRIES, type TokenCacheOptions } from './token-cache';

export { StaticTokenAuthenticator, loadTokenFile, parseTokenFile } from './token-file';
export { BootstrapTokenAuthenticator, BOOTSTRAP_TOKEN_PATTERN, type BootstrapTokenOptions } from './bootstrap-token-authenticator';
export { OidcAuthenticator, loadOidcCaFile, parseRequiredClaims, type OidcOptions } from './oidc-authenticator';
export { TokenWebhookAuthenticator, tokenWebhookAuthenticator, type TokenWebhookOptions, type TokenWebhookVersion } from './token-webhook-authenticator';
export { loadWebhookKubeconfig, parseWebhookKubeconfig, type WebhookClientConfig } from './webhook-kubeconfig';

export {
  generateServiceAccountKeyPair,
  keyIdFromPublicKey,
  loadServiceAccountKeyFile,
  loadServiceAccountKeyFiles,
  loadServiceAccountSigningKeyFile,
  parsePublicKeysPem,
  parseSigningKeyPem,
  publicKeyOf,
  type ServiceAccountKeyPairPem,
  type ServiceAccountPublicKey,
  type ServiceAccountSigningKey,
} from './service-account-keys';
export {
  LEGACY_ISSUER,
  ServiceAccountTokenSigner,
  serviceAccountGroups,
  serviceAccountUserName,
  splitServiceAccountUserName,
  type BoundTokenInput,
  type LegacyTokenInput,
} from './service-account-token';
export { POD_NAME_EXTRA, POD_UID_EXTRA, boundServiceAccountAuthenticator, legacyServiceAccountAuthenticator } from './service-account-authenticator';
export { evaluateTokenRequest, type TokenRequestInput, type TokenRequestOutcome } from './token-request';
export {
  JWKS_PATH,
  OPENID_CONFIGURATION_PATH,
  buildIssuerDiscovery,
  type DiscoveryDocument,
  type IssuerDiscovery,
  type IssuerDiscoveryOptions,
} from './service-account-discovery';

export {
  IMPERSONATE_EXTRA_HEADER_PREFIX,
  IMPERSONATE_GROUP_HEADER,
  IMPERSONATE_UID_HEADER,
  IMPERSONATE_USER_HEADER,
  impersonate,
  stripImpersonationHeaders,
  type ImpersonationAttributes,
  type ImpersonationAuthorize,
  type ImpersonationInput,
  type ImpersonationOutcome,
} from './impersonation';
export { reviewToken, type TokenReviewInput } from './token-review';
export { BOOTSTRAP_KEYS, BOOTSTRAP_TOKEN_SECRET_PREFIX, BOOTSTRAP_TOKEN_SECRET_TYPE } from './bootstrap-token-authenticator';
