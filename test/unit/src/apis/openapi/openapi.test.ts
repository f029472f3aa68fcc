import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { Catalogue } from '../../../../../src/apis/catalogue';
import { OpenApiDocuments, convertSchema, goJsonStringify, openApiV2Document, openApiV3Document, openApiV3Index } from '../../../../../src/apis/openapi';

type Json = Record<string, unknown>;

/** Schema keywords in use, skipping the names inside `properties` maps (JSONSchemaProps has a property called allOf). */
function collectKeywords(value: unknown, keywords: Set<string>): Set<string> {
  if (Array.isArray(value)) value.forEach((item) => collectKeywords(item, keywords));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      keywords.add(key);
      if (key === 'properties' && typeof item === 'object' && item !== null) Object.values(item).forEach((property) => collectKeywords(property, keywords));
      else collectKeywords(item, keywords);
    }
  }
  return keywords;
}

function collectRefs(value: unknown, refs: string[]): string[] {
  if (Array.isArray(value)) value.forEach((item) => collectRefs(item, refs));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') refs.push(item);
      else collectRefs(item, refs);
    }
  }
  return refs;
}

describe('goJsonStringify', () => {
  it('escapes <, > and & as Go encoding/json does', () => {
    expect(goJsonStringify({ text: '<a> & b\u2028' })).to.equal('{"text":"\\u003ca\\u003e \\u0026 b\\u2028"}');
    expect(JSON.parse(goJsonStringify({ text: '<a> & b' }))).to.deep.equal({ text: '<a> & b' });
  });
});

describe('convertSchema', () => {
  it('turns a single-reference allOf into a $ref with its description and without default', () => {
    expect(
      convertSchema({ allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.PodSpec' }], default: {}, description: 'spec' }),
    ).to.deep.equal({ $ref: '#/definitions/io.k8s.api.core.v1.PodSpec', description: 'spec' });
  });

  it('rewrites references nested in properties, items and additionalProperties', () => {
    expect(
      convertSchema({
        type: 'object',
        properties: {
          allOf: { type: 'string', default: 'x' },
          list: { type: 'array', items: { allOf: [{ $ref: '#/components/schemas/A' }], default: {} } },
          map: { type: 'object', additionalProperties: { $ref: '#/components/schemas/B' } },
        },
      }),
    ).to.deep.equal({
      type: 'object',
      properties: {
        allOf: { type: 'string', default: 'x' },
        list: { type: 'array', items: { $ref: '#/definitions/A' } },
        map: { type: 'object', additionalProperties: { $ref: '#/definitions/B' } },
      },
    });
  });

  it('replaces oneOf, which swagger 2.0 lacks, by type string', () => {
    expect(convertSchema({ description: 'd', format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] })).to.deep.equal({
      description: 'd',
      format: 'int-or-string',
      type: 'string',
    });
  });
});

describe('OpenAPI v3', () => {
  const index = openApiV3Index();

  it('lists the served group-version documents with the SHA-512 of their bytes', () => {
    const paths = Object.keys(index.paths);
    expect(paths).to.have.length(23);
    expect(paths).to.deep.equal([...paths].sort());
    expect(paths).to.include.members(['api/v1', 'apis/apps/v1', 'apis/autoscaling/v2beta2', 'apis/apiextensions.k8s.io/v1']);
    // v1.25 did not publish apiregistration.k8s.io over v3; alpha group-versions are off by default.
    expect(paths).to.not.include('apis/apiregistration.k8s.io/v1');
    expect(paths).to.not.include('apis/networking.k8s.io/v1alpha1');

    const apps = openApiV3Document('apis/apps/v1');
    if (apps === undefined) throw new Error('apps/v1 document missing');
    // kube-openapi pkg/handler3: upper-case hex SHA-512, ETag is the hash in double quotes.
    const expected = createHash('sha512').update(apps.body).digest('hex').toUpperCase();
    expect(apps.hash).to.equal(expected);
    expect(apps.etag).to.equal(`"${expected}"`);
    expect(index.paths['apis/apps/v1']).to.deep.equal({ serverRelativeURL: `/openapi/v3/apis/apps/v1?hash=${expected}` });
  });

  it('serves a document as compact JSON with the schemas of its group-version', () => {
    const core = openApiV3Document('/api/v1');
    if (core === undefined) throw new Error('core document missing');
    const text = core.body.toString('utf8');
    expect(text.startsWith('{"components":{"schemas":{')).to.equal(true);
    expect(text).to.not.include('\n');
    const parsed = JSON.parse(text) as { components: { schemas: Json }; paths: Json };
    expect(parsed.components.schemas).to.have.property('io.k8s.api.core.v1.Pod');
    expect(parsed.paths).to.have.property('/api/v1/namespaces/{namespace}/pods/{name}/exec');
  });

  it('serves nothing for unknown or switched-off group-versions', () => {
    expect(openApiV3Document('apis/extensions/v1beta1')).to.equal(undefined);
    expect(openApiV3Document('apis/apiregistration.k8s.io/v1')).to.equal(undefined);
    const documents = new OpenApiDocuments(Catalogue.load({ runtimeConfig: new Map([['batch/v1', false], ['networking.k8s.io/v1alpha1', true]]) }));
    expect(documents.v3Document('apis/batch/v1')).to.equal(undefined);
    expect(Object.keys(documents.v3Index().paths)).to.include('apis/networking.k8s.io/v1alpha1');
    expect(Object.keys(documents.v3Index().paths)).to.not.include('apis/batch/v1');
  });

  it('gives the index body its own ETag', () => {
    const documents = new OpenApiDocuments(Catalogue.load());
    const body = documents.v3IndexBody();
    expect(JSON.parse(body.body.toString('utf8'))).to.deep.equal(documents.v3Index());
    expect(body.etag).to.match(/^"[0-9A-F]{128}"$/);
  });
});

describe('OpenAPI v2', () => {
  const v2 = openApiV2Document();
  const swagger = JSON.parse(v2.body.toString('utf8')) as {
    swagger: string;
    info: Json;
    paths: Record<string, Record<string, Json>>;
    definitions: Record<string, Json & { properties?: Json; 'x-kubernetes-group-version-kind'?: unknown }>;
    securityDefinitions: Json;
    security: unknown;
  };

  it('is a swagger 2.0 document of Kubernetes v1.25.16 with bearer-token security', () => {
    expect(swagger.swagger).to.equal('2.0');
    expect(swagger.info).to.deep.equal({ title: 'Kubernetes', version: 'v1.25.16' });
    expect(swagger.securityDefinitions).to.deep.equal({
      BearerToken: { description: 'Bearer Token authentication', type: 'apiKey', name: 'authorization', in: 'header' },
    });
    expect(swagger.security).to.deep.equal([{ BearerToken: [] }]);
    expect(v2.etag).to.match(/^"[0-9A-F]{128}"$/);
  });

  it('carries the Pod definition with its properties and group-version-kind', () => {
    const pod = swagger.definitions['io.k8s.api.core.v1.Pod'];
    expect(Object.keys(pod?.properties ?? {})).to.deep.equal(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect(pod?.['x-kubernetes-group-version-kind']).to.deep.equal([{ group: '', kind: 'Pod', version: 'v1' }]);
    expect((pod?.properties as Record<string, Json>).metadata?.$ref).to.equal('#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  });

  it('includes APIService, which kube-aggregator merges into v2', () => {
    expect(swagger.definitions).to.have.property('io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService');
    expect(swagger.paths).to.have.property('/apis/apiregistration.k8s.io/v1/apiservices');
  });

  it('converts operations to v2 parameters, consumes, produces and responses', () => {
    const create = swagger.paths['/api/v1/namespaces/{namespace}/pods']?.post as Json & { parameters: Json[]; responses: Record<string, Json> };
    expect(create.operationId).to.equal('createCoreV1NamespacedPod');
    expect(create.consumes).to.deep.equal(['*/*']);
    expect(create.produces).to.include('application/json');
    expect(create.parameters[0]).to.deep.equal({ in: 'body', name: 'body', required: true, schema: { $ref: '#/definitions/io.k8s.api.core.v1.Pod' } });
    expect(create.parameters.find((parameter) => parameter.name === 'dryRun')).to.include({ in: 'query', type: 'string' });
    expect(create.responses['201']).to.deep.include({ description: 'Created', schema: { $ref: '#/definitions/io.k8s.api.core.v1.Pod' } });
    expect(create['x-kubernetes-action']).to.equal('post');

    const patch = swagger.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}']?.patch as Json;
    expect(patch.consumes).to.have.members([
      'application/apply-patch+yaml',
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
    ]);
    const shared = swagger.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}']?.parameters as unknown as Json[];
    expect(shared.map((parameter) => parameter.name)).to.deep.equal(['name', 'namespace', 'pretty']);
  });

  it('has only references that resolve to definitions', () => {
    const refs = collectRefs(swagger, []);
    expect(refs.length).to.be.greaterThan(1000);
    const unresolved = refs.filter((ref) => !ref.startsWith('#/definitions/') || !(ref.slice('#/definitions/'.length) in swagger.definitions));
    expect(unresolved).to.deep.equal([]);
    const keywords = collectKeywords(swagger.definitions, new Set());
    expect(keywords.has('allOf')).to.equal(false);
    expect(keywords.has('oneOf')).to.equal(false);
    expect(keywords.has('$ref')).to.equal(true);
  });

  it('is built once and cached', () => {
    expect(openApiV2Document()).to.equal(v2);
  });
});
