/**
 * OpenAPI v3 documents of the group-versions CRDs serve, as kube-apiserver v1.25 publishes them
 * (k8s.io/apiextensions-apiserver pkg/controller/openapi/builder): one schema per kind named
 * `<reversed group>.<version>.<Kind>` (com.example.v1.Widget), the CRD's schema with apiVersion,
 * kind and metadata (a reference to ObjectMeta) added and `x-kubernetes-group-version-kind` set,
 * a `<Kind>List`, and the meta.k8s.io schemas they reference, copied from a built-in document so
 * that the document stands alone. `kubectl explain` finds kinds by their group-version-kind.
 * Paths carry one operation per verb with `x-kubernetes-group-version-kind`, which is how
 * kubectl explain maps a resource to its kind.
 */
import type { CustomServedResource } from './custom-resource-index';
import { isObject, type JsonObject, type JsonSchemaProps } from './json-schema';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const API_VERSION_DESCRIPTION = 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND_DESCRIPTION = 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

/** `example.com` → `com.example`, as kube-openapi names the definitions of a custom group. */
export function schemaPrefix(group: string, version: string): string {
  return `${group.split('.').reverse().join('.')}.${version}`;
}

/** Drops what only validation needs (x-kubernetes-validations is kept: v1.25 publishes it). */
function published(schema: JsonSchemaProps | undefined): JsonObject {
  if (schema === undefined) return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return structuredClone(schema) as JsonObject;
}

/** The v3 document of one custom group-version, given the meta.k8s.io schemas to embed. */
function operation(action: string, verb: string, resource: CustomServedResource, schemaRef: string): JsonObject {
  const ok = { description: 'OK', content: { 'application/json': { schema: { $ref: schemaRef } }, 'application/yaml': { schema: { $ref: schemaRef } } } };
  // Writes declare dryRun, fieldManager and fieldValidation: kubectl validates on the server only where the patch operation lists fieldValidation.
  const writes = verb === 'post' || verb === 'put' || verb === 'patch';
  const parameters = writes ? ['dryRun', 'fieldManager', 'fieldValidation'].map((name) => ({ name, in: 'query', description: `${name} option of the write.`, schema: { type: 'string', uniqueItems: true } })) : undefined;
  return {
    description: `${verb} ${resource.kind}`,
    ...(parameters === undefined ? {} : { parameters }),
    operationId: `${action}${resource.group.split('.').map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('')}${resource.version.charAt(0).toUpperCase()}${resource.version.slice(1)}${resource.kind}`,
    tags: [`${resource.group.replace(/\./g, '')}_${resource.version}`],
    responses: { '200': ok },
    'x-kubernetes-action': verb,
    'x-kubernetes-group-version-kind': { group: resource.group, version: resource.version, kind: resource.kind },
  };
}

function pathsOf(resource: CustomServedResource, prefix: string): JsonObject {
  const base = `/apis/${resource.group}/${resource.version}`;
  const collection = resource.namespaced ? `${base}/namespaces/{namespace}/${resource.resource}` : `${base}/${resource.resource}`;
  const item = `${collection}/{name}`;
  const objectRef = `#/components/schemas/${prefix}.${resource.kind}`;
  const listRef = `#/components/schemas/${prefix}.${resource.listKind}`;
  const paths: JsonObject = {
    [collection]: { get: operation('list', 'list', resource, listRef), post: operation('create', 'post', resource, objectRef) },
    [item]: { get: operation('read', 'get', resource, objectRef), put: operation('replace', 'put', resource, objectRef), patch: operation('patch', 'patch', resource, objectRef), delete: operation('delete', 'delete', resource, objectRef) },
  };
  if (resource.namespaced) paths[`${base}/${resource.resource}`] = { get: operation('list', 'list', resource, listRef) };
  return paths;
}

export function customOpenApiV3Document(resources: readonly CustomServedResource[], metaSchemas: JsonObject): JsonObject {
  const schemas: JsonObject = {};
  const paths: JsonObject = {};
  for (const resource of resources) {
    const prefix = schemaPrefix(resource.group, resource.version);
    Object.assign(paths, pathsOf(resource, prefix));
    const base = published(resource.crdVersion.schema);
    const properties = isObject(base.properties) ? base.properties : {};
    const gvk = [{ group: resource.group, kind: resource.kind, version: resource.version }];
    schemas[`${prefix}.${resource.kind}`] = {
      ...base,
      type: 'object',
      properties: {
        apiVersion: { description: API_VERSION_DESCRIPTION, type: 'string' },
        kind: { description: KIND_DESCRIPTION, type: 'string' },
        metadata: { allOf: [{ $ref: `#/components/schemas/${META}.ObjectMeta` }], description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata" },
        ...properties,
      },
      'x-kubernetes-group-version-kind': gvk,
    };
    schemas[`${prefix}.${resource.listKind}`] = {
      description: `${resource.listKind} is a list of ${resource.kind}`,
      type: 'object',
      required: ['items'],
      properties: {
        apiVersion: { description: API_VERSION_DESCRIPTION, type: 'string' },
        items: { description: `List of ${resource.singular || resource.resource}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`, type: 'array', items: { $ref: `#/components/schemas/${prefix}.${resource.kind}` } },
        kind: { description: KIND_DESCRIPTION, type: 'string' },
        metadata: { allOf: [{ $ref: `#/components/schemas/${META}.ListMeta` }], description: 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds' },
      },
      'x-kubernetes-group-version-kind': [{ group: resource.group, kind: resource.listKind, version: resource.version }],
    };
  }
  for (const [name, schema] of Object.entries(metaSchemas)) if (schemas[name] === undefined) schemas[name] = schema;
  const sorted: JsonObject = {};
  for (const name of Object.keys(schemas).sort()) sorted[name] = schemas[name];
  const sortedPaths: JsonObject = {};
  for (const path of Object.keys(paths).sort()) sortedPaths[path] = paths[path];
  return { openapi: '3.0.0', info: { title: 'Kubernetes CRD Swagger', version: 'v0.1.0' }, paths: sortedPaths, components: { schemas: sorted } };
}

/** The meta.k8s.io schemas (ObjectMeta and what it references) of a built-in document. */
export function metaSchemasOf(document: JsonObject): JsonObject {
  const components = isObject(document.components) && isObject(document.components.schemas) ? document.components.schemas : {};
  const out: JsonObject = {};
  for (const [name, schema] of Object.entries(components)) if (name.startsWith(`${META}.`)) out[name] = schema;
  return out;
}
