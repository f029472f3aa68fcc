/**
 * The resource endpoints (apiserver pkg/endpoints): request info, the per-request context the
 * filters fill, negotiation and the one response writer, body codecs, and one handler per verb.
 * src/http builds the filter chain in front of these; nothing here imports src/http.
 */

export { ResourceEndpoints } from './resource-endpoints';
export { RequestContext, MAX_REQUEST_BODY_BYTES, type BodySource, type RequestHeaders } from './request-context';
export { parseRequestInfo, decodePathSegments, type RequestInfo, type ResourceRequestInfo, type NonResourceRequestInfo, type Verb } from './request-info';
export { ResponseWriter, isPrettyPrint, type HttpResponse, type InOrder, type RepresentationOffer, type StreamTracker, type WatchSink } from './response-writer';
export { isLongRunning, requestTimeoutMs, MAX_REQUEST_TIMEOUT_MS } from './request-deadline';
export { BodyCodec, refuseTooDeep, yamlBodyError, type ProtobufObjectCodec, type YamlBodyReader } from './body-codec';
export { negotiateResponse, parseMediaRanges, requestRepresentation, mediaTypeOf, type Representation, type ResponseChoice, type MediaRange } from './negotiation';
export type { ApplyPatch, EndpointsConfig, FieldValidationLevel, ResourceResolver, ServerSideApply, StorageResolver, TypedDecode, VirtualRead } from './request-scope';
export { RequestScope } from './request-scope';
export type { ConnectConfig } from './handlers';
