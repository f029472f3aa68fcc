/**
 * CertificateSigning (default on; kubernetes plugin/pkg/admission/certificates/signing): an
 * update of certificatesigningrequests/status that changes status.certificate or
 * status.conditions needs the `sign` verb on the request's signer (or `<domain>/*`), else 403
 * `user not permitted to sign requests with signerName "X"`.
 */
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, objectField, stringField } from '../plugin-support';
import { isAuthorizedForSigner } from './certificate-signers';

export const certificateSigningPlugin: AdmissionPluginFactory = (_config, deps) => ({
  name: 'CertificateSigning',
  sideEffects: 'None',
  handles: (a) => a.group === 'certificates.k8s.io' && a.resource === 'certificatesigningrequests' && a.subresource === 'status' && a.operation === 'UPDATE',
  async validate(a) {
    const status = objectField(a.object, 'status') ?? {};
    const oldStatus = objectField(a.oldObject, 'status') ?? {};
    if (JSON.stringify(status.certificate ?? null) === JSON.stringify(oldStatus.certificate ?? null) &&
      JSON.stringify(status.conditions ?? []) === JSON.stringify(oldStatus.conditions ?? [])) return;
    const signerName = stringField(objectField(a.oldObject, 'spec'), 'signerName');
    if (!(await isAuthorizedForSigner(deps.authorizer, a.userInfo, 'sign', signerName))) {
      throw admissionForbidden(a, `user not permitted to sign requests with signerName "${signerName}"`);
    }
  },
});
