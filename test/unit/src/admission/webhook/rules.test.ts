import { expect } from 'chai';
import { exemptionOf, ruleMatches, type RuleAttributes } from '../../../../../src/admission/webhook/rules';
import type { WebhookRule } from '../../../../../src/admission/webhook/webhook-accessor';

const rule = (resources: string[], extra: Partial<WebhookRule> = {}): WebhookRule => ({ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources, scope: '*', ...extra });
const pod: RuleAttributes = { operation: 'CREATE', group: '', version: 'v1', resource: 'pods', subresource: '', namespace: 'default' };
const podStatus: RuleAttributes = { ...pod, operation: 'UPDATE', subresource: 'status' };
const node: RuleAttributes = { operation: 'CREATE', group: '', version: 'v1', resource: 'nodes', subresource: '', namespace: '' };
const namespaceUpdate: RuleAttributes = { operation: 'UPDATE', group: '', version: 'v1', resource: 'namespaces', subresource: '', namespace: 'team-a' };
const deployment: RuleAttributes = { operation: 'UPDATE', group: 'apps', version: 'v1', resource: 'deployments', subresource: 'scale', namespace: 'default' };

describe('admission/webhook: rules (spec 02 §4.4)', () => {
  const cases: Array<[string, WebhookRule, RuleAttributes, boolean]> = [
    ['a named resource matches the object', rule(['pods']), pod, true],
    ['a named resource does not match its subresources', rule(['pods']), podStatus, false],
    ['resource/* matches every subresource', rule(['pods/*']), podStatus, true],
    ['resource/* matches the object itself too, as v1.25 reads it', rule(['pods/*']), pod, true],
    ['resource/* does not match another resource', rule(['pods/*']), deployment, false],
    ['* matches any resource without subresource', rule(['*']), node, true],
    ['* does not match a subresource', rule(['*']), podStatus, false],
    ['*/* matches subresources', rule(['*/*']), deployment, true],
    ['*/* matches objects too', rule(['*/*']), pod, true],
    ['*/status matches the status of anything', rule(['*/status']), podStatus, true],
    ['*/status does not match scale', rule(['*/status']), deployment, false],
    ['an operation outside the list does not match', rule(['pods'], { operations: ['UPDATE', 'DELETE'] }), pod, false],
    ['the listed operation matches', rule(['pods'], { operations: ['CREATE'] }), pod, true],
    ['another group does not match', rule(['*'], { apiGroups: ['apps'] }), pod, false],
    ['the core group is ""', rule(['pods'], { apiGroups: [''] }), pod, true],
    ['another version does not match', rule(['pods'], { apiVersions: ['v2'] }), pod, false],
    ['Namespaced scope matches namespaced objects', rule(['*'], { scope: 'Namespaced' }), pod, true],
    ['Namespaced scope does not match cluster-scoped objects', rule(['*'], { scope: 'Namespaced' }), node, false],
    ['Namespaced scope does not match a Namespace, though its namespace is set', rule(['*'], { scope: 'Namespaced' }), namespaceUpdate, false],
    ['Cluster scope matches a Namespace', rule(['*'], { scope: 'Cluster' }), namespaceUpdate, true],
    ['Cluster scope matches cluster-scoped objects', rule(['*'], { scope: 'Cluster' }), node, true],
    ['Cluster scope does not match namespaced objects', rule(['*'], { scope: 'Cluster' }), pod, false],
    ['an unknown scope matches nothing', rule(['*'], { scope: 'Elsewhere' }), pod, false],
    ['an empty resource list matches nothing', rule([]), pod, false],
  ];
  for (const [name, r, attributes, expected] of cases) {
    it(`${name}`, () => expect(ruleMatches(r, attributes)).to.equal(expected));
  }

  describe('requests no webhook sees', () => {
    it('exempts the webhook configurations themselves (v1.25)', () => {
      expect(exemptionOf({ group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespace: '' })).to.equal('webhook configuration');
      expect(exemptionOf({ group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations', kind: 'MutatingWebhookConfiguration', namespace: '' })).to.equal('webhook configuration');
    });

    it('exempts Leases in kube-system and kube-node-lease, not elsewhere', () => {
      expect(exemptionOf({ group: 'coordination.k8s.io', resource: 'leases', kind: 'Lease', namespace: 'kube-system' })).to.equal('control-plane lease');
      expect(exemptionOf({ group: 'coordination.k8s.io', resource: 'leases', kind: 'Lease', namespace: 'kube-node-lease' })).to.equal('control-plane lease');
      expect(exemptionOf({ group: 'coordination.k8s.io', resource: 'leases', kind: 'Lease', namespace: 'default' })).to.equal(undefined);
    });

    it('exempts TokenReviews and the SubjectAccessReview family', () => {
      expect(exemptionOf({ group: 'authentication.k8s.io', resource: 'tokenreviews', kind: 'TokenReview', namespace: '' })).to.equal('review');
      for (const resource of ['subjectaccessreviews', 'localsubjectaccessreviews', 'selfsubjectaccessreviews', 'selfsubjectrulesreviews']) {
        expect(exemptionOf({ group: 'authorization.k8s.io', resource, kind: 'X', namespace: '' }), resource).to.equal('review');
      }
    });

    it('exempts nothing else', () => {
      expect(exemptionOf({ group: '', resource: 'pods', kind: 'Pod', namespace: 'kube-system' })).to.equal(undefined);
    });
  });
});
