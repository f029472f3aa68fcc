/**
 * The `scale` subresource (deployments, replicasets, statefulsets, replicationcontrollers): an
 * autoscaling/v1 Scale view of the parent's spec.replicas, status.replicas and selector, whose
 * writes change only the parent's spec.replicas (with the Scale's resourceVersion as a
 * precondition when given), as kube-apiserver's scale REST storage does.
 */
import { labelSelectorFromObject, labelSelectorFromSet } from '../apis/selectors';
import { errors } from '../util';
import { PATCH_CONTENT_TYPES, optionsBody, type RequestScope } from './request-scope';
import type { JsonObject } from '../apis/object';

const SCALE_API_VERSION = 'autoscaling/v1';

/** The value at a simple JSONPath (`.spec.replicas`); custom resources name their scale fields this way. */
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

type ScalePaths = NonNullable<RequestScope['resource']['scale']>;

/** The Scale of a custom resource, read through its CRD's scale paths. */
function customScaleOf(parent: JsonObject, paths: ScalePaths): JsonObject {
  const meta = (parent.metadata ?? {}) as JsonObject;
  const metadata: JsonObject = { name: meta.name };
  if (meta.namespace !== undefined) metadata.namespace = meta.namespace;
  metadata.uid = meta.uid;
  metadata.resourceVersion = meta.resourceVersion;
  metadata.creationTimestamp = meta.creationTimestamp;
  const specReplicas = readPath(parent, paths.specReplicasPath);
  const statusReplicas = readPath(parent, paths.statusReplicasPath);
  const status: JsonObject = { replicas: typeof statusReplicas === 'number' ? statusReplicas : 0 };
  const selector = paths.labelSelectorPath === undefined ? undefined : readPath(parent, paths.labelSelectorPath);
  if (typeof selector === 'string' && selector !== '') status.selector = selector;
  return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata, spec: { replicas: typeof specReplicas === 'number' ? specReplicas : 0 }, status };
}

export function scaleOf(parent: JsonObject, paths?: ScalePaths): JsonObject {
  if (paths !== undefined) return customScaleOf(parent, paths);
  const meta = (parent.metadata ?? {}) as JsonObject;
  const spec = (parent.spec ?? {}) as JsonObject;
  const status = (parent.status ?? {}) as JsonObject;
  const metadata: JsonObject = { name: meta.name };
  if (meta.namespace !== undefined) metadata.namespace = meta.namespace;
  metadata.uid = meta.uid;
  metadata.resourceVersion = meta.resourceVersion;
  metadata.creationTimestamp = meta.creationTimestamp;
  let selector = '';
  if (parent.kind === 'ReplicationController') {
    selector = labelSelectorFromSet((spec.selector ?? {}) as Record<string, string>).toString();
  } else if (spec.selector !== undefined && spec.selector !== null) {
    selector = labelSelectorFromObject(spec.selector as Parameters<typeof labelSelectorFromObject>[0]).toString();
  }
  const scaleStatus: JsonObject = { replicas: typeof status.replicas === 'number' ? status.replicas : 0 };
  if (selector !== '') scaleStatus.selector = selector;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata,
    spec: { replicas: typeof spec.replicas === 'number' ? spec.replicas : 0 },
    status: scaleStatus,
  };
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

function respondScale(scope: RequestScope, parent: JsonObject): void {
  scope.ctx.response.writeObject(200, scaleOf(parent, scope.resource.scale), { protobuf: scope.config.codec.protobufSupports(SCALE_API_VERSION, 'Scale'), table: false });
}

export async function getScale(scope: RequestScope): Promise<void> {
  respondScale(scope, await scope.registry.get(scope.resource, scope.namespace, scope.name, scope.query.get('resourceVersion'), scope.ctx.trace));
}

/** PUT of a Scale: the parent's spec.replicas, with the Scale's resourceVersion as a precondition. */
export async function updateScale(scope: RequestScope): Promise<void> {
  scope.validateOptions('UpdateOptions');
  const dryRun = scope.dryRun('UpdateOptions');
  const scale = await scope.decodeAs(SCALE_API_VERSION, 'Scale');
  const replicas = replicasFromScale(scale, scope.name);
  const rv = (scale.metadata as JsonObject | undefined)?.resourceVersion;
  const parent = await scope.registry.guaranteedUpdate(scope.resource, scope.namespace, scope.name, (current) => {
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
  const level = scope.fieldValidation();
  let warnings: string[] = [];
  const parent = await scope.registry.guaranteedUpdate(resource, scope.namespace, name, (current) => {
    const result = scope.config.applyPatch(contentType, scaleOf(current, resource.scale), body, level);
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

/** Writes the replicas a Scale asked for into the parent: spec.replicas, or the CRD's specReplicasPath. */
function setReplicas(scope: RequestScope, parent: JsonObject, replicas: number): void {
  const paths = scope.resource.scale;
  if (paths !== undefined) {
    writePath(parent, paths.specReplicasPath, replicas);
    return;
  }
  parent.spec = { ...((parent.spec as JsonObject | undefined) ?? {}), replicas };
}
