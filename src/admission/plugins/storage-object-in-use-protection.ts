/**
 * StorageObjectInUseProtection (default on; kubernetes
 * plugin/pkg/admission/storage/storageobjectinuseprotection, spec 02 §3): new PersistentVolumes
 * and PersistentVolumeClaims get the kubernetes.io/pv-protection and kubernetes.io/pvc-protection
 * finalizers, which the protection controller removes once nothing uses them.
 */
import type { AdmissionPluginFactory } from '../plugin-registry';
import { ensureMetadata, type JsonObject } from '../../apis/object';

const FINALIZERS: Record<string, string> = {
  persistentvolumes: 'kubernetes.io/pv-protection',
  persistentvolumeclaims: 'kubernetes.io/pvc-protection',
};

export const storageObjectInUseProtectionPlugin: AdmissionPluginFactory = () => ({
  name: 'StorageObjectInUseProtection',
  sideEffects: 'None',
  handles: (a) => a.group === '' && a.resource in FINALIZERS && a.subresource === '' && a.operation === 'CREATE' && a.object !== undefined,
  async mutate(a) {
    const object = a.object as JsonObject;
    const metadata = ensureMetadata(object);
    const finalizer = FINALIZERS[a.resource];
    const finalizers = Array.isArray(metadata.finalizers) ? (metadata.finalizers as unknown[]) : [];
    if (!finalizers.includes(finalizer)) metadata.finalizers = [...finalizers, finalizer];
    return object;
  },
});
