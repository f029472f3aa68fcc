/**
 * storage.k8s.io CSIStorageCapacity: v1.25 serves v1beta1 and v1 and stores v1. The versions'
 * v1.25 OpenAPI schemas are identical field for field, so only apiVersion changes.
 */
import { ConversionFamily } from './conversion-family';
import { sameShapeConversion } from './same-shape-conversion';

export const csiStorageCapacityConversion: ConversionFamily = sameShapeConversion('CSIStorageCapacity', 'storage.k8s.io/v1', ['storage.k8s.io/v1beta1']);
