/**
 * Everything kind-specific that the generic registry and the verb handlers need, behind one
 * interface (apiserver pkg/registry/rest: RESTCreateStrategy, RESTUpdateStrategy,
 * RESTDeleteStrategy, plus the registry's GetAttrs and TableConvertor). The registry, the
 * handlers and the server know no kind by name: they ask the resource's strategy.
 *
 * Call order on a write, as kube-apiserver's store runs it: applyDefaults (on decode) →
 * mutating admission → prepareForCreate / prepareForUpdate → validateCreate / validateUpdate →
 * canonicalize → validating admission → persistence. Strategies are pure: no I/O, no clock;
 * names, uids, timestamps and resourceVersions belong to the registry.
 */
import type { FieldLabelConversion } from '../apis/selectors';
import type { UserInfo } from '../authn';
import type { StatusCause } from '../util';
import type { JsonObject } from '../apis/object';

/** The subresource an update goes through; `finalize` is namespaces/finalize, `approval` certificatesigningrequests/approval. */
export type UpdateSubresource = '' | 'status' | 'finalize' | 'approval';

/** A field by the names leading to it from the object's root: `['metadata', 'ownerReferences']`. */
export type ResetField = readonly string[];

/** What a create knows of its request besides the object: who asks (absent for the server's own writes). */
export interface CreateContext {
  readonly user?: UserInfo;
}

export interface ValidationFailure {
  /** The whole message of the 422 Status, e.g. `ConfigMap "a_b" is invalid: metadata.name: Invalid value: ...`. */
  message: string;
  causes: StatusCause[];
}

export type TableApiVersion = 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1';
export type IncludeObject = 'None' | 'Object' | 'Metadata';

export interface TableRequest {
  readonly tableApiVersion: TableApiVersion;
  readonly includeObject: IncludeObject;
  /** The apiVersion and kind the rows' objects are shown as. */
  readonly objectKind: { apiVersion: string; kind: string };
}

export interface ResourceStrategy {
  /** v1.25's defaults, filled on every decode of a client's object (idempotent). */
  applyDefaults(object: JsonObject): void;
  /** System-owned fields on create: initial status, generation, kind-specific fields (a CSR's requester). */
  prepareForCreate(object: JsonObject, context?: CreateContext): void;
  /** What an update may change: status vs spec split, generation, kept fields. */
  prepareForUpdate(object: JsonObject, old: JsonObject, subresource: UpdateSubresource): void;
  /**
   * The fields a write through `subresource` ('' for the main resource) cannot set, which
   * prepareForCreate/prepareForUpdate put back (v1.25's GetResetFields): a write's manager never
   * owns them, as field ownership is recorded before the strategy runs.
   */
  resetFields(subresource: UpdateSubresource): readonly ResetField[];
  validateCreate(object: JsonObject, namespaced: boolean): ValidationFailure | undefined;
  validateUpdate(object: JsonObject, old: JsonObject, namespaced: boolean, subresource: UpdateSubresource): ValidationFailure | undefined;
  /** Puts an accepted object into the one form that is stored (Secret stringData into data, ...). */
  canonicalize(object: JsonObject): void;
  /** A PUT to a missing name creates it (AllowCreateOnUpdate). */
  readonly allowCreateOnUpdate: boolean;
  /**
   * An update without a resourceVersion replaces whatever is stored (AllowUnconditionalUpdate);
   * when false it is a 422. Absent: allowed, as for every built-in kind of v1.25.
   */
  readonly allowUnconditionalUpdate?: boolean;
  /** Seconds a delete waits before the object goes (graceful deletion); 0 deletes at once. */
  gracePeriodSeconds(object: JsonObject, requested: number | undefined): number;
  /** Changes the object gets when its deletion starts but finalizers hold it (Namespace: Terminating). */
  prepareForDeletion(object: JsonObject): void;
  /** Finalizers outside metadata.finalizers that still hold a terminating object. */
  hasPendingFinalizers(object: JsonObject): boolean;
  /** DELETE answers with the deleted object rather than a Status (ReturnDeletedObject). */
  readonly returnsDeletedObject: boolean;
  /** The field values a field selector matches, as the registry's GetAttrs gives them. */
  selectableFields(object: JsonObject): Record<string, string>;
  /**
   * The field labels a selector may use, when not the served version's built-in table (custom
   * resources: their converter's ConvertFieldLabel). Throws SelectorParseError to refuse one.
   */
  readonly fieldLabelConversion?: FieldLabelConversion;
  /** The meta.k8s.io Table of `objects` (server-side printing, spec 01 §2.3). */
  toTable(objects: JsonObject[], listMetadata: JsonObject, request: TableRequest): JsonObject;
}
