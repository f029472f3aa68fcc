/**
 * OpenAPI v2 and v3 documents of the served group-versions, as bytes with their ETags.
 * @example
 *   const documents = new OpenApiDocuments(Catalogue.load());
 *   const apps = documents.v3Document('apis/apps/v1'); // { body, etag, hash }
 */

export { goJsonStringify } from './go-json';
export {
  OpenApiDocuments,
  openApiV2Document,
  openApiV3Document,
  openApiV3Index,
  type OpenApiBody,
  type OpenApiV3DocumentBody,
  type OpenApiV3Index,
} from './openapi-documents';
export { buildSwaggerV2, convertSchema, type SwaggerV2Options } from './swagger-v2';
