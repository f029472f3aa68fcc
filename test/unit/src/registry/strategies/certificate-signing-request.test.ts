import { expect } from 'chai';
import { strategyFor } from '../../../../../src/registry';
import { makeCsr } from '../../../../support/test-csr';
import type { JsonObject } from '../../../../../src/apis/object';

const strategy = strategyFor({ group: 'certificates.k8s.io', resource: 'certificatesigningrequests', kind: 'CertificateSigningRequest' });
const request = makeCsr({ commonName: 'alice' });
const alice = { name: 'alice', uid: 'a-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['x'] } };

const stored = (): JsonObject => ({
  apiVersion: 'certificates.k8s.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name: 'c', uid: 'u', resourceVersion: '7', creationTimestamp: '2024-01-02T03:04:05Z' },
  spec: { request: request.base64, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], username: 'alice', groups: ['system:authenticated'] },
  status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Ok', message: 'fine', lastUpdateTime: '2024-01-02T03:04:05Z', lastTransitionTime: '2024-01-02T03:04:05Z' }] },
});

const conditions = (o: JsonObject) => ((o.status as JsonObject).conditions ?? []) as JsonObject[];

// k8s.io/kubernetes pkg/registry/certificates/certificates/strategy.go, v1.25.
describe('registry strategy: CertificateSigningRequest', () => {
  it('records the requester on create, whatever the client claimed, and starts with an empty status', () => {
    const csr: JsonObject = { ...stored(), spec: { ...(stored().spec as JsonObject), username: 'root', uid: 'x', groups: ['system:masters'] } };
    strategy.prepareForCreate(csr, { user: alice });
    expect(csr.spec).to.deep.include({ username: 'alice', uid: 'a-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['x'] } });
    expect(csr.status).to.deep.equal({});
    const anonymous: JsonObject = stored();
    strategy.prepareForCreate(anonymous);
    expect(anonymous.spec).not.to.have.any.keys('username', 'uid', 'groups', 'extra');
  });

  it('keeps spec and status as stored on an update of the object itself', () => {
    const next = stored();
    (next.spec as JsonObject).usages = ['server auth'];
    (next.status as JsonObject).conditions = [];
    (next.metadata as JsonObject).labels = { a: 'b' };
    strategy.prepareForUpdate(next, stored(), '');
    expect(next.spec).to.deep.equal(stored().spec);
    expect(next.status).to.deep.equal(stored().status);
    expect((next.metadata as JsonObject).labels).to.deep.equal({ a: 'b' });
  });

  it('on the status path keeps the spec and the stored Approved condition, stamps new conditions', () => {
    const next = stored();
    (next.spec as JsonObject).usages = ['server auth'];
    (next.status as JsonObject).certificate = 'Y2VydA==';
    (next.status as JsonObject).conditions = [{ type: 'Approved', status: 'True', reason: 'Changed' }, { type: 'Failed', status: 'True', reason: 'SignerValidationFailure' }];
    strategy.prepareForUpdate(next, stored(), 'status');
    expect(next.spec).to.deep.equal(stored().spec);
    expect(conditions(next)[0]).to.deep.equal(conditions(stored())[0]);
    expect(conditions(next)[1]).to.include({ type: 'Failed', reason: 'SignerValidationFailure' });
    expect(conditions(next)[1].lastUpdateTime).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(conditions(next)[1].lastTransitionTime).to.equal(conditions(next)[1].lastUpdateTime);
    expect((next.status as JsonObject).certificate).to.equal('Y2VydA==');
  });

  it('on the approval path changes only the conditions, keeping a transition time of the same type and status', () => {
    const old = stored();
    const next = stored();
    (next.spec as JsonObject).usages = ['server auth'];
    (next.status as JsonObject).certificate = 'Y2VydA==';
    (next.status as JsonObject).conditions = [{ type: 'Approved', status: 'True', reason: 'Again' }];
    strategy.prepareForUpdate(next, old, 'approval');
    expect(next.spec).to.deep.equal(old.spec);
    expect(next.status).not.to.have.property('certificate');
    expect(conditions(next)[0]).to.include({ reason: 'Again', lastTransitionTime: '2024-01-02T03:04:05Z' });
    expect(conditions(next)[0].lastUpdateTime).not.to.equal('2024-01-02T03:04:05Z');
  });

  it('validates the approval path with its own rules: adding Approved is allowed there only', () => {
    const pending: JsonObject = { ...stored(), status: {} };
    const approved = stored();
    expect(strategy.validateUpdate(approved, pending, false, 'approval')).to.equal(undefined);
    const refused = strategy.validateUpdate(approved, pending, false, '');
    expect(refused?.message).to.equal('CertificateSigningRequest.certificates.k8s.io "c" is invalid: status.conditions: Forbidden: updates may not add a condition of type "Approved"');
    expect(refused?.causes).to.deep.equal([{ reason: 'FieldValueForbidden', message: 'Forbidden: updates may not add a condition of type "Approved"', field: 'status.conditions' }]);
  });
});
