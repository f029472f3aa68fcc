/**
 * DefaultStorageClass (default on; kubernetes plugin/pkg/admission/storage/storageclass/setdefault):
 * a new PersistentVolumeClaim that names no class (neither spec.storageClassName nor the beta
 * annotation) gets the StorageClass annotated storageclass.kubernetes.io/is-default-class=true;
 * none marked: nothing; several marked: the create is refused (v1.25 refuses rather than choose).
 */
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, ensureSpec, KEY_PREFIX, stringField, stringMap } from '../plugin-support';
import { type JsonObject, metadataOf } from '../../apis/object';

const DEFAULT_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
const BETA_DEFAULT_ANNOTATION = 'storageclass.beta.kubernetes.io/is-default-class';
export const BETA_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

export function isDefaultStorageClass(storageClass: JsonObject): boolean {
  const annotations = stringMap(metadataOf(storageClass), 'annotations');
  return annotations[DEFAULT_ANNOTATION] === 'true' || annotations[BETA_DEFAULT_ANNOTATION] === 'true';
}

/** helper.GetPersistentVolumeClaimClass: the beta annotation wins over the field. */
export function claimClass(claim: JsonObject | undefined): string {
  const annotations = stringMap(metadataOf(claim), 'annotations');
  if (BETA_CLASS_ANNOTATION in annotations) return annotations[BETA_CLASS_ANNOTATION];
  return stringField((claim?.spec ?? {}) as JsonObject, 'storageClassName');
}

export const defaultStorageClassPlugin: AdmissionPluginFactory = (_config, deps) => ({
  name: 'DefaultStorageClass',
  sideEffects: 'None',
  handles: (a) => a.group === '' && a.resource === 'persistentvolumeclaims' && a.subresource === '' && a.operation === 'CREATE' && a.object !== undefined,
  async mutate(a) {
    const claim = a.object as JsonObject;
    const spec = ensureSpec(claim);
    if (typeof spec.storageClassName === 'string' || BETA_CLASS_ANNOTATION in stringMap(metadataOf(claim), 'annotations')) return claim;
    const defaults = deps.objects.list(KEY_PREFIX.storageclasses).filter(isDefaultStorageClass);
    if (defaults.length === 0) return claim;
    if (defaults.length > 1) throw admissionForbidden(a, `Internal error occurred: ${defaults.length} default StorageClasses were found`);
    spec.storageClassName = stringField(metadataOf(defaults[0]), 'name');
    return claim;
  },
});
