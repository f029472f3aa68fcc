/**
 * What distinguishes one built-in kind's registry strategy from another in v1.25
 * (k8s.io/kubernetes pkg/registry/<group>/<resource>/strategy.go), as data and small hooks.
 * `defineStrategy` (define-strategy.ts) turns these rules into a full ResourceStrategy; each
 * kind that needs more than the defaults has its rules in a file of its own beside this one.
 */
import type { ResetField, UpdateSubresource } from '../strategy';
import type { JsonObject } from '../../apis/object';

export interface KindRules {
  /** The status a new object gets; absent when the type keeps what the client sent, or has none. */
  readonly initialStatus?: (object: JsonObject) => JsonObject;
  /** Whether main-resource updates keep the old status (the type has a status subresource). */
  readonly hasStatusSubresource?: boolean;
  /** The field holding the user's intent: kept on status updates, compared for generation. */
  readonly specField?: string;
  /** Whether metadata.generation starts at 1 and counts spec changes. */
  readonly tracksGeneration?: boolean;
  readonly prepareForCreate?: (object: JsonObject) => void;
  readonly prepareForUpdate?: (object: JsonObject, old: JsonObject) => void;
  readonly prepareForStatusUpdate?: (object: JsonObject, old: JsonObject) => void;
  /** Besides a spec change, what else bumps the generation. */
  readonly otherGenerationChange?: (object: JsonObject, old: JsonObject) => boolean;
  /** namespaces/finalize and the like: the update a subresource other than status may make. */
  readonly prepareForSubresourceUpdate?: (subresource: string, object: JsonObject, old: JsonObject) => void;
  readonly canonicalize?: (object: JsonObject) => void;
  /**
   * GetResetFields where the kind's differ from the defaults: `status` on the main resource when
   * there is a status subresource, and the spec field on /status.
   */
  readonly resetFields?: Partial<Record<UpdateSubresource, readonly ResetField[]>>;
  readonly allowCreateOnUpdate?: boolean;
  readonly gracePeriodSeconds?: (object: JsonObject, requested: number | undefined) => number;
  readonly prepareForDeletion?: (object: JsonObject) => void;
  readonly hasPendingFinalizers?: (object: JsonObject) => boolean;
  readonly returnsDeletedObject?: boolean;
}

export const emptyStatus = (): JsonObject => ({});

/** Controllers' kinds: a status subresource, and the generation counts spec changes. */
export function workload(initialStatus: (object: JsonObject) => JsonObject, extra: KindRules = {}): KindRules {
  return { initialStatus, hasStatusSubresource: true, specField: 'spec', tracksGeneration: true, ...extra };
}

/** Kinds with a status subresource whose generation is not tracked. */
export function withStatus(initialStatus: (object: JsonObject) => JsonObject, extra: KindRules = {}): KindRules {
  return { initialStatus, hasStatusSubresource: true, specField: 'spec', tracksGeneration: false, ...extra };
}
