/**
 * One resource served in several versions and stored in one of them. kube-apiserver converts every
 * version through its internal type; here the hub is the storage version's JSON, which for each
 * family in v1.25 carries exactly what the internal type carries (so A -> hub -> B is A -> internal -> B).
 */
import type { JsonObject } from '../object';

export interface ConversionFamily {
  /** The kind in every version (none of the v1.25 multi-version resources renames it). */
  readonly kind: string;
  /** The apiVersion of the hub shape: the storage version. */
  readonly hubApiVersion: string;
  /** Every apiVersion the family converts between, hub included. */
  readonly apiVersions: readonly string[];
  /** `object` (of `apiVersion`) in the hub shape; a new object. */
  toHub(object: JsonObject, apiVersion: string): JsonObject;
  /** The hub object in the shape of `apiVersion`; a new object. */
  fromHub(hub: JsonObject, apiVersion: string): JsonObject;
}
