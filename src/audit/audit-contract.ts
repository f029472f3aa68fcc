/**
 * What the audit hook of the filter chain (src/http/filters/audit.ts) and an audit backend
 * (this folder) say to each other: the policy's decision for a request, the attributes it is
 * made on, and the record of each stage. It lives here, below the HTTP layer, so that the
 * backends never import the layer that calls them.
 */
import type { UserInfo } from '../authn';
import type { RequestContext, RequestInfo } from '../endpoints';

export type AuditLevel = 'None' | 'Metadata' | 'Request' | 'RequestResponse';
export type AuditStage = 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';

export interface AuditPolicyDecision {
  readonly level: AuditLevel;
  readonly omitStages: readonly AuditStage[];
  readonly omitManagedFields: boolean;
}

/** What the policy is evaluated on: who (the authenticated user, before impersonation) asks what. */
export interface AuditRequestAttributes {
  /** undefined for a request that failed authentication. */
  readonly user?: UserInfo;
  readonly info: RequestInfo;
  /** The name a list or watch is about when a field selector pins metadata.name (as authorization reads it). */
  readonly name: string;
}

export interface AuditRecord {
  readonly auditId: string;
  readonly stage: AuditStage;
  readonly level: AuditLevel;
  readonly omitManagedFields: boolean;
  readonly requestReceivedTimestamp: Date;
  readonly stageTimestamp: Date;
  readonly method: string;
  readonly verb: string;
  readonly requestUri: string;
  /** Who the credentials were for; undefined after a failed authentication (kube writes `"user":{}`). */
  readonly user?: UserInfo;
  readonly impersonatedUser?: UserInfo;
  readonly info?: RequestInfo;
  /** The object name of the request (see AuditRequestAttributes.name). */
  readonly name: string;
  readonly sourceIps: readonly string[];
  readonly userAgent?: string;
  /** 0 before a response (RequestReceived). */
  readonly responseCode: number;
  /** The Status the response carried, when it was one (errors, a delete's Status). */
  readonly responseStatus?: Readonly<Record<string, unknown>>;
  /** For a 401: which credentials were tried (kube's message), never the credentials. */
  readonly authenticationFailure?: string;
  /** Level Request and above, later stages: the body as sent (undefined when none was read). */
  /** `yamlAsJson`: a YAML body as the handler decoded it, as JSON text. */
  readonly requestBody?: { readonly contentType: string; readonly bytes: Buffer; readonly yamlAsJson?: string };
  /** Level RequestResponse, ResponseComplete: the object written. */
  readonly responseObject?: unknown;
  readonly annotations: Readonly<Record<string, string>>;
  readonly context: RequestContext;
}

export interface AuditBackend {
  /** The policy's decision for a request; absent: every request at Metadata, no stage omitted. */
  decide?(request: AuditRequestAttributes): AuditPolicyDecision;
  /**
   * One stage of one request; must not throw and should not block for long (it runs on the
   * request path). For RequestReceived, false (or a promise of false) means the event could not
   * be stored and the request must fail (kube's blocking-strict mode); the hook waits for a
   * promise before the request goes on (blocking modes). Later stages' answers are not waited on.
   */
  record(record: AuditRecord): void | boolean | Promise<boolean>;
}
