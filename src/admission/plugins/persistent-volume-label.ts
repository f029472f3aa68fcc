/**
 * PersistentVolumeLabel (deprecated, off by default; kubernetes
 * plugin/pkg/admission/storage/persistentvolume/label): labelled cloud volumes with their zone
 * and region through a cloud provider. Carina runs with no cloud provider, where v1.25's plugin
 * finds no labels to add; the name is accepted and the plugin changes nothing.
 */
import type { AdmissionPluginFactory } from '../plugin-registry';

export const persistentVolumeLabelPlugin: AdmissionPluginFactory = () => ({
  name: 'PersistentVolumeLabel',
  sideEffects: 'None',
  handles: () => false,
});
