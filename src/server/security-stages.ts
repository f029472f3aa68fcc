/**
 * The security stages of a replica, assembled from kube-apiserver's options: authentication
 * (src/authn) and authorization (src/authz) for the filter chain, the TLS client-CA bundle, the
 * create-only review resources (TokenReview, the SubjectAccessReviews, SelfSubjectRulesReview),
 * serviceaccounts/token, the service-account issuer's discovery documents, and the RBAC
 * escalation check. The service-account signing key pair is the cluster's (`<pki>/sa.key`,
 * `sa.pub`, shared by every replica with the rest of the PKI) unless flags name other files.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  JWKS_PATH,
  OPENID_CONFIGURATION_PATH,
  buildAuthentication,
  evaluateTokenRequest,
  reviewToken,
  type Authentication,
  type AuthenticationOptions,
  type ObjectLookup,
} from '../authn';
import {
  RbacAuthorizer,
  createAuthorization,
  evaluateLocalSubjectAccessReview,
  evaluateSelfSubjectAccessReview,
  evaluateSelfSubjectRulesReview,
  evaluateSubjectAccessReview,
  type Authorization,
  type AuthorizationConfig,
  type ReviewOutcome,
} from '../authz';
import type { AuditBackend } from '../audit';
import { STORE_PKI_FILES, pkiDirectory } from '../certificates';
import type { SubresourceCreater } from '../registry';
import { authenticationFilter, authorizationFilter, auditFilter, impersonationFilter, requestInfoFilter, type Filter } from '../http';
import type { WatchCache } from '../storage';
import type { JsonObject } from '../apis/object';
import { resourceKeyPrefix } from '../apis/catalogue';

export interface ApiServerSecurity {
  authentication: AuthenticationOptions;
  authorization: Omit<AuthorizationConfig, 'feed' | 'log'>;
}

export interface SecurityParts {
  authentication: Authentication;
  authorization: Authorization;
  /** The RBAC rules the escalation check reads (the RBAC authorizer's, or one of its own when RBAC is not a mode). */
  rbac: RbacAuthorizer;
  /** CAs whose certificates the TLS handshake asks clients for (cluster CA, --client-ca-file, the proxy's CA). */
  clientCaBundle: string;
  filters: Filter[];
  /**
   * The storages of the review APIs and of serviceaccounts/token, which store nothing and answer
   * from the authenticators and authorizers: by "<group>/<resource>", then subresource ('' for
   * the resource itself), as the built-in storages take them.
   */
  creates: Map<string, Map<string, SubresourceCreater>>;
  /** /.well-known/openid-configuration and /openid/v1/jwks, when a service-account issuer is configured. */
  documents: Map<string, () => { body: string; contentType: string; cacheControl: string } | undefined>;
  readonly isSynced: boolean;
  stop(): Promise<void>;
}

/** The cluster's service-account key pair, made with the rest of the shared PKI (src/certificates/store-pki.ts). */
function clusterServiceAccountKeys(dataDir: string): { keyFile: string; publicKeyFile: string } {
  const dir = pkiDirectory(dataDir);
  return { keyFile: join(dir, STORE_PKI_FILES.serviceAccountKey), publicKeyFile: join(dir, STORE_PKI_FILES.serviceAccountPublicKey) };
}

function cacheLookup(cache: WatchCache, resource: string): ObjectLookup {
  return (namespace, name) => cache.get(`${resourceKeyPrefix({ group: '', resource })}${namespace}/${name}`);
}

function reviewAnswer(outcome: ReviewOutcome): { status: number; object: JsonObject } {
  if (!outcome.ok) throw outcome.error;
  return { status: 201, object: outcome.object };
}

export async function buildSecurity(options: {
  security: ApiServerSecurity;
  dataDir: string;
  clusterCaPem: string;
  /** host:port clients reach this server at, for the issuer's default jwks_uri. */
  externalAddress: string;
  cache: WatchCache;
  audit?: AuditBackend;
  log: (line: string) => void;
}): Promise<SecurityParts> {
  const { security, cache, log } = options;
  const clusterKeys = clusterServiceAccountKeys(options.dataDir);
  const given = security.authentication;
  const lookups = { serviceAccount: cacheLookup(cache, 'serviceaccounts'), secret: cacheLookup(cache, 'secrets'), pod: cacheLookup(cache, 'pods') };
  const authentication = await buildAuthentication({
    ...given,
    clusterCaPem: options.clusterCaPem,
    serviceAccountKeyFiles: (given.serviceAccountKeyFiles ?? []).length > 0 ? given.serviceAccountKeyFiles : [clusterKeys.publicKeyFile],
    serviceAccountSigningKeyFile: (given.serviceAccountSigningKeyFile ?? '') !== '' ? given.serviceAccountSigningKeyFile : clusterKeys.keyFile,
    externalAddress: options.externalAddress,
  }, { lookups, log });
  const authorization = createAuthorization({ ...security.authorization, feed: cache, log });
  // v1.25's RBAC storage checks escalation whatever the authorization mode.
  const rbac = authorization.rbac ?? new RbacAuthorizer(cache, { log });
  const ownRbac = authorization.rbac === undefined;
  authentication.start();
  authorization.start();
  if (ownRbac) rbac.start();

  const caFiles = [given.clientCaFile, given.requestHeader?.clientCaFile].filter((f): f is string => f !== undefined && f !== '');
  const clientCaBundle = [options.clusterCaPem, ...(await Promise.all(caFiles.map((file) => readFile(file, 'utf8'))))].join('\n');

  const authorizer = authorization.authorizer;
  const filters: Filter[] = [
    requestInfoFilter,
    authenticationFilter(authentication.requests, authentication.requestHeaderNames, log),
    auditFilter(options.audit),
    impersonationFilter((attributes) => authorizer.authorize(attributes)),
    authorizationFilter(authorizer),
  ];

  // Each review answers one create, on the collection of its resource (kube's REST storages of the
  // authentication and authorization groups).
  const review = (apiVersion: string, kind: string, answer: SubresourceCreater['create']): Map<string, SubresourceCreater> => new Map([['', { apiVersion, kind, create: answer }]]);
  const creates = new Map<string, Map<string, SubresourceCreater>>([
    ['authentication.k8s.io/tokenreviews', review('authentication.k8s.io/v1', 'TokenReview', async (_registry, request) => {
      const answer = await reviewToken({ body: request.body, namespace: request.namespace, apiVersion: 'authentication.k8s.io/v1', tokens: authentication.tokens, apiAudiences: authentication.apiAudiences, anonymous: authentication.anonymous });
      if (answer instanceof Error) throw answer;
      return { status: 201, object: answer };
    })],
    ['authorization.k8s.io/subjectaccessreviews', review('authorization.k8s.io/v1', 'SubjectAccessReview', async (_registry, request) => reviewAnswer(await evaluateSubjectAccessReview(request.body, authorizer)))],
    ['authorization.k8s.io/localsubjectaccessreviews', review('authorization.k8s.io/v1', 'LocalSubjectAccessReview', async (_registry, request) => reviewAnswer(await evaluateLocalSubjectAccessReview(request.body, request.namespace, authorizer)))],
    ['authorization.k8s.io/selfsubjectaccessreviews', review('authorization.k8s.io/v1', 'SelfSubjectAccessReview', async (_registry, request) => reviewAnswer(await evaluateSelfSubjectAccessReview(request.body, request.writer.user, authorizer)))],
    ['authorization.k8s.io/selfsubjectrulesreviews', review('authorization.k8s.io/v1', 'SelfSubjectRulesReview', async (_registry, request) => reviewAnswer(await evaluateSelfSubjectRulesReview(request.body, request.writer.user, authorization.ruleResolver)))],
  ]);
  const signer = authentication.tokenSigner;
  if (signer !== undefined) {
    creates.set('/serviceaccounts', new Map([['token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      async create(_registry, request) {
        const outcome = await evaluateTokenRequest({
          namespace: request.namespace,
          name: request.name,
          body: request.body,
          serviceAccount: lookups.serviceAccount(request.namespace, request.name),
          pods: lookups.pod,
          secrets: lookups.secret,
          signer,
          apiAudiences: authentication.apiAudiences,
          maxExpirationSeconds: authentication.tokenRequestLimits.maxExpirationSeconds,
          extendExpiration: authentication.tokenRequestLimits.extendExpiration,
        });
        if (outcome instanceof Error) throw outcome;
        return { status: 201, object: outcome.tokenRequest, warnings: outcome.warnings };
      },
    }]]));
  }
  const documents = new Map<string, () => { body: string; contentType: string; cacheControl: string } | undefined>();
  const discovery = authentication.issuerDiscovery;
  if (discovery !== undefined) {
    documents.set(OPENID_CONFIGURATION_PATH, () => discovery.openidConfiguration);
    documents.set(JWKS_PATH, () => discovery.jwks);
  }
  return {
    authentication,
    authorization,
    rbac,
    clientCaBundle,
    filters,
    creates,
    documents,
    get isSynced() {
      return authorization.isSynced && rbac.isSynced;
    },
    async stop() {
      if (ownRbac) rbac.stop();
      await authorization.stop();
      await authentication.stop();
    },
  };
}
