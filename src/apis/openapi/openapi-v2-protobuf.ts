/**
 * The Protobuf form of `GET /openapi/v2`: the swagger 2.0 document as a gnostic `openapi.v2.Document`
 * (proto/gnostic/openapiv2.proto), with no Kubernetes envelope. client-go's `OpenAPISchema()` (helm,
 * kubectl client-side validation, kubectl explain before OpenAPI v3) asks for this form.
 *
 * kube-apiserver v1.25 builds it with kube-openapi pkg/handler `ToProtoBinary`: the JSON document is
 * read by gnostic `openapi_v2.ParseDocument` (yaml.v3 nodes, so document key order is kept) and
 * marshalled with Go protobuf. This module repeats gnostic's `New<Message>` conversion:
 * - JSON maps become repeated `Named*` pairs in document order; keys starting with "x-" become
 *   `vendor_extension` entries whose `Any.yaml` is the value written as YAML by yaml.v3;
 * - `default`, `example` and `enum` values are `Any` messages holding YAML text;
 * - `$ref` is the `_ref` field; `type` is a `TypeItem`, `items` an `ItemsItem`, `additionalProperties`
 *   an `AdditionalPropertiesItem` (schema or boolean);
 * - parameters, responses, response schemas and security schemes pick their oneof member by the
 *   fields that gnostic's matching accepts (`in`, `$ref`, `type: file`, `type`/`flow`).
 * Go's protobuf writes no proto3 field that holds its zero value except oneof members, so the
 * message objects leave such fields out; protobufjs would otherwise write them.
 *
 * A document gnostic rejects (an unknown key, a wrong value type, a missing required key) makes
 * kube-apiserver answer the protobuf request with 503; here the conversion throws, naming the place.
 *
 * HTTP facts, from kube-openapi pkg/handler/handler.go as vendored by v1.25: both media types of
 * OPENAPI_V2_PROTOBUF_MEDIA_TYPES are accepted and both are answered with Content-Type
 * OPENAPI_V2_PROTOBUF_CONTENT_TYPE; the ETag is the one of the JSON document (quoted upper-case hex
 * SHA-512 of the JSON bytes) for both forms; the handler is wrapped in NYTimes gziphandler (gzip when
 * the client sends `Accept-Encoding: gzip` and the body is at least 1400 bytes) and answers through
 * http.ServeContent (If-None-Match gives 304); `Vary: Accept` is added and an unacceptable Accept gets 406.
 */
import * as protobuf from 'protobufjs';
import { packagePath } from '../../util';
import { isJsonObject, type JsonObject } from '../object';

/** Accept values kube-apiserver v1.25 answers with the protobuf document; the second is deprecated (client-go ≤ 1.26 sends it). */
export const OPENAPI_V2_PROTOBUF_MEDIA_TYPES: string[] = [
  'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
  'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
];

/** The Content-Type of the answer, whichever of the two media types was asked for. */
export const OPENAPI_V2_PROTOBUF_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** A message as protobufjs encodes it from a plain object: field name (as in the .proto) to value. */
type Message = JsonObject;

class GnosticError extends Error {
  constructor(path: string, problem: string) {
    super(`openapi v2 document is not valid for gnostic: ${path} ${problem}`);
  }
}

// ---------------------------------------------------------------------------------------------
// YAML text of Any values, as gnostic's compiler.Marshal writes it: yaml.v3 with styles cleared,
// 4-space indentation, sequences inside mappings indented, mappings inside sequence items two
// spaces in. Strings that would read back as another type are double-quoted; strings a plain
// scalar cannot carry are single-quoted, or double-quoted when they hold characters or line
// breaks single quotes cannot. yaml.v3 writes multi-line strings as literal blocks; they are
// double-quoted here (the same value to any YAML reader), as no Any value of the Kubernetes
// document has one.

const YAML_INDENT = 4;
const NON_STRING_PLAIN = new Set(['', '~', 'null', 'Null', 'NULL', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE', '<<']);
const SPECIAL_FLOATS = /^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$/;
const YAML_INT = /^[-+]?(0b[01_]+|0o?[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*)$/;
const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const YAML_TIMESTAMP = /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ].*)?$/;

/** Whether yaml.v3 would read the plain scalar as something other than a string. */
function resolvesToNonString(text: string): boolean {
  return NON_STRING_PLAIN.has(text) || SPECIAL_FLOATS.test(text) || YAML_INT.test(text) || YAML_FLOAT.test(text) || YAML_TIMESTAMP.test(text);
}

function isPrintable(code: number): boolean {
  return (
    code === 0x0a ||
    (code >= 0x20 && code <= 0x7e) ||
    code === 0x85 ||
    (code >= 0xa0 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd && code !== 0xfeff) ||
    code >= 0x10000
  );
}

/** libyaml's scalar analysis, reduced to what block context needs. */
function scalarStyle(text: string): 'plain' | 'single' | 'double' {
  if (resolvesToNonString(text)) return 'double';
  const codes = [...text].map((character) => character.codePointAt(0) ?? 0);
  if (codes.some((code) => !isPrintable(code)) || text.includes('\n')) return 'double';
  const blank = (index: number): boolean => index >= text.length || text[index] === ' ';
  let plain = !(text.startsWith('---') || text.startsWith('...'));
  if (text.startsWith(' ') || text.endsWith(' ')) plain = false;
  if ('#,[]{}&*!|>\'"%@`'.includes(text[0] ?? '')) plain = false;
  if ('?:-'.includes(text[0] ?? '') && blank(1)) plain = false;
  for (let index = 1; index < text.length && plain; index += 1) {
    if (text[index] === ':' && blank(index + 1)) plain = false;
    if (text[index] === '#' && text[index - 1] === ' ') plain = false;
  }
  return plain ? 'plain' : 'single';
}

function yamlScalar(value: null | boolean | number | string): string {
  if (value === null) return 'null';
  if (typeof value !== 'string') return String(value);
  switch (scalarStyle(value)) {
    case 'plain':
      return value;
    case 'single':
      return `'${value.replace(/'/g, "''")}'`;
    default:
      // A JSON string is a valid YAML double-quoted scalar.
      return JSON.stringify(value);
  }
}

function isNonEmptyCollection(value: unknown): value is unknown[] | JsonObject {
  return typeof value === 'object' && value !== null && Object.keys(value).length > 0;
}

/** The indentation yaml.v3 gives a block collection nested in a mapping at `indent`. */
function nestedIndent(indent: number): number {
  return YAML_INDENT * Math.floor((indent + YAML_INDENT) / YAML_INDENT);
}

/** Lines of a value; the first line is written by the caller after its key or "- " indicator. */
function yamlLines(value: unknown, indent: number): string[] {
  if (Array.isArray(value)) {
    if (value.length === 0) return ['[]'];
    return value.flatMap((item, index) => {
      const [first, ...rest] = yamlLines(item, indent + 2);
      return [`${index === 0 ? '' : ' '.repeat(indent)}- ${first}`, ...rest];
    });
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) return ['{}'];
    return entries.flatMap(([key, item], index) => {
      const prefix = `${index === 0 ? '' : ' '.repeat(indent)}${yamlScalar(key)}:`;
      if (!isNonEmptyCollection(item)) return [`${prefix} ${yamlLines(item, indent)[0]}`];
      const childIndent = nestedIndent(indent);
      const [first, ...rest] = yamlLines(item, childIndent);
      return [prefix, `${' '.repeat(childIndent)}${first}`, ...rest];
    });
  }
  // What is left of a JSON value after arrays and objects is a scalar.
  return [yamlScalar(value as null | boolean | number | string)];
}

/** A JSON value as the YAML text gnostic stores in `Any.yaml` (yaml.v3 Marshal of the node). */
export function gnosticYaml(value: unknown): string {
  return `${yamlLines(value, 0).join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// The conversion, one converter per message, following gnostic's generated New<Message> functions.

type Converter = (value: unknown, path: string) => Message;
type FieldKind = 'string' | 'bool' | 'double' | 'int64' | 'strings' | 'any' | 'anys' | Converter | { list: Converter };

interface MessageSpec {
  /** JSON key to [proto field, kind]. */
  fields: Record<string, [string, FieldKind]>;
  required?: string[];
  /** Allowed values of string fields, checked as gnostic does. */
  enums?: Record<string, string[]>;
  /** Whether "x-" keys are allowed and go to vendor_extension. */
  extensions: boolean;
}

function objectAt(value: unknown, path: string): JsonObject {
  if (!isJsonObject(value)) throw new GnosticError(path, `has unexpected value: ${JSON.stringify(value)}`);
  return value;
}

/** compiler.StringForScalarNode: strings, integers (their text) and null (""). */
function stringOf(value: unknown, path: string): string {
  if (typeof value === 'string') return value;
  if (value === null) return '';
  if (typeof value === 'number' && Number.isInteger(value)) return String(value);
  throw new GnosticError(path, `has unexpected value: ${JSON.stringify(value)}`);
}

function anyOf(value: unknown): Message {
  return { yaml: gnosticYaml(value) };
}

function vendorExtensions(object: JsonObject): Message[] {
  return Object.entries(object)
    .filter(([key]) => key.startsWith('x-'))
    .map(([name, value]) => ({ name, value: anyOf(value) }));
}

function fieldValue(kind: FieldKind, value: unknown, path: string): unknown {
  switch (kind) {
    case 'string':
      return stringOf(value, path);
    case 'bool':
      if (typeof value !== 'boolean') throw new GnosticError(path, `has unexpected value: ${JSON.stringify(value)}`);
      return value;
    case 'double':
      if (typeof value !== 'number') throw new GnosticError(path, `has unexpected value: ${JSON.stringify(value)}`);
      return value;
    case 'int64':
      if (typeof value !== 'number' || !Number.isInteger(value)) throw new GnosticError(path, `has unexpected value: ${JSON.stringify(value)}`);
      return value;
    case 'strings':
      if (!Array.isArray(value)) throw new GnosticError(path, `has unexpected value: ${JSON.stringify(value)}`);
      // gnostic keeps the items it can read as strings and drops the others.
      return value.filter((item) => typeof item === 'string' || item === null || (typeof item === 'number' && Number.isInteger(item))).map((item) => stringOf(item, path));
    case 'any':
      return anyOf(value);
    case 'anys':
      if (!Array.isArray(value)) throw new GnosticError(path, `has unexpected value: ${JSON.stringify(value)}`);
      return value.map(anyOf);
    default:
      if (typeof kind === 'function') return kind(value, path);
      // gnostic ignores a list field whose value is not a sequence.
      return Array.isArray(value) ? value.map((item, index) => kind.list(item, `${path}[${index}]`)) : [];
  }
}

/** Proto3 zero values Go does not write. */
function isZero(value: unknown): boolean {
  return value === '' || value === false || value === 0 || (Array.isArray(value) && value.length === 0);
}

function messageConverter(spec: MessageSpec): Converter {
  return (value, path) => {
    const object = objectAt(value, path);
    const missing = (spec.required ?? []).filter((key) => !(key in object));
    if (missing.length > 0) throw new GnosticError(path, `is missing required ${missing.join(', ')}`);
    const message: Message = {};
    for (const [key, item] of Object.entries(object)) {
      const field = spec.fields[key];
      if (field === undefined) {
        if (spec.extensions && key.startsWith('x-')) continue;
        throw new GnosticError(path, `has invalid property: ${key}`);
      }
      const converted = fieldValue(field[1], item, `${path}.${key}`);
      const allowed = spec.enums?.[key];
      if (allowed !== undefined && !allowed.includes(converted as string)) throw new GnosticError(path, `has unexpected value for ${key}: ${JSON.stringify(item)}`);
      if (!isZero(converted)) message[field[0]] = converted;
    }
    if (spec.extensions) {
      const extensions = vendorExtensions(object);
      if (extensions.length > 0) message.vendor_extension = extensions;
    }
    return message;
  };
}

/** A JSON map whose every entry becomes a Named* pair of `field`. */
function namedMap(field: string, convert: (value: unknown, path: string) => unknown): Converter {
  return (value, path) => {
    const pairs = Object.entries(objectAt(value, path)).map(([name, item]) => ({ name, value: convert(item, `${path}.${name}`) }));
    return pairs.length > 0 ? { [field]: pairs } : {};
  };
}

/** A JSON map split by key pattern into Named* pairs of `field` and vendor extensions. */
function patternedMap(pattern: RegExp, field: string, convert: Converter): Converter {
  return (value, path) => {
    const object = objectAt(value, path);
    const pairs: Message[] = [];
    for (const [name, item] of Object.entries(object)) {
      if (name.startsWith('x-')) continue;
      if (!pattern.test(name)) throw new GnosticError(path, `has invalid property: ${name}`);
      pairs.push({ name, value: convert(item, `${path}.${name}`) });
    }
    const message: Message = {};
    if (pairs.length > 0) message[field] = pairs;
    const extensions = vendorExtensions(object);
    if (extensions.length > 0) message.vendor_extension = extensions;
    return message;
  };
}

// Declared as functions so the recursive specs can refer to each other before their definition.
function schema(value: unknown, path: string): Message {
  return schemaConverter(value, path);
}
function primitivesItems(value: unknown, path: string): Message {
  return primitivesItemsConverter(value, path);
}

const externalDocs = messageConverter({ fields: { description: ['description', 'string'], url: ['url', 'string'] }, required: ['url'], extensions: true });

const xml = messageConverter({
  fields: { name: ['name', 'string'], namespace: ['namespace', 'string'], prefix: ['prefix', 'string'], attribute: ['attribute', 'bool'], wrapped: ['wrapped', 'bool'] },
  extensions: true,
});

const typeItem: Converter = (value, path) => {
  if (typeof value === 'string') return { value: [value] };
  return { value: fieldValue('strings', value, path) };
};

/** gnostic reads `items` as one schema (ItemsItem.schema holds a single entry). */
const itemsItem: Converter = (value, path) => ({ schema: [schema(value, path)] });

const additionalPropertiesItem: Converter = (value, path) => {
  if (typeof value === 'boolean') return { boolean: value };
  return { schema: schema(value, path) };
};

/** Validation keywords shared by schemas, header objects, items and non-body parameters. */
const PRIMITIVE_FIELDS: Record<string, [string, FieldKind]> = {
  type: ['type', 'string'],
  format: ['format', 'string'],
  items: ['items', primitivesItems],
  collectionFormat: ['collection_format', 'string'],
  default: ['default', 'any'],
  maximum: ['maximum', 'double'],
  exclusiveMaximum: ['exclusive_maximum', 'bool'],
  minimum: ['minimum', 'double'],
  exclusiveMinimum: ['exclusive_minimum', 'bool'],
  maxLength: ['max_length', 'int64'],
  minLength: ['min_length', 'int64'],
  pattern: ['pattern', 'string'],
  maxItems: ['max_items', 'int64'],
  minItems: ['min_items', 'int64'],
  uniqueItems: ['unique_items', 'bool'],
  enum: ['enum', 'anys'],
  multipleOf: ['multiple_of', 'double'],
};

const primitivesItemsConverter = messageConverter({ fields: PRIMITIVE_FIELDS, extensions: true });

const schemaConverter: Converter = messageConverter({
  fields: {
    $ref: ['_ref', 'string'],
    format: ['format', 'string'],
    title: ['title', 'string'],
    description: ['description', 'string'],
    default: ['default', 'any'],
    multipleOf: ['multiple_of', 'double'],
    maximum: ['maximum', 'double'],
    exclusiveMaximum: ['exclusive_maximum', 'bool'],
    minimum: ['minimum', 'double'],
    exclusiveMinimum: ['exclusive_minimum', 'bool'],
    maxLength: ['max_length', 'int64'],
    minLength: ['min_length', 'int64'],
    pattern: ['pattern', 'string'],
    maxItems: ['max_items', 'int64'],
    minItems: ['min_items', 'int64'],
    uniqueItems: ['unique_items', 'bool'],
    maxProperties: ['max_properties', 'int64'],
    minProperties: ['min_properties', 'int64'],
    required: ['required', 'strings'],
    enum: ['enum', 'anys'],
    additionalProperties: ['additional_properties', additionalPropertiesItem],
    type: ['type', typeItem],
    items: ['items', itemsItem],
    allOf: ['all_of', { list: schema }],
    properties: ['properties', namedMap('additional_properties', schema)],
    discriminator: ['discriminator', 'string'],
    readOnly: ['read_only', 'bool'],
    xml: ['xml', xml],
    externalDocs: ['external_docs', externalDocs],
    example: ['example', 'any'],
  },
  extensions: true,
});

const fileSchema = messageConverter({
  fields: {
    format: ['format', 'string'],
    title: ['title', 'string'],
    description: ['description', 'string'],
    default: ['default', 'any'],
    required: ['required', 'strings'],
    type: ['type', 'string'],
    readOnly: ['read_only', 'bool'],
    externalDocs: ['external_docs', externalDocs],
    example: ['example', 'any'],
  },
  required: ['type'],
  enums: { type: ['file'] },
  extensions: true,
});

const FILE_SCHEMA_KEYS = new Set(['format', 'title', 'description', 'default', 'required', 'type', 'readOnly', 'externalDocs', 'example']);

/** gnostic tries Schema, then FileSchema; the later match wins, so a pure `type: file` schema is a FileSchema. */
const schemaItem: Converter = (value, path) => {
  const object = objectAt(value, path);
  const isFile = object.type === 'file' && Object.keys(object).every((key) => FILE_SCHEMA_KEYS.has(key) || key.startsWith('x-'));
  return isFile ? { file_schema: fileSchema(value, path) } : { schema: schema(value, path) };
};

const jsonReference = messageConverter({ fields: { $ref: ['_ref', 'string'], description: ['description', 'string'] }, required: ['$ref'], extensions: false });

const bodyParameter = messageConverter({
  fields: { description: ['description', 'string'], name: ['name', 'string'], in: ['in', 'string'], required: ['required', 'bool'], schema: ['schema', schema] },
  required: ['in', 'name', 'schema'],
  extensions: true,
});

const PARAMETER_FIELDS: Record<string, [string, FieldKind]> = {
  required: ['required', 'bool'],
  in: ['in', 'string'],
  description: ['description', 'string'],
  name: ['name', 'string'],
  ...PRIMITIVE_FIELDS,
};

const nonBodyParameters: Record<string, [string, Converter]> = {
  header: ['header_parameter_sub_schema', messageConverter({ fields: PARAMETER_FIELDS, extensions: true })],
  formData: [
    'form_data_parameter_sub_schema',
    messageConverter({ fields: { ...PARAMETER_FIELDS, allowEmptyValue: ['allow_empty_value', 'bool'] }, extensions: true }),
  ],
  query: [
    'query_parameter_sub_schema',
    messageConverter({ fields: { ...PARAMETER_FIELDS, allowEmptyValue: ['allow_empty_value', 'bool'] }, extensions: true }),
  ],
  path: ['path_parameter_sub_schema', messageConverter({ fields: PARAMETER_FIELDS, required: ['required'], extensions: true })],
};

/** Each sub-schema only accepts its own `in` value, so `in` decides the oneof member. */
const parameter: Converter = (value, path) => {
  const location = objectAt(value, path).in;
  if (location === 'body') return { body_parameter: bodyParameter(value, path) };
  const subSchema = typeof location === 'string' ? nonBodyParameters[location] : undefined;
  if (subSchema === undefined) throw new GnosticError(path, `contains an invalid Parameter (in: ${JSON.stringify(location)})`);
  return { non_body_parameter: { [subSchema[0]]: subSchema[1](value, path) } };
};

/** A `$ref` fails Parameter (an invalid key there) and matches JsonReference. */
const parametersItem: Converter = (value, path) =>
  '$ref' in objectAt(value, path) ? { json_reference: jsonReference(value, path) } : { parameter: parameter(value, path) };

const header = messageConverter({ fields: { ...PRIMITIVE_FIELDS, description: ['description', 'string'] }, extensions: true });

const response = messageConverter({
  fields: {
    description: ['description', 'string'],
    schema: ['schema', schemaItem],
    headers: ['headers', namedMap('additional_properties', header)],
    examples: ['examples', namedMap('additional_properties', anyOf)],
  },
  required: ['description'],
  extensions: true,
});

const responseValue: Converter = (value, path) =>
  '$ref' in objectAt(value, path) ? { json_reference: jsonReference(value, path) } : { response: response(value, path) };

const responses = patternedMap(/^([0-9]{3})$|^(default)$/, 'response_code', responseValue);

const securityRequirement = namedMap('additional_properties', (value, path) => ({ value: fieldValue('strings', value, path) }));

const operation = messageConverter({
  fields: {
    tags: ['tags', 'strings'],
    summary: ['summary', 'string'],
    description: ['description', 'string'],
    externalDocs: ['external_docs', externalDocs],
    operationId: ['operation_id', 'string'],
    produces: ['produces', 'strings'],
    consumes: ['consumes', 'strings'],
    parameters: ['parameters', { list: parametersItem }],
    responses: ['responses', responses],
    schemes: ['schemes', 'strings'],
    deprecated: ['deprecated', 'bool'],
    security: ['security', { list: securityRequirement }],
  },
  required: ['responses'],
  extensions: true,
});

const pathItem = messageConverter({
  fields: {
    $ref: ['_ref', 'string'],
    get: ['get', operation],
    put: ['put', operation],
    post: ['post', operation],
    delete: ['delete', operation],
    options: ['options', operation],
    head: ['head', operation],
    patch: ['patch', operation],
    parameters: ['parameters', { list: parametersItem }],
  },
  extensions: true,
});

const paths = patternedMap(/^\//, 'path', pathItem);

const scopes = namedMap('additional_properties', (value, path) => stringOf(value, path));

const securitySchemes: Record<string, [string, Converter]> = {
  basic: ['basic_authentication_security', messageConverter({ fields: { type: ['type', 'string'], description: ['description', 'string'] }, required: ['type'], extensions: true })],
  apiKey: [
    'api_key_security',
    messageConverter({
      fields: { type: ['type', 'string'], name: ['name', 'string'], in: ['in', 'string'], description: ['description', 'string'] },
      required: ['in', 'name', 'type'],
      enums: { in: ['header', 'query'] },
      extensions: true,
    }),
  ],
  implicit: [
    'oauth2_implicit_security',
    messageConverter({
      fields: { type: ['type', 'string'], flow: ['flow', 'string'], scopes: ['scopes', scopes], authorizationUrl: ['authorization_url', 'string'], description: ['description', 'string'] },
      required: ['authorizationUrl', 'flow', 'type'],
      extensions: true,
    }),
  ],
  password: [
    'oauth2_password_security',
    messageConverter({
      fields: { type: ['type', 'string'], flow: ['flow', 'string'], scopes: ['scopes', scopes], tokenUrl: ['token_url', 'string'], description: ['description', 'string'] },
      required: ['flow', 'tokenUrl', 'type'],
      extensions: true,
    }),
  ],
  application: [
    'oauth2_application_security',
    messageConverter({
      fields: { type: ['type', 'string'], flow: ['flow', 'string'], scopes: ['scopes', scopes], tokenUrl: ['token_url', 'string'], description: ['description', 'string'] },
      required: ['flow', 'tokenUrl', 'type'],
      extensions: true,
    }),
  ],
  accessCode: [
    'oauth2_access_code_security',
    messageConverter({
      fields: {
        type: ['type', 'string'],
        flow: ['flow', 'string'],
        scopes: ['scopes', scopes],
        authorizationUrl: ['authorization_url', 'string'],
        tokenUrl: ['token_url', 'string'],
        description: ['description', 'string'],
      },
      required: ['authorizationUrl', 'flow', 'tokenUrl', 'type'],
      extensions: true,
    }),
  ],
};

/** Each security scheme message only accepts its own `type` (and, for oauth2, `flow`). */
const securityDefinitionsItem: Converter = (value, path) => {
  const object = objectAt(value, path);
  const key = object.type === 'oauth2' ? object.flow : object.type;
  const scheme = typeof key === 'string' ? securitySchemes[key] : undefined;
  if (scheme === undefined) throw new GnosticError(path, 'contains an invalid SecurityDefinitionsItem');
  return { [scheme[0]]: scheme[1](value, path) };
};

const info = messageConverter({
  fields: {
    title: ['title', 'string'],
    version: ['version', 'string'],
    description: ['description', 'string'],
    termsOfService: ['terms_of_service', 'string'],
    contact: ['contact', messageConverter({ fields: { name: ['name', 'string'], url: ['url', 'string'], email: ['email', 'string'] }, extensions: true })],
    license: ['license', messageConverter({ fields: { name: ['name', 'string'], url: ['url', 'string'] }, required: ['name'], extensions: true })],
  },
  required: ['title', 'version'],
  extensions: true,
});

const tag = messageConverter({
  fields: { name: ['name', 'string'], description: ['description', 'string'], externalDocs: ['external_docs', externalDocs] },
  required: ['name'],
  extensions: true,
});

const document = messageConverter({
  fields: {
    swagger: ['swagger', 'string'],
    info: ['info', info],
    host: ['host', 'string'],
    basePath: ['base_path', 'string'],
    schemes: ['schemes', 'strings'],
    consumes: ['consumes', 'strings'],
    produces: ['produces', 'strings'],
    paths: ['paths', paths],
    definitions: ['definitions', namedMap('additional_properties', schema)],
    parameters: ['parameters', namedMap('additional_properties', parameter)],
    responses: ['responses', namedMap('additional_properties', response)],
    security: ['security', { list: securityRequirement }],
    securityDefinitions: ['security_definitions', namedMap('additional_properties', securityDefinitionsItem)],
    tags: ['tags', { list: tag }],
    externalDocs: ['external_docs', externalDocs],
  },
  required: ['info', 'paths', 'swagger'],
  enums: { swagger: ['2.0'] },
  extensions: true,
});

// ---------------------------------------------------------------------------------------------

let documentType: protobuf.Type | undefined;

/** The `openapi.v2.Document` type of proto/gnostic/openapiv2.proto, field names as in the file. */
export function openApiV2DocumentType(): protobuf.Type {
  if (documentType === undefined) {
    const root = new protobuf.Root().loadSync(packagePath('proto', 'gnostic', 'openapiv2.proto'), { keepCase: true });
    root.resolveAll();
    documentType = root.lookupType('openapi.v2.Document');
  }
  return documentType;
}

// The documents are built once per server and never change, so the bytes are kept per document object.
const encoded = new WeakMap<object, Buffer>();

/**
 * The swagger 2.0 document encoded as a gnostic `openapi.v2.Document`, as kube-apiserver serves it
 * for OPENAPI_V2_PROTOBUF_MEDIA_TYPES. Cached per document object.
 * @param swaggerJson the parsed document, or its JSON bytes (e.g. `OpenApiDocuments.v2Document().body`,
 *   which is built once, so the cache is hit on every later request)
 * @throws Error when gnostic would reject the document
 */
export function openApiV2ToProtobuf(swaggerJson: object): Buffer {
  const cached = encoded.get(swaggerJson);
  if (cached !== undefined) return cached;
  const parsed = (swaggerJson instanceof Uint8Array ? JSON.parse(Buffer.from(swaggerJson).toString('utf8')) : swaggerJson) as unknown;
  const message = document(parsed, '$root');
  const bytes = openApiV2DocumentType().encode(message).finish();
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  encoded.set(swaggerJson, body);
  return body;
}
