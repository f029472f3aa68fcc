/**
 * The v1.25 OpenAPI schemas, and what they tell about request bodies: typed decoding (wrong types
 * rejected, unknown members pruned and reported) as kube-apiserver's decoding into Go structs does.
 */

export { OpenApiSchemas, resolveSchema, splitApiVersion, SCHEMA_REF_PREFIX, type GroupVersionKind, type KindSchema, type OpenApiSchema, type SchemaTable } from './openapi-schemas';
export { typedDecode, TypedDecoder, TypedDecodeError, type DecodeSource, type FieldValidation, type TypedDecodeResult } from './typed-decoder';
export { findDuplicateFields, scanDuplicateFields, type DuplicateField } from './duplicate-fields';
export { goStructName, goTypeName, namedFieldType } from './go-type-names';
