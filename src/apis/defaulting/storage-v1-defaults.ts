/**
 * Defaulting of storage.k8s.io/v1 as kube-apiserver v1.25 does it (k8s.io/kubernetes
 * pkg/apis/storage/v1/defaults.go). CSIDriver.spec.seLinuxMount is left alone: its gate
 * (SELinuxMountReadWriteOncePod) is alpha in v1.25.
 */
import { ensureObject, fillIfUnset, isEmptyCollection } from './json-value';
import type { JsonObject } from '../object';

function defaultStorageClass(storageClass: JsonObject): void {
  fillIfUnset(storageClass, 'reclaimPolicy', 'Delete');
  fillIfUnset(storageClass, 'volumeBindingMode', 'Immediate');
}

function defaultCsiDriver(driver: JsonObject): void {
  const spec = ensureObject(driver, 'spec');
  fillIfUnset(spec, 'attachRequired', true);
  fillIfUnset(spec, 'podInfoOnMount', false);
  fillIfUnset(spec, 'storageCapacity', false);
  fillIfUnset(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
  if (isEmptyCollection(spec.volumeLifecycleModes)) spec.volumeLifecycleModes = ['Persistent'];
  fillIfUnset(spec, 'requiresRepublish', false);
}

export const storageV1Defaulters: Readonly<Record<string, (object: JsonObject) => void>> = {
  StorageClass: defaultStorageClass,
  CSIDriver: defaultCsiDriver,
};
