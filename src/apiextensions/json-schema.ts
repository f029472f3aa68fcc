/**
 * The JSONSchemaProps of apiextensions.k8s.io/v1 as Carina reads them from a stored
 * CustomResourceDefinition (k8s.io/apiextensions-apiserver pkg/apis/apiextensions/v1 types_jsonschema.go),
 * and the few questions every other module asks of a schema node. Schemas are plain JSON from the
 * store: nothing here trusts a field's type without checking it.
 */
import { isJsonObject } from '../apis/object';

export interface ValidationRule {
  rule: string;
  message?: string;
}

export interface JsonSchemaProps {
  type?: string;
  format?: string;
  description?: string;
  title?: string;
  default?: unknown;
  enum?: unknown[];
  nullable?: boolean;
  properties?: Record<string, JsonSchemaProps>;
  additionalProperties?: JsonSchemaProps | boolean;
  items?: JsonSchemaProps;
  required?: string[];
  maximum?: number;
  minimum?: number;
  exclusiveMaximum?: boolean;
  exclusiveMinimum?: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  maxProperties?: number;
  minProperties?: number;
  multipleOf?: number;
  allOf?: JsonSchemaProps[];
  anyOf?: JsonSchemaProps[];
  oneOf?: JsonSchemaProps[];
  not?: JsonSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: ValidationRule[];
}

/** The schema of a map's values: additionalProperties when it is a schema, undefined otherwise. */
export function additionalSchema(schema: JsonSchemaProps): JsonSchemaProps | undefined {
  return isJsonObject(schema.additionalProperties) ? (schema.additionalProperties as JsonSchemaProps) : undefined;
}

/** True when unknown fields below this node are kept (x-kubernetes-preserve-unknown-fields). */
export function preservesUnknown(schema: JsonSchemaProps): boolean {
  return schema['x-kubernetes-preserve-unknown-fields'] === true;
}

/** The JSON type of a value, as kube-openapi's validator names it in messages. */
export function jsonTypeOf(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

/** The schema-type word of a value's CEL error messages ("object", "string", ...). */
export function schemaTypeName(schema: JsonSchemaProps): string {
  if (schema['x-kubernetes-int-or-string'] === true) return 'integer-or-string';
  return schema.type ?? 'object';
}
