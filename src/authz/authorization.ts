/**
 * Builds the authorizer chain of `--authorization-mode` (kube-apiserver v1.25
 * pkg/kubeapiserver/authorizer/config.go): the system:masters authorizer first, then one
 * authorizer per mode in order, and the union of the rule resolvers for SelfSubjectRulesReview.
 * RBAC and Node follow the object feed; ABAC reads its policy file now; Webhook reads its
 * kubeconfig now. Throws AuthzError when the options do not validate or a file is unusable.
 */
import { AbacAuthorizer } from './abac/abac-authorizer';
import {
  AlwaysAllowAuthorizer,
  AlwaysDenyAuthorizer,
  AuthorizerChain,
  PrivilegedGroupsAuthorizer,
  RuleResolverChain,
  validateAuthorizationOptions,
  type AuthorizationMode,
} from './authorization-chain';
import type { Authorizer, RuleResolver } from './authorizer';
import { AuthzError } from './errors';
import { NodeAuthorizer } from './node/node-authorizer';
import type { ObjectFeed } from './object-feed';
import { RbacAuthorizer } from './rbac/rbac-authorizer';
import { WebhookAuthorizer, type WebhookRetryBackoff, type WebhookVersion } from './webhook/webhook-authorizer';
import { readWebhookKubeconfig } from './webhook/webhook-config';

export interface AuthorizationConfig {
  /** --authorization-mode, parsed with parseAuthorizationModes. */
  readonly modes: readonly string[];
  /** The watch cache; required for RBAC and Node. */
  readonly feed?: ObjectFeed;
  /** --authorization-policy-file. */
  readonly policyFile?: string;
  /** --authorization-webhook-config-file. */
  readonly webhookConfigFile?: string;
  /** --authorization-webhook-version; v1beta1 by default, as v1.25. */
  readonly webhookVersion?: string;
  /** --authorization-webhook-cache-authorized-ttl (default 5m). */
  readonly webhookAuthorizedTtlMs?: number;
  /** --authorization-webhook-cache-unauthorized-ttl (default 30s). */
  readonly webhookUnauthorizedTtlMs?: number;
  readonly webhookRetryBackoff?: WebhookRetryBackoff;
  readonly log?: (line: string) => void;
}

export interface Authorization {
  /** Ask this for every request; the filter turns a non-allow into authorizationFailure(...). */
  readonly authorizer: Authorizer;
  /** For SelfSubjectRulesReview. */
  readonly ruleResolver: RuleResolver;
  /** Present when RBAC is a mode: the escalation checks and bootstrap use it. */
  readonly rbac?: RbacAuthorizer;
  readonly node?: NodeAuthorizer;
  readonly webhook?: WebhookAuthorizer;
  /** Starts following the feed (RBAC, Node). */
  start(): void;
  stop(): Promise<void>;
  /** True once RBAC and Node have listed their prefixes; serve only then (readyz). */
  readonly isSynced: boolean;
}

export function createAuthorization(config: AuthorizationConfig): Authorization {
  const problems = validateAuthorizationOptions({
    modes: config.modes,
    policyFile: config.policyFile,
    webhookConfigFile: config.webhookConfigFile,
    webhookVersion: config.webhookVersion,
    webhookRetryAttempts: config.webhookRetryBackoff?.attempts,
  });
  if (problems.length > 0) throw new AuthzError('INVALID_AUTHORIZATION_OPTIONS', problems.join('\n'));
  const authorizers: Authorizer[] = [new PrivilegedGroupsAuthorizer()];
  const resolvers: RuleResolver[] = [];
  let rbac: RbacAuthorizer | undefined;
  let node: NodeAuthorizer | undefined;
  let webhook: WebhookAuthorizer | undefined;
  const needFeed = (mode: string): ObjectFeed => {
    if (config.feed === undefined) throw new AuthzError('INVALID_AUTHORIZATION_OPTIONS', `authorization-mode ${mode} needs the object feed`);
    return config.feed;
  };
  for (const mode of config.modes as AuthorizationMode[]) {
    switch (mode) {
      case 'Node':
        node = new NodeAuthorizer(needFeed(mode), { log: config.log });
        authorizers.push(node);
        resolvers.push(node);
        break;
      case 'AlwaysAllow': {
        const a = new AlwaysAllowAuthorizer();
        authorizers.push(a);
        resolvers.push(a);
        break;
      }
      case 'AlwaysDeny': {
        const a = new AlwaysDenyAuthorizer();
        authorizers.push(a);
        resolvers.push(a);
        break;
      }
      case 'ABAC': {
        const a = AbacAuthorizer.fromFile(config.policyFile as string);
        authorizers.push(a);
        resolvers.push(a);
        break;
      }
      case 'Webhook':
        webhook = new WebhookAuthorizer({
          endpoint: readWebhookKubeconfig(config.webhookConfigFile as string),
          version: (config.webhookVersion ?? 'v1beta1') as WebhookVersion,
          authorizedTtlMs: config.webhookAuthorizedTtlMs,
          unauthorizedTtlMs: config.webhookUnauthorizedTtlMs,
          retryBackoff: config.webhookRetryBackoff,
          log: config.log,
        });
        authorizers.push(webhook);
        resolvers.push(webhook);
        break;
      case 'RBAC':
        rbac = new RbacAuthorizer(needFeed(mode), { log: config.log });
        authorizers.push(rbac);
        resolvers.push(rbac);
        break;
    }
  }
  return {
    authorizer: new AuthorizerChain(authorizers),
    ruleResolver: new RuleResolverChain(resolvers),
    rbac,
    node,
    webhook,
    start() {
      rbac?.start();
      node?.start();
    },
    async stop() {
      rbac?.stop();
      node?.stop();
      await webhook?.close();
    },
    get isSynced() {
      return (rbac?.isSynced ?? true) && (node?.isSynced ?? true);
    },
  };
}
