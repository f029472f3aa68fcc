/**
 * CertificateApproval (default on; kubernetes plugin/pkg/admission/certificates/approval): an
 * update of certificatesigningrequests/approval needs the `approve` verb on the request's signer
 * (resource `signers` of certificates.k8s.io named after the signer, or its `<domain>/*`
 * wildcard), else 403 `user not permitted to approve requests with signerName "X"`.
 */
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, objectField, stringField } from '../plugin-support';
import { isAuthorizedForSigner } from './certificate-signers';

export const certificateApprovalPlugin: AdmissionPluginFactory = (_config, deps) => ({
  name: 'CertificateApproval',
  sideEffects: 'None',
  handles: (a) => a.group === 'certificates.k8s.io' && a.resource === 'certificatesigningrequests' && a.subresource === 'approval' && a.operation === 'UPDATE',
  async validate(a) {
    const signerName = stringField(objectField(a.object, 'spec'), 'signerName');
    if (!(await isAuthorizedForSigner(deps.authorizer, a.userInfo, 'approve', signerName))) {
      throw admissionForbidden(a, `user not permitted to approve requests with signerName "${signerName}"`);
    }
  },
});
