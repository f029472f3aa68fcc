/**
 * CertificateSubjectRestriction (default on; kubernetes
 * plugin/pkg/admission/certificates/subjectrestriction): a CertificateSigningRequest for the
 * kubernetes.io/kube-apiserver-client signer may not ask for the system:masters group (an
 * Organization of its subject), which would make its holder a cluster administrator.
 */
import type forge from 'node-forge';
import { nodeForge } from '../../util';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, objectField, stringField } from '../plugin-support';

const API_SERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
const ORGANIZATION_OID = '2.5.4.10';

/**
 * The subject's Organization values of a PEM certification request. Read from the ASN.1
 * directly (CertificationRequest → CertificationRequestInfo → subject), since node-forge's
 * parser accepts only RSA keys and kubelets send ECDSA ones.
 */
export function requestOrganizations(pem: string): string[] {
  const forgeLib = nodeForge();
  let block: forge.pem.ObjectPEM | undefined;
  try {
    block = forgeLib.pem.decode(pem)[0];
  } catch {
    block = undefined;
  }
  if (block === undefined || block.type !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  const request = forgeLib.asn1.fromDer(block.body);
  const info = (request.value as forge.asn1.Asn1[])[0];
  const subject = (info.value as forge.asn1.Asn1[])[1];
  const organizations: string[] = [];
  for (const rdn of subject.value as forge.asn1.Asn1[]) {
    for (const attribute of rdn.value as forge.asn1.Asn1[]) {
      const [oid, value] = attribute.value as forge.asn1.Asn1[];
      if (forgeLib.asn1.derToOid(oid.value as string) === ORGANIZATION_OID) organizations.push(forgeLib.util.decodeUtf8(value.value as string));
    }
  }
  return organizations;
}

export const certificateSubjectRestrictionPlugin: AdmissionPluginFactory = () => ({
  name: 'CertificateSubjectRestriction',
  sideEffects: 'None',
  handles: (a) => a.group === 'certificates.k8s.io' && a.resource === 'certificatesigningrequests' && a.subresource === '' && a.operation === 'CREATE' && a.object !== undefined,
  async validate(a) {
    const spec = objectField(a.object, 'spec');
    const signerName = stringField(spec, 'signerName');
    if (signerName !== API_SERVER_CLIENT_SIGNER) return;
    let organizations: string[];
    try {
      organizations = requestOrganizations(Buffer.from(stringField(spec, 'request'), 'base64').toString('latin1'));
    } catch (err) {
      throw admissionForbidden(a, `failed to parse CSR: ${(err as Error).message}`);
    }
    if (organizations.includes('system:masters')) throw admissionForbidden(a, `use of ${signerName} signer with system:masters group is not allowed`);
  },
});
