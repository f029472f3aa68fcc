import { expect } from 'chai';
import { deriveResources, type OpenApiV3Document } from '../../../../../src/apis/catalogue/openapi-resources';

const widgetKind = { 'x-kubernetes-group-version-kind': { group: 'example.io', version: 'v1', kind: 'Widget' } };

function op(action: string, extra: object = widgetKind): object {
  return { 'x-kubernetes-action': action, ...extra };
}

describe('deriveResources', () => {
  const document: OpenApiV3Document = {
    paths: {
      '/apis/example.io/v1/': { get: { responses: {} } },
      '/apis/example.io/v1/widgets': {
        get: {
          ...op('list'),
          responses: { '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/io.example.v1.WidgetList' } } } } },
        },
      },
      '/apis/example.io/v1/namespaces/{namespace}/widgets': { post: op('post'), delete: op('deletecollection') },
      '/apis/example.io/v1/namespaces/{namespace}/widgets/{name}': { get: op('get'), put: op('put'), patch: op('patch'), delete: op('delete') },
      '/apis/example.io/v1/watch/namespaces/{namespace}/widgets': { get: op('watchlist') },
      '/apis/example.io/v1/namespaces/{namespace}/widgets/{name}/proxy/{path}': {
        get: op('connect', { 'x-kubernetes-group-version-kind': { group: 'example.io', version: 'v1', kind: 'WidgetProxyOptions' } }),
        head: op('connect'),
        options: op('connect'),
        post: op('connect'),
      },
      '/apis/example.io/v1/gadgets': { get: op('list', { 'x-kubernetes-group-version-kind': { group: 'example.io', version: 'v1', kind: 'Gadget' } }) },
      '/apis/example.io/v1/gadgets/{name}/scale': {
        get: op('get', { 'x-kubernetes-group-version-kind': { group: 'autoscaling', version: 'v1', kind: 'Scale' } }),
      },
      '/apis/other.io/v1/things': { get: op('list') },
    },
  };
  const derived = deriveResources(document, '/apis/example.io/v1');

  it('finds the resources under the prefix only, sorted by name', () => {
    expect(derived.map((resource) => resource.resource)).to.deep.equal(['gadgets', 'widgets']);
  });

  it('collects verbs from collection, item and watch paths, and scope from the namespaced paths', () => {
    const widgets = derived[1];
    expect(widgets?.namespaced).to.equal(true);
    expect(widgets?.verbs).to.deep.equal(['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    expect(widgets?.kind).to.equal('Widget');
    expect(widgets?.listKind).to.equal('WidgetList');
  });

  it('maps connect methods to verbs and drops HEAD and OPTIONS', () => {
    expect(derived[1]?.subresources).to.deep.equal([
      { name: 'proxy', kind: 'WidgetProxyOptions', group: 'example.io', version: 'v1', verbs: ['create', 'get'] },
    ]);
  });

  it('leaves a resource cluster-scoped without namespaced paths and falls back to <Kind>List', () => {
    const gadgets = derived[0];
    expect(gadgets?.namespaced).to.equal(false);
    expect(gadgets?.listKind).to.equal('GadgetList');
    expect(gadgets?.subresources).to.deep.equal([{ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get'] }]);
  });

  it('refuses an operation without x-kubernetes-action', () => {
    const broken: OpenApiV3Document = { paths: { '/apis/example.io/v1/widgets': { get: widgetKind } } };
    expect(() => deriveResources(broken, '/apis/example.io/v1')).to.throw('x-kubernetes-action');
  });
});
