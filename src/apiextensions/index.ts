/**
 * CustomResourceDefinitions served like built-in resources (issue 17): the per-replica index of
 * Established CRDs and the seams it feeds (resolver, strategies, decoding, discovery, OpenAPI,
 * apply topology, conversion), the CRD controller, and the pure modules of schemas and CEL rules.
 * @example
 *   const index = new CustomResourceIndex();
 *   index.attach(cache); // then index.lookup('example.com', 'v1', 'widgets')
 */
export { CustomResourceIndex, CRD_KEY_PREFIX, CUSTOM_RESOURCE_PATCH_TYPES, type CustomServedResource } from './custom-resource-index';
export { CrdController, type CrdControllerOptions } from './crd-controller';
export { CLEANUP_FINALIZER, CRD_GROUP, CRD_KIND, CRD_RESOURCE } from './crd-model';
export { validateCrdCreate, validateCrdUpdate, validateStructural } from './crd-validation';
export { validateAgainstSchema } from './schema-validation';
export { pruneObject } from './pruning';
export { applySchemaDefaults } from './defaulting';
export { compileRule, validateRules } from './cel/cel-entry-points';
export { customOpenApiV3Document, metaSchemasOf, schemaPrefix } from './custom-openapi';
export { MergedOpenApi } from './merged-openapi';
