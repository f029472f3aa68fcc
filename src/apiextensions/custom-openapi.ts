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
import { additionalSchema, preservesUnknown, type JsonSchemaProps } from './json-schema';
import { deepCopy, isJsonObject, type JsonObject } from '../apis/object';

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
  return deepCopy(schema) as JsonObject;
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
    const properties = isJsonObject(base.properties) ? base.properties : {};
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
  const components = isJsonObject(document.components) && isJsonObject(document.components.schemas) ? document.components.schemas : {};
  const out: JsonObject = {};
  for (const [name, schema] of Object.entries(components)) if (name.startsWith(`${META}.`)) out[name] = schema;
  return out;
}

// ---------------------------------------------------------------------------------------------
// OpenAPI v2 (swagger) definitions: what v1.25's openapi controller merges into /openapi/v2
// (builder.BuildOpenAPIV2 with Options{V2: true}, then handler.PruneDefaults).

const V2_DEFINITIONS = '#/definitions/';
const OBJECT_META_DESCRIPTION = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_META_DESCRIPTION = 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const EMBEDDED_API_VERSION_DESCRIPTION = 'apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const EMBEDDED_KIND_DESCRIPTION = 'kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

/** The keywords a structural schema keeps (Structural.ToKubeOpenAPI); junctors and defaults are handled apart. */
const STRUCTURAL_KEYWORDS = [
  'description', 'type', 'title', 'format', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength',
  'pattern', 'maxItems', 'minItems', 'uniqueItems', 'multipleOf', 'enum', 'maxProperties', 'minProperties', 'required',
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string', 'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type', 'x-kubernetes-map-type', 'x-kubernetes-validations',
] as const;

/** A schema object with its keys in byte order, as the documents served for built-in kinds have them. */
function sortedKeys(object: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(object).sort()) out[key] = object[key];
  return out;
}

/**
 * A schema node as swagger 2.0 and kubectl's v2 reader take it (openapi/v2 ToStructuralOpenAPIV2):
 * no allOf/anyOf/oneOf/not; a nullable node loses its type, items and properties (and is dropped
 * from its parent's required); a node keeping unknown fields loses items and properties; an array
 * left without items loses its type; no default (PruneDefaults).
 */
function toOpenApiV2(schema: JsonSchemaProps): JsonObject {
  const out: JsonObject = {};
  for (const keyword of STRUCTURAL_KEYWORDS) {
    const value = (schema as JsonObject)[keyword];
    if (value !== undefined && value !== false && value !== '') out[keyword] = deepCopy(value);
  }
  const nullable = schema.nullable === true;
  const dropChildren = nullable || preservesUnknown(schema);
  if (!dropChildren && schema.items !== undefined) out.items = toOpenApiV2(schema.items);
  if (!dropChildren && schema.properties !== undefined) {
    const properties: JsonObject = {};
    for (const name of Object.keys(schema.properties).sort()) properties[name] = toOpenApiV2(schema.properties[name] as JsonSchemaProps);
    out.properties = properties;
  }
  const extra = additionalSchema(schema);
  if (extra !== undefined) out.additionalProperties = toOpenApiV2(extra);
  else if (schema.additionalProperties === true) out.additionalProperties = true;
  if (nullable) delete out.type;
  if (out.items === undefined && out.type === 'array') delete out.type;
  if (Array.isArray(out.required)) {
    let required = (out.required as string[]).filter((name) => !dropChildren && schema.properties?.[name]?.nullable === true ? false : true);
    if (extra?.nullable === true) required = [];
    if (required.length > 0) out.required = required;
    else delete out.required;
  }
  return sortedKeys(out);
}

/** addEmbeddedProperties: an embedded resource (that does not keep unknown fields) gets apiVersion, kind and metadata. */
function addEmbeddedProperties(schema: JsonObject): void {
  if (isJsonObject(schema.properties)) for (const child of Object.values(schema.properties)) if (isJsonObject(child)) addEmbeddedProperties(child);
  if (isJsonObject(schema.items)) addEmbeddedProperties(schema.items);
  if (isJsonObject(schema.additionalProperties)) addEmbeddedProperties(schema.additionalProperties);
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return;
  if (schema['x-kubernetes-embedded-resource'] !== true) return;
  const properties: JsonObject = {
    ...(isJsonObject(schema.properties) ? schema.properties : {}),
    apiVersion: { description: EMBEDDED_API_VERSION_DESCRIPTION, type: 'string' },
    kind: { description: EMBEDDED_KIND_DESCRIPTION, type: 'string' },
    metadata: { $ref: `${V2_DEFINITIONS}${META}.ObjectMeta`, description: OBJECT_META_DESCRIPTION },
  };
  schema.properties = sortedKeys(properties);
  const required = Array.isArray(schema.required) ? [...(schema.required as string[])] : [];
  if (!required.includes('kind')) required.push('kind');
  if (!required.includes('apiVersion')) required.push('apiVersion');
  schema.required = required;
  const sorted = sortedKeys(schema);
  for (const key of Object.keys(schema)) delete schema[key];
  Object.assign(schema, sorted);
}

/** The v2 definition of a custom resource's kind (buildKubeNative with V2). */
function kindDefinitionV2(resource: CustomServedResource): JsonObject {
  const gvk = [{ group: resource.group, kind: resource.kind, version: resource.version }];
  const schema = resource.crdVersion.schema;
  // A schema that keeps unknown fields at its root is published as a bare object: kubectl would
  // otherwise refuse every field it does not list.
  if (schema === undefined || preservesUnknown(schema)) return { type: 'object', 'x-kubernetes-group-version-kind': gvk };
  const definition = toOpenApiV2(schema);
  definition.properties = sortedKeys({
    ...(isJsonObject(definition.properties) ? definition.properties : {}),
    apiVersion: { description: API_VERSION_DESCRIPTION, type: 'string' },
    kind: { description: KIND_DESCRIPTION, type: 'string' },
    metadata: { $ref: `${V2_DEFINITIONS}${META}.ObjectMeta`, description: OBJECT_META_DESCRIPTION },
  });
  addEmbeddedProperties(definition);
  definition['x-kubernetes-group-version-kind'] = gvk;
  return sortedKeys(definition);
}

/** The v2 definition of a custom resource's list kind (buildListSchema with V2). */
function listDefinitionV2(resource: CustomServedResource, prefix: string): JsonObject {
  return {
    description: `${resource.listKind} is a list of ${resource.kind}`,
    properties: {
      apiVersion: { description: API_VERSION_DESCRIPTION, type: 'string' },
      items: { description: `List of ${resource.resource}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`, items: { $ref: `${V2_DEFINITIONS}${prefix}.${resource.kind}` }, type: 'array' },
      kind: { description: KIND_DESCRIPTION, type: 'string' },
      metadata: { $ref: `${V2_DEFINITIONS}${META}.ListMeta`, description: LIST_META_DESCRIPTION },
    },
    required: ['items'],
    'x-kubernetes-group-version-kind': [{ group: resource.group, kind: resource.listKind, version: resource.version }],
  };
}

/**
 * The /openapi/v2 definitions of the served custom resource versions: `<reversed group>.<version>.<Kind>`
 * and its list, by name. The v3 documents keep anyOf and the rest; only v2 is filtered.
 */
export function customOpenApiV2Definitions(resources: readonly CustomServedResource[]): JsonObject {
  const definitions: JsonObject = {};
  for (const resource of resources) {
    const prefix = schemaPrefix(resource.group, resource.version);
    definitions[`${prefix}.${resource.kind}`] = kindDefinitionV2(resource);
    definitions[`${prefix}.${resource.listKind}`] = listDefinitionV2(resource, prefix);
  }
  return definitions;
}
