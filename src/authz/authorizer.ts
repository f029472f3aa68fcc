/**
 * The contract every authorizer keeps (spec 02 §2.4; apiserver
 * pkg/authorization/authorizer/interfaces.go). The request-info filter parses the path once;
 * authorizers receive only these attributes, never the raw path of a resource request.
 *
 * An authorizer answers `allow`, `deny` or `no-opinion`. The chain asks each in the order of
 * --authorization-mode and the first answer that is not `no-opinion` decides; when none has an
 * opinion the request is denied (defaults fail closed). `reason` is shown to the client in the
 * 403's message where kube-apiserver shows it, so it must not carry secrets either.
 */
import type { UserInfo } from '../authn';

export interface AuthorizationAttributes {
  readonly user: UserInfo;
  /**
   * For resource requests: get, list, watch, create, update, patch, delete, deletecollection,
   * or a special verb (impersonate, bind, escalate, approve, sign, use, ...). For non-resource
   * requests: the HTTP method in lower case (get, post, put, ...).
   */
  readonly verb: string;
  readonly isResourceRequest: boolean;
  /** The request path, for non-resource requests (`/healthz`, `/apis`, ...). */
  readonly path: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  /** '' for cluster-scoped requests and for lists across all namespaces. */
  readonly namespace: string;
  readonly name: string;
}

export type AuthorizationDecision = 'allow' | 'deny' | 'no-opinion';

export interface AuthorizationResult {
  readonly decision: AuthorizationDecision;
  /** Why; '' when there is nothing worth telling. */
  readonly reason: string;
  /**
   * Set when the authorizer could not evaluate (a webhook that failed or timed out): v1.25's
   * authorizers return an error beside their decision. A request nobody allowed whose chain
   * reported an error is answered 500, not 403 (see authz/forbidden.ts); reviews report it as
   * `status.evaluationError`. Never holds secrets.
   */
  readonly error?: string;
}

export interface Authorizer {
  /** For logs and metrics: `RBAC`, `Node`, `Webhook`, `ABAC`, `AlwaysAllow`, `AlwaysDeny`. */
  readonly name: string;
  authorize(attributes: AuthorizationAttributes): Promise<AuthorizationResult>;
}

/** rbac/v1 PolicyRule as SelfSubjectRulesReview reports it. */
export interface ResourceRule {
  readonly verbs: readonly string[];
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames: readonly string[];
}

export interface NonResourceRule {
  readonly verbs: readonly string[];
  readonly nonResourceURLs: readonly string[];
}

export interface RulesForUser {
  readonly resourceRules: readonly ResourceRule[];
  readonly nonResourceRules: readonly NonResourceRule[];
  /** True when some authorizer cannot list its rules (Webhook, Node), as SelfSubjectRulesReview says. */
  readonly incomplete: boolean;
  readonly evaluationError: string;
}

/** An authorizer that can also list what a user may do (for SelfSubjectRulesReview). */
export interface RuleResolver {
  rulesFor(user: UserInfo, namespace: string): Promise<RulesForUser>;
}
