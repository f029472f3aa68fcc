/**
 * Conversion between the served versions of one stored resource, as kube-apiserver v1.25 does it
 * through the internal version. Carina stores each object once, in its resource's storage version
 * (the catalogue's `storage` entry), converts request bodies of other versions to it on the way in,
 * and converts stored objects to the requested version on the way out.
 *
 * v1.25's multi-version resources: core v1 and events.k8s.io/v1 Event (stored as core v1),
 * autoscaling v1, v2 and v2beta2 HorizontalPodAutoscaler (stored as v2), flowcontrol v1beta1 and
 * v1beta2 FlowSchema and PriorityLevelConfiguration (stored as v1beta2), storage.k8s.io v1beta1
 * and v1 CSIStorageCapacity (stored as v1).
 */
import { ConversionFamily } from './conversion-family';
import { csiStorageCapacityConversion } from './csi-storage-capacity-conversion';
import { eventConversion } from './event-conversion';
import { flowControlConversions } from './flow-control-conversion';
import { horizontalPodAutoscalerConversion } from './horizontal-pod-autoscaler-conversion';
import { deepCopy, type JsonObject } from '../object';

const FAMILIES: readonly ConversionFamily[] = [
  eventConversion,
  horizontalPodAutoscalerConversion,
  ...flowControlConversions,
  csiStorageCapacityConversion,
];

function familyOf(apiVersion: string, kind: string): ConversionFamily | undefined {
  return FAMILIES.find((family) => family.kind === kind && family.apiVersions.includes(apiVersion));
}

/**
 * Converts `object` (any served version of a multi-version resource, apiVersion and kind set) to
 * `targetApiVersion` (kind may differ only where it does: none in this set). Returns a new object;
 * same version -> a copy; unknown pair -> undefined.
 */
export function convertVersion(object: JsonObject, targetApiVersion: string): JsonObject | undefined {
  const { apiVersion, kind } = object;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
  if (apiVersion === targetApiVersion) return deepCopy(object);
  const family = familyOf(apiVersion, kind);
  if (family === undefined || !family.apiVersions.includes(targetApiVersion)) return undefined;
  const hub = apiVersion === family.hubApiVersion ? deepCopy(object) : family.toHub(object, apiVersion);
  return targetApiVersion === family.hubApiVersion ? hub : family.fromHub(hub, targetApiVersion);
}

/** True when objects of this apiVersion/kind are stored in another version and need convertVersion on the way in and out. */
export function needsConversion(apiVersion: string, kind: string, storageApiVersion: string): boolean {
  if (apiVersion === storageApiVersion) return false;
  const family = familyOf(apiVersion, kind);
  return family !== undefined && family.apiVersions.includes(storageApiVersion);
}
