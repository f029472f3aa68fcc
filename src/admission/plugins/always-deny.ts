/**
 * AlwaysDeny (deprecated, off by default; kubernetes plugin/pkg/admission/deny): refuses every
 * create, update, delete and connect with 403 `admission control is denying all modifications`.
 */
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden } from '../plugin-support';

const WHY = 'admission control is denying all modifications';

export const alwaysDenyPlugin: AdmissionPluginFactory = () => ({
  name: 'AlwaysDeny',
  sideEffects: 'None',
  handles: () => true,
  async mutate(a) {
    throw admissionForbidden(a, WHY);
  },
  async validate(a) {
    throw admissionForbidden(a, WHY);
  },
});
