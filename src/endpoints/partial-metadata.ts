/**
 * Metadata-only answers (apiserver endpoints/handlers/response.go asPartialObjectMetadata and
 * asPartialObjectMetadataList): what client-go's metadata informers ask for with
 * `Accept: ...;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1` (kube-controller-manager's garbage
 * collector and quota controllers, controller-runtime's metadata watches). A single object
 * becomes a PartialObjectMetadata, a list a PartialObjectMetadataList; asking for the one where
 * the other applies is a 406, as in v1.25.
 */
import { ApiError } from '../util';
import type { JsonObject } from '../apis/object';

export function asPartialObjectMetadata(object: JsonObject, apiVersion: string): JsonObject {
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: object.metadata ?? {} };
}

export function asPartialObjectMetadataList(items: JsonObject[], listMetadata: JsonObject, apiVersion: string): JsonObject {
  return { kind: 'PartialObjectMetadataList', apiVersion, metadata: listMetadata, items: items.map((item) => asPartialObjectMetadata(item, apiVersion)) };
}

/** v1.25's 406 when the metadata kind asked for does not fit the answer (`%T` shown as the Go type of the object). */
export function partialKindMismatch(asked: string, goType: string): ApiError {
  const message = asked === 'PartialObjectMetadataList'
    ? `you requested PartialObjectMetadataList, but the requested object is not a list (${goType})`
    : `you requested PartialObjectMetadata, but the requested object is a list (${goType})`;
  return new ApiError(406, 'NotAcceptable', message, {});
}
