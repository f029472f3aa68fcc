import { expect } from 'chai';
import forge from 'node-forge';
import { certificateApprovalPlugin } from '../../../../../src/admission/plugins/certificate-approval';
import { certificateSigningPlugin } from '../../../../../src/admission/plugins/certificate-signing';
import { certificateSubjectRestrictionPlugin, requestOrganizations } from '../../../../../src/admission/plugins/certificate-subject-restriction';
import { admit, attributes, makePlugin, refusal, testDeps } from '../plugin-harness';
import type { JsonObject } from '../../../../../src/apis/object';

const csrs = { group: 'certificates.k8s.io', resource: 'certificatesigningrequests', kind: 'CertificateSigningRequest', namespace: '' };

function csr(signerName: string, request = '', status: JsonObject = {}): JsonObject {
  return { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'req' }, spec: { signerName, request, usages: ['client auth'] }, status };
}

/** A PEM certification request with the given organizations, signed by an RSA key. */
function pemRequest(organizations: string[]): string {
  const keys = forge.pki.rsa.generateKeyPair(1024);
  const request = forge.pki.createCertificationRequest();
  request.publicKey = keys.publicKey;
  request.setSubject([{ name: 'commonName', value: 'someone' }, ...organizations.map((value) => ({ name: 'organizationName', value }))]);
  request.sign(keys.privateKey);
  return forge.pki.certificationRequestToPem(request);
}

describe('CertificateApproval', () => {
  it('needs approve on the signer, or on its domain wildcard', async () => {
    const deps = testDeps({ allow: (a) => a.verb === 'approve' && a.name === 'example.com/*' });
    const plugin = await makePlugin(certificateApprovalPlugin, deps);
    const approval = { ...csrs, operation: 'UPDATE' as const, subresource: 'approval' };
    await admit(plugin, attributes({ ...approval, object: csr('example.com/signer'), oldObject: csr('example.com/signer') }));
    expect(deps.authorizations.map((a) => [a.verb, a.apiGroup, a.resource, a.name])).to.deep.equal([['approve', 'certificates.k8s.io', 'signers', 'example.com/signer'], ['approve', 'certificates.k8s.io', 'signers', 'example.com/*']]);
    const err = await refusal(admit(plugin, attributes({ ...approval, object: csr('kubernetes.io/kube-apiserver-client'), oldObject: csr('kubernetes.io/kube-apiserver-client') })));
    expect(err.message).to.equal('certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"');
  });
});

describe('CertificateSigning', () => {
  it('needs sign on the signer when status.certificate changes, and nothing otherwise', async () => {
    const deps = testDeps({ allow: (a) => a.verb === 'sign' && a.name === 'example.com/signer' });
    const plugin = await makePlugin(certificateSigningPlugin, deps);
    const status = { ...csrs, operation: 'UPDATE' as const, subresource: 'status' };
    await admit(plugin, attributes({ ...status, object: csr('example.com/signer', '', { certificate: 'Y2VydA==' }), oldObject: csr('example.com/signer') }));
    const err = await refusal(admit(plugin, attributes({ ...status, object: csr('other.io/signer', '', { certificate: 'Y2VydA==' }), oldObject: csr('other.io/signer') })));
    expect(err.message).to.equal('certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted to sign requests with signerName "other.io/signer"');
    const before = deps.authorizations.length;
    await admit(plugin, attributes({ ...status, object: csr('other.io/signer'), oldObject: csr('other.io/signer') }));
    expect(deps.authorizations.length).to.equal(before);
  });
});

describe('CertificateSubjectRestriction', () => {
  it('refuses system:masters for the kube-apiserver-client signer only', async () => {
    const plugin = await makePlugin(certificateSubjectRestrictionPlugin, testDeps());
    const masters = Buffer.from(pemRequest(['system:masters'])).toString('base64');
    const err = await refusal(admit(plugin, attributes({ ...csrs, object: csr('kubernetes.io/kube-apiserver-client', masters) })));
    expect(err.message).to.equal('certificatesigningrequests.certificates.k8s.io "req" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed');
    await admit(plugin, attributes({ ...csrs, object: csr('kubernetes.io/kube-apiserver-client', Buffer.from(pemRequest(['devs'])).toString('base64')) }));
    await admit(plugin, attributes({ ...csrs, object: csr('example.com/signer', masters) }));
    const garbage = await refusal(admit(plugin, attributes({ ...csrs, object: csr('kubernetes.io/kube-apiserver-client', Buffer.from('nonsense').toString('base64')) })));
    expect(garbage.message).to.equal('certificatesigningrequests.certificates.k8s.io "req" is forbidden: failed to parse CSR: PEM block type must be CERTIFICATE REQUEST');
  });

  it('reads the subject without parsing the key (kubelets send ECDSA keys, which node-forge cannot parse)', () => {
    // A request reduced to version and subject: the key and signature are never looked at.
    const request = forge.pki.createCertificationRequest();
    request.setSubject([{ name: 'organizationName', value: 'system:nodes' }, { name: 'commonName', value: 'system:node:n1' }]);
    const subject = forge.pki.distinguishedNameToAsn1(request.subject);
    const info = forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.SEQUENCE, true, [
      forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.INTEGER, false, forge.asn1.integerToDer(0).getBytes()),
      subject,
    ]);
    const der = forge.asn1.toDer(forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.SEQUENCE, true, [info])).getBytes();
    const pem = forge.pem.encode({ type: 'CERTIFICATE REQUEST', body: der });
    expect(requestOrganizations(pem)).to.deep.equal(['system:nodes']);
  });
});
