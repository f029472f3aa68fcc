/**
 * The `scale` subresource (deployments, replicasets, statefulsets, replicationcontrollers): an
 * autoscaling/v1 Scale view of the parent's spec.replicas, status.replicas and selector, whose
 * writes change only the parent's spec.replicas (with the Scale's resourceVersion as a
 * precondition when given), as kube-apiserver's scale REST storage does.
 */
import { labelSelectorFromObject, labelSelectorFromSet } from '../apis/selectors';
import { errors } from '../util';
import type { JsonObject } from './body-codec';
import { PATCH_CONTENT_TYPES, optionsBody, type RequestScope } from './request-scope';

const SCALE_API_VERSION = 'autoscaling/v1';

export function scaleOf(parent: JsonObject): JsonObject {
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
  scope.ctx.response.writeObject(200, scaleOf(parent), { protobuf: scope.config.codec.protobufSupports(SCALE_API_VERSION, 'Scale'), table: false });
}

export async function getScale(scope: RequestScope): Promise<void> {
  respondScale(scope, await scope.registry.get(scope.resource, scope.namespace, scope.name, scope.query.get('resourceVersion')));
}

/** PUT of a Scale: the parent's spec.replicas, with the Scale's resourceVersion as a precondition. */
export async function updateScale(scope: RequestScope): Promise<void> {
  scope.validateOptions('UpdateOptions');
  const dryRun = scope.dryRun('UpdateOptions');
  const scale = await scope.decodeAs(SCALE_API_VERSION, 'Scale');
  const replicas = replicasFromScale(scale, scope.name);
  const rv = (scale.metadata as JsonObject | undefined)?.resourceVersion;
  const parent = await scope.registry.guaranteedUpdate(scope.resource, scope.namespace, scope.name, (current) => {
    current.spec = { ...((current.spec as JsonObject | undefined) ?? {}), replicas };
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
  const parent = await scope.registry.guaranteedUpdate(resource, scope.namespace, name, (current) => {
    const patched = scope.config.applyPatch(contentType, scaleOf(current), body);
    const replicas = replicasFromScale(patched, name);
    const rv = (patched.metadata as JsonObject | undefined)?.resourceVersion;
    if (typeof rv === 'string' && rv !== '' && rv !== (current.metadata as JsonObject).resourceVersion) throw errors.staleResourceVersion({ group: resource.group, resource: resource.resource }, name);
    current.spec = { ...((current.spec as JsonObject | undefined) ?? {}), replicas };
    return current;
  }, { dryRun, subresource: '', fieldManager: scope.fieldManager(), ...scope.writer('PatchOptions', optionsBody(dryRun, scope.fieldManager())) });
  respondScale(scope, parent);
}
