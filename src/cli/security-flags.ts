/**
 * kube-apiserver's authentication and authorization flags (pkg/kubeapiserver/options
 * authentication.go and authorization.go, v1.25), with its names and defaults except where
 * Carina is secure by default: --authorization-mode defaults to Node,RBAC (as kubeadm sets it),
 * and the service-account issuer and keys default to the cluster's own (the PKI's sa.key and
 * sa.pub), so `carina server` with no flags issues and verifies service-account tokens.
 */
import type { AuthenticationOptions } from '../authn';
import type { ApiServerSecurity } from '../server/api-server';
import { FlagError, type FlagSpec, type FlagValues } from './flags';

/** kubeadm's issuer; kube-apiserver v1.25 requires the flag, Carina defaults it. */
export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export const SECURITY_FLAGS: FlagSpec[] = [
  { name: 'anonymous-auth', kind: 'boolean', default: true, help: 'Requests no authenticator rejects are served as system:anonymous (group system:unauthenticated), with what the authorizers give them.' },
  { name: 'client-ca-file', kind: 'string', default: '', help: 'CA bundle for client certificates, besides the cluster CA: CN is the user, O the groups.' },
  { name: 'token-auth-file', kind: 'string', default: '', help: 'Static bearer tokens: CSV lines token,user,uid,"group1,group2".' },
  { name: 'enable-bootstrap-token-auth', kind: 'boolean', default: false, help: 'Bootstrap tokens (Secrets of type bootstrap.kubernetes.io/token in kube-system) authenticate as system:bootstrap:<id>.' },
  { name: 'service-account-issuer', kind: 'array', default: [DEFAULT_SERVICE_ACCOUNT_ISSUER], help: 'Issuer of service-account tokens (repeatable: the first signs, all are accepted).' },
  { name: 'service-account-key-file', kind: 'array', default: [], help: 'PEM public keys (or private keys, or certificates) that verify service-account tokens (repeatable; default: the cluster\'s sa.pub).' },
  { name: 'service-account-signing-key-file', kind: 'string', default: '', help: 'PEM private key that signs service-account tokens (default: the cluster\'s sa.key).' },
  { name: 'api-audiences', kind: 'list', default: [], help: 'Audiences a token must have one of (default: the service-account issuers).' },
  { name: 'service-account-max-token-expiration', kind: 'duration', default: 0, help: 'Longest lifetime of a requested service-account token (0: no maximum).' },
  { name: 'service-account-extend-token-expiration', kind: 'boolean', default: true, help: 'Projected tokens of pods (3607 s) are valid for a year, with a warning after their requested expiry.' },
  { name: 'service-account-lookup', kind: 'boolean', default: true, help: 'A service-account token is valid only while its account (and Secret or Pod) exists.' },
  { name: 'service-account-jwks-uri', kind: 'string', default: '', help: 'jwks_uri published in /.well-known/openid-configuration (default: derived from the issuer or the advertised address).' },
  { name: 'oidc-issuer-url', kind: 'string', default: '', help: 'https URL of the OpenID Connect issuer whose id-tokens authenticate.' },
  { name: 'oidc-client-id', kind: 'string', default: '', help: 'Client id every id-token must be issued for.' },
  { name: 'oidc-username-claim', kind: 'string', default: 'sub', help: 'Claim holding the user name.' },
  { name: 'oidc-username-prefix', kind: 'string', default: '', help: 'Prefix for user names ("-" for none; default: the issuer URL and "#" for claims other than email).' },
  { name: 'oidc-groups-claim', kind: 'string', default: '', help: 'Claim holding the groups (a string or a list of strings).' },
  { name: 'oidc-groups-prefix', kind: 'string', default: '', help: 'Prefix for group names.' },
  { name: 'oidc-required-claim', kind: 'array', default: [], help: 'key=value a token must carry (repeatable).' },
  { name: 'oidc-signing-algs', kind: 'list', default: ['RS256'], help: 'Accepted id-token signing algorithms.' },
  { name: 'oidc-ca-file', kind: 'string', default: '', help: 'CA bundle for the issuer\'s TLS certificate (default: the system roots).' },
  { name: 'authentication-token-webhook-config-file', kind: 'string', default: '', help: 'kubeconfig of a TokenReview webhook that authenticates bearer tokens.' },
  { name: 'authentication-token-webhook-version', kind: 'string', default: 'v1beta1', help: 'TokenReview version sent to the webhook: v1 or v1beta1.' },
  { name: 'authentication-token-webhook-cache-ttl', kind: 'duration', default: 120_000, help: 'How long the webhook\'s answers are cached.' },
  { name: 'requestheader-client-ca-file', kind: 'string', default: '', help: 'CA of an authenticating proxy\'s client certificate; its headers count only after it verifies.' },
  { name: 'requestheader-allowed-names', kind: 'list', default: [], help: 'Common names the proxy\'s certificate may have (empty: any).' },
  { name: 'requestheader-username-headers', kind: 'list', default: [], help: 'Headers holding the user name, first one set wins (e.g. X-Remote-User).' },
  { name: 'requestheader-group-headers', kind: 'list', default: [], help: 'Headers whose every value is a group (e.g. X-Remote-Group).' },
  { name: 'requestheader-extra-headers-prefix', kind: 'list', default: [], help: 'Header prefixes giving extra attributes (e.g. X-Remote-Extra-).' },
  { name: 'authorization-mode', kind: 'list', default: ['Node', 'RBAC'], help: 'Authorizers in order, first decision wins: AlwaysAllow, AlwaysDeny, ABAC, RBAC, Node, Webhook.' },
  { name: 'authorization-policy-file', kind: 'string', default: '', help: 'ABAC policy, one JSON object per line.' },
  { name: 'authorization-webhook-config-file', kind: 'string', default: '', help: 'kubeconfig of a SubjectAccessReview webhook (mode Webhook).' },
  { name: 'authorization-webhook-version', kind: 'string', default: 'v1beta1', help: 'SubjectAccessReview version sent to the webhook: v1 or v1beta1.' },
  { name: 'authorization-webhook-cache-authorized-ttl', kind: 'duration', default: 300_000, help: 'How long the webhook\'s "allowed" answers are cached.' },
  { name: 'authorization-webhook-cache-unauthorized-ttl', kind: 'duration', default: 30_000, help: 'How long the webhook\'s "denied" answers are cached.' },
];

function requiredClaims(values: string[]): Record<string, string> {
  const claims: Record<string, string> = {};
  for (const value of values) {
    const eq = value.indexOf('=');
    if (eq <= 0) throw new FlagError(`invalid argument "${value}" for "--oidc-required-claim": must be formatted as key=value`);
    claims[value.slice(0, eq)] = value.slice(eq + 1);
  }
  return claims;
}

/** The server's authentication and authorization options from the flags. */
export function securityFromFlags(flags: FlagValues): ApiServerSecurity {
  const strings = (name: string) => flags[name] as string[];
  const text = (name: string) => flags[name] as string;
  const authentication: AuthenticationOptions = {
    anonymousAuth: flags['anonymous-auth'] as boolean,
    clientCaFile: text('client-ca-file'),
    tokenAuthFile: text('token-auth-file'),
    enableBootstrapTokenAuth: flags['enable-bootstrap-token-auth'] as boolean,
    serviceAccountIssuers: strings('service-account-issuer'),
    serviceAccountKeyFiles: strings('service-account-key-file'),
    serviceAccountSigningKeyFile: text('service-account-signing-key-file'),
    apiAudiences: strings('api-audiences'),
    serviceAccountMaxTokenExpirationSeconds: Math.floor((flags['service-account-max-token-expiration'] as number) / 1000),
    serviceAccountExtendTokenExpiration: flags['service-account-extend-token-expiration'] as boolean,
    serviceAccountLookup: flags['service-account-lookup'] as boolean,
    serviceAccountJwksUri: text('service-account-jwks-uri'),
    oidc: text('oidc-issuer-url') === '' ? undefined : {
      issuerUrl: text('oidc-issuer-url'),
      clientId: text('oidc-client-id'),
      usernameClaim: text('oidc-username-claim'),
      usernamePrefix: text('oidc-username-prefix') === '' ? undefined : text('oidc-username-prefix'),
      groupsClaim: text('oidc-groups-claim') === '' ? undefined : text('oidc-groups-claim'),
      groupsPrefix: text('oidc-groups-prefix'),
      requiredClaims: requiredClaims(strings('oidc-required-claim')),
      signingAlgs: strings('oidc-signing-algs'),
      caFile: text('oidc-ca-file'),
    },
    webhook: text('authentication-token-webhook-config-file') === '' ? undefined : {
      configFile: text('authentication-token-webhook-config-file'),
      version: text('authentication-token-webhook-version') as 'v1' | 'v1beta1',
      cacheTtlMs: flags['authentication-token-webhook-cache-ttl'] as number,
    },
    requestHeader: text('requestheader-client-ca-file') === '' ? undefined : {
      clientCaFile: text('requestheader-client-ca-file'),
      allowedNames: strings('requestheader-allowed-names'),
      usernameHeaders: strings('requestheader-username-headers'),
      groupHeaders: strings('requestheader-group-headers'),
      extraHeaderPrefixes: strings('requestheader-extra-headers-prefix'),
    },
  };
  return {
    authentication,
    authorization: {
      modes: strings('authorization-mode'),
      policyFile: text('authorization-policy-file'),
      webhookConfigFile: text('authorization-webhook-config-file'),
      webhookVersion: text('authorization-webhook-version'),
      webhookAuthorizedTtlMs: flags['authorization-webhook-cache-authorized-ttl'] as number,
      webhookUnauthorizedTtlMs: flags['authorization-webhook-cache-unauthorized-ttl'] as number,
    },
  };
}
