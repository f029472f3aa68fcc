/**
 * prepareForCreate and prepareForUpdate: the registry's own changes to built-in objects on create and
 * update (k8s.io/kubernetes pkg/registry/<group>/<resource>/strategy.go and the generic
 * rest.BeforeCreate/BeforeUpdate), applied after applyDefaults. Pure: no I/O, no clock; name and uid
 * allocation, timestamps and resourceVersion belong to the caller.
 */
import { JsonObject, deepCopy, ensureObject } from './json-value';
import { registryStrategyFor } from './registry-strategies';
import { semanticallyEqual } from './semantic-equality';

export type UpdateSubresource = '' | 'status';

/**
 * Fills what the create strategy fills: the initial status (Pod phase Pending and QoS class, Namespace
 * Active, workloads' empty status, ...), generation 1 where the type tracks it, and per-type fields
 * (Namespace finalizer, Service IP families, Job selector and tracking annotation, ...). A Job's
 * selector is generated only once metadata.name and metadata.uid are set, so call it after them.
 */
export function prepareForCreate(object: JsonObject): void {
  const strategy = registryStrategyFor(object);
  if (strategy === undefined) return;
  if (strategy.initialStatus !== undefined) object.status = strategy.initialStatus(object);
  if (strategy.tracksGeneration) ensureObject(object, 'metadata').generation = 1;
  strategy.prepareForCreate?.(object);
}

/**
 * Applies the update strategy to `object` (the new state) given `old` (the stored one): requests never
 * set the generation; a main-resource update keeps the old status where the type has a status
 * subresource, a status update keeps the old spec; the generation counts spec changes.
 */
export function prepareForUpdate(object: JsonObject, old: JsonObject, subresource: UpdateSubresource): void {
  const metadata = ensureObject(object, 'metadata');
  const oldMetadata = ensureObject(old, 'metadata');
  if (oldMetadata.generation === undefined) delete metadata.generation;
  else metadata.generation = oldMetadata.generation;
  const strategy = registryStrategyFor(object);
  if (strategy === undefined) return;
  const specField = strategy.specField ?? 'spec';
  if (subresource === 'status') {
    copyFrom(old, object, specField);
    strategy.prepareForStatusUpdate?.(object, old);
  } else {
    if (strategy.hasStatusSubresource) copyFrom(old, object, 'status');
    strategy.prepareForUpdate?.(object, old);
  }
  if (!strategy.tracksGeneration) return;
  const changed = !semanticallyEqual(object[specField], old[specField]) || (strategy.otherGenerationChange?.(object, old) ?? false);
  if (changed) metadata.generation = (typeof oldMetadata.generation === 'number' ? oldMetadata.generation : 0) + 1;
}

function copyFrom(source: JsonObject, target: JsonObject, key: string): void {
  if (source[key] === undefined) delete target[key];
  else target[key] = deepCopy(source[key]);
}
