import { expect } from 'chai';
import { validateCreate, validateUpdate } from '../../../../../src/apis/validation';
import { fieldErrorMessage } from '../../../../../src/apis/validation/field-error';
import type { JsonObject } from '../../../../../src/apis/object';

function webhook(extra: JsonObject = {}): JsonObject {
  return {
    name: 'check.example.com',
    clientConfig: { url: 'https://hooks.example.com/check' },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }],
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    sideEffects: 'None',
    timeoutSeconds: 10,
    admissionReviewVersions: ['v1'],
    namespaceSelector: {},
    objectSelector: {},
    ...extra,
  };
}

function configuration(kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration', hooks: JsonObject[]): JsonObject {
  return { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: 'cfg' }, webhooks: hooks };
}

const errorsOf = (object: JsonObject) => validateCreate(object, false).map(fieldErrorMessage);

// pkg/apis/admissionregistration/validation, v1.25 (spec 02 §4.4, §7 rule 2).
describe('apis/validation admissionregistration.k8s.io/v1 webhook configurations', () => {
  it('accepts a valid configuration of each kind', () => {
    expect(errorsOf(configuration('ValidatingWebhookConfiguration', [webhook()]))).to.deep.equal([]);
    expect(errorsOf(configuration('MutatingWebhookConfiguration', [webhook({ reinvocationPolicy: 'IfNeeded', clientConfig: { service: { namespace: 'ns', name: 'svc', path: '/mutate', port: 8443 } } })]))).to.deep.equal([]);
  });

  const refused: Array<[string, JsonObject, string]> = [
    ['no known admissionReviewVersions', { admissionReviewVersions: ['v2'] }, 'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1'],
    ['no admissionReviewVersions', { admissionReviewVersions: [] }, 'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1'],
    ['no sideEffects', { sideEffects: undefined }, 'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun'],
    ['sideEffects Some', { sideEffects: 'Some' }, 'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'],
    ['a timeout over 30 s', { timeoutSeconds: 31 }, 'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds'],
    ['a name with two segments', { name: 'example.com' }, 'webhooks[0].name: Invalid value: "example.com": should be a domain with at least three segments separated by dots'],
    ['an http URL', { clientConfig: { url: 'http://hooks.example.com/' } }, `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`],
    ['a URL with a query', { clientConfig: { url: 'https://hooks.example.com/?a=b' } }, 'webhooks[0].clientConfig.url: Invalid value: "a=b": query parameters are not permitted in the URL'],
    ['both url and service', { clientConfig: { url: 'https://a.example.com', service: { namespace: 'ns', name: 'svc' } } }, 'webhooks[0].clientConfig: Required value: exactly one of url or service is required'],
    ['an unknown failurePolicy', { failurePolicy: 'Maybe' }, 'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"'],
    ['a rule with * and other operations', { rules: [{ operations: ['*', 'CREATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }] }, `webhooks[0].rules[0].operations: Invalid value: []string{"*", "CREATE"}: if '*' is present, must not specify other operations`],
    ['a rule with */* and others', { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*', 'pods'] }] }, `webhooks[0].rules[0].resources: Invalid value: []string{"*/*", "pods"}: if '*/*' is present, must not specify other resources`],
    ['an unknown scope', { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Galaxy' }] }, 'webhooks[0].rules[0].scope: Unsupported value: "Galaxy": supported values: "*", "Cluster", "Namespaced"'],
  ];
  for (const [what, extra, message] of refused) {
    it(`refuses ${what}`, () => {
      expect(errorsOf(configuration('ValidatingWebhookConfiguration', [webhook(extra)]))).to.include(message);
    });
  }

  it('refuses two webhooks with one name', () => {
    expect(errorsOf(configuration('MutatingWebhookConfiguration', [webhook(), webhook()]))).to.include('webhooks[1].name: Duplicate value: "check.example.com"');
  });

  it('refuses an unknown reinvocationPolicy on mutating webhooks', () => {
    expect(errorsOf(configuration('MutatingWebhookConfiguration', [webhook({ reinvocationPolicy: 'Always' })]))).to.include('webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"');
  });

  it('keeps v1.25\'s swapped service fields', () => {
    expect(errorsOf(configuration('ValidatingWebhookConfiguration', [webhook({ clientConfig: { service: { namespace: 'ns', name: '' } } })]))).to.include('webhooks[0].clientConfig.service.namespace: Required value: service namespace is required');
  });

  it('lets an update keep what the stored object already had', () => {
    const stored = configuration('ValidatingWebhookConfiguration', [webhook({ admissionReviewVersions: ['v0'] })]);
    (stored.metadata as JsonObject).resourceVersion = '5';
    const next = structuredClone(stored);
    expect(validateUpdate(next, stored, false).map(fieldErrorMessage)).to.deep.equal([]);
    const fresh = configuration('ValidatingWebhookConfiguration', [webhook()]);
    (fresh.metadata as JsonObject).resourceVersion = '5';
    const broken = structuredClone(fresh);
    (broken.webhooks as JsonObject[])[0].admissionReviewVersions = ['v0'];
    expect(validateUpdate(broken, fresh, false).map(fieldErrorMessage)).to.include('webhooks[0].admissionReviewVersions: Invalid value: []string{"v0"}: must include at least one of v1, v1beta1');
  });
});
