/**
 * PersistentVolumeClaimResize (default on; kubernetes
 * plugin/pkg/admission/storage/persistentvolume/resize): a claim's storage request may grow only
 * once the claim is Bound and only when its StorageClass (unchanged) sets
 * allowVolumeExpansion: true.
 */
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, KEY_PREFIX, objectField, stringField } from '../plugin-support';
import { compare, quantityOf } from '../quantity';
import { claimClass } from './default-storage-class';

function storageRequest(claim: unknown) {
  return quantityOf(objectField(objectField(objectField(claim, 'spec'), 'resources'), 'requests')?.storage) ?? quantityOf('0');
}

export const persistentVolumeClaimResizePlugin: AdmissionPluginFactory = (_config, deps) => ({
  name: 'PersistentVolumeClaimResize',
  sideEffects: 'None',
  handles: (a) => a.group === '' && a.resource === 'persistentvolumeclaims' && a.subresource === '' && a.operation === 'UPDATE' && a.object !== undefined && a.oldObject !== undefined,
  async validate(a) {
    const grown = storageRequest(a.object);
    const before = storageRequest(a.oldObject);
    if (grown === undefined || before === undefined || compare(grown, before) <= 0) return;
    if (stringField(objectField(a.oldObject, 'status'), 'phase') !== 'Bound') throw admissionForbidden(a, 'Only bound persistent volume claims can be expanded');
    const className = claimClass(a.object);
    const oldClassName = claimClass(a.oldObject);
    const storageClass = className !== '' && className === oldClassName ? deps.objects.get(KEY_PREFIX.storageclasses + className) : undefined;
    if (storageClass?.allowVolumeExpansion !== true) {
      throw admissionForbidden(a, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    }
  },
});
