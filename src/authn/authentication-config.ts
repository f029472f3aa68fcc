/**
 * Builds the authentication of a server from options that mirror kube-apiserver's flags
 * (kubernetes pkg/kubeapiserver/options/authentication.go and authenticator/config.go, v1.25):
 * reads the files they name, constructs each authenticator, and puts them in kube-apiserver's
 * order (README.md). src/server calls this once at start and hands the pieces to the
 * authentication filter, the TokenRequest and TokenReview handlers and the discovery routes.
 *
 * Defaults as v1.25: --anonymous-auth true; --api-audiences = the service-account issuers;
 * --service-account-lookup true; --service-account-extend-token-expiration true;
 * --authentication-token-webhook-version v1beta1; --authentication-token-webhook-cache-ttl 2m;
 * --oidc-username-claim sub; --oidc-signing-algs RS256. The token union's results are cached
 * (token-cache.ts). One addition: the signing key's public half is always a verification key,
 * so the server verifies the tokens it issues even without a matching --service-account-key-file.
 *
 * Construction throws AuthnError (a bad file or option); nothing here throws later.
 */
import type { RequestAuthenticator, TokenAuthenticator } from './authenticator';
import { BootstrapTokenAuthenticator } from './bootstrap-token-authenticator';
import { BearerTokenAuthenticator, WebSocketProtocolAuthenticator } from './bearer-token';
import { AuthnError } from './errors';
import type { ObjectLookup, ServiceAccountLookups } from './object-lookup';
import { OidcAuthenticator, loadOidcCaFile, type OidcOptions } from './oidc-authenticator';
import { RequestAuthentication } from './request-authentication';
import { RequestHeaderAuthenticator, type RequestHeaderNames } from './request-header-authenticator';
import { boundServiceAccountAuthenticator, legacyServiceAccountAuthenticator } from './service-account-authenticator';
import { buildIssuerDiscovery, type IssuerDiscovery } from './service-account-discovery';
import { loadServiceAccountKeyFiles, loadServiceAccountSigningKeyFile, publicKeyOf, type ServiceAccountPublicKey } from './service-account-keys';
import { ServiceAccountTokenSigner } from './service-account-token';
import { CachedTokenAuthenticator, type TokenCacheOptions } from './token-cache';
import { loadTokenFile } from './token-file';
import { AudienceAgnosticTokenAuthenticator, TokenAuthenticatorUnion } from './token-union';
import { tokenWebhookAuthenticator, type TokenWebhookVersion } from './token-webhook-authenticator';
import { loadWebhookKubeconfig } from './webhook-kubeconfig';
import { X509Authenticator } from './x509-authenticator';
import { CertificatePool, loadCaBundle, parseCaBundle } from './x509-verifier';

export interface AuthenticationOptions {
  /** --anonymous-auth (default true). */
  readonly anonymousAuth?: boolean;
  /** --api-audiences (default: serviceAccountIssuers). */
  readonly apiAudiences?: readonly string[];
  /** --client-ca-file. */
  readonly clientCaFile?: string;
  /** The cluster CA Carina issues client certificates from (PEM); trusted beside --client-ca-file. */
  readonly clusterCaPem?: string;
  /** --token-auth-file. */
  readonly tokenAuthFile?: string;
  /** --enable-bootstrap-token-auth. */
  readonly enableBootstrapTokenAuth?: boolean;
  /** --service-account-key-file (repeatable). */
  readonly serviceAccountKeyFiles?: readonly string[];
  /** --service-account-lookup (default true). */
  readonly serviceAccountLookup?: boolean;
  /** --service-account-issuer (repeatable; the first signs). */
  readonly serviceAccountIssuers?: readonly string[];
  /** --service-account-signing-key-file. */
  readonly serviceAccountSigningKeyFile?: string;
  /** --service-account-max-token-expiration, seconds (0: none). */
  readonly serviceAccountMaxTokenExpirationSeconds?: number;
  /** --service-account-extend-token-expiration (default true). */
  readonly serviceAccountExtendTokenExpiration?: boolean;
  /** --service-account-jwks-uri. */
  readonly serviceAccountJwksUri?: string;
  /** host[:port] for the default jwks_uri (--external-hostname or the advertise address and port). */
  readonly externalAddress?: string;
  /** --oidc-* (OIDC is on when issuerUrl and clientId are set). `caFile` is read here. */
  readonly oidc?: Omit<OidcOptions, 'caPem' | 'now' | 'log'> & { readonly caFile?: string };
  /** --authentication-token-webhook-*. */
  readonly webhook?: {
    readonly configFile: string;
    readonly version?: TokenWebhookVersion;
    readonly cacheTtlMs?: number;
    readonly requestTimeoutMs?: number;
  };
  /** --requestheader-* (on when clientCaFile and usernameHeaders are set). */
  readonly requestHeader?: {
    readonly clientCaFile: string;
    readonly allowedNames?: readonly string[];
    readonly usernameHeaders: readonly string[];
    readonly groupHeaders?: readonly string[];
    readonly extraHeaderPrefixes?: readonly string[];
  };
  /** The token union's cache; false disables it. */
  readonly tokenCache?: TokenCacheOptions | false;
}

export interface AuthenticationDependencies {
  /** Secrets (kube-system's bootstrap tokens and token Secrets), ServiceAccounts and Pods, from the watch cache. */
  readonly lookups: ServiceAccountLookups;
  readonly now?: () => number;
  /** Warnings and provider/webhook failures (never a credential). */
  readonly log?: (message: string) => void;
}

export interface Authentication {
  /** For the authentication filter. */
  readonly requests: RequestAuthentication;
  /** The cached token union, for TokenReview; undefined when no token authenticator is on. */
  readonly tokens: TokenAuthenticator | undefined;
  readonly apiAudiences: readonly string[];
  readonly anonymous: boolean;
  /** For stripAuthenticationHeaders; undefined without an authenticating proxy. */
  readonly requestHeaderNames: RequestHeaderNames | undefined;
  /** Signs bound tokens (TokenRequest); undefined without --service-account-signing-key-file. */
  readonly tokenSigner: ServiceAccountTokenSigner | undefined;
  /** Every service-account verification key (also for a token controller's own use). */
  readonly serviceAccountKeys: readonly ServiceAccountPublicKey[];
  /** The two discovery bodies; undefined without an issuer, keys or an address to derive jwks_uri from. */
  readonly issuerDiscovery: IssuerDiscovery | undefined;
  readonly tokenRequestLimits: { readonly maxExpirationSeconds: number; readonly extendExpiration: boolean };
  /** Starts background work (OIDC discovery). */
  start(): void;
  /** Stops it and closes outbound connections. */
  stop(): Promise<void>;
}

/** Builds every authenticator the options enable; AuthnError on a bad file or option. */
export async function buildAuthentication(options: AuthenticationOptions, dependencies: AuthenticationDependencies): Promise<Authentication> {
  const { lookups, now, log } = dependencies;
  const issuers = options.serviceAccountIssuers ?? [];
  const apiAudiences = options.apiAudiences !== undefined && options.apiAudiences.length > 0 ? [...options.apiAudiences] : [...issuers];
  const anonymous = options.anonymousAuth ?? true;
  const closers: (() => Promise<void>)[] = [];
  const starters: (() => void)[] = [];
  const requestAuthenticators: RequestAuthenticator[] = [];

  let requestHeaderNames: RequestHeaderNames | undefined;
  const proxy = options.requestHeader;
  if (proxy !== undefined && proxy.clientCaFile !== '' && proxy.usernameHeaders.length > 0) {
    const authenticator = new RequestHeaderAuthenticator({
      clientCa: await loadCaBundle(proxy.clientCaFile),
      allowedNames: proxy.allowedNames,
      usernameHeaders: proxy.usernameHeaders,
      groupHeaders: proxy.groupHeaders,
      extraHeaderPrefixes: proxy.extraHeaderPrefixes,
      now,
    });
    requestHeaderNames = authenticator.headerNames;
    requestAuthenticators.push(authenticator);
  }

  const pools: CertificatePool[] = [];
  if (options.clientCaFile !== undefined && options.clientCaFile !== '') pools.push(await loadCaBundle(options.clientCaFile));
  if (options.clusterCaPem !== undefined && options.clusterCaPem !== '') pools.push(parseCaBundle(options.clusterCaPem, 'the cluster CA'));
  if (pools.length > 0) requestAuthenticators.push(new X509Authenticator({ roots: CertificatePool.union(...pools), now }));

  const tokenAuthenticators: TokenAuthenticator[] = [];
  if (options.tokenAuthFile !== undefined && options.tokenAuthFile !== '') {
    const tokens = await loadTokenFile(options.tokenAuthFile);
    for (const warning of tokens.warnings) log?.(warning.message);
    tokenAuthenticators.push(new AudienceAgnosticTokenAuthenticator(tokens, apiAudiences));
  }

  const signingKey = options.serviceAccountSigningKeyFile !== undefined && options.serviceAccountSigningKeyFile !== ''
    ? await loadServiceAccountSigningKeyFile(options.serviceAccountSigningKeyFile)
    : undefined;
  const keys = await loadServiceAccountKeyFiles(options.serviceAccountKeyFiles ?? []);
  if (signingKey !== undefined && !keys.some((key) => key.kid === signingKey.kid)) keys.push(publicKeyOf(signingKey));
  const serviceAccountOptions = { keys, apiAudiences, lookups, now };
  if ((options.serviceAccountKeyFiles ?? []).length > 0) {
    tokenAuthenticators.push(legacyServiceAccountAuthenticator({ ...serviceAccountOptions, lookup: options.serviceAccountLookup ?? true }));
  }
  if (issuers.length > 0) {
    if (keys.length === 0) throw new AuthnError('INVALID_OPTIONS', '--service-account-issuer needs --service-account-key-file or --service-account-signing-key-file');
    tokenAuthenticators.push(boundServiceAccountAuthenticator({ ...serviceAccountOptions, issuers }));
  }
  if (signingKey !== undefined && issuers.length === 0) {
    throw new AuthnError('INVALID_OPTIONS', '--service-account-signing-key-file requires --service-account-issuer');
  }

  if (options.enableBootstrapTokenAuth === true) {
    const secrets: ObjectLookup = lookups.secret;
    const bootstrap = new BootstrapTokenAuthenticator({ secrets, now, onReject: (reason) => log?.(reason) });
    tokenAuthenticators.push(new AudienceAgnosticTokenAuthenticator(bootstrap, apiAudiences));
  }

  // After the service-account authenticators, as v1.25 orders them: both read JWTs, and a miss in
  // the OIDC one may cost a key refetch from the provider.
  const oidcOptions = options.oidc;
  if (oidcOptions !== undefined && oidcOptions.issuerUrl !== '' && oidcOptions.clientId !== '') {
    const caPem = oidcOptions.caFile !== undefined && oidcOptions.caFile !== '' ? await loadOidcCaFile(oidcOptions.caFile) : undefined;
    if (caPem !== undefined) parseCaBundle(caPem, oidcOptions.caFile as string);
    const oidc = new OidcAuthenticator({ ...oidcOptions, ...(caPem === undefined ? {} : { caPem }), now, log });
    starters.push(() => oidc.start());
    closers.push(() => oidc.stop());
    tokenAuthenticators.push(new AudienceAgnosticTokenAuthenticator(oidc, apiAudiences));
  }

  const webhookOptions = options.webhook;
  if (webhookOptions !== undefined && webhookOptions.configFile !== '') {
    const version = webhookOptions.version ?? 'v1beta1';
    if (version !== 'v1' && version !== 'v1beta1') {
      throw new AuthnError('INVALID_OPTIONS', `unsupported authentication webhook version ${JSON.stringify(version)}, supported versions are "v1", "v1beta1"`);
    }
    const client = await loadWebhookKubeconfig(webhookOptions.configFile);
    const webhook = tokenWebhookAuthenticator({ client, version, apiAudiences, cacheTtlMs: webhookOptions.cacheTtlMs, requestTimeoutMs: webhookOptions.requestTimeoutMs, log, now });
    closers.push(() => webhook.close());
    tokenAuthenticators.push(webhook.authenticator);
  }

  let tokens: TokenAuthenticator | undefined;
  if (tokenAuthenticators.length > 0) {
    const union = new TokenAuthenticatorUnion(tokenAuthenticators);
    tokens = options.tokenCache === false ? union : new CachedTokenAuthenticator(union, { now, ...options.tokenCache });
    requestAuthenticators.push(new BearerTokenAuthenticator(tokens, apiAudiences), new WebSocketProtocolAuthenticator(tokens, apiAudiences));
  }

  const tokenSigner = signingKey === undefined ? undefined : new ServiceAccountTokenSigner(signingKey, issuers[0]);
  let issuerDiscovery: IssuerDiscovery | undefined;
  const jwksUri = options.serviceAccountJwksUri ?? '';
  if (issuers.length > 0 && keys.length > 0 && (jwksUri !== '' || (options.externalAddress ?? '') !== '')) {
    issuerDiscovery = await buildIssuerDiscovery({ issuer: issuers[0], jwksUri, externalAddress: options.externalAddress, keys });
  }

  return {
    requests: new RequestAuthentication({ authenticators: requestAuthenticators, anonymous, apiAudiences }),
    tokens,
    apiAudiences,
    anonymous,
    requestHeaderNames,
    tokenSigner,
    serviceAccountKeys: keys,
    issuerDiscovery,
    tokenRequestLimits: {
      maxExpirationSeconds: options.serviceAccountMaxTokenExpirationSeconds ?? 0,
      extendExpiration: options.serviceAccountExtendTokenExpiration ?? true,
    },
    start: () => starters.forEach((start) => start()),
    stop: async () => {
      await Promise.all(closers.map((close) => close()));
    },
  };
}
