import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { ProtobufCodec, ProtobufCodecError } from '../../../../src/codec';
import { packagePath } from '../../../../src/util';
import { bytes, envelope, int, message } from './protobuf-wire';
import type { JsonObject } from '../../../../src/apis/object';

const codec = ProtobufCodec.load();

/** What Go prints for a DeploymentSpec with nothing set but what a test adds. */
const zeroDeploymentSpec = { template: { metadata: { creationTimestamp: null }, spec: { containers: null } }, strategy: {} };

/** ObjectMeta as Go writes it for {name, namespace}: every non-pointer field, zero or not. */
function goObjectMeta(name: string, namespace: string): Buffer[] {
  // k8s.io/apimachinery generated.pb.go (ObjectMeta.MarshalToSizedBuffer): strings 1-6, generation 7
  // and creationTimestamp 8 are written unconditionally; an unset Time marshals to 0 bytes.
  return [bytes(1, name), bytes(2, ''), bytes(3, namespace), bytes(4, ''), bytes(5, ''), bytes(6, ''), int(7, 0), bytes(8, '')];
}

function expectCodecError(action: () => unknown, reason: string, messagePart: string): void {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(caught, 'an error is thrown').to.be.instanceOf(ProtobufCodecError);
  const error = caught as ProtobufCodecError;
  expect(error.reason).to.equal(reason);
  expect(error.message).to.contain(messagePart);
}

describe('ProtobufCodec decoding minimal objects as Go clients write them', () => {
  it('drops zero non-pointer fields and shows an unset creationTimestamp as null (ConfigMap)', () => {
    const body = envelope('v1', 'ConfigMap', message(1, ...goObjectMeta('a', 'default')));
    // kube-apiserver JSON: ObjectMeta strings are omitempty; metav1.Time prints a zero time as
    // null (k8s.io/apimachinery pkg/apis/meta/v1/time.go MarshalJSON).
    expect(codec.decode(body)).to.deep.equal({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'a', namespace: 'default', creationTimestamp: null },
    });
  });

  it('keeps a false pointer field (ConfigMap.immutable is *bool in k8s.io/api core/v1 types.go)', () => {
    const body = envelope('v1', 'ConfigMap', message(1, bytes(1, 'a')), int(4, false));
    expect(codec.decode(body)).to.deep.equal({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', creationTimestamp: null }, immutable: false });
  });

  it('keeps struct fields as {} and pointer zeros, drops zero strings and bools (Pod)', () => {
    const container = Buffer.concat([bytes(1, 'c'), bytes(2, 'nginx'), bytes(8, ''), bytes(13, ''), int(16, false)]);
    const spec = Buffer.concat([
      bytes(2, container),
      bytes(3, ''),
      int(4, 0), // terminationGracePeriodSeconds: *int64, set to 0
      bytes(6, ''),
      bytes(8, ''),
      bytes(10, ''),
      int(11, false),
    ]);
    const body = envelope('v1', 'Pod', message(1, ...goObjectMeta('p', 'ns')), bytes(2, spec), message(3, bytes(1, '')));
    expect(codec.decode(body)).to.deep.equal({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'p', namespace: 'ns', creationTimestamp: null },
      // Container.resources is a non-pointer struct: Go prints it as {} (core/v1 types.go).
      spec: { containers: [{ name: 'c', image: 'nginx', resources: {} }], terminationGracePeriodSeconds: 0 },
      status: {},
    });
  });

  it('keeps the zeros Go prints for fields without omitempty (ContainerStatus.ready, restartCount)', () => {
    const status = Buffer.concat([bytes(1, 'c'), bytes(2, ''), bytes(3, ''), int(4, false), int(5, 0), bytes(6, 'nginx'), bytes(7, ''), bytes(8, '')]);
    const body = envelope('v1', 'Pod', message(1, bytes(1, 'p')), message(2), message(3, bytes(1, 'Pending'), bytes(8, status)));
    const pod = codec.decode(body) as { status: { containerStatuses: JsonObject[] } };
    // core/v1 types.go: `Ready bool json:"ready"`, `RestartCount int32 json:"restartCount"`,
    // `ImageID string json:"imageID"`; ContainerID is `json:"containerID,omitempty"`.
    expect(pod.status.containerStatuses).to.deep.equal([
      { name: 'c', state: {}, lastState: {}, ready: false, restartCount: 0, image: 'nginx', imageID: '' },
    ]);
  });

  it('keeps spec.replicas 0 (a *int32) and drops status.replicas 0 (an omitempty int32) (Deployment)', () => {
    const body = envelope('apps/v1', 'Deployment', message(1, bytes(1, 'd')), message(2, int(1, 0), int(5, 0), int(7, false)), message(3, int(1, 0), int(2, 0)));
    expect(codec.decode(body)).to.deep.include({ spec: { replicas: 0, ...zeroDeploymentSpec }, status: {} });
  });

  it('fills in what Go prints for fields the bytes leave out: zero structs, null times and slices', () => {
    // apps/v1 types.go: Template and Strategy are non-pointer structs; PodSpec.Containers is
    // `json:"containers"` (no omitempty), so a nil slice prints as null.
    const body = envelope('apps/v1', 'Deployment', message(1, bytes(1, 'd')));
    expect(codec.decode(body)).to.deep.equal({
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: { name: 'd', creationTimestamp: null },
      spec: zeroDeploymentSpec,
      status: {},
    });
  });

  it('decodes a Namespace with an empty spec and a phase', () => {
    const body = envelope('v1', 'Namespace', message(1, ...goObjectMeta('ns', '')), message(2), message(3, bytes(1, 'Active')));
    expect(codec.decode(body)).to.deep.equal({
      kind: 'Namespace',
      apiVersion: 'v1',
      metadata: { name: 'ns', creationTimestamp: null },
      spec: {},
      status: { phase: 'Active' },
    });
  });

  it('shows items: [] for a list with no items on the wire', () => {
    const body = envelope('v1', 'ConfigMapList', message(1, bytes(2, '')));
    expect(codec.decode(body)).to.deep.equal({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: {}, items: [] });
  });

  it('skips unknown field numbers, as Go generated Unmarshal does', () => {
    const body = envelope('v1', 'ConfigMap', message(1, bytes(1, 'a')), bytes(99, 'from a newer server'), int(98, 5));
    expect(codec.decode(body)).to.deep.equal({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', creationTimestamp: null } });
  });

  it('accepts packed repeated scalars, which Go decoders also accept', () => {
    // PodPortForwardOptions.ports (1): repeated int32, packed here as one length-delimited field.
    const body = envelope('v1', 'PodPortForwardOptions', bytes(1, Buffer.from([80, 0x90, 0x3f])));
    expect(codec.decode(body)).to.deep.equal({ kind: 'PodPortForwardOptions', apiVersion: 'v1', ports: [80, 8080] });
  });
});

describe('ProtobufCodec encoding', () => {
  it('writes map entries in sorted key order (Go sorts map keys before marshalling)', () => {
    const encoded = codec.encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { b: '2', a: '1' } });
    const expected = envelope('v1', 'ConfigMap', message(1, bytes(1, 'a')), message(2, bytes(1, 'a'), bytes(2, '1')), message(2, bytes(1, 'b'), bytes(2, '2')));
    expect(encoded.toString('hex')).to.equal(expected.toString('hex'));
  });

  it('writes nothing for null and missing fields, and round-trips a minimal object', () => {
    const configMap = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', creationTimestamp: null } };
    const encoded = codec.encode(configMap);
    expect(encoded.toString('hex')).to.equal(envelope('v1', 'ConfigMap', message(1, bytes(1, 'a'))).toString('hex'));
    expect(codec.decode(encoded)).to.deep.equal(configMap);
  });

  it('writes a time as whole UTC seconds and reads back RFC 3339 in UTC', () => {
    const encoded = codec.encode({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', creationTimestamp: '2008-01-01T03:01:01.750+02:00' } });
    // 2008-01-01T01:01:01Z = 1199149261; metav1.Time keeps no nanoseconds (time_proto.go).
    const expected = envelope('v1', 'Namespace', message(1, bytes(1, 'n'), message(8, int(1, 1199149261), int(2, 0))));
    expect(encoded.toString('hex')).to.equal(expected.toString('hex'));
    expect(codec.decode(encoded)).to.deep.include({ metadata: { name: 'n', creationTimestamp: '2008-01-01T01:01:01Z' } });
  });

  it('ignores nanoseconds of a metav1.Time on the wire but keeps microseconds of a MicroTime', () => {
    const time = message(8, int(1, 1199149261), int(2, 123456789));
    expect(codec.decode(envelope('v1', 'Namespace', message(1, time)))).to.deep.include({ metadata: { creationTimestamp: '2008-01-01T01:01:01Z' } });
    const lease = envelope('coordination.k8s.io/v1', 'Lease', message(1), message(2, message(4, int(1, 1199149261), int(2, 123456789))));
    expect(codec.decode(lease)).to.deep.include({ spec: { renewTime: '2008-01-01T01:01:01.123456Z' } });
  });

  it('round-trips int-or-string both ways, writing all three IntOrString fields', () => {
    const deployment = {
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: { name: 'd', creationTimestamp: null },
      spec: { ...zeroDeploymentSpec, strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: '25%' } } },
      status: {},
    };
    const encoded = codec.encode(deployment);
    expect(encoded.includes(Buffer.concat([int(1, 0), int(2, 1), bytes(3, '')]))).to.equal(true);
    expect(encoded.includes(Buffer.concat([int(1, 1), int(2, 0), bytes(3, '25%')]))).to.equal(true);
    expect(codec.decode(encoded)).to.deep.equal(deployment);
  });

  it('round-trips bytes fields as base64 and named string slices as arrays', () => {
    const secret = { kind: 'Secret', apiVersion: 'v1', metadata: { name: 's', creationTimestamp: null }, data: { key: 'AAEC/w==', empty: '' }, type: 'Opaque' };
    expect(codec.decode(codec.encode(secret))).to.deep.equal(secret);
    const review = {
      kind: 'TokenReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: {},
      status: { authenticated: true, user: { username: 'u', extra: { scopes: ['a', 'b'], none: [] } } },
    };
    expect(codec.decode(codec.encode(review))).to.deep.equal(review);
    const resources = {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'apps/v1',
      resources: [{ name: 'deployments', singularName: '', namespaced: true, kind: 'Deployment', verbs: ['get', 'list'] }],
    };
    expect(codec.decode(codec.encode(resources))).to.deep.equal(resources);
  });

  it('round-trips a CRD schema with $ref, x-kubernetes-* keys, JSON values and the three unions', () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: {
            replicas: { type: 'integer', minimum: 0, default: 1, enum: [1, 2, 3] },
            tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
            tuple: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] },
            labels: { type: 'object', additionalProperties: { type: 'string' } },
            closed: { type: 'object', additionalProperties: false },
            ref: { $ref: '#/definitions/x', $schema: 'http://json-schema.org/draft-04/schema#' },
          },
          dependencies: { a: ['b', 'c'], d: { required: ['e'] } },
          'x-kubernetes-validations': [{ rule: 'self.replicas >= 0', message: 'non-negative' }],
        },
      },
      example: { spec: { replicas: 2 } },
    };
    const crd = {
      kind: 'CustomResourceDefinition',
      apiVersion: 'apiextensions.k8s.io/v1',
      metadata: { name: 'widgets.example.com', creationTimestamp: null },
      spec: {
        group: 'example.com',
        names: { plural: 'widgets', kind: 'Widget' },
        scope: 'Namespaced',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      },
      // CustomResourceDefinitionStatus.acceptedNames is a non-pointer struct with required
      // plural and kind (apiextensions-apiserver v1 types.go), so Go prints them empty.
      status: { acceptedNames: { plural: '', kind: '' } },
    };
    expect(codec.decode(codec.encode(crd))).to.deep.equal(crd);
  });
});

describe('ProtobufCodec kinds', () => {
  const cases: [string, string, boolean][] = [
    ['v1', 'ConfigMap', true],
    ['v1', 'ConfigMapList', true],
    ['apps/v1', 'Deployment', true],
    ['rbac.authorization.k8s.io/v1', 'ClusterRole', true],
    ['apiextensions.k8s.io/v1', 'CustomResourceDefinition', true],
    ['apiregistration.k8s.io/v1', 'APIService', true],
    ['flowcontrol.apiserver.k8s.io/v1beta2', 'FlowSchema', true],
    ['internal.apiserver.k8s.io/v1alpha1', 'StorageVersion', true],
    // metav1.AddToGroupVersion registers WatchEvent and the option kinds in every group/version.
    ['apps/v1', 'DeleteOptions', true],
    ['apps/v1', 'WatchEvent', true],
    // Status is an unversioned type, always labelled apiVersion v1.
    ['v1', 'Status', true],
    ['apps/v1', 'Status', false],
    ['meta.k8s.io/v1', 'PartialObjectMetadataList', true],
    // meta.v1.Table has no Protobuf message in v1.25.
    ['meta.k8s.io/v1', 'Table', false],
    ['v1', 'PodLogOptions', true],
    ['admission.k8s.io/v1', 'AdmissionReview', true],
    // Messages that are parts of kinds are not kinds.
    ['v1', 'PodSpec', false],
    ['v1', 'PodTemplateSpec', false],
    ['v1', 'NoSuchKind', false],
    ['example.com/v1', 'Widget', false],
  ];
  it('maps group/versions to their proto packages, and shared kinds to meta.v1', () => {
    expect(codec.messageName('v1', 'Pod')).to.equal('k8s.io.api.core.v1.Pod');
    expect(codec.messageName('rbac.authorization.k8s.io/v1', 'Role')).to.equal('k8s.io.api.rbac.v1.Role');
    expect(codec.messageName('apiextensions.k8s.io/v1', 'CustomResourceDefinition')).to.equal(
      'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
    );
    expect(codec.messageName('apiregistration.k8s.io/v1', 'APIService')).to.equal('k8s.io.kube_aggregator.pkg.apis.apiregistration.v1.APIService');
    expect(codec.messageName('batch/v1', 'DeleteOptions')).to.equal('k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions');
    expect(codec.messageName('v1', 'Status')).to.equal('k8s.io.apimachinery.pkg.apis.meta.v1.Status');
  });

  for (const [apiVersion, kind, supported] of cases) {
    it(`${supported ? 'supports' : 'does not support'} ${apiVersion} ${kind}`, () => {
      expect(codec.supports(apiVersion, kind)).to.equal(supported);
    });
  }
});

describe('ProtobufCodec errors', () => {
  const podBody = readFileSync(packagePath('test', 'fixtures', 'k8s-testdata-v1.25', 'core.v1.Pod.pb'));

  it('rejects a body without the k8s\\0 prefix as BadPrefix', () => {
    expectCodecError(() => codec.decode(Buffer.from('{"kind":"Pod"}')), 'BadPrefix', 'k8s\\0');
  });

  it('rejects an envelope naming a kind without a message as UnknownKind', () => {
    expectCodecError(() => codec.decode(envelope('example.com/v1', 'Widget')), 'UnknownKind', 'example.com/v1');
  });

  it('rejects an object of an unknown kind on encode as UnknownKind', () => {
    expectCodecError(() => codec.encode({ apiVersion: 'v1', kind: 'Widget' }), 'UnknownKind', 'Widget');
  });

  it('rejects a truncated body as Malformed', () => {
    expectCodecError(() => codec.decode(podBody.subarray(0, podBody.length - 100)), 'Malformed', 'decode');
  });

  it('rejects a field with the wrong wire type as Malformed', () => {
    expectCodecError(() => codec.decode(envelope('v1', 'ConfigMap', int(1, 5))), 'Malformed', 'wire type 0');
  });

  it('rejects JSON values that do not fit their field as NotRepresentable', () => {
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: '3' } };
    expectCodecError(() => codec.encode(deployment), 'NotRepresentable', 'DeploymentSpec.replicas');
    const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', creationTimestamp: 'yesterday' } };
    expectCodecError(() => codec.encode(namespace), 'NotRepresentable', 'RFC 3339');
    const secret = { apiVersion: 'v1', kind: 'Secret', data: { k: 'not base64!' } };
    expectCodecError(() => codec.encode(secret), 'NotRepresentable', 'base64');
  });
});

describe('ProtobufCodec watch frames', () => {
  const configMap = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', resourceVersion: '7', creationTimestamp: null }, data: { k: 'v' } };

  it('frames a bare WatchEvent whose object.raw is the enveloped object', () => {
    const frame = codec.encodeWatchEventFrame('ADDED', configMap);
    // k8s.io/apimachinery serializer/protobuf_extension.go: the stream serializer is the raw
    // (unenveloped) one with LengthDelimitedFramer; the watch handler embeds the object with the
    // full serializer (k8s.io/apiserver pkg/endpoints/handlers/watch.go).
    const event = Buffer.concat([bytes(1, 'ADDED'), message(2, bytes(1, codec.encode(configMap)))]);
    expect(frame.readUInt32BE(0)).to.equal(event.length);
    expect(frame.subarray(4).toString('hex')).to.equal(event.toString('hex'));
    expect(ProtobufCodec.frameLength(frame)).to.equal(event.length);
  });

  it('decodes a frame back to its type and object', () => {
    const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version', reason: 'Expired', code: 410 };
    expect(codec.decodeWatchEventFrame(codec.encodeWatchEventFrame('ERROR', status))).to.deep.equal({ type: 'ERROR', object: status });
    expect(codec.decodeWatchEventFrame(codec.encodeWatchEventFrame('MODIFIED', configMap))).to.deep.equal({ type: 'MODIFIED', object: configMap });
  });

  it('rejects a frame whose length header does not match its bytes as Malformed', () => {
    const frame = codec.encodeWatchEventFrame('ADDED', configMap);
    expectCodecError(() => codec.decodeWatchEventFrame(frame.subarray(0, frame.length - 1)), 'Malformed', 'watch frame');
  });
});
