import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { Catalogue } from '../../../../../src/apis/catalogue';
import { OpenApiDocuments } from '../../../../../src/apis/openapi';
import {
  OPENAPI_V2_PROTOBUF_CONTENT_TYPE,
  OPENAPI_V2_PROTOBUF_MEDIA_TYPES,
  gnosticYaml,
  openApiV2DocumentType,
  openApiV2ToProtobuf,
} from '../../../../../src/apis/openapi/openapi-v2-protobuf';

interface Named<T> {
  name: string;
  value: T;
}
interface AnyValue {
  yaml: string;
}
interface SchemaMessage {
  _ref?: string;
  description?: string;
  properties?: { additional_properties: Named<SchemaMessage>[] };
  additional_properties?: { schema?: SchemaMessage; boolean?: boolean };
  type?: { value: string[] };
  items?: { schema: SchemaMessage[] };
  default?: AnyValue;
  vendor_extension?: Named<AnyValue>[];
}
interface ParameterMessage {
  parameter?: {
    body_parameter?: { name: string; in: string; required?: boolean; schema: SchemaMessage };
    non_body_parameter?: Record<string, { name: string; in: string; type?: string; required?: boolean; unique_items?: boolean }>;
  };
  json_reference?: { _ref: string };
}
interface OperationMessage {
  operation_id: string;
  parameters?: ParameterMessage[];
  responses: { response_code: Named<{ response?: { description: string; schema?: { schema?: SchemaMessage; file_schema?: { type: string } } }; json_reference?: { _ref: string } }>[] };
  vendor_extension?: Named<AnyValue>[];
}
interface DocumentMessage {
  swagger: string;
  info: { title: string; version: string };
  paths: { path: Named<{ get?: OperationMessage; post?: OperationMessage; parameters?: ParameterMessage[] }>[] };
  definitions: { additional_properties: Named<SchemaMessage>[] };
  security_definitions: { additional_properties: Named<Record<string, { type: string; name: string; in: string }>>[] };
}

function decode(bytes: Buffer): DocumentMessage {
  const type = openApiV2DocumentType();
  return type.toObject(type.decode(bytes), { defaults: false, longs: Number }) as DocumentMessage;
}

function named<T>(pairs: Named<T>[] | undefined, name: string): T {
  const pair = (pairs ?? []).find((entry) => entry.name === name);
  expect(pair, `entry ${name}`).to.not.equal(undefined);
  return (pair as Named<T>).value;
}

function minimalDocument(extra: Record<string, unknown>): Record<string, unknown> {
  return { swagger: '2.0', info: { title: 'T', version: 'v' }, paths: {}, ...extra };
}

describe('openApiV2ToProtobuf media types', () => {
  it('accepts both v2 protobuf media types and answers with the dotted one', () => {
    // k8s.io/kube-openapi pkg/handler/handler.go (v1.25): subTypeProtobuf and subTypeProtobufDeprecated,
    // both served with Content-Type application/com.github.proto-openapi.spec.v2.v1.0+protobuf.
    expect(OPENAPI_V2_PROTOBUF_MEDIA_TYPES).to.have.members([
      'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
      'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
    ]);
    expect(OPENAPI_V2_PROTOBUF_CONTENT_TYPE).to.equal('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  });
});

describe('gnosticYaml', () => {
  // gnostic compiler.Marshal: yaml.v3 Marshal of the node with styles cleared (gopkg.in/yaml.v3 encode.go, emitterc.go).
  it('writes a group-version-kind list with the mapping two spaces into the sequence item', () => {
    expect(gnosticYaml([{ group: '', kind: 'Pod', version: 'v1' }])).to.equal('- group: ""\n  kind: Pod\n  version: v1\n');
  });

  it('writes scalars plain when they read back as the same string, quoted otherwise', () => {
    expect(gnosticYaml('merge')).to.equal('merge\n');
    expect(gnosticYaml('retainKeys,merge')).to.equal('retainKeys,merge\n');
    expect(gnosticYaml('')).to.equal('""\n');
    expect(gnosticYaml('true')).to.equal('"true"\n');
    expect(gnosticYaml('8080')).to.equal('"8080"\n');
    expect(gnosticYaml('#/definitions/X')).to.equal("'#/definitions/X'\n");
    expect(gnosticYaml("key: it's")).to.equal("'key: it''s'\n");
    expect(gnosticYaml('two\nlines')).to.equal('"two\\nlines"\n');
    expect(gnosticYaml(0)).to.equal('0\n');
    expect(gnosticYaml(false)).to.equal('false\n');
    expect(gnosticYaml(null)).to.equal('null\n');
  });

  it('indents nested collections by four, and writes empty ones in flow style', () => {
    const union = [{ discriminator: 'kind', 'fields-to-discriminateBy': { group: 'Group', user: 'User' } }];
    expect(gnosticYaml(union)).to.equal('- discriminator: kind\n  fields-to-discriminateBy:\n    group: Group\n    user: User\n');
    expect(gnosticYaml({ keys: ['type', 'name'], empty: {}, none: [] })).to.equal('keys:\n    - type\n    - name\nempty: {}\nnone: []\n');
  });

  it('produces YAML that reads back to the same value', () => {
    const value = { a: ['x: y', ' lead', 'null', '1.5', '- dash', 'ünïcode', 'tab\there'], b: { c: [[1, 2], { d: '' }] } };
    expect(parseYaml(gnosticYaml(value))).to.deep.equal(value);
  });
});

describe('openApiV2ToProtobuf', () => {
  const swaggerBody = new OpenApiDocuments(Catalogue.load()).v2Document().body;
  const swagger = JSON.parse(swaggerBody.toString('utf8')) as { paths: Record<string, unknown>; definitions: Record<string, unknown> };
  const bytes = openApiV2ToProtobuf(swaggerBody);
  const document = decode(bytes);

  it('encodes the v1.25 document in a few megabytes', () => {
    // kube-apiserver v1.25's /openapi/v2 protobuf body is a few MB (smaller than its ~3.5 MB JSON).
    expect(bytes.length).to.be.within(2_000_000, 6_000_000);
    expect(bytes.length).to.be.below(swaggerBody.length);
  });

  it('caches the bytes per document', () => {
    expect(openApiV2ToProtobuf(swaggerBody)).to.equal(bytes);
  });

  it('carries swagger, info and the BearerToken security definition', () => {
    expect(document.swagger).to.equal('2.0');
    expect(document.info).to.include({ title: 'Kubernetes' });
    const bearer = named(document.security_definitions.additional_properties, 'BearerToken');
    expect(bearer.api_key_security).to.include({ type: 'apiKey', name: 'authorization', in: 'header' });
  });

  it('keeps paths and definitions as named pairs in document order', () => {
    expect(document.paths.path.map((pair) => pair.name)).to.deep.equal(Object.keys(swagger.paths));
    expect(document.definitions.additional_properties.map((pair) => pair.name)).to.deep.equal(Object.keys(swagger.definitions));
  });

  it('gives the Pod definition its properties, $refs and group-version-kind extension', () => {
    const pod = named(document.definitions.additional_properties, 'io.k8s.api.core.v1.Pod');
    const properties = pod.properties?.additional_properties ?? [];
    expect(properties.map((property) => property.name)).to.include.members(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect(named(properties, 'kind').type?.value).to.deep.equal(['string']);
    expect(named(properties, 'spec')._ref).to.equal('#/definitions/io.k8s.api.core.v1.PodSpec');
    const gvk = named(pod.vendor_extension, 'x-kubernetes-group-version-kind');
    expect(parseYaml(gvk.yaml)).to.deep.equal([{ group: '', kind: 'Pod', version: 'v1' }]);
  });

  it('turns items, additionalProperties and defaults into their gnostic messages', () => {
    const podSpec = named(document.definitions.additional_properties, 'io.k8s.api.core.v1.PodSpec');
    const containers = named(podSpec.properties?.additional_properties, 'containers');
    expect(containers.type?.value).to.deep.equal(['array']);
    expect(containers.items?.schema).to.have.length(1);
    expect(containers.items?.schema[0]?._ref).to.equal('#/definitions/io.k8s.api.core.v1.Container');
    const nodeSelector = named(podSpec.properties?.additional_properties, 'nodeSelector');
    expect(nodeSelector.additional_properties?.schema?.type?.value).to.deep.equal(['string']);
    const port = named(document.definitions.additional_properties, 'io.k8s.api.core.v1.ContainerPort');
    // k8s.io/api core/v1 ContainerPort.protocol carries +default="TCP".
    expect(named(port.properties?.additional_properties, 'protocol').default).to.deep.equal({ yaml: 'TCP\n' });
  });

  it('gives /api/v1/namespaces/{namespace}/pods its operations, parameters and responses', () => {
    const pods = named(document.paths.path, '/api/v1/namespaces/{namespace}/pods');
    const list = pods.get as OperationMessage;
    expect(list.operation_id).to.equal('listCoreV1NamespacedPod');
    expect(parseYaml(named(list.vendor_extension, 'x-kubernetes-action').yaml)).to.equal('list');
    const limit = (list.parameters ?? []).map((item) => item.parameter?.non_body_parameter?.query_parameter_sub_schema).find((query) => query?.name === 'limit');
    expect(limit).to.include({ in: 'query', type: 'integer', unique_items: true });
    const namespace = (pods.parameters ?? []).map((item) => item.parameter?.non_body_parameter?.path_parameter_sub_schema).find((path) => path !== undefined);
    expect(namespace).to.include({ name: 'namespace', in: 'path', required: true, type: 'string' });
    const ok = named(list.responses.response_code, '200');
    expect(ok.response?.schema?.schema?._ref).to.equal('#/definitions/io.k8s.api.core.v1.PodList');
    const body = ((pods.post as OperationMessage).parameters ?? []).map((item) => item.parameter?.body_parameter).find((parameter) => parameter !== undefined);
    expect(body).to.deep.include({ name: 'body', in: 'body', required: true });
    expect(body?.schema._ref).to.equal('#/definitions/io.k8s.api.core.v1.Pod');
  });

  it('writes no proto3 zero values, as Go protobuf does', () => {
    // Document{swagger:"2.0", info:{version:"v"} (empty title left out), paths:{}}, fields in number order.
    const encoded = openApiV2ToProtobuf({ swagger: '2.0', info: { title: '', version: 'v' }, paths: {} });
    expect(encoded.toString('hex')).to.equal(['0a03322e30', '1203' + '1201' + '76', '4200'].join(''));
  });

  it('writes a false additionalProperties, a oneof member, and references as JsonReference', () => {
    const encoded = openApiV2ToProtobuf(
      minimalDocument({
        definitions: { Closed: { type: 'object', additionalProperties: false } },
        paths: {
          '/x': {
            parameters: [{ $ref: '#/parameters/pretty' }],
            get: { responses: { '200': { $ref: '#/responses/ok' }, '201': { description: 'file', schema: { type: 'file' } } } },
          },
        },
      }),
    );
    const decoded = decode(encoded);
    const closed = named(decoded.definitions.additional_properties, 'Closed');
    expect(closed.additional_properties).to.deep.equal({ boolean: false });
    const path = named(decoded.paths.path, '/x');
    expect(path.parameters).to.deep.equal([{ json_reference: { _ref: '#/parameters/pretty' } }]);
    const responses = (path.get as OperationMessage).responses.response_code;
    expect(named(responses, '200')).to.deep.equal({ json_reference: { _ref: '#/responses/ok' } });
    expect(named(responses, '201').response?.schema).to.deep.equal({ file_schema: { type: 'file' } });
  });

  it('rejects what gnostic rejects, naming the place', () => {
    // gnostic openapiv2/OpenAPIv2.go NewSchema: keys outside the swagger 2.0 schema object are invalid.
    expect(() => openApiV2ToProtobuf(minimalDocument({ definitions: { A: { nullable: true } } }))).to.throw(/\$root\.definitions\.A has invalid property: nullable/);
    expect(() => openApiV2ToProtobuf({ swagger: '3.0', info: { title: 'T', version: 'v' }, paths: {} })).to.throw(/unexpected value for swagger/);
    expect(() => openApiV2ToProtobuf({ swagger: '2.0', paths: {} })).to.throw(/missing required info/);
  });
});
