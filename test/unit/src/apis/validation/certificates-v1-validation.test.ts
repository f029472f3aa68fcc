import { expect } from 'chai';
import {
  validateCertificateSigningRequestApprovalUpdate,
  validateCertificateSigningRequestStatusUpdate,
  validateCreate,
  validateStatusUpdate,
  validateUpdate,
} from '../../../../../src/apis/validation';
import { makeCsr } from '../../../../support/test-csr';
import { createTestCa, issueClientCertificate } from '../../../../support/test-pki';
import { edited, messages } from './fixtures';
import type { JsonObject } from '../../../../../src/apis/object';

const request = makeCsr({ commonName: 'alice', organizations: ['devs'] });

const csr = (): JsonObject => ({
  apiVersion: 'certificates.k8s.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name: 'alice', uid: 'u-1', resourceVersion: '5', creationTimestamp: '2024-01-02T03:04:05Z' },
  spec: { request: request.base64, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], username: 'alice', groups: ['system:authenticated'] },
  status: {},
});

const condition = (type: string, status = 'True'): JsonObject => ({ type, status, reason: 'R', message: 'm', lastUpdateTime: '2024-01-02T03:04:05Z', lastTransitionTime: '2024-01-02T03:04:05Z' });
const withConditions = (object: JsonObject, ...conditions: JsonObject[]): JsonObject => edited(object, (o) => { (o.status as JsonObject).conditions = conditions; });
const pemBase64 = (pem: string) => Buffer.from(pem).toString('base64');
const spec = (o: JsonObject) => o.spec as JsonObject;

// k8s.io/kubernetes pkg/apis/certificates/validation, v1.25.
describe('apis/validation certificates.k8s.io/v1 CertificateSigningRequest', () => {
  it('accepts a signed request, any name, and the known usages', () => {
    expect(messages(validateCreate(csr(), false))).to.deep.equal([]);
    expect(messages(validateCreate(edited(csr(), (o) => { (o.metadata as JsonObject).name = 'Any:Name_at-all'; spec(o).usages = ['digital signature', 'key encipherment', 'client auth']; spec(o).expirationSeconds = 600; }), false))).to.deep.equal([]);
  });

  it('refuses a request that is not a signed PEM CSR, showing the bytes as Go prints a []byte', () => {
    expect(messages(validateCreate(edited(csr(), (o) => { delete spec(o).request; }), false))).to.deep.equal([
      'spec.request: Invalid value: []byte(nil): PEM block type must be CERTIFICATE REQUEST',
    ]);
    expect(messages(validateCreate(edited(csr(), (o) => { spec(o).request = Buffer.from('-', 'latin1').toString('base64'); }), false))).to.deep.equal([
      'spec.request: Invalid value: []byte{0x2d}: PEM block type must be CERTIFICATE REQUEST',
    ]);
    const forged = makeCsr({ commonName: 'alice', badSignature: true });
    const errors = messages(validateCreate(edited(csr(), (o) => { spec(o).request = forged.base64; }), false));
    expect(errors).to.have.length(1);
    expect(errors[0]).to.match(/^spec\.request: Invalid value: \[\]byte\{0x2d, 0x2d, .*\}: x509: ECDSA verification failure$/);
  });

  it('requires usages, each known and once', () => {
    expect(messages(validateCreate(edited(csr(), (o) => { spec(o).usages = []; }), false))).to.deep.equal(['spec.usages: Required value']);
    const errors = messages(validateCreate(edited(csr(), (o) => { spec(o).usages = ['client auth', 'flying', 'client auth']; }), false));
    expect(errors).to.deep.equal([
      'spec.usages[1]: Unsupported value: "flying": supported values: "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"',
      'spec.usages[2]: Duplicate value: "client auth"',
    ]);
  });

  it('requires a well-formed signerName and refuses kubernetes.io/legacy-unknown', () => {
    const signer = (name: string | undefined) => messages(validateCreate(edited(csr(), (o) => { if (name === undefined) delete spec(o).signerName; else spec(o).signerName = name; }), false));
    expect(signer(undefined)).to.deep.equal(['spec.signerName: Required value']);
    expect(signer('kubernetes.io/legacy-unknown')).to.deep.equal(['spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version']);
    expect(signer('example')).to.deep.equal(['spec.signerName: Invalid value: "example": must be a fully qualified domain and path of the form \'example.com/signer-name\'']);
    expect(signer('a/b/c')).to.deep.equal(['spec.signerName: Invalid value: "a/b/c": must be a fully qualified domain and path of the form \'example.com/signer-name\'']);
    expect(signer('example/signer')).to.deep.equal(['spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots']);
    expect(signer('Example.com/signer')[0]).to.match(/^spec\.signerName: Invalid value: "Example\.com": validating label "Example": a lowercase RFC 1123 label must consist of/);
    expect(signer('example.com/Signer')[0]).to.match(/^spec\.signerName: Invalid value: "Signer": validating label "Signer": a lowercase RFC 1123 subdomain must consist of/);
    expect(signer('example.com/my-signer.v1')).to.deep.equal([]);
  });

  it('refuses an expirationSeconds below 600', () => {
    expect(messages(validateCreate(edited(csr(), (o) => { spec(o).expirationSeconds = 599; }), false))).to.deep.equal([
      'spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)',
    ]);
  });

  it('checks conditions: type and status required, True only for Approved/Denied/Failed, exclusive, unique', () => {
    const errors = messages(validateCreate(withConditions(csr(), condition('Approved'), condition('Denied'), condition('Approved', 'False'), { type: '', status: '' }, condition('Custom', 'Maybe')), false));
    expect(errors).to.deep.equal([
      'status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
      'status.conditions[2].status: Unsupported value: "False": supported values: "True"',
      'status.conditions[2].type: Invalid value: "Approved": Approved and Denied conditions are mutually exclusive',
      'status.conditions[2].type: Duplicate value: "Approved"',
      'status.conditions[3].type: Required value',
      'status.conditions[3].status: Required value',
      'status.conditions[4].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
    ]);
  });

  it('refuses status.certificate content other than PEM CERTIFICATE blocks', () => {
    const errors = messages(validateCreate(edited(csr(), (o) => { (o.status as JsonObject).certificate = pemBase64(request.keyPem); }), false));
    expect(errors).to.deep.equal(['status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"']);
  });

  describe('updates', () => {
    const old = withConditions(csr(), condition('Approved'));
    const ca = createTestCa();
    const certificate = pemBase64(issueClientCertificate(ca, 'alice').certPem);

    it('never lets a condition of type Approved, Denied or Failed go, on any path', () => {
      for (const validate of [validateUpdate, validateStatusUpdate] as const) {
        expect(messages(validate(csr(), old, false))).to.include('status.conditions: Forbidden: updates may not remove a condition of type "Approved"');
      }
      expect(messages(validateCertificateSigningRequestApprovalUpdate(csr(), old))).to.deep.equal(['status.conditions: Forbidden: updates may not remove a condition of type "Approved"']);
      const failed = withConditions(csr(), condition('Failed'));
      expect(messages(validateCertificateSigningRequestStatusUpdate(csr(), failed))).to.deep.equal(['status.conditions: Forbidden: updates may not remove a condition of type "Failed"']);
    });

    it('lets only the approval path add Approved or Denied', () => {
      expect(messages(validateUpdate(old, csr(), false))).to.deep.equal(['status.conditions: Forbidden: updates may not add a condition of type "Approved"']);
      expect(messages(validateStatusUpdate(old, csr(), false))).to.deep.equal(['status.conditions: Forbidden: updates may not add a condition of type "Approved"']);
      expect(messages(validateCertificateSigningRequestApprovalUpdate(old, csr()))).to.deep.equal([]);
      expect(messages(validateCertificateSigningRequestApprovalUpdate(withConditions(csr(), condition('Approved'), condition('Denied')), old))).to.deep.equal([
        'status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
      ]);
    });

    it('lets only the status path set the certificate, once', () => {
      const issued = edited(old, (o) => { (o.status as JsonObject).certificate = certificate; });
      expect(messages(validateUpdate(issued, old, false))).to.deep.equal(['status.certificate: Forbidden: updates may not set certificate content']);
      expect(messages(validateCertificateSigningRequestApprovalUpdate(issued, old))).to.deep.equal(['status.certificate: Forbidden: updates may not set certificate content']);
      expect(messages(validateCertificateSigningRequestStatusUpdate(issued, old))).to.deep.equal([]);
      const other = pemBase64(issueClientCertificate(ca, 'mallory').certPem);
      expect(messages(validateCertificateSigningRequestStatusUpdate(edited(issued, (o) => { (o.status as JsonObject).certificate = other; }), issued))).to.deep.equal([
        'status.certificate: Forbidden: updates may not modify existing certificate content',
      ]);
    });

    it('sets a certificate only on an approved request, never on a pending or denied one', () => {
      const pending = csr();
      const denied = withConditions(csr(), condition('Denied'));
      for (const stored of [pending, denied]) {
        const issued = edited(stored, (o) => { (o.status as JsonObject).certificate = certificate; });
        expect(messages(validateCertificateSigningRequestStatusUpdate(issued, stored))).to.deep.equal(['status.certificate: Forbidden: a certificate may only be set on an approved request']);
      }
    });

    it('tolerates what the stored object already holds (legacy signer, duplicate usages)', () => {
      const legacy = edited(csr(), (o) => { spec(o).signerName = 'kubernetes.io/legacy-unknown'; spec(o).usages = ['client auth', 'client auth']; });
      expect(messages(validateUpdate(legacy, legacy, false))).to.deep.equal([]);
    });
  });
});
