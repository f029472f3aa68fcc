import { expect } from 'chai';
import { invalidMessage, validateCreate, validateUpdate } from '../../../../../src/apis/validation';
import { edited, messages } from './fixtures';
import type { JsonObject } from '../../../../../src/apis/object';

const configMap = (): JsonObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: 'default', uid: 'c-1', resourceVersion: '2', creationTimestamp: '2024-01-02T03:04:05Z' },
  data: { 'app.conf': 'x=1' },
});

const subdomainMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const qualifiedNamePart =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

// Rules of k8s.io/apimachinery pkg/api/validation/objectmeta.go (ValidateObjectMetaAccessor,
// ValidateObjectMetaAccessorUpdate) and core's finalizer check in pkg/apis/core/validation, v1.25.
describe('apis/validation object meta', () => {
  it('accepts a valid object', () => {
    expect(validateCreate(configMap(), true)).to.deep.equal([]);
  });

  const createCases: Array<[string, (o: JsonObject) => void, boolean, string[]]> = [
    ['requires name or generateName', (o) => delete (o['metadata'] as JsonObject)['name'], true, ['metadata.name: Required value: name or generateName is required']],
    ['refuses a bad name', (o) => ((o['metadata'] as JsonObject)['name'] = 'bad_name'), true, [`metadata.name: Invalid value: "bad_name": ${subdomainMsg}`]],
    [
      'checks generateName as a prefix and still requires a name',
      (o) => {
        const m = o['metadata'] as JsonObject;
        delete m['name'];
        m['generateName'] = 'Bad-';
      },
      true,
      [`metadata.generateName: Invalid value: "Bad-": ${subdomainMsg}`, 'metadata.name: Required value: name or generateName is required'],
    ],
    ['requires a namespace on namespaced kinds', (o) => delete (o['metadata'] as JsonObject)['namespace'], true, ['metadata.namespace: Required value']],
    ['forbids a namespace on cluster-scoped kinds', () => undefined, false, ['metadata.namespace: Forbidden: not allowed on this type']],
    [
      'checks label keys and values',
      (o) => ((o['metadata'] as JsonObject)['labels'] = { 'a b': 'ok', good: 'bad value' }),
      true,
      [
        `metadata.labels: Invalid value: "a b": ${qualifiedNamePart}`,
        `metadata.labels: Invalid value: "bad value": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
      ],
    ],
    ['checks annotation keys case-insensitively', (o) => ((o['metadata'] as JsonObject)['annotations'] = { 'Example.COM/Key': 'v', 'bad key': 'v' }), true, [
      `metadata.annotations: Invalid value: "bad key": ${qualifiedNamePart}`,
    ]],
    ['limits annotations to 256KiB in total', (o) => ((o['metadata'] as JsonObject)['annotations'] = { a: 'x'.repeat(256 * 1024) }), true, [
      'metadata.annotations: Too long: must have at most 262144 bytes',
    ]],
    ['requires finalizers to be standard or qualified', (o) => ((o['metadata'] as JsonObject)['finalizers'] = ['kubernetes', 'example.com/done', 'custom']), true, [
      'metadata.finalizers[2]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified',
    ]],
    ['refuses orphan with foregroundDeletion', (o) => ((o['metadata'] as JsonObject)['finalizers'] = ['orphan', 'foregroundDeletion']), true, [
      'metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set',
    ]],
    ['refuses negative generation', (o) => ((o['metadata'] as JsonObject)['generation'] = -1), true, ['metadata.generation: Invalid value: -1: must be greater than or equal to 0']],
    ['checks owner references on the list path', (o) => ((o['metadata'] as JsonObject)['ownerReferences'] = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: '' }]), true, [
      'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
    ]],
    ['allows a single controller reference only', (o) => ((o['metadata'] as JsonObject)['ownerReferences'] = [
      { apiVersion: 'v1', kind: 'A', name: 'a', uid: '1', controller: true },
      { apiVersion: 'v1', kind: 'B', name: 'b', uid: '2', controller: true },
    ]), true, [
      'metadata.ownerReferences: Invalid value: []v1.OwnerReference{' +
        'v1.OwnerReference{APIVersion:"v1", Kind:"A", Name:"a", UID:"1", Controller:(*bool)(0xc000000000), BlockOwnerDeletion:(*bool)(nil)}, ' +
        'v1.OwnerReference{APIVersion:"v1", Kind:"B", Name:"b", UID:"2", Controller:(*bool)(0xc000000000), BlockOwnerDeletion:(*bool)(nil)}' +
        '}: Only one reference can have Controller set to true. Found "true" in references for A/a and B/b',
    ]],
    ['refuses Events as owners', (o) => ((o['metadata'] as JsonObject)['ownerReferences'] = [{ apiVersion: 'v1', kind: 'Event', name: 'e', uid: '1' }]), true, [
      'metadata.ownerReferences: Invalid value: v1.OwnerReference{APIVersion:"v1", Kind:"Event", Name:"e", UID:"1", Controller:(*bool)(nil), BlockOwnerDeletion:(*bool)(nil)}: /v1, Kind=Event is disallowed from being an owner',
    ]],
    ['checks managed fields', (o) => ((o['metadata'] as JsonObject)['managedFields'] = [{ manager: 'kubectl', operation: 'Patch', fieldsType: 'FieldsV1' }]), true, [
      'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
    ]],
  ];
  for (const [name, edit, namespaced, expected] of createCases) {
    it(name, () => expect(messages(validateCreate(edited(configMap(), edit), namespaced))).to.deep.equal(expected));
  }

  const updateCases: Array<[string, (o: JsonObject) => void, string[]]> = [
    ['keeps the name', (o) => ((o['metadata'] as JsonObject)['name'] = 'other'), ['metadata.name: Invalid value: "other": field is immutable']],
    ['keeps the namespace', (o) => ((o['metadata'] as JsonObject)['namespace'] = 'kube-system'), ['metadata.namespace: Invalid value: "kube-system": field is immutable']],
    ['keeps the uid', (o) => ((o['metadata'] as JsonObject)['uid'] = 'c-2'), ['metadata.uid: Invalid value: "c-2": field is immutable']],
    ['keeps the creation timestamp, printed as Go time', (o) => ((o['metadata'] as JsonObject)['creationTimestamp'] = '2025-05-06T07:08:09Z'), [
      'metadata.creationTimestamp: Invalid value: 2025-05-06 07:08:09 +0000 UTC: field is immutable',
    ]],
    ['requires a resourceVersion', (o) => delete (o['metadata'] as JsonObject)['resourceVersion'], ['metadata.resourceVersion: Invalid value: "": must be specified for an update']],
  ];
  for (const [name, edit, expected] of updateCases) {
    it(`on update ${name}`, () => expect(messages(validateUpdate(edited(configMap(), edit), configMap(), true))).to.deep.equal(expected));
  }

  it('refuses new finalizers once deletion has started', () => {
    const old = edited(configMap(), (o) => ((o['metadata'] as JsonObject)['deletionTimestamp'] = '2024-02-02T00:00:00Z'));
    const next = edited(old, (o) => ((o['metadata'] as JsonObject)['finalizers'] = ['example.com/late']));
    expect(messages(validateUpdate(next, old, true))).to.deep.equal([
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/late"}',
    ]);
  });

  it('checks the finalizer names of a built-in kind again on update (core\'s ValidateObjectMetaUpdate)', () => {
    const lease = (finalizers?: string[]): JsonObject => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'holder', namespace: 'default', uid: 'l-1', resourceVersion: '2', creationTimestamp: '2024-01-02T03:04:05Z', ...(finalizers ? { finalizers } : {}) },
      spec: {},
    });
    expect(messages(validateUpdate(lease(['kubernetes', 'example.com/ok', 'local']), lease(), true))).to.deep.equal([
      'metadata.finalizers[2]: Invalid value: "local": name is neither a standard finalizer name nor is it fully qualified',
    ]);
  });

  it('gives the whole 422 message kube-apiserver prints for a bad ConfigMap name', () => {
    const bad = edited(configMap(), (o) => ((o['metadata'] as JsonObject)['name'] = 'bad_name'));
    expect(invalidMessage('ConfigMap', 'bad_name', validateCreate(bad, true))).to.equal(`ConfigMap "bad_name" is invalid: metadata.name: Invalid value: "bad_name": ${subdomainMsg}`);
  });

  it('applies object meta rules to kinds without rules of their own', () => {
    const custom = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'Bad' } };
    expect(messages(validateCreate(custom, false))).to.deep.equal([`metadata.name: Invalid value: "Bad": ${subdomainMsg}`]);
  });
});
