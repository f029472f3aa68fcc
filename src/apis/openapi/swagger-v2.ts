/**
 * Builds the swagger 2.0 document of `GET /openapi/v2` from Kubernetes OpenAPI v3 group-version
 * documents, because the v1.25 swagger.json is not in the repository (src/apis/data/openapi-v3/README.md).
 * The two are generated from the same Go definitions, so the conversion only changes the envelope:
 * - `components.schemas` become `definitions`, `#/components/schemas/X` refs become `#/definitions/X`;
 * - v3's `allOf: [{$ref}]` wrapper (used to attach a description and `default: {}` to a reference)
 *   becomes a plain `$ref` with its description, as in kube-apiserver's v2 document;
 * - `oneOf` (Quantity, IntOrString), which swagger 2.0 lacks, becomes `type: string` with the format kept;
 * - operations get `consumes`/`produces`, a `body` parameter with the request schema, and responses
 *   with a single `schema`; parameters move their `schema` fields up (`type`, `uniqueItems`).
 * Paths and definitions are written with sorted keys, as Go marshals maps.
 */
import { assert } from '../../util';
import { isJsonObject, type JsonObject } from '../object';

export interface SwaggerV2Options {
  /** `info.version`, e.g. "v1.25.16". */
  version: string;
}

const COMPONENT_PREFIX = '#/components/schemas/';
const DEFINITION_PREFIX = '#/definitions/';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

function rewriteRef(ref: unknown): unknown {
  assert(typeof ref === 'string' && ref.startsWith(COMPONENT_PREFIX), `unexpected OpenAPI $ref: ${JSON.stringify(ref)}`);
  return DEFINITION_PREFIX + ref.slice(COMPONENT_PREFIX.length);
}

function singleRefOf(allOf: unknown): unknown {
  if (!Array.isArray(allOf) || allOf.length !== 1) return undefined;
  const only = allOf[0];
  return isJsonObject(only) && Object.keys(only).length === 1 && typeof only.$ref === 'string' ? only.$ref : undefined;
}

/** Converts one v3 schema to a v2 schema; never mutates its input. */
export function convertSchema(schema: unknown): unknown {
  if (!isJsonObject(schema)) return schema;
  const wrappedRef = singleRefOf(schema.allOf);
  const converted: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    switch (key) {
      case '$ref':
        converted.$ref = rewriteRef(value);
        break;
      case 'allOf':
        if (wrappedRef !== undefined) converted.$ref = rewriteRef(wrappedRef);
        else converted.allOf = (value as unknown[]).map(convertSchema);
        break;
      case 'default':
        // swagger 2.0 ignores a reference's siblings; kube-apiserver's v2 document has no default beside a $ref.
        if (wrappedRef === undefined) converted.default = value;
        break;
      case 'oneOf':
        if (schema.type === undefined) converted.type = 'string';
        break;
      case 'properties': {
        const properties: JsonObject = {};
        for (const [name, property] of Object.entries(value as JsonObject)) properties[name] = convertSchema(property);
        converted.properties = properties;
        break;
      }
      case 'items':
      case 'additionalProperties':
      case 'not':
        converted[key] = convertSchema(value);
        break;
      default:
        converted[key] = value;
    }
  }
  return converted;
}

function convertParameter(parameter: unknown): JsonObject {
  assert(isJsonObject(parameter), 'OpenAPI parameter is not an object');
  const converted: JsonObject = {};
  for (const [key, value] of Object.entries(parameter)) {
    if (key === 'schema' && isJsonObject(value)) Object.assign(converted, convertSchema(value));
    else converted[key] = value;
  }
  return converted;
}

function preferredSchema(content: JsonObject): unknown {
  const entry = content['application/json'] ?? Object.values(content)[0];
  return isJsonObject(entry) ? entry.schema : undefined;
}

function convertOperation(operation: JsonObject, method: string): JsonObject {
  const requestContent = isJsonObject(operation.requestBody) && isJsonObject(operation.requestBody.content) ? operation.requestBody.content : undefined;
  const consumes = requestContent === undefined ? ['*/*'] : Object.keys(requestContent);
  const produced = new Set<string>();
  const responses: JsonObject = {};
  for (const [code, response] of Object.entries(operation.responses as JsonObject)) {
    assert(isJsonObject(response), `OpenAPI response ${code} is not an object`);
    const converted: JsonObject = { description: response.description ?? '' };
    if (isJsonObject(response.content)) {
      for (const type of Object.keys(response.content)) produced.add(type);
      const schema = preferredSchema(response.content);
      if (schema !== undefined) converted.schema = convertSchema(schema);
    }
    responses[code] = converted;
  }

  const parameters: JsonObject[] = [];
  if (requestContent !== undefined) {
    const schema = preferredSchema(requestContent);
    assert(schema !== undefined, 'OpenAPI request body without a schema');
    // Deletes take an optional DeleteOptions body; every other body is required.
    parameters.push({ in: 'body', name: 'body', ...(method === 'delete' ? {} : { required: true }), schema: convertSchema(schema) });
  }
  for (const parameter of (operation.parameters as unknown[] | undefined) ?? []) parameters.push(convertParameter(parameter));

  const converted: JsonObject = {};
  if (operation.description !== undefined) converted.description = operation.description;
  converted.consumes = consumes;
  converted.produces = produced.size > 0 ? [...produced] : ['*/*'];
  converted.schemes = ['https'];
  if (operation.tags !== undefined) converted.tags = operation.tags;
  if (operation.operationId !== undefined) converted.operationId = operation.operationId;
  if (parameters.length > 0) converted.parameters = parameters;
  converted.responses = responses;
  for (const [key, value] of Object.entries(operation)) {
    if (key.startsWith('x-')) converted[key] = value;
  }
  return converted;
}

function convertPathItem(item: JsonObject): JsonObject {
  const converted: JsonObject = {};
  for (const method of HTTP_METHODS) {
    const operation = item[method];
    if (isJsonObject(operation)) converted[method] = convertOperation(operation, method);
  }
  if (Array.isArray(item.parameters)) converted.parameters = item.parameters.map(convertParameter);
  return converted;
}

function sortedObject(entries: Map<string, unknown>): JsonObject {
  const sorted: JsonObject = {};
  for (const key of [...entries.keys()].sort()) sorted[key] = entries.get(key) as unknown;
  return sorted;
}

/**
 * @param documents parsed OpenAPI v3 group-version documents; a schema defined in several of them
 *   is taken from the first (they are identical: every document is generated from the same types)
 */
export function buildSwaggerV2(documents: JsonObject[], options: SwaggerV2Options): JsonObject {
  const paths = new Map<string, unknown>();
  const definitions = new Map<string, unknown>();
  for (const document of documents) {
    for (const [path, item] of Object.entries(document.paths as JsonObject)) {
      assert(isJsonObject(item), `OpenAPI path item "${path}" is not an object`);
      if (!paths.has(path)) paths.set(path, convertPathItem(item));
    }
    const components = document.components;
    const schemas = isJsonObject(components) && isJsonObject(components.schemas) ? components.schemas : {};
    for (const [name, schema] of Object.entries(schemas)) {
      if (!definitions.has(name)) definitions.set(name, convertSchema(schema));
    }
  }
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: options.version },
    paths: sortedObject(paths),
    definitions: sortedObject(definitions),
    securityDefinitions: {
      BearerToken: { description: 'Bearer Token authentication', type: 'apiKey', name: 'authorization', in: 'header' },
    },
    security: [{ BearerToken: [] }],
  };
}
