/**
 * The authorizer chain of kube-apiserver v1.25 (pkg/kubeapiserver/authorizer/config.go,
 * apiserver pkg/authorization/union, authorizerfactory): `--authorization-mode` parsed and
 * validated with v1.25's messages; the `system:masters` privileged-group authorizer always first;
 * then the modes in the order given. The first `allow` or `deny` decides; when every authorizer
 * has no opinion the result is no opinion (the filter denies) with the non-empty reasons joined
 * by newlines and the errors aggregated.
 *
 * Decision table (first row that applies):
 *   user in system:masters                  → allow (reason '')
 *   an authorizer answers allow or deny     → that answer and its reason
 *   none has an opinion                     → no-opinion, reasons joined, errors aggregated
 */
import { MASTERS_GROUP, type UserInfo } from '../authn';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer, NonResourceRule, ResourceRule, RuleResolver, RulesForUser } from './authorizer';
import { aggregateErrorText, goQuote, goQuoteList } from './rbac/go-text';

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];

export function isAuthorizationMode(mode: string): mode is AuthorizationMode {
  return (AUTHORIZATION_MODES as readonly string[]).includes(mode);
}

/** The comma list of --authorization-mode, as pflag's string slice reads it (no trimming). */
export function parseAuthorizationModes(text: string): string[] {
  return text === '' ? [] : text.split(',');
}

export interface AuthorizationOptions {
  modes: readonly string[];
  policyFile?: string;
  webhookConfigFile?: string;
  webhookVersion?: string;
  /** --authorization-webhook-cache-authorized-ttl etc. are not validated by v1.25. */
  webhookRetryAttempts?: number;
}

/** BuiltInAuthorizationOptions.Validate of v1.25, plus the webhook version check of its factory. */
export function validateAuthorizationOptions(options: AuthorizationOptions): string[] {
  const errs: string[] = [];
  const modes = options.modes;
  if (modes.length === 0) errs.push('at least one authorization-mode must be passed');
  for (const mode of modes) {
    if (!isAuthorizationMode(mode)) errs.push(`authorization-mode ${goQuote(mode)} is not a valid mode`);
    if (mode === 'ABAC' && !options.policyFile) errs.push("authorization-mode ABAC's authorization policy file not passed");
    if (mode === 'Webhook' && !options.webhookConfigFile) errs.push("authorization-mode Webhook's authorization config file not passed");
  }
  if (options.policyFile && !modes.includes('ABAC')) errs.push('cannot specify --authorization-policy-file without mode ABAC');
  if (options.webhookConfigFile && !modes.includes('Webhook')) errs.push('cannot specify --authorization-webhook-config-file without mode Webhook');
  if (new Set(modes).size !== modes.length) errs.push(`authorization-mode ${goQuoteList(modes)} has mode specified more than once`);
  if (options.webhookRetryAttempts !== undefined && options.webhookRetryAttempts <= 0) {
    errs.push(`number of attempts for the authorization webhook must be >0 but is: ${options.webhookRetryAttempts}`);
  }
  const version = options.webhookVersion ?? 'v1beta1';
  if (modes.includes('Webhook') && version !== 'v1' && version !== 'v1beta1') {
    errs.push(`unsupported webhook authorizer version ${goQuote(version)}, supported versions are "v1", "v1beta1"`);
  }
  return errs;
}

export class AlwaysAllowAuthorizer implements Authorizer, RuleResolver {
  readonly name = 'AlwaysAllow';
  async authorize(): Promise<AuthorizationResult> {
    return { decision: 'allow', reason: '' };
  }
  async rulesFor(): Promise<RulesForUser> {
    return {
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
      evaluationError: '',
    };
  }
}

/** v1.25's AlwaysDeny answers no opinion (so a later mode may still allow), saying why. */
export class AlwaysDenyAuthorizer implements Authorizer, RuleResolver {
  readonly name = 'AlwaysDeny';
  async authorize(): Promise<AuthorizationResult> {
    return { decision: 'no-opinion', reason: 'Everything is forbidden.' };
  }
  async rulesFor(): Promise<RulesForUser> {
    return { resourceRules: [], nonResourceRules: [], incomplete: false, evaluationError: '' };
  }
}

/** authorizerfactory.NewPrivilegedGroups: members of the groups may do anything. */
export class PrivilegedGroupsAuthorizer implements Authorizer {
  readonly name = 'PrivilegedGroups';
  constructor(private readonly groups: readonly string[] = [MASTERS_GROUP]) {}
  async authorize(attributes: AuthorizationAttributes): Promise<AuthorizationResult> {
    for (const group of attributes.user.groups) if (this.groups.includes(group)) return { decision: 'allow', reason: '' };
    return { decision: 'no-opinion', reason: '' };
  }
}

/** union.New of the authorizers, in order. */
export class AuthorizerChain implements Authorizer {
  readonly name = 'Chain';
  constructor(readonly authorizers: readonly Authorizer[]) {}

  async authorize(attributes: AuthorizationAttributes): Promise<AuthorizationResult> {
    const reasons: string[] = [];
    const errs: string[] = [];
    for (const authorizer of this.authorizers) {
      let result: AuthorizationResult;
      try {
        result = await authorizer.authorize(attributes);
      } catch (err) {
        // A throwing authorizer is a bug; treat it as v1.25 treats an error: no opinion.
        result = { decision: 'no-opinion', reason: '', error: `${authorizer.name}: ${(err as Error).message}` };
      }
      if (result.error) errs.push(result.error);
      if (result.reason !== '') reasons.push(result.reason);
      if (result.decision !== 'no-opinion') {
        return result.error ? result : { decision: result.decision, reason: result.reason };
      }
    }
    const error = aggregateErrorText(errs);
    return error === '' ? { decision: 'no-opinion', reason: reasons.join('\n') } : { decision: 'no-opinion', reason: reasons.join('\n'), error };
  }
}

/** union.NewRuleResolvers: every resolver's rules, incomplete if any is, errors aggregated. */
export class RuleResolverChain implements RuleResolver {
  constructor(readonly resolvers: readonly RuleResolver[]) {}

  async rulesFor(user: UserInfo, namespace: string): Promise<RulesForUser> {
    const resourceRules: ResourceRule[] = [];
    const nonResourceRules: NonResourceRule[] = [];
    const errs: string[] = [];
    let incomplete = false;
    for (const resolver of this.resolvers) {
      const rules = await resolver.rulesFor(user, namespace);
      if (rules.incomplete) incomplete = true;
      if (rules.evaluationError !== '') errs.push(rules.evaluationError);
      resourceRules.push(...rules.resourceRules);
      nonResourceRules.push(...rules.nonResourceRules);
    }
    return { resourceRules, nonResourceRules, incomplete, evaluationError: aggregateErrorText(errs) };
  }
}
