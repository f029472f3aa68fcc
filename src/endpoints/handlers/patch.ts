/**
 * PATCH (spec 01 §4.2, §4.9): JSON patch, merge patch and strategic merge patch applied to the
 * current object inside a read-modify-write that retries on concurrent change, and server-side
 * apply, which creates the object or merges the configuration into it while tracking ownership.
 * The patched object is turned into the kind's type as kube's patch handler does (config.applyPatch):
 * a result that does not fit is a 422, and strict decoding errors follow fieldValidation.
 */
import { ApiError, errors } from '../../util';
import type { UpdateSubresource } from '../../registry';
import { APPLY_PATCH_TYPE, optionsBody, type RequestScope, type ServerSideApply } from '../request-scope';
import { patchScale } from '../scale-subresource';
import type { JsonObject } from '../../apis/object';

export async function patch(scope: RequestScope): Promise<void> {
  if (scope.subresource === 'scale') return patchScale(scope);
  const patchType = scope.patchType();
  const body = await scope.ctx.readBody();
  scope.validateOptions('PatchOptions', patchType === APPLY_PATCH_TYPE);
  if (patchType === APPLY_PATCH_TYPE) return applyPatch(scope, scope.config.serverSideApply as ServerSideApply, body);
  const level = scope.fieldValidation();
  const dryRun = scope.dryRun('PatchOptions');
  const fieldManager = scope.fieldManager();
  let warnings: string[] = [];
  const patched = await scope.storage.guaranteedUpdate(scope.namespace, scope.name, (current) => {
    const result = scope.config.applyPatch(patchType, current, body, level);
    warnings = result.warnings;
    return result.object;
  }, {
    dryRun,
    fieldManager,
    subresource: scope.subresource as UpdateSubresource,
    ...scope.writer('PatchOptions', optionsBody(dryRun, fieldManager)),
  });
  scope.warn(warnings);
  scope.respond(200, patched);
}

/** Server-side apply (spec §4.9): creates the object or merges the config into it, tracking ownership. */
async function applyPatch(scope: RequestScope, ssa: ServerSideApply, body: Buffer): Promise<void> {
  const manager = scope.query.get('fieldManager') ?? '';
  const force = scope.query.get('force') === 'true';
  const dryRun = scope.dryRun('PatchOptions');
  const subresource = scope.subresource === 'status' || scope.subresource === 'approval' ? scope.subresource : '';
  let config = await ssa.parseConfig(body);
  // The audit log records the apply patch as JSON (it never decodes YAML itself).
  scope.ctx.yamlBodyAsJson = JSON.stringify(config);
  const expected = scope.apiVersion;
  if (config.apiVersion !== expected || config.kind !== scope.resource.kind) {
    throw errors.badRequest(`Incorrect version specified in apply patch. Specified patch version: ${String(config.apiVersion ?? '')}, expected: ${expected}`);
  }
  const typed = scope.storage.decode(config, scope.fieldValidation());
  config = typed.object;
  scope.warn(typed.warnings);
  const { name, storage, resource, namespace } = scope;
  const metadata = (config.metadata ?? {}) as JsonObject;
  if (metadata.name !== undefined && metadata.name !== name) throw errors.badRequest(`the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`);
  for (let attempt = 0; attempt < 3; attempt++) {
    let exists = true;
    try {
      await storage.get(namespace, name, null, scope.ctx.trace);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
      exists = false;
    }
    if (!exists) {
      if (subresource !== '') throw errors.notFound({ group: resource.group, resource: resource.resource }, name);
      const created = ssa.apply(undefined, { ...config, metadata: { ...metadata, name } }, manager, force, '', scope.strategy.resetFields(''));
      try {
        const object = await storage.create(namespace, created, { dryRun, subresource: '', ...scope.writer('CreateOptions', optionsBody(dryRun, manager, force)) });
        scope.respond(201, object);
        return;
      } catch (err) {
        // Created meanwhile by someone else: apply onto it instead.
        if (err instanceof ApiError && err.code === 409 && err.reason === 'AlreadyExists') continue;
        throw err;
      }
    }
    const patched = await storage.guaranteedUpdate(namespace, name, (current) => ssa.apply(current, config, manager, force, subresource, scope.strategy.resetFields(subresource)), { dryRun, subresource, ...scope.writer('PatchOptions', optionsBody(dryRun, manager, force)) });
    scope.respond(200, patched);
    return;
  }
  throw errors.staleResourceVersion({ group: resource.group, resource: resource.resource }, name);
}
