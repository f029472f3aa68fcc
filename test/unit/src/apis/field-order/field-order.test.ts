import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { Catalogue } from '../../../../../src/apis/catalogue';
import { compareGoStrings, inGoOrder, isBuiltInKind, withSortedKeys, FIELD_ORDER_DATA_PATH } from '../../../../../src/apis/field-order';
import { buildFieldOrderData, fieldOrderText } from '../../../../../src/apis/field-order/generate-field-order';
import { packagePath } from '../../../../../src/util/package-root';

type Obj = Record<string, any>;

const fixtureDir = packagePath('test', 'fixtures', 'k8s-testdata-v1.25');

/** `value` with every object's keys in reverse order: what a client that orders nothing might send. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  const out: Obj = {};
  for (const key of Object.keys(value).reverse()) out[key] = reversed((value as Obj)[key]);
  return out;
}

function fixtures(): Array<{ file: string; object: Obj }> {
  return readdirSync(fixtureDir).filter((f) => f.endsWith('.json')).map((file) => ({ file, object: JSON.parse(readFileSync(`${fixtureDir}/${file}`, 'utf8')) as Obj }));
}

describe('field order: kube-apiserver v1.25\'s order of JSON fields', () => {
  it('puts every fully populated v1.25 object sent in reverse order back in Go\'s order, byte for byte', () => {
    let checked = 0;
    for (const { file, object } of fixtures()) {
      if (!isBuiltInKind(object.apiVersion, object.kind)) continue;
      const sent = reversed(object) as Obj;
      // A ControllerRevision's data is a RawExtension: Go writes it as it was given.
      if (object.kind === 'ControllerRevision') sent.data = object.data;
      expect(JSON.stringify(inGoOrder(sent)), file).to.equal(JSON.stringify(object));
      checked++;
    }
    // Every kind v1.25 serves has a fixture except the apiextensions and apiregistration ones.
    expect(checked).to.be.greaterThan(60);
  });

  it('orders a Pod, a Deployment and a Status the way Go does, whatever order they came in', () => {
    const pod = inGoOrder({ status: {}, spec: { containers: [{ image: 'nginx', name: 'web' }], restartPolicy: 'Always' }, metadata: { labels: { b: '2', a: '1' }, uid: 'u', namespace: 'default', name: 'p', creationTimestamp: null }, apiVersion: 'v1', kind: 'Pod' });
    expect(JSON.stringify(pod)).to.equal('{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default","uid":"u","creationTimestamp":null,"labels":{"a":"1","b":"2"}},"spec":{"containers":[{"name":"web","image":"nginx"}],"restartPolicy":"Always"},"status":{}}');
    const deployment = inGoOrder({ spec: { template: { spec: { containers: [] }, metadata: { labels: { app: 'web' } } }, selector: { matchLabels: { app: 'web' } }, replicas: 2 }, metadata: { name: 'web' }, kind: 'Deployment', apiVersion: 'apps/v1' });
    expect(JSON.stringify(deployment)).to.equal('{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[]}}}}');
    const status = inGoOrder({ code: 404, details: { kind: 'pods', name: 'x', causes: [{ field: 'f', message: 'm', reason: 'r' }] }, reason: 'NotFound', message: 'gone', status: 'Failure', metadata: {}, apiVersion: 'v1', kind: 'Status' });
    expect(JSON.stringify(status)).to.equal('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"gone","reason":"NotFound","details":{"name":"x","kind":"pods","causes":[{"reason":"r","message":"m","field":"f"}]},"code":404}');
  });

  it('sorts the keys of Go maps: a ConfigMap\'s data, labels and annotations', () => {
    const configMap = inGoOrder({ data: { zeta: '1', alpha: '2', Mid: '3', 'a.b': '4' }, metadata: { annotations: { y: '', x: '' }, name: 'c' }, apiVersion: 'v1', kind: 'ConfigMap' });
    expect(Object.keys(configMap)).to.deep.equal(['kind', 'apiVersion', 'metadata', 'data']);
    expect(Object.keys(configMap.data as Obj)).to.deep.equal(['Mid', 'a.b', 'alpha', 'zeta']);
    expect(Object.keys((configMap.metadata as Obj).annotations)).to.deep.equal(['x', 'y']);
  });

  it('writes a custom resource, and a list of them, with every key sorted, metadata included', () => {
    const widget = inGoOrder({ spec: { size: 3, color: { shade: 'dark', base: 'red' } }, metadata: { uid: 'u', name: 'w', labels: { b: '', a: '' } }, kind: 'Widget', apiVersion: 'example.com/v1' });
    expect(JSON.stringify(widget)).to.equal('{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"labels":{"a":"","b":""},"name":"w","uid":"u"},"spec":{"color":{"base":"red","shade":"dark"},"size":3}}');
    const list = inGoOrder({ kind: 'WidgetList', apiVersion: 'example.com/v1', metadata: { resourceVersion: '5', continue: 'c' }, items: [] });
    expect(JSON.stringify(list)).to.equal('{"apiVersion":"example.com/v1","items":[],"kind":"WidgetList","metadata":{"continue":"c","resourceVersion":"5"}}');
  });

  it('keeps raw JSON as it came (a CRD schema\'s default) and orders the schema around it, with its properties sorted', () => {
    const crd = inGoOrder({
      status: {}, kind: 'CustomResourceDefinition', apiVersion: 'apiextensions.k8s.io/v1', metadata: { name: 'widgets.example.com' },
      spec: { versions: [{ schema: { openAPIV3Schema: { type: 'object', properties: { spec: { default: { z: 1, a: 2 }, type: 'object' }, apiVersion: { type: 'string' } }, items: { type: 'string', description: 'd' } } }, storage: true, served: true, name: 'v1' }], scope: 'Namespaced', names: { kind: 'Widget', plural: 'widgets' }, group: 'example.com' },
    });
    expect(JSON.stringify(crd)).to.equal('{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"plural":"widgets","kind":"Widget"},"scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","items":{"description":"d","type":"string"},"properties":{"apiVersion":{"type":"string"},"spec":{"type":"object","default":{"z":1,"a":2}}}}}}]},"status":{}}');
  });

  it('leaves objects that name no kind as they are, and keeps fields a type does not have after its own', () => {
    const version = { minor: '25', major: '1' };
    expect(inGoOrder(version)).to.equal(version);
    expect(Object.keys(inGoOrder({ extra: 1, metadata: {}, apiVersion: 'v1', kind: 'ConfigMap' }))).to.deep.equal(['kind', 'apiVersion', 'metadata', 'extra']);
  });

  it('orders the tables and metadata-only objects the server makes itself', () => {
    const table = inGoOrder({ rows: [{ object: { b: 1, a: 2 }, cells: ['x'] }], columnDefinitions: [{ type: 'string', name: 'Name', priority: 0, format: 'name', description: 'd' }], metadata: { resourceVersion: '1' }, apiVersion: 'meta.k8s.io/v1', kind: 'Table' });
    expect(JSON.stringify(table)).to.equal('{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"1"},"columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"d","priority":0}],"rows":[{"cells":["x"],"object":{"b":1,"a":2}}]}');
    expect(Object.keys(inGoOrder({ metadata: {}, apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata' }))).to.deep.equal(['kind', 'apiVersion', 'metadata']);
  });

  it('compares strings as Go does (by UTF-8 bytes), not by UTF-16 code units', () => {
    expect(['b', 'B', 'a', '_', '1'].sort(compareGoStrings)).to.deep.equal(['1', 'B', '_', 'a', 'b']);
    // U+1F600 (a surrogate pair in UTF-16) is above U+FF01 in UTF-8, though its first code unit is below.
    expect(compareGoStrings('\u{1F600}', '\uFF01')).to.be.greaterThan(0);
    expect(withSortedKeys({ '\u{1F600}': 1, '\uFF01': 2 })).to.deep.equal({ '\uFF01': 2, '\u{1F600}': 1 });
    expect(Object.keys(withSortedKeys({ '\u{1F600}': 1, '\uFF01': 2 }) as Obj)).to.deep.equal(['\uFF01', '\u{1F600}']);
  });

  it('knows the order of every kind and list kind v1.25 serves', () => {
    const catalogue = Catalogue.load();
    const missing: string[] = [];
    for (const { group, version } of catalogue.groupVersions()) {
      const apiVersion = group === '' ? version : `${group}/${version}`;
      for (const resource of catalogue.resources(group, version)) {
        if (!isBuiltInKind(apiVersion, resource.kind)) missing.push(`${apiVersion} ${resource.kind}`);
        if (!resource.createOnly && !isBuiltInKind(apiVersion, resource.listKind)) missing.push(`${apiVersion} ${resource.listKind}`);
      }
    }
    expect(missing).to.deep.equal([]);
  });

  it('is generated data: the committed file is what the generator makes from the fixtures', () => {
    expect(readFileSync(FIELD_ORDER_DATA_PATH, 'utf8')).to.equal(fieldOrderText(buildFieldOrderData()));
  });
});
