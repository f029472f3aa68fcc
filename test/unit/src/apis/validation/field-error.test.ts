import { expect } from 'chai';
import { FieldPath, GoValue, fieldErrorCause, fieldErrorMessage, goQuote, invalidMessage, invalidStatus, qualifiedKind } from '../../../../../src/apis/validation';
import { duplicate, forbidden, invalid, notFound, notSupported, required, tooLong, tooMany } from '../../../../../src/apis/validation/field-error';

// Texts from k8s.io/apimachinery pkg/util/validation/field/errors.go (Error, ErrorBody, NotSupported)
// and pkg/api/errors/errors.go (NewInvalid), v1.25.
describe('apis/validation field errors', () => {
  const image = FieldPath.root('spec').child('containers').index(0).child('image');

  const cases: Array<[string, ReturnType<typeof required>, string]> = [
    ['required without detail', required(image), 'spec.containers[0].image: Required value'],
    ['required with detail', required(FieldPath.root('metadata', 'name'), 'name or generateName is required'), 'metadata.name: Required value: name or generateName is required'],
    ['invalid string uses %q', invalid(FieldPath.root('metadata', 'name'), 'A_b', 'bad'), 'metadata.name: Invalid value: "A_b": bad'],
    ['invalid number uses %v', invalid(FieldPath.root('spec', 'replicas'), -1, 'must be greater than or equal to 0'), 'spec.replicas: Invalid value: -1: must be greater than or equal to 0'],
    // v1.25's ErrorBody turns nil into the string "null" before printing it with %q.
    ['invalid nil prints a quoted null', invalid(FieldPath.root('spec', 'x'), null, 'd'), 'spec.x: Invalid value: "null": d'],
    ['[]string as %#v', invalid(FieldPath.root('spec', 'clusterIPs').index(0), ['10.0.0.1'], 'may not change once set'), 'spec.clusterIPs[0]: Invalid value: []string{"10.0.0.1"}: may not change once set'],
    ['map[string]string as %#v with sorted keys', invalid(FieldPath.root('l'), { b: '2', a: '1' }, 'd'), 'l: Invalid value: map[string]string{"a":"1", "b":"2"}: d'],
    ['GoValue verbatim', invalid(FieldPath.root('x'), new GoValue('intstr.IntOrString{Type:0, IntVal:0, StrVal:""}'), 'd'), 'x: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: d'],
    ['not supported lists quoted values', notSupported(FieldPath.root('spec', 'restartPolicy'), 'Sometimes', ['Always', 'OnFailure', 'Never']), 'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
    ['duplicate', duplicate(FieldPath.root('spec', 'containers').index(1).child('name'), 'app'), 'spec.containers[1].name: Duplicate value: "app"'],
    ['not found', notFound(FieldPath.root('v').index(0).child('name'), 'data'), 'v[0].name: Not found: "data"'],
    ['forbidden hides the value', forbidden(FieldPath.root('spec'), 'no'), 'spec: Forbidden: no'],
    ['too long hides the value', tooLong(FieldPath.root('metadata', 'annotations'), 262144), 'metadata.annotations: Too long: must have at most 262144 bytes'],
    ['too many shows the count', tooMany(FieldPath.root('items'), 3, 2), 'items: Too many: 3: must have at most 2 items'],
    ['map keys in paths are bare', required(FieldPath.root('data').key('tls.crt')), 'data[tls.crt]: Required value'],
  ];
  for (const [name, error, text] of cases) {
    it(`prints ${name}`, () => expect(fieldErrorMessage(error)).to.equal(text));
  }

  it('quotes strings as strconv.Quote does', () => {
    expect(goQuote('a"b\\c')).to.equal('"a\\"b\\\\c"');
    expect(goQuote('tab\there\n')).to.equal('"tab\\there\\n"');
    expect(goQuote('\x01\x7f')).to.equal('"\\x01\\x7f"');
    expect(goQuote('héllo ☃')).to.equal('"héllo ☃"');
    expect(goQuote('\u200b')).to.equal('"\\u200b"');
  });

  it('builds the Status cause from the error body without the field prefix', () => {
    expect(fieldErrorCause(invalid(FieldPath.root('metadata', 'name'), 'A_b', 'bad'))).to.deep.equal({
      reason: 'FieldValueInvalid',
      message: 'Invalid value: "A_b": bad',
      field: 'metadata.name',
    });
  });

  it('aggregates one error plainly and several in brackets, dropping repeated messages', () => {
    const a = required(image);
    const b = invalid(FieldPath.root('metadata', 'name'), 'A_b', 'bad');
    expect(invalidMessage('Pod', 'web', [a])).to.equal('Pod "web" is invalid: spec.containers[0].image: Required value');
    expect(invalidMessage('Pod', 'web', [a, b, a])).to.equal('Pod "web" is invalid: [spec.containers[0].image: Required value, metadata.name: Invalid value: "A_b": bad]');
    expect(invalidMessage('Pod', 'web', [])).to.equal('Pod "web" is invalid');
    expect(invalidMessage(qualifiedKind('apps', 'Deployment'), 'x', [a])).to.match(/^Deployment\.apps "x" is invalid: /);
    expect(qualifiedKind('', 'ConfigMap')).to.equal('ConfigMap');
  });
});

describe('apis/validation 422 Status body', () => {
  // Shape of k8s.io/apimachinery pkg/api/errors NewInvalid and metav1.Status JSON (omitempty fields dropped).
  it('carries the message, the qualified kind and one cause per error', () => {
    const errors = [required(FieldPath.root('spec', 'selector')), tooLong(FieldPath.root(''), 1048576)];
    expect(JSON.stringify(invalidStatus('apps', 'Deployment', 'web', errors))).to.equal(
      JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Deployment.apps "web" is invalid: [spec.selector: Required value, : Too long: must have at most 1048576 bytes]',
        reason: 'Invalid',
        details: {
          name: 'web',
          group: 'apps',
          kind: 'Deployment',
          causes: [
            { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.selector' },
            { reason: 'FieldValueTooLong', message: 'Too long: must have at most 1048576 bytes' },
          ],
        },
        code: 422,
      }),
    );
  });

  it('leaves the group out for the core group', () => {
    const status = invalidStatus('', 'ConfigMap', 'cm', [required(FieldPath.root('data'))]);
    expect(Object.keys(status.details)).to.deep.equal(['name', 'kind', 'causes']);
    expect(status.message).to.equal('ConfigMap "cm" is invalid: data: Required value');
  });
});
