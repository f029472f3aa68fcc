/**
 * How writes are patched and their fields owned, over the served resources' storages: PATCH
 * bodies (JSON, merge, strategic merge) applied and the result decoded through the storage of
 * its kind (src/patch), server-side apply (src/apply) with its configuration read off the event
 * loop, and the managed fields a non-apply write records. Field ownership reads each kind
 * through its storage: its topology and, for a manager of another version, its conversion.
 */
import type { Catalogue } from '../apis/catalogue';
import type { CustomResourceIndex } from '../apiextensions';
import { ApplyConflictError, apply as serverSideApply, fieldElement, managerFromUserAgent, updateManagedFields, type FieldPath, type ManagedFieldsConverter } from '../apply';
import { YamlCodecError } from '../codec';
import { refuseTooDeep, yamlBodyError, type ApplyPatch, type ServerSideApply, type YamlBodyReader } from '../endpoints';
import { customResourceTypeMetaInvalid, patchObject, typeMetaChangeRefusal } from '../patch';
import type { RegistryConfig, StorageSources } from '../registry';
import { errors } from '../util';
import type { JsonObject } from '../apis/object';

export interface PatchAndApply {
  applyPatch: ApplyPatch;
  serverSideApply: ServerSideApply;
  trackManagedFields: NonNullable<RegistryConfig['trackManagedFields']>;
}

export function patchAndApply(sources: StorageSources, served: { catalogue: Catalogue; customResources: CustomResourceIndex; yamlBodies: YamlBodyReader }): PatchAndApply {
  const { catalogue, customResources, yamlBodies } = served;
  const convert: ManagedFieldsConverter = (object, apiVersion) => sources.convertForManagers(object, apiVersion);
  const topologyOf = (apiVersion: string, kind: string) => sources.topologyOf(apiVersion, kind);
  return {
    applyPatch: (patchType, current, body, level) => {
      const text = body.toString('utf8');
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        throw errors.badRequest(`error decoding patch: ${(err as Error).message}`);
      }
      refuseTooDeep(value);
      return patchObject(patchType, current, { text, value }, {
        fieldValidation: level,
        decode: (object, decodeLevel, source) => sources.decode(object, decodeLevel, undefined, source),
        typeMetaChange: (from, to, name) => {
          if (customResources.forObject(from.apiVersion, from.kind) !== undefined) {
            const refusal = customResourceTypeMetaInvalid(from, to, name);
            if (refusal !== undefined) throw refusal;
            return undefined;
          }
          return typeMetaChangeRefusal(from, to, (group, version, kind) => catalogue.resources(group, version).some((info) => info.kind === kind || info.listKind === kind));
        },
      });
    },
    serverSideApply: {
      apply: (live, config, manager, force, subresource, resetFields) => {
        try {
          return serverSideApply(live, config, manager, { force, now: nowRfc3339(), subresource: subresource || undefined, convert, topologyOf, ignoredFields: fieldPaths(resetFields) });
        } catch (err) {
          if (err instanceof ApplyConflictError) throw err.toApiError();
          throw err;
        }
      },
      managerFromUserAgent,
      parseConfig: async (body) => {
        let value: unknown;
        try {
          value = JSON.parse((await yamlBodies.decode(body.toString('utf8'), false)).json) as unknown;
        } catch (err) {
          if (!(err instanceof YamlCodecError)) throw err;
          if (err.reason === 'TooDeep' || err.reason === 'TooLarge') throw yamlBodyError(err);
          // kube-apiserver: "error decoding YAML: " and sigs.k8s.io/yaml's words around yaml.v2's.
          throw errors.badRequest(`error decoding YAML: ${err.reason === 'ExcessiveAliasing' ? `error converting YAML to JSON: ${err.message}` : err.message}`);
        }
        if (value === null || typeof value !== 'object' || Array.isArray(value)) throw errors.badRequest('the apply patch is not an object');
        refuseTooDeep(value);
        if ((value as JsonObject).metadata !== undefined && ((value as JsonObject).metadata as JsonObject).managedFields !== undefined) {
          throw errors.badRequest('metadata.managedFields must be nil');
        }
        return value as JsonObject;
      },
    },
    trackManagedFields: (live, updated, manager, subresource, resetFields) =>
      updateManagedFields(live, updated, manager, { now: nowRfc3339(), subresource: subresource || undefined, convert, topologyOf, ignoredFields: fieldPaths(resetFields) }),
  };
}

/** A strategy's reset fields as field ownership names them. */
function fieldPaths(resetFields: readonly (readonly string[])[]): FieldPath[] {
  return resetFields.map((names) => names.map(fieldElement));
}

/** Managed-field entries record the time to the second, as Kubernetes writes metav1.Time. */
function nowRfc3339(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
