/**
 * What v1.25's cost estimator knows of a schema node (k8s.io/apiextensions-apiserver
 * pkg/apiserver/schema/cel/model/schemas.go `SchemaDeclType`, with k8s.io/apiserver pkg/cel
 * types.go `DeclType.MaxElements` and `MinSerializedSize`): the largest size a value can have
 * (string length, list items, map entries) and the smallest JSON it can serialize to.
 *
 * Where the schema sets no bound, v1.25 derives one from the largest request (3 MiB): a string
 * holds at most 3 MiB - 2 characters; a list at most (3 MiB - 2) / (item's minimum size + 1) items;
 * a map (3 MiB - 2) / (value's minimum size + 6) entries. maxLength counts characters and a
 * character may take 4 bytes, so a string's bound is four times its maxLength. Formats bound
 * durations, dates and date-times to their JSON sizes; integers, numbers and booleans have no size.
 * Nodes that v1.25 does not expose to CEL (arrays without items, untyped schemas, maps whose values
 * are not exposed) have no DeclType.
 */
import { additionalSchema, type JsonSchemaProps } from '../json-schema';
import { escapedName, withTypeAndObjectMeta } from './rule-type-checker';

/** apiextensions.DefaultMaxRequestSizeBytes. */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

/** k8s.io/apiserver pkg/cel limits (v1.25). */
const MIN_STRING_SIZE = 2;
const MIN_BOOL_SIZE = 4;
const MIN_NUMBER_SIZE = 1;
const MIN_DURATION_SIZE_JSON = 3;
const MAX_DURATION_SIZE_JSON = 32;
const JSON_DATE_SIZE = 12;
const MIN_DATETIME_SIZE_JSON = 21;
const MAX_DATETIME_SIZE_JSON = 32;

export interface DeclType {
  readonly kind: 'list' | 'map' | 'object' | 'string' | 'bytes' | 'duration' | 'timestamp' | 'bool' | 'int' | 'double' | 'dyn';
  /** Largest size: characters, bytes, items or entries; 0 where the type has no size. */
  readonly maxElements: number;
  /** Smallest JSON serialization, used to bound unbounded lists and maps. */
  readonly minSerializedSize: number;
  /** Object fields by their CEL (escaped) names. */
  readonly fields?: ReadonlyMap<string, DeclType>;
  /** List items, or map values. */
  readonly elem?: DeclType;
  /** Map keys. */
  readonly key?: DeclType;
}

/** The `string` of map keys: v1.25 declares it without a size. */
const KEY_STRING: DeclType = { kind: 'string', maxElements: 0, minSerializedSize: MIN_STRING_SIZE };

const zeroIfNegative = (n: number): number => (n < 0 ? 0 : n);

/** estimateMaxStringLengthPerRequest. */
function maxStringLengthPerRequest(schema: JsonSchemaProps): number {
  if (schema['x-kubernetes-int-or-string'] === true) return MAX_REQUEST_SIZE_BYTES - 2;
  switch (schema.format) {
    case 'duration': return MAX_DURATION_SIZE_JSON;
    case 'date': return JSON_DATE_SIZE;
    case 'date-time': return MAX_DATETIME_SIZE_JSON;
    default: return MAX_REQUEST_SIZE_BYTES - 2;
  }
}

/** SchemaDeclType: the DeclType of `schema`, or undefined where v1.25 does not expose the node. */
export function schemaDeclType(schema: JsonSchemaProps | undefined, isResourceRoot: boolean): DeclType | undefined {
  if (schema === undefined) return undefined;
  if (schema['x-kubernetes-int-or-string'] === true) {
    return { kind: 'dyn', maxElements: MAX_REQUEST_SIZE_BYTES - 2, minSerializedSize: 1 };
  }
  const s = isResourceRoot ? withTypeAndObjectMeta(schema) : schema;
  switch (s.type) {
    case 'array': {
      if (s.items === undefined) return undefined;
      const elem = schemaDeclType(s.items, s.items['x-kubernetes-embedded-resource'] === true);
      if (elem === undefined) return undefined;
      const maxItems = typeof s.maxItems === 'number' ? zeroIfNegative(s.maxItems) : Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (elem.minSerializedSize + 1));
      return { kind: 'list', maxElements: maxItems, minSerializedSize: 2, elem };
    }
    case 'object': {
      const values = additionalSchema(s);
      if (values !== undefined) {
        const elem = schemaDeclType(values, values['x-kubernetes-embedded-resource'] === true);
        if (elem === undefined) return undefined;
        const maxProperties = typeof s.maxProperties === 'number' ? zeroIfNegative(s.maxProperties) : Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (elem.minSerializedSize + 6));
        return { kind: 'map', maxElements: maxProperties, minSerializedSize: 2, elem, key: KEY_STRING };
      }
      const required = new Set(s.required ?? []);
      const fields = new Map<string, DeclType>();
      // {} at least, plus every required property that the server does not default.
      let minSerializedSize = 2;
      for (const [name, property] of Object.entries(s.properties ?? {})) {
        const fieldType = schemaDeclType(property, property['x-kubernetes-embedded-resource'] === true);
        if (fieldType === undefined) continue;
        const celName = escapedName(name);
        if (celName !== undefined) fields.set(celName, fieldType);
        if (required.has(name) && property.default === undefined) minSerializedSize += name.length + fieldType.minSerializedSize + 4;
      }
      return { kind: 'object', maxElements: 0, minSerializedSize, fields };
    }
    case 'string':
      switch (s.format) {
        case 'byte':
          return { kind: 'bytes', maxElements: typeof s.maxLength === 'number' ? zeroIfNegative(s.maxLength) : maxStringLengthPerRequest(s), minSerializedSize: MIN_STRING_SIZE };
        case 'duration':
          return { kind: 'duration', maxElements: maxStringLengthPerRequest(s), minSerializedSize: MIN_DURATION_SIZE_JSON };
        case 'date':
          return { kind: 'timestamp', maxElements: maxStringLengthPerRequest(s), minSerializedSize: JSON_DATE_SIZE };
        case 'date-time':
          return { kind: 'timestamp', maxElements: maxStringLengthPerRequest(s), minSerializedSize: MIN_DATETIME_SIZE_JSON };
        default:
          return { kind: 'string', maxElements: typeof s.maxLength === 'number' ? zeroIfNegative(s.maxLength) * 4 : maxStringLengthPerRequest(s), minSerializedSize: MIN_STRING_SIZE };
      }
    case 'boolean': return { kind: 'bool', maxElements: 0, minSerializedSize: MIN_BOOL_SIZE };
    case 'number': return { kind: 'double', maxElements: 0, minSerializedSize: MIN_NUMBER_SIZE };
    case 'integer': return { kind: 'int', maxElements: 0, minSerializedSize: MIN_NUMBER_SIZE };
    default: return undefined;
  }
}

/**
 * How many times data of at least `minSerializedSize` bytes can occur in one request (model
 * MaxCardinality): the multiplier of a rule that sits under an unbounded list or map.
 */
export function maxCardinality(minSerializedSize: number): bigint {
  return BigInt(Math.floor(MAX_REQUEST_SIZE_BYTES / (minSerializedSize + 1)));
}
