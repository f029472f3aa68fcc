/**
 * The public surface of authorization (src/authz). See README.md for the modes, their order and
 * the decision table. Example:
 *
 *     const authz = createAuthorization({ modes: parseAuthorizationModes('Node,RBAC'), feed: watchCache });
 *     authz.start();
 *     const result = await authz.authorizer.authorize(attributes);
 *     const failure = authorizationFailure(attributes, result); // undefined when allowed
 */

export type { AuthorizationAttributes, AuthorizationDecision, AuthorizationResult, Authorizer, NonResourceRule, ResourceRule, RuleResolver, RulesForUser } from './authorizer';
export type { FeedEvent, ObjectFeed } from './object-feed';
export { AuthzError, type AuthzErrorCode } from './errors';
/** Builds the chain for --authorization-mode; see authorization.ts. */
export { createAuthorization, type Authorization, type AuthorizationConfig } from './authorization';
/** Mode parsing, validation and the chain's building blocks. */
export {
  AUTHORIZATION_MODES,
  AlwaysAllowAuthorizer,
  AlwaysDenyAuthorizer,
  AuthorizerChain,
  PrivilegedGroupsAuthorizer,
  RuleResolverChain,
  isAuthorizationMode,
  parseAuthorizationModes,
  validateAuthorizationOptions,
  type AuthorizationMode,
  type AuthorizationOptions,
} from './authorization-chain';
/** The 403 (or 500) the authorization filter answers. */
export { authorizationFailure, forbiddenError, forbiddenMessage } from './forbidden';
export { RbacAuthorizer, RoleNotFoundError, UnsupportedRoleRefError, describeBinding } from './rbac/rbac-authorizer';
export { ruleAllows, rulesAllow } from './rbac/rule-matching';
export { checkBindingEscalation, checkRoleEscalation, covers, escalationMessage, type EscalationCheckContext } from './rbac/escalation';
export { bootstrapPolicy, nodeRules, type BootstrapPolicy } from './rbac/bootstrap-policy';
export { PolicyReconciler, PolicyReconcileError, type ReconcileResult } from './rbac/policy-reconciler';
export { ClusterRoleAggregationController } from './rbac/cluster-role-aggregation';
export type { RbacClient, RbacKind, RbacObject } from './rbac/rbac-client';
export { normalizeRule, normalizeRules, type BindingObject, type NormalizedRule, type PolicyRule, type RoleObject, type RoleRef, type Subject } from './rbac/types';
export { NodeAuthorizer, nodeIdentity } from './node/node-authorizer';
export { WebhookAuthorizer, DEFAULT_RETRY_BACKOFF, type WebhookRetryBackoff, type WebhookVersion } from './webhook/webhook-authorizer';
export { readWebhookKubeconfig, parseWebhookKubeconfig, type WebhookEndpoint } from './webhook/webhook-config';
export { AbacAuthorizer, parsePolicyFile } from './abac/abac-authorizer';
export {
  evaluateLocalSubjectAccessReview,
  evaluateSelfSubjectAccessReview,
  evaluateSelfSubjectRulesReview,
  evaluateSubjectAccessReview,
  attributesFromSpec,
  type ReviewOutcome,
} from './review/access-reviews';
/** The authorizer checks the impersonation filter makes (spec 02 §5.7). */
export { FeedMirror } from './object-feed';
