/**
 * APIService validation as kube-aggregator v1.25 does it (pkg/apis/apiregistration/validation):
 * the name is `spec.version + "." + spec.group` (`v1.` for the core group), and the spec rules
 * with their messages word for word.
 */
import { expect } from 'chai';
import { applyDefaults } from '../../../../../src/apis/defaulting';
import { invalidMessage, qualifiedKind, validateCreate, validateStatusUpdate, validateUpdate } from '../../../../../src/apis/validation';
import { edited, messages } from './fixtures';
import type { JsonObject } from '../../../../../src/apis/object';

const remote = (): JsonObject => ({
  apiVersion: 'apiregistration.k8s.io/v1',
  kind: 'APIService',
  metadata: { name: 'v1beta1.metrics.k8s.io' },
  spec: { group: 'metrics.k8s.io', version: 'v1beta1', service: { namespace: 'kube-system', name: 'metrics-server', port: 443 }, caBundle: Buffer.from('PEM').toString('base64'), groupPriorityMinimum: 100, versionPriority: 100 },
});

const core = (): JsonObject => ({
  apiVersion: 'apiregistration.k8s.io/v1',
  kind: 'APIService',
  metadata: { name: 'v1.' },
  spec: { group: '', version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 },
});

const spec = (o: JsonObject): JsonObject => o['spec'] as JsonObject;
const service = (o: JsonObject): JsonObject => spec(o)['service'] as JsonObject;

describe('apis/validation apiregistration.k8s.io/v1 APIService', () => {
  it('accepts the core group\'s local APIService `v1.` and a remote one', () => {
    expect(messages(validateCreate(core(), false))).to.deep.equal([]);
    expect(messages(validateCreate(remote(), false))).to.deep.equal([]);
  });

  const cases: Array<[string, JsonObject, (o: JsonObject) => void, string[]]> = [
    ['a name other than version.group', remote(), (o) => ((o['metadata'] as JsonObject)['name'] = 'metrics'), ['metadata.name: Invalid value: "metrics": must be `spec.version+"."+spec.group`: "v1beta1.metrics.k8s.io"']],
    ['a name that is no path segment', remote(), (o) => ((o['metadata'] as JsonObject)['name'] = 'v1/x'), ['metadata.name: Invalid value: "v1/x": may not contain \'/\'']],
    ['the empty group for another version than v1', core(), (o) => {
      spec(o)['version'] = 'v2';
      (o['metadata'] as JsonObject)['name'] = 'v2.';
    }, ['spec.group: Required value: only v1 may have an empty group and it better be legacy kube']],
    ['a group that is no DNS subdomain and a version that is no DNS-1035 label', remote(), (o) => {
      spec(o)['group'] = 'Metrics';
      spec(o)['version'] = '1beta1';
      (o['metadata'] as JsonObject)['name'] = '1beta1.Metrics';
    }, [
      'spec.group: Invalid value: "Metrics": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
      'spec.version: Invalid value: "1beta1": a DNS-1035 label must consist of lower case alphanumeric characters or \'-\', start with an alphabetic character, and end with an alphanumeric character (e.g. \'my-name\',  or \'abc-123\', regex used for validation is \'[a-z]([-a-z0-9]*[a-z0-9])?\')',
    ]],
    ['priorities out of range', remote(), (o) => {
      spec(o)['groupPriorityMinimum'] = 20001;
      delete spec(o)['versionPriority'];
    }, ['spec.groupPriorityMinimum: Invalid value: 20001: must be positive and less than 20000', 'spec.versionPriority: Invalid value: 0: must be positive and less than 1000']],
    ['a local APIService with a caBundle or insecureSkipTLSVerify', core(), (o) => {
      spec(o)['caBundle'] = Buffer.from('12345').toString('base64');
      spec(o)['insecureSkipTLSVerify'] = true;
    }, ['spec.caBundle: Invalid value: "5 bytes": local APIServices may not have a caBundle', 'spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify']],
    ['a service without namespace, name or a valid port, and insecureSkipTLSVerify beside a caBundle', remote(), (o) => {
      spec(o)['service'] = { port: 70000 };
      spec(o)['insecureSkipTLSVerify'] = true;
    }, [
      'spec.service.namespace: Required value',
      'spec.service.name: Required value',
      'spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive',
      'spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present',
    ]],
  ];
  for (const [title, fixture, edit, expected] of cases) it(`refuses ${title}`, () => expect(messages(validateCreate(edited(fixture, edit), false))).to.deep.equal(expected));

  it('a service without a port gets v1\'s 443 before validation', () => {
    const object = edited(remote(), (o) => delete service(o)['port']);
    applyDefaults(object);
    expect(service(object)['port']).to.equal(443);
    expect(messages(validateCreate(object, false))).to.deep.equal([]);
  });

  it('names the kind as kube does in the 422 message', () => {
    const object = edited(core(), (o) => ((o['metadata'] as JsonObject)['name'] = 'core'));
    expect(invalidMessage(qualifiedKind('apiregistration.k8s.io', 'APIService'), 'core', validateCreate(object, false)))
      .to.equal('APIService.apiregistration.k8s.io "core" is invalid: metadata.name: Invalid value: "core": must be `spec.version+"."+spec.group`: "v1."');
  });

  it('checks the spec again on update and only the conditions\' status on a status update', () => {
    const old = edited(remote(), (o) => ((o['metadata'] as JsonObject)['resourceVersion'] = '5'));
    expect(messages(validateUpdate(edited(old, (o) => (spec(o)['versionPriority'] = 0)), old, false))).to.deep.equal(['spec.versionPriority: Invalid value: 0: must be positive and less than 1000']);
    const status = edited(old, (o) => (o['status'] = { conditions: [{ type: 'Available', status: 'True' }, { type: 'Available', status: 'Maybe' }] }));
    expect(messages(validateStatusUpdate(status, old, false))).to.deep.equal(['status.conditions[1].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"']);
  });
});
