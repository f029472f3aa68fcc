/**
 * The shapes API Priority and Fairness reads: the flowcontrol.apiserver.k8s.io v1beta2 objects
 * (the fields v1.25 uses; v1beta1 has the same ones), what a request is classified by (its
 * RequestDigest: the request info and the user), and what it costs (its WorkEstimate, in seats).
 * The objects arrive as stored JSON; nothing here trusts their shape beyond what validation
 * guarantees, and readers fall back to "no match" on anything missing.
 */

export const FLOWCONTROL_GROUP = 'flowcontrol.apiserver.k8s.io';
/** The annotation v1.25's bootstrap ensurer reads to know whether it may rewrite a spec. */
export const AUTO_UPDATE_ANNOTATION = 'apf.kubernetes.io/autoupdate-spec';

export const NAME_ALL = '*';

export interface UserSubject { kind: 'User'; user?: { name: string } }
export interface GroupSubject { kind: 'Group'; group?: { name: string } }
export interface ServiceAccountSubject { kind: 'ServiceAccount'; serviceAccount?: { name: string; namespace: string } }
export type Subject = UserSubject | GroupSubject | ServiceAccountSubject;

export interface ResourcePolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  clusterScope?: boolean;
  namespaces?: string[];
}

export interface NonResourcePolicyRule {
  verbs: string[];
  nonResourceURLs: string[];
}

export interface PolicyRulesWithSubjects {
  subjects: Subject[];
  resourceRules?: ResourcePolicyRule[];
  nonResourceRules?: NonResourcePolicyRule[];
}

export type DistinguisherMethod = 'ByUser' | 'ByNamespace';

export interface FlowSchemaSpec {
  priorityLevelConfiguration: { name: string };
  matchingPrecedence: number;
  distinguisherMethod?: { type: DistinguisherMethod } | null;
  rules?: PolicyRulesWithSubjects[];
}

export interface ObjectMeta {
  name: string;
  uid?: string;
  generation?: number;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

export interface FlowSchema {
  apiVersion?: string;
  kind?: 'FlowSchema';
  metadata: ObjectMeta;
  spec: FlowSchemaSpec;
  status?: { conditions?: Array<Record<string, unknown>> };
}

export interface QueuingConfiguration {
  queues: number;
  handSize: number;
  queueLengthLimit: number;
}

export interface PriorityLevelConfigurationSpec {
  type: 'Exempt' | 'Limited';
  limited?: {
    assuredConcurrencyShares: number;
    limitResponse: { type: 'Queue' | 'Reject'; queuing?: QueuingConfiguration };
  };
}

export interface PriorityLevelConfiguration {
  apiVersion?: string;
  kind?: 'PriorityLevelConfiguration';
  metadata: ObjectMeta;
  spec: PriorityLevelConfigurationSpec;
  status?: Record<string, unknown>;
}

/** What classification and the work estimate read of a request (kube's RequestDigest). */
export interface RequestDigest {
  readonly isResourceRequest: boolean;
  /** Lower case: a resource verb (get, list, watch, create, ...) or, outside resources, the HTTP method. */
  readonly verb: string;
  /** The path, for non-resource requests. */
  readonly path: string;
  readonly group: string;
  readonly version: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  readonly user: { readonly name: string; readonly groups: readonly string[] };
  /** The query, for the list work estimate (limit, resourceVersion, selectors) and watches. */
  readonly query?: URLSearchParams;
}

/**
 * The seats a request occupies (kube's WorkEstimate): `initialSeats` while it executes, then
 * `finalSeats` for `additionalLatencySeconds` after it finished (a write's watch notifications);
 * the level reserves the larger of the two for both phases, as v1.25 does.
 */
export interface WorkEstimate {
  readonly initialSeats: number;
  readonly finalSeats: number;
  readonly additionalLatencySeconds: number;
}

export const ONE_SEAT: WorkEstimate = Object.freeze({ initialSeats: 1, finalSeats: 0, additionalLatencySeconds: 0 });

export function maxSeats(estimate: WorkEstimate): number {
  return Math.max(estimate.initialSeats, estimate.finalSeats);
}

/** Why a request was refused: v1.25's `reason` label of apiserver_flowcontrol_rejected_requests_total. */
export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';
