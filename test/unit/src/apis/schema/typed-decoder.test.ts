import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { typedDecode, TypedDecodeError, TypedDecoder, type FieldValidation } from '../../../../../src/apis/schema';
import { packagePath } from '../../../../../src/util';
import type { JsonObject } from '../../../../../src/apis/object';

function deployment(spec: JsonObject, extra: JsonObject = {}): JsonObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec, ...extra };
}

function decodeError(object: JsonObject, fieldValidation: FieldValidation = 'Warn', raw?: string): TypedDecodeError {
  try {
    typedDecode(object, fieldValidation, raw);
  } catch (error) {
    expect(error).to.be.instanceOf(TypedDecodeError);
    return error as TypedDecodeError;
  }
  throw new Error('expected a TypedDecodeError');
}

// Message formats: encoding/json UnmarshalTypeError.Error() with sigs.k8s.io/json's errorContext
// (innermost struct name + struct field names from the root), wrapped by transformDecodeError in
// k8s.io/apiserver pkg/endpoints/handlers/create.go: `<Kind> in version "<v>" cannot be handled as a <Kind>: <err>`.
describe('src/apis/schema typedDecode: values of the wrong type', () => {
  const cases: Array<{ name: string; object: JsonObject; message: string }> = [
    {
      name: 'a string for spec.replicas',
      object: deployment({ replicas: 'three' }),
      message: 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32',
    },
    {
      name: 'a string containerPort inside two lists (indices are not part of the Go field path)',
      object: deployment({ template: { spec: { containers: [{ name: 'a', image: 'nginx', ports: [{ containerPort: '80' }] }] } } }),
      message: 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32',
    },
    {
      name: 'a number as a label value (map keys are not part of the Go field path)',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { app: 5 } } },
      message: 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string',
    },
    {
      name: 'a number as a ConfigMap data value',
      object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { key: 1 } },
      message: 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
    },
    {
      name: 'metadata as a string',
      object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: 'web' },
      message: 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field Deployment.metadata of type v1.ObjectMeta',
    },
    {
      name: 'an object where a list belongs',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: { name: 'a' } } },
      message: 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container',
    },
    {
      name: 'a list where a map belongs',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: ['a'] } },
      message: 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string',
    },
    {
      name: 'a string where a bool belongs',
      object: deployment({ paused: 'yes' }),
      message: 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool',
    },
    {
      // encoding/json puts the literal in the message when a number does not fit the integer type.
      name: 'a fraction where an integer belongs',
      object: deployment({ replicas: 5.5 }),
      message: 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 5.5 into Go struct field DeploymentSpec.spec.replicas of type int32',
    },
    {
      name: 'an int32 overflow',
      object: deployment({ replicas: 3000000000 }),
      message: 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32',
    },
    {
      name: 'a number for a named string type (v1.PullPolicy)',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', imagePullPolicy: 1 }] } },
      message: 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field Container.spec.containers.imagePullPolicy of type v1.PullPolicy',
    },
    {
      // intstr.IntOrString.UnmarshalJSON decodes non-strings into its int32 member.
      name: 'a bool for an int-or-string',
      object: deployment({ strategy: { rollingUpdate: { maxSurge: true } } }),
      message: 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32',
    },
    {
      name: 'a fraction for an int-or-string',
      object: deployment({ strategy: { rollingUpdate: { maxUnavailable: 1.5 } } }),
      message: 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 1.5 into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxUnavailable of type int32',
    },
    {
      // metav1.Time.UnmarshalJSON decodes into a Go string first, then time.Parse(time.RFC3339, ...).
      name: 'a number for a Time',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', creationTimestamp: 5 } },
      message: 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string',
    },
    {
      name: 'a Time that is no RFC 3339 time',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', creationTimestamp: 'yesterday' } },
      message: 'Pod in version "v1" cannot be handled as a Pod: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
    },
    {
      // metav1.MicroTime parses with RFC3339Micro, which demands six fraction digits.
      name: 'a MicroTime without microseconds',
      object: { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'e' }, eventTime: '2008-01-01T01:01:01Z' },
      message: 'Event in version "v1" cannot be handled as a Event: parsing time "2008-01-01T01:01:01Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
    },
    {
      // resource.ParseQuantity's ErrFormatWrong (k8s.io/apimachinery pkg/api/resource/quantity.go).
      name: 'a malformed quantity',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', resources: { limits: { cpu: 'lots' } } }] } },
      message: "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    },
    {
      name: 'a quantity with a letter no suffix uses',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', resources: { requests: { memory: '1Ki' , cpu: '1Q' } } }] } },
      message: "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    },
    {
      name: 'a bool as a quantity',
      object: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { pods: true } } },
      message: "ResourceQuota in version \"v1\" cannot be handled as a ResourceQuota: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    },
    {
      // base64.CorruptInputError from encoding/json's []byte decoding, with no field context.
      name: 'Secret data that is not base64',
      object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { password: 'c2VjcmV0!' } },
      message: 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 8',
    },
    {
      name: 'Secret data with a missing padding character',
      object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { password: 'abc' } },
      message: 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0',
    },
  ];
  for (const testCase of cases) {
    it(`rejects ${testCase.name} with 400`, () => {
      const error = decodeError(testCase.object);
      expect(error.code).to.equal(400);
      expect(error.message).to.equal(testCase.message);
      expect(error.toStatus()).to.deep.include({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400, message: testCase.message });
    });
  }

  it('rejects wrong types under every fieldValidation level', () => {
    for (const level of ['Ignore', 'Warn', 'Strict'] as const) {
      expect(decodeError(deployment({ replicas: 'x' }), level).message).to.contain('DeploymentSpec.spec.replicas of type int32');
    }
  });

  it('reports the first wrong value in document order, not a later one', () => {
    const error = decodeError(deployment({ replicas: 'x', minReadySeconds: 'y' }));
    expect(error.message).to.contain('DeploymentSpec.spec.replicas');
  });

  it('lets an error from a custom unmarshaler win over an earlier saved type error, as encoding/json returns it', () => {
    // The replicas error is saved; IntOrString.UnmarshalJSON's error is returned and ends decoding.
    const error = decodeError(deployment({ replicas: 'x', strategy: { rollingUpdate: { maxSurge: true } } }));
    expect(error.message).to.contain('RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32');
  });

  it('prefers a type error over strict errors, even under Strict', () => {
    const error = decodeError(deployment({ replicas: 'x', bogus: 1 }), 'Strict');
    expect(error.message).to.contain('cannot unmarshal string');
    expect(error.message).not.to.contain('strict decoding error');
  });
});

describe('src/apis/schema typedDecode: unknown fields', () => {
  const body = (): JsonObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    topLevel: true,
    metadata: { name: 'web', color: 'blue' },
    spec: {
      replicas: 2,
      foo: 'bar',
      template: { spec: { containers: [{ name: 'a', image: 'nginx' }, { name: 'b', image: 'nginx', bogus: { deep: 1 } }] } },
    },
  });
  // Paths as sigs.k8s.io/json's strict field stack prints them: keys joined by '.', list indices as [i].
  const expectedWarnings = [
    'unknown field "topLevel"',
    'unknown field "metadata.color"',
    'unknown field "spec.foo"',
    'unknown field "spec.template.spec.containers[1].bogus"',
  ];
  const pruned = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { replicas: 2, template: { spec: { containers: [{ name: 'a', image: 'nginx' }, { name: 'b', image: 'nginx' }] } } },
  };

  it('drops them silently under Ignore', () => {
    const result = typedDecode(body(), 'Ignore');
    expect(result.object).to.deep.equal(pruned);
    expect(result.warnings).to.deep.equal([]);
  });

  it('drops and reports them under Warn (the default)', () => {
    const result = typedDecode(body());
    expect(result.object).to.deep.equal(pruned);
    expect(result.warnings).to.deep.equal(expectedWarnings);
  });

  it('rejects them under Strict with the strict decoding error (k8s.io/apimachinery pkg/runtime strictDecodingError)', () => {
    const error = decodeError(body(), 'Strict');
    expect(error.message).to.equal(`Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ${expectedWarnings.join(', ')}`);
  });

  it('is case-sensitive, as kube-apiserver decodes with sigs.k8s.io/json CaseSensitive', () => {
    const result = typedDecode(deployment({ Replicas: 3 }));
    expect(result.warnings).to.deep.equal(['unknown field "spec.Replicas"']);
    expect(result.object.spec).to.deep.equal({});
  });

  it('quotes paths like Go strconv.Quote', () => {
    const result = typedDecode(deployment({ 'we"ird\n': 1 }));
    expect(result.warnings).to.deep.equal(['unknown field "spec.we\\"ird\\n"']);
  });

  it('reports members of empty Go structs (CustomResourceSubresourceStatus) as unknown', () => {
    const crd: JsonObject = {
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'x.example.com' },
      spec: { versions: [{ name: 'v1', subresources: { status: { anything: 1 } } }] },
    };
    const result = typedDecode(crd);
    expect(result.warnings).to.deep.equal(['unknown field "spec.versions[0].subresources.status.anything"']);
    expect(result.object.spec).to.deep.equal({ versions: [{ name: 'v1', subresources: { status: {} } }] });
  });
});

describe('src/apis/schema typedDecode: duplicate fields (from the raw JSON text)', () => {
  const raw = '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2"}},'
    + '"spec":{"replicas":2,"unknownField":1,"replicas":3,"bogus":1,"bogus":2}}';

  it('reports repeated known members and map keys in document order, not repeated unknown ones', () => {
    const result = typedDecode(JSON.parse(raw) as JsonObject, 'Warn', raw);
    expect(result.warnings).to.deep.equal([
      'duplicate field "metadata.name"',
      'duplicate field "metadata.labels.x"',
      'unknown field "spec.unknownField"',
      'duplicate field "spec.replicas"',
      'unknown field "spec.bogus"',
    ]);
    // JSON.parse, like Go, keeps the last value.
    expect(result.object.spec).to.deep.equal({ replicas: 3 });
  });

  it('rejects them under Strict and ignores them under Ignore', () => {
    const error = decodeError(JSON.parse(raw) as JsonObject, 'Strict', raw);
    expect(error.message).to.equal('Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
      + 'duplicate field "metadata.name", duplicate field "metadata.labels.x", unknown field "spec.unknownField", duplicate field "spec.replicas", unknown field "spec.bogus"');
    expect(typedDecode(JSON.parse(raw) as JsonObject, 'Ignore', raw).warnings).to.deep.equal([]);
  });

  it('does not look for duplicates inside values kept as raw JSON', () => {
    const text = '{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"r"},"revision":1,"data":{"a":1,"a":2}}';
    expect(typedDecode(JSON.parse(text) as JsonObject, 'Warn', text).warnings).to.deep.equal([]);
  });
});

describe('src/apis/schema typedDecode: what the Go types accept', () => {
  it('drops null members and never mutates its input', () => {
    const input: JsonObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', creationTimestamp: null, labels: null }, data: null };
    const copy = JSON.parse(JSON.stringify(input)) as JsonObject;
    const result = typedDecode(input);
    expect(result.object).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } });
    expect(input).to.deep.equal(copy);
    expect(result.object).not.to.equal(input);
  });

  it('turns null map values and list items into the Go zero value of their type', () => {
    const result = typedDecode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', finalizers: [null, 'x'] }, data: { a: null } });
    expect(result.object).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', finalizers: ['', 'x'] }, data: { a: '' } });
  });

  it('accepts int-or-string values in both forms', () => {
    const result = typedDecode(deployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } } }));
    expect(result.object.spec).to.deep.equal({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } } });
  });

  it('accepts quantities as strings and as numbers', () => {
    const pod: JsonObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', resources: { limits: { cpu: 0.5, memory: '1Gi' }, requests: { cpu: '100m', 'example.com/gpu': 1 } } }] } };
    expect(typedDecode(pod).object).to.deep.equal(pod);
  });

  it('keeps RawExtension and apiextensions JSON values as sent, whatever their shape', () => {
    const revision: JsonObject = { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r' }, revision: 2, data: { anything: [1, 'two', { three: null }] } };
    expect(typedDecode(revision).object).to.deep.equal(revision);
    const crd: JsonObject = {
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'x.example.com' },
      spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, default: { a: [1, { b: 2 }] }, enum: ['x', 3] } } }] },
    };
    const result = typedDecode(crd);
    expect(result.object).to.deep.equal(crd);
    expect(result.warnings).to.deep.equal([]);
  });

  it('decodes JSONSchemaProps wrappers non-strictly, like their UnmarshalJSON (apiextensions v1 marshal.go)', () => {
    const crd = (schema: JsonObject): JsonObject => ({
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'x.example.com' },
      spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: schema } }] },
    });
    const result = typedDecode(crd({ type: 'object', additionalProperties: { type: 'string', stray: 1 }, items: [{ type: 'string' }] }));
    // Unknown members inside the wrapper are dropped without a warning: the inner decode is not strict.
    expect(result.warnings).to.deep.equal([]);
    expect(result.object).to.deep.equal(crd({ type: 'object', additionalProperties: { type: 'string' }, items: [{ type: 'string' }] }));
    expect(typedDecode(crd({ additionalProperties: false })).object).to.deep.equal(crd({ additionalProperties: false }));
    expect(decodeError(crd({ additionalProperties: 5 })).message).to.match(/: boolean or JSON schema expected$/);
    // An inner type error is reported with the context of the outer field.
    expect(decodeError(crd({ additionalProperties: { type: 5 } })).message).to.match(
      /: json: cannot unmarshal number into Go struct field JSONSchemaProps\.spec\.versions\.schema\.openAPIV3Schema\.additionalProperties of type string$/,
    );
  });

  it('writes Time in UTC at second precision and MicroTime with six digits, as their MarshalJSON does', () => {
    const pod = typedDecode({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', creationTimestamp: '2008-01-01T02:01:01.75+01:00' } });
    expect(pod.object.metadata).to.deep.equal({ name: 'p', creationTimestamp: '2008-01-01T01:01:01Z' });
    const event = typedDecode({ apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'e' }, eventTime: '2008-01-01T01:01:01.123456-02:00' });
    expect(event.object.eventTime).to.equal('2008-01-01T03:01:01.123456Z');
  });

  it('re-encodes []byte values canonically and accepts a list of byte values', () => {
    const secret = typedDecode({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: 'c2Vj\ncmV0', b: [104, 105] } });
    expect(secret.object.data).to.deep.equal({ a: 'c2VjcmV0', b: 'aGk=' });
  });

  it('returns kinds without a schema unchanged and without warnings', () => {
    const custom: JsonObject = { apiVersion: 'example.com/v1', kind: 'Widget', spec: { anything: 'goes' }, extra: 1 };
    const result = typedDecode(custom, 'Strict');
    expect(result.object).to.deep.equal({ apiVersion: 'example.com/v1', kind: 'Widget', spec: { anything: 'goes' }, extra: 1 });
    expect(result.warnings).to.deep.equal([]);
    expect(TypedDecoder.shared().knows('example.com/v1', 'Widget')).to.equal(false);
    expect(TypedDecoder.shared().knows('apps/v1', 'Deployment')).to.equal(true);
  });
});

describe('src/apis/schema typedDecode: every v1.25 fixture (k8s.io/api testdata/HEAD, v0.25.16)', () => {
  const directory = packagePath('test', 'fixtures', 'k8s-testdata-v1.25');
  const files = readdirSync(directory).filter((name) => name.endsWith('.json'));

  it('decodes each fully populated object with no error, no warning and no change', () => {
    let withSchema = 0;
    for (const file of files) {
      const text = readFileSync(join(directory, file), 'utf8');
      const object = JSON.parse(text) as JsonObject;
      const result = typedDecode(object, 'Strict', text);
      expect(result.object, file).to.deep.equal(JSON.parse(text));
      expect(result.warnings, file).to.deep.equal([]);
      if (TypedDecoder.shared().knows(String(object.apiVersion), String(object.kind))) withSchema++;
    }
    // Every kind kube-apiserver v1.25 serves has a fixture; older versions' fixtures have no schema here.
    expect(withSchema).to.be.at.least(59);
  });
});

// A strategic merge patch's result is filled into the Go struct by k8s.io/apimachinery's unstructured
// converter (pkg/runtime/converter.go fromUnstructured), not by encoding/json: it stops at the first
// value it cannot place, with its own words and no field context.
describe('src/apis/schema typedDecode: from an unstructured map (the converter behind strategic merge patch)', () => {
  function converterError(object: JsonObject, fieldValidation: FieldValidation = 'Warn'): string {
    try {
      typedDecode(object, fieldValidation, undefined, 'unstructured');
    } catch (error) {
      expect(error).to.be.instanceOf(TypedDecodeError);
      return (error as TypedDecodeError).decoderMessage;
    }
    throw new Error('expected a TypedDecodeError');
  }
  const pod = (metadata: JsonObject, spec: JsonObject = {}): JsonObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', ...metadata }, spec });
  const container = (fields: JsonObject): JsonObject => pod({}, { containers: [{ name: 'a', image: 'nginx', ...fields }] });

  const cases: Array<{ name: string; object: JsonObject; reason: string }> = [
    { name: 'labels given as a string', object: pod({ labels: 'invalid' }), reason: 'cannot restore map from string' },
    { name: 'labels given as an integer', object: pod({ labels: 5 }), reason: 'cannot restore map from int64' },
    { name: 'labels given as a fraction', object: pod({ labels: 1.5 }), reason: 'cannot restore map from float64' },
    { name: 'labels given as a list', object: pod({ labels: ['a'] }), reason: 'cannot restore map from slice' },
    { name: 'metadata given as a string', object: { apiVersion: 'v1', kind: 'Pod', metadata: 'p' }, reason: 'cannot restore struct from: string' },
    { name: 'containers given as a map', object: pod({}, { containers: { a: {} } }), reason: 'cannot restore slice from map' },
    { name: 'an integer label value (Go converts integers to strings, the converter refuses)', object: pod({ labels: { a: 5 } }), reason: 'cannot convert int64 to string' },
    { name: 'an integer for a named string type', object: container({ imagePullPolicy: 5 }), reason: 'cannot convert int64 to v1.PullPolicy' },
    { name: 'a boolean label value', object: pod({ labels: { a: true } }), reason: 'unrecognized type: string' },
    { name: 'a fraction as a label value', object: pod({ labels: { a: 1.5 } }), reason: 'unrecognized type: string' },
    { name: 'a string for an int32', object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: '3' } }, reason: 'unrecognized type: int32' },
    { name: 'a fraction for an int32', object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 1.5 } }, reason: 'cannot convert float64 to int32' },
    { name: 'a string for a bool', object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { paused: 'yes' } }, reason: 'unrecognized type: bool' },
    { name: 'a number for a Time (its UnmarshalJSON, given a fresh json.Unmarshal)', object: pod({ creationTimestamp: 5 }), reason: 'json: cannot unmarshal number into Go value of type string' },
    { name: 'a boolean for an IntOrString', object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { strategy: { rollingUpdate: { maxSurge: true } } } }, reason: 'json: cannot unmarshal bool into Go value of type int32' },
    { name: 'Secret data that is not base64', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: 'abc' } }, reason: 'error decoding from json: illegal base64 data at input byte 0' },
  ];
  for (const testCase of cases) {
    it(`refuses ${testCase.name}: ${testCase.reason}`, () => {
      expect(converterError(testCase.object)).to.equal(testCase.reason);
    });
  }

  it('stops at the first value it cannot place, where encoding/json lets a later custom unmarshaler error win', () => {
    const object = pod({ generation: 'x', creationTimestamp: 5 });
    expect(converterError(object)).to.equal('unrecognized type: int64');
    expect(decodeError(object).decoderMessage).to.equal('json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string');
  });

  it('converts integers between sizes without a range check, as reflect.Value.Convert does', () => {
    const result = typedDecode({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 2 ** 31 + 5 } }, 'Warn', undefined, 'unstructured');
    expect((result.object.spec as JsonObject).replicas).to.equal(-(2 ** 31) + 5);
  });

  it('reports unknown members sorted, quoted plainly, with map keys left out of their paths', () => {
    const crd: JsonObject = {
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'x.example.com', zeta: 1 },
      spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: { type: 'object', properties: { foo: { type: 'string', bogus: true } } } } }], alpha: 1 },
    };
    expect(typedDecode(crd, 'Warn', undefined, 'unstructured').warnings).to.deep.equal([
      'unknown field "metadata.zeta"',
      'unknown field "spec.alpha"',
      'unknown field "spec.versions[0].schema.openAPIV3Schema.properties.bogus"',
    ]);
    // Decoded from JSON, the same object reports in document order with the map key in the path.
    expect(typedDecode(crd, 'Warn').warnings).to.deep.equal([
      'unknown field "metadata.zeta"',
      'unknown field "spec.versions[0].schema.openAPIV3Schema.properties.foo.bogus"',
      'unknown field "spec.alpha"',
    ]);
  });
});
