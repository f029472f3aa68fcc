/** DefaultStorageClass, StorageObjectInUseProtection, PersistentVolumeClaimResize. */
import { expect } from 'chai';
import { defaultStorageClassPlugin } from '../../../../../src/admission/plugins/default-storage-class';
import { persistentVolumeClaimResizePlugin } from '../../../../../src/admission/plugins/persistent-volume-claim-resize';
import { storageObjectInUseProtectionPlugin } from '../../../../../src/admission/plugins/storage-object-in-use-protection';
import { admit, attributes, makePlugin, refusal, testDeps } from '../plugin-harness';
import type { JsonObject } from '../../../../../src/apis/object';

const claims = { resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim' };
const claim = (spec: JsonObject = {}, extra: JsonObject = {}): JsonObject => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'ns' }, spec: { resources: { requests: { storage: '1Gi' } }, ...spec }, ...extra });
const storageClass = (name: string, isDefault: boolean, extra: JsonObject = {}): JsonObject => ({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name, annotations: isDefault ? { 'storageclass.kubernetes.io/is-default-class': 'true' } : {} }, provisioner: 'x', ...extra });

describe('DefaultStorageClass', () => {
  it('gives a claim without a class the default StorageClass, and nothing when there is none', async () => {
    const deps = testDeps();
    const plugin = await makePlugin(defaultStorageClassPlugin, deps);
    expect(((await admit(plugin, attributes({ ...claims, object: claim() })))?.spec as JsonObject).storageClassName).to.equal(undefined);
    deps.objects.put('/registry/storageclasses/fast', storageClass('fast', true));
    deps.objects.put('/registry/storageclasses/slow', storageClass('slow', false));
    expect(((await admit(plugin, attributes({ ...claims, object: claim() })))?.spec as JsonObject).storageClassName).to.equal('fast');
    expect(((await admit(plugin, attributes({ ...claims, object: claim({ storageClassName: '' }) })))?.spec as JsonObject).storageClassName).to.equal('');
  });

  it('refuses a claim while two classes are default', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/storageclasses/a', storageClass('a', true));
    deps.objects.put('/registry/storageclasses/b', storageClass('b', true));
    const err = await refusal(admit(await makePlugin(defaultStorageClassPlugin, deps), attributes({ ...claims, object: claim() })));
    expect(err.message).to.equal('persistentvolumeclaims "data" is forbidden: Internal error occurred: 2 default StorageClasses were found');
  });
});

describe('StorageObjectInUseProtection', () => {
  it('adds the protection finalizers to new claims and volumes', async () => {
    const plugin = await makePlugin(storageObjectInUseProtectionPlugin, testDeps());
    expect(((await admit(plugin, attributes({ ...claims, object: claim() })))?.metadata as JsonObject).finalizers).to.deep.equal(['kubernetes.io/pvc-protection']);
    const volume = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv', finalizers: ['x'] }, spec: {} };
    const admitted = await admit(plugin, attributes({ resource: 'persistentvolumes', kind: 'PersistentVolume', namespace: '', object: volume }));
    expect((admitted?.metadata as JsonObject).finalizers).to.deep.equal(['x', 'kubernetes.io/pv-protection']);
  });
});

describe('PersistentVolumeClaimResize', () => {
  it('lets a bound claim grow only when its class allows volume expansion', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/storageclasses/grow', storageClass('grow', false, { allowVolumeExpansion: true }));
    deps.objects.put('/registry/storageclasses/fixed', storageClass('fixed', false));
    const plugin = await makePlugin(persistentVolumeClaimResizePlugin, deps);
    const bound = { status: { phase: 'Bound' } };
    const grown = (className: string) => claim({ storageClassName: className, resources: { requests: { storage: '2Gi' } } });
    await admit(plugin, attributes({ ...claims, operation: 'UPDATE', object: grown('grow'), oldObject: claim({ storageClassName: 'grow' }, bound) }));
    const fixed = await refusal(admit(plugin, attributes({ ...claims, operation: 'UPDATE', object: grown('fixed'), oldObject: claim({ storageClassName: 'fixed' }, bound) })));
    expect(fixed.message).to.equal('persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    const pending = await refusal(admit(plugin, attributes({ ...claims, operation: 'UPDATE', object: grown('grow'), oldObject: claim({ storageClassName: 'grow' }) })));
    expect(pending.message).to.equal('persistentvolumeclaims "data" is forbidden: Only bound persistent volume claims can be expanded');
    // Shrinking or keeping the size is not this plugin's concern.
    await admit(plugin, attributes({ ...claims, operation: 'UPDATE', object: claim({ storageClassName: 'fixed' }), oldObject: grown('fixed') }));
  });
});
