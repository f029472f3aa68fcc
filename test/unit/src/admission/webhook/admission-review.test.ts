import { expect } from 'chai';
import { admissionReviewRequest, chooseReviewVersion, InvalidResponseError, rejectionStatus, verifyAdmissionResponse } from '../../../../../src/admission/webhook/admission-review';

const user = { name: 'alice', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a'] } };
const fields = {
  uid: 'req-1',
  kind: { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' },
  resource: { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' },
  subResource: '',
  requestKind: { group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' },
  requestResource: { group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers' },
  requestSubResource: '',
  name: 'web',
  namespace: 'default',
  operation: 'CREATE',
  userInfo: user,
  object: { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web' } },
  dryRun: false,
  options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
};

function answer(response: Record<string, unknown>, version = 'admission.k8s.io/v1') {
  return { apiVersion: version, kind: 'AdmissionReview', response: { uid: 'req-1', ...response } };
}

describe('admission/webhook: AdmissionReview (spec 02 §4.4 points 1-5)', () => {
  describe('the version sent', () => {
    it('is the first of admissionReviewVersions the server knows', () => {
      expect(chooseReviewVersion(['v2', 'v1beta1', 'v1'])).to.equal('v1beta1');
      expect(chooseReviewVersion(['v1'])).to.equal('v1');
    });

    it('is none when no listed version is known', () => {
      expect(chooseReviewVersion(['v2', 'v0'])).to.equal(undefined);
      expect(chooseReviewVersion([])).to.equal(undefined);
    });
  });

  describe('the request', () => {
    it('carries every field of v1.25 in its order, with null object fields and dryRun always present', () => {
      const text = admissionReviewRequest('v1', { ...fields, oldObject: undefined });
      const review = JSON.parse(text);
      expect(Object.keys(review)).to.deep.equal(['kind', 'apiVersion', 'request']);
      expect(review.apiVersion).to.equal('admission.k8s.io/v1');
      expect(Object.keys(review.request)).to.deep.equal(['uid', 'kind', 'resource', 'requestKind', 'requestResource', 'name', 'namespace', 'operation', 'userInfo', 'object', 'oldObject', 'dryRun', 'options']);
      expect(review.request.kind).to.deep.equal({ group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' });
      expect(review.request.requestKind.version).to.equal('v1');
      expect(review.request.userInfo).to.deep.equal({ username: 'alice', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a'] } });
      expect(review.request.oldObject).to.equal(null);
      expect(review.request.dryRun).to.equal(false);
    });

    it('sends object and oldObject in the field order of v1.25\'s typed objects, a custom resource\'s keys sorted', () => {
      const sent = { data: { z: '1', a: '2' }, metadata: { labels: { b: 'x', a: 'y' }, name: 'settings' }, kind: 'ConfigMap', apiVersion: 'v1' };
      const custom = { spec: { size: 1, color: 'red' }, metadata: { name: 'w' }, kind: 'Widget', apiVersion: 'example.com/v1' };
      const review = JSON.parse(admissionReviewRequest('v1', { ...fields, object: sent, oldObject: custom }));
      expect(JSON.stringify(review.request.object)).to.equal('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"settings","labels":{"a":"y","b":"x"}},"data":{"a":"2","z":"1"}}');
      expect(JSON.stringify(review.request.oldObject)).to.equal('{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"red","size":1}}');
    });

    it('names subresources and leaves out empty names and namespaces', () => {
      const review = JSON.parse(admissionReviewRequest('v1beta1', { ...fields, subResource: 'status', requestSubResource: 'status', name: '', namespace: '', options: undefined }));
      expect(review.apiVersion).to.equal('admission.k8s.io/v1beta1');
      expect(review.request.subResource).to.equal('status');
      expect(review.request.requestSubResource).to.equal('status');
      expect(review.request).not.to.have.property('name');
      expect(review.request).not.to.have.property('namespace');
      expect(review.request.options).to.equal(null);
    });
  });

  describe('the answer', () => {
    it('gives allowed, warnings, audit annotations and the decoded patch', () => {
      const patch = Buffer.from('[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]');
      const response = verifyAdmissionResponse('v1', 'req-1', true, answer({ allowed: true, patchType: 'JSONPatch', patch: patch.toString('base64'), warnings: ['careful'], auditAnnotations: { k: 'v' } }));
      expect(response.allowed).to.equal(true);
      expect(response.patch.toString()).to.equal(patch.toString());
      expect(response.patchType).to.equal('JSONPatch');
      expect(response.warnings).to.deep.equal(['careful']);
      expect(response.auditAnnotations).to.deep.equal({ k: 'v' });
    });

    const invalid: Array<[string, unknown, boolean, string]> = [
      ['no response', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, true, 'webhook response was absent'],
      ['another uid', answer({ uid: 'other', allowed: true }), true, 'expected response.uid="req-1", got "other"'],
      ['no apiVersion and kind', { response: { uid: 'req-1', allowed: true } }, true, 'expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /, Kind='],
      ['a v1beta1 answer to a v1 request', answer({ allowed: true }, 'admission.k8s.io/v1beta1'), true, 'expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview'],
      ['a patch without patchType', answer({ allowed: true, patch: 'W10=' }), true, 'webhook returned response.patch but not response.patchType'],
      ['a patchType without patch', answer({ allowed: true, patchType: 'JSONPatch' }), true, 'webhook returned response.patchType but not response.patch'],
      ['a patch from a validating webhook', answer({ allowed: true, patchType: 'JSONPatch', patch: 'W10=' }), false, 'validating webhook may not return response.patch'],
      ['a patchType from a validating webhook', answer({ allowed: true, patchType: 'JSONPatch' }), false, 'webhook returned response.patchType but not response.patch'],
    ];
    for (const [name, body, mutating, message] of invalid) {
      it(`refuses a v1 answer with ${name}`, () => {
        expect(() => verifyAdmissionResponse('v1', 'req-1', mutating, body)).to.throw(InvalidResponseError, message);
      });
    }

    it('checks neither uid nor kind of a v1beta1 answer, and takes its patch as a JSONPatch', () => {
      const response = verifyAdmissionResponse('v1beta1', 'req-1', true, { response: { uid: 'whatever', allowed: true, patch: 'W10=' } });
      expect(response.patchType).to.equal('JSONPatch');
      expect(response.patch.toString()).to.equal('[]');
    });

    it('drops a v1beta1 validating webhook\'s patch', () => {
      const response = verifyAdmissionResponse('v1beta1', 'req-1', false, { response: { allowed: false, patch: 'W10=' } });
      expect(response.patch.length).to.equal(0);
      expect(response.allowed).to.equal(false);
    });
  });

  describe('a refusal', () => {
    it('keeps the webhook\'s code, reason and message, prefixed with who denied it', () => {
      const status = rejectionStatus('deny.example.com', { code: 403, reason: 'Forbidden', message: 'no pods on Fridays' });
      expect(status.code).to.equal(403);
      expect(status.message).to.equal('admission webhook "deny.example.com" denied the request: no pods on Fridays');
      expect(status.toStatus()).to.deep.equal({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'admission webhook "deny.example.com" denied the request: no pods on Fridays', reason: 'Forbidden', code: 403 });
    });

    it('is at least a 400, never a success', () => {
      const status = rejectionStatus('w', { code: 200, status: 'Success', message: 'no' });
      expect(status.code).to.equal(400);
      expect(status.toStatus().status).to.equal('Failure');
    });

    it('uses the reason when there is no message, and says so when there is neither', () => {
      expect(rejectionStatus('w', { reason: 'Nope' }).message).to.equal('admission webhook "w" denied the request: Nope');
      const bare = rejectionStatus('w', undefined);
      expect(bare.message).to.equal('admission webhook "w" denied the request without explanation');
      expect(bare.toStatus()).not.to.have.property('reason');
    });

    it('passes the webhook\'s details on', () => {
      expect(rejectionStatus('w', { code: 422, message: 'bad', details: { causes: [{ field: 'spec' }] } }).toStatus().details).to.deep.equal({ causes: [{ field: 'spec' }] });
    });
  });
});
