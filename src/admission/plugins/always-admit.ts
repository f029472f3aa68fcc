/**
 * AlwaysAdmit (deprecated, off by default; kubernetes plugin/pkg/admission/admit): admits every
 * request. It exists so that naming it is not an error.
 */
import type { AdmissionPluginFactory } from '../plugin-registry';

export const alwaysAdmitPlugin: AdmissionPluginFactory = () => ({
  name: 'AlwaysAdmit',
  sideEffects: 'None',
  handles: () => false,
});
