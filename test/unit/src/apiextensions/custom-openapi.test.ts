import { expect } from 'chai';
import { customOpenApiV2Definitions, customOpenApiV3Document } from '../../../../src/apiextensions/custom-openapi';
import { versionsOf, type CrdVersion } from '../../../../src/apiextensions/crd-model';
import type { CustomResourceIndex, CustomServedResource } from '../../../../src/apiextensions/custom-resource-index';
import { MergedOpenApi } from '../../../../src/apiextensions/merged-openapi';
import type { OpenApiDocuments } from '../../../../src/apis/openapi';

type Obj = Record<string, any>;

/** A cert-manager-like Certificate schema: int-or-string (with controller-gen's anyOf), nullable, defaults, preserved and embedded objects. */
const certificateSchema = {
  type: 'object',
  required: ['spec'],
  properties: {
    spec: {
      type: 'object',
      description: 'Desired state.',
      required: ['secretName', 'renewBefore'],
      properties: {
        secretName: { type: 'string', description: 'Name of the Secret.', minLength: 1, pattern: '^[a-z0-9.-]+$' },
        revisionHistoryLimit: { type: 'integer', format: 'int32', default: 1, minimum: 1 },
        port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }], description: 'Port number or name.' },
        renewBefore: { type: 'string', nullable: true },
        usages: { type: 'array', items: { type: 'string', enum: ['server auth', 'client auth'] }, 'x-kubernetes-list-type': 'set' },
        keystores: { type: 'object', nullable: true, properties: { pkcs12: { type: 'object' } } },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'string' } } },
        rawList: { type: 'array', 'x-kubernetes-preserve-unknown-fields': true, items: { type: 'string' } },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
        mode: { type: 'string', oneOf: [{ pattern: '^a' }, { pattern: '^b' }], not: { pattern: '^c' }, allOf: [{ maxLength: 5 }] },
      },
    },
  },
};

function served(schema: Obj | undefined): CustomServedResource {
  const crd = { spec: { versions: [{ name: 'v1', served: true, storage: true, ...(schema === undefined ? {} : { schema: { openAPIV3Schema: schema } }) }] } };
  return {
    group: 'cert.example.com', version: 'v1', resource: 'certificates', kind: 'Certificate', listKind: 'CertificateList', namespaced: true,
    verbs: [], subresources: [], crdName: 'certificates.cert.example.com', crdVersion: versionsOf(crd)[0] as CrdVersion, singular: 'certificate',
    shortNames: [], categories: [], terminating: false, storageVersionHash: 'x',
  } as CustomServedResource;
}

const API_VERSION = { description: 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources', type: 'string' };
const KIND = { description: 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds', type: 'string' };

describe('apiextensions OpenAPI v2 of a CRD, as v1.25 builds it', () => {
  it('drops anyOf, oneOf, allOf, not and defaults; a nullable node loses its type and children; preserved nodes lose their children', () => {
    const definitions = customOpenApiV2Definitions([served(certificateSchema)]);
    expect(Object.keys(definitions)).to.deep.equal(['com.example.cert.v1.Certificate', 'com.example.cert.v1.CertificateList']);
    const certificate = definitions['com.example.cert.v1.Certificate'] as Obj;
    expect(certificate).to.deep.equal({
      properties: {
        apiVersion: API_VERSION,
        kind: KIND,
        metadata: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata" },
        spec: {
          description: 'Desired state.',
          properties: {
            extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            keystores: {},
            mode: { type: 'string' },
            port: { description: 'Port number or name.', 'x-kubernetes-int-or-string': true },
            rawList: { 'x-kubernetes-preserve-unknown-fields': true },
            renewBefore: {},
            revisionHistoryLimit: { format: 'int32', minimum: 1, type: 'integer' },
            secretName: { description: 'Name of the Secret.', minLength: 1, pattern: '^[a-z0-9.-]+$', type: 'string' },
            template: {
              properties: {
                apiVersion: { description: 'apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources', type: 'string' },
                kind: { description: 'kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds', type: 'string' },
                metadata: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata" },
                spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
              required: ['kind', 'apiVersion'],
              type: 'object',
              'x-kubernetes-embedded-resource': true,
            },
            usages: { items: { enum: ['server auth', 'client auth'], type: 'string' }, type: 'array', 'x-kubernetes-list-type': 'set' },
          },
          required: ['secretName'],
          type: 'object',
        },
      },
      required: ['spec'],
      type: 'object',
      'x-kubernetes-group-version-kind': [{ group: 'cert.example.com', kind: 'Certificate', version: 'v1' }],
    });
    expect(definitions['com.example.cert.v1.CertificateList']).to.deep.equal({
      description: 'CertificateList is a list of Certificate',
      properties: {
        apiVersion: API_VERSION,
        items: { description: 'List of certificates. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md', items: { $ref: '#/definitions/com.example.cert.v1.Certificate' }, type: 'array' },
        kind: KIND,
        metadata: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta', description: 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds' },
      },
      required: ['items'],
      'x-kubernetes-group-version-kind': [{ group: 'cert.example.com', kind: 'CertificateList', version: 'v1' }],
    });
  });

  it('publishes a schema that keeps unknown fields at its root as a bare object', () => {
    const definitions = customOpenApiV2Definitions([served({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true })]);
    expect(definitions['com.example.cert.v1.Certificate']).to.deep.equal({ type: 'object', 'x-kubernetes-group-version-kind': [{ group: 'cert.example.com', kind: 'Certificate', version: 'v1' }] });
  });

  it('keeps anyOf in the v3 document', () => {
    const v3 = customOpenApiV3Document([served(certificateSchema)], {}) as Obj;
    expect(v3.components.schemas['com.example.cert.v1.Certificate'].properties.spec.properties.port.anyOf).to.deep.equal([{ type: 'integer' }, { type: 'string' }]);
  });

  it('serves /openapi/v2 in Protobuf once a CRD has an int-or-string field (gnostic has no anyOf)', () => {
    const builtInV2 = {
      swagger: '2.0',
      info: { title: 'Kubernetes', version: 'v1.25.16' },
      paths: {},
      definitions: {
        'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': { description: 'ObjectMeta', type: 'object' },
        'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta': { description: 'ListMeta', type: 'object' },
      },
    };
    const body = Buffer.from(JSON.stringify(builtInV2));
    const builtIn = {
      v2Document: () => ({ body, etag: '"x"' }),
      v3Index: () => ({ paths: {} }),
      v3Document: () => ({ body: Buffer.from(JSON.stringify({ components: { schemas: {} } })), etag: '"y"', hash: 'y' }),
    } as unknown as OpenApiDocuments;
    const index = { revision: 1, servedResources: () => [served(certificateSchema)] } as unknown as CustomResourceIndex;
    const merged = new MergedOpenApi(builtIn, index);
    const v2 = JSON.parse(merged.v2().body.toString('utf8')) as Obj;
    expect(JSON.stringify(v2.definitions['com.example.cert.v1.Certificate'])).to.not.match(/anyOf|oneOf|allOf|"not"|default|nullable/);
    const protobuf = merged.v2Protobuf();
    expect(protobuf.contentType).to.equal('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    expect(protobuf.body.length).to.be.greaterThan(0);
  });
});
