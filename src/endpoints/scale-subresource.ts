/**
 * The `scale` subresource: an autoscaling/v1 Scale view of the parent's replicas and selector,
 * where its storage's scale rules (src/registry ScaleRules) say they are, whose writes change
 * only the parent's spec replicas (with the Scale's resourceVersion as a
 * precondition when given), as kube-apiserver's scale REST storage does.
 */
import { labelSelectorFromObject, labelSelectorFromSet } from '../apis/selectors';
import { errors } from '../util';
import { PATCH_CONTENT_TYPES, optionsBody, type RequestScope } from './request-scope';
import type { JsonObject } from '../apis/object';
import type { ScaleRules } from '../registry';

const SCALE_API_VERSION = 'autoscaling/v1';

/** The value at a simple JSONPath (`.spec.replicas`): scale rules name their fields this way. */
function readPath(object: JsonObject, path: string): unknown {
  let current: unknown = object;
  for (const step of path.split('.').slice(1)) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = (current as JsonObject)[step];
  }
  return current;
}

/** Sets the value at a simple JSONPath, creating the objects on the way. */
function writePath(object: JsonObject, path: string, value: unknown): void {
  const steps = path.split('.').slice(1);
  let current = object;
  for (const step of steps.slice(0, -1)) {
    const next = current[step];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) current[step] = {};
    current = current[step] as JsonObject;
  }
  current[steps[steps.length - 1]] = value;
}

/** The Scale's selector: the parent's selector in the shape its scale rules say, as a selector string ('' for none). */
function selectorOf(parent: JsonObject, selector: ScaleRules['selector']): string {
  if (selector === undefined) return '';
  const value = readPath(parent, selector.path);
  switch (selector.shape) {
    case 'string':
      return typeof value === 'string' ? value : '';
    case 'labelMap':
      return labelSelectorFromSet((value ?? {}) as Record<string, string>).toString();
    case 'labelSelector':
      return value === undefined || value === null ? '' : labelSelectorFromObject(value as Parameters<typeof labelSelectorFromObject>[0]).toString();
  }
}

/** The autoscaling/v1 Scale of a parent object, read through its storage's scale rules. */
export function scaleOf(parent: JsonObject, rules: ScaleRules): JsonObject {
  const meta = (parent.metadata ?? {}) as JsonObject;
  const metadata: JsonObject = { name: meta.name };
  if (meta.namespace !== undefined) metadata.namespace = meta.namespace;
  metadata.uid = meta.uid;
  metadata.resourceVersion = meta.resourceVersion;
  metadata.creationTimestamp = meta.creationTimestamp;
  const specReplicas = readPath(parent, rules.specReplicasPath);
  const statusReplicas = readPath(parent, rules.statusReplicasPath);
  const status: JsonObject = { replicas: typeof statusReplicas === 'number' ? statusReplicas : 0 };
  const selector = selectorOf(parent, rules.selector);
  if (selector !== '') status.selector = selector;
  return { kind: 'Scale', apiVersion: SCALE_API_VERSION, metadata, spec: { replicas: typeof specReplicas === 'number' ? specReplicas : 0 }, status };
}

/** Checks a Scale written by a client and returns its spec.replicas. */
export function replicasFromScale(scale: JsonObject, name: string): number {
  if (scale.kind !== undefined && scale.kind !== 'Scale') throw errors.badRequest(`the kind in the data (${String(scale.kind)}) does not match the expected kind (Scale)`);
  const replicas = (scale.spec as JsonObject | undefined)?.replicas ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    const shown = typeof replicas === 'number' ? String(replicas) : JSON.stringify(replicas);
    throw errors.invalid('autoscaling', 'Scale', name, `Scale.autoscaling "${name}" is invalid: spec.replicas: Invalid value: ${shown}: must be greater than or equal to 0`, [{ reason: 'FieldValueInvalid', message: `Invalid value: ${shown}: must be greater than or equal to 0`, field: 'spec.replicas' }]);
  }
  const metaName = (scale.metadata as JsonObject | undefined)?.name;
  if (metaName !== undefined && metaName !== name) throw errors.badRequest(`the name of the object (${String(metaName)}) does not match the name on the URL (${name})`);
  return replicas;
}

/** The scale rules of the scope's storage (the path names a scale subresource, so it has them). */
function scaleRules(scope: RequestScope): ScaleRules {
  const rules = scope.storage.scale;
  if (rules === undefined) throw errors.internal(new Error(`${scope.resource.resource} has no scale rules`));
  return rules;
}

function respondScale(scope: RequestScope, parent: JsonObject): void {
  scope.ctx.response.writeObject(200, scaleOf(parent, scaleRules(scope)), { protobuf: scope.config.codec.protobufSupports(SCALE_API_VERSION, 'Scale'), table: false });
}

export async function getScale(scope: RequestScope): Promise<void> {
  respondScale(scope, await scope.storage.get(scope.namespace, scope.name, scope.query.get('resourceVersion'), scope.ctx.trace));
}

/** PUT of a Scale: the parent's spec.replicas, with the Scale's resourceVersion as a precondition. */
export async function updateScale(scope: RequestScope): Promise<void> {
  scope.validateOptions('UpdateOptions');
  const dryRun = scope.dryRun('UpdateOptions');
  const scale = await scope.decodeAs(SCALE_API_VERSION, 'Scale');
  const replicas = replicasFromScale(scale, scope.name);
  const rv = (scale.metadata as JsonObject | undefined)?.resourceVersion;
  const parent = await scope.storage.guaranteedUpdate(scope.namespace, scope.name, (current) => {
    setReplicas(scope, current, replicas);
    return current;
  }, { dryRun, subresource: '', fieldManager: scope.fieldManager(), preconditionRv: typeof rv === 'string' && rv !== '' ? rv : undefined, ...scope.writer('UpdateOptions', optionsBody(dryRun, scope.fieldManager())) });
  respondScale(scope, parent);
}

/** PATCH of a Scale: the patch applies to the Scale view; only spec.replicas reaches the parent. */
export async function patchScale(scope: RequestScope): Promise<void> {
  scope.validateOptions('PatchOptions');
  const dryRun = scope.dryRun('PatchOptions');
  const contentType = (scope.ctx.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (!PATCH_CONTENT_TYPES.includes(contentType)) throw errors.unsupportedMediaType(PATCH_CONTENT_TYPES);
  const body = await scope.ctx.readBody();
  const { resource, name } = scope;
  const rules = scaleRules(scope);
  const level = scope.fieldValidation();
  let warnings: string[] = [];
  const parent = await scope.storage.guaranteedUpdate(scope.namespace, name, (current) => {
    const result = scope.config.applyPatch(contentType, scaleOf(current, rules), body, level);
    warnings = result.warnings;
    const patched = result.object;
    const replicas = replicasFromScale(patched, name);
    const rv = (patched.metadata as JsonObject | undefined)?.resourceVersion;
    if (typeof rv === 'string' && rv !== '' && rv !== (current.metadata as JsonObject).resourceVersion) throw errors.staleResourceVersion({ group: resource.group, resource: resource.resource }, name);
    setReplicas(scope, current, replicas);
    return current;
  }, { dryRun, subresource: '', fieldManager: scope.fieldManager(), ...scope.writer('PatchOptions', optionsBody(dryRun, scope.fieldManager())) });
  scope.warn(warnings);
  respondScale(scope, parent);
}

/** Writes the replicas a Scale asked for into the parent, where its scale rules say. */
function setReplicas(scope: RequestScope, parent: JsonObject, replicas: number): void {
  writePath(parent, scaleRules(scope).specReplicasPath, replicas);
}
