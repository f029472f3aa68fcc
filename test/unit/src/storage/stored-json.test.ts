import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { isBuiltInKind } from '../../../../src/apis/field-order';
import { decodeStoredJson, servedJson, storedForm, storedPrefix, withResourceVersion } from '../../../../src/storage/stored-json';
import { packagePath } from '../../../../src/util/package-root';

type Obj = Record<string, any>;

const fixtureDir = packagePath('test', 'fixtures', 'k8s-testdata-v1.25');

/** What ObjectStore writes for an object. */
function stored(object: Obj): Buffer {
  return storedForm(object).bytes;
}

/** The slices servedJson gives, as one string. */
function joined(slices: Buffer[] | undefined): string | undefined {
  return slices === undefined ? undefined : Buffer.concat(slices).toString('utf8');
}

/** `value` with every object's keys in reverse order. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  const out: Obj = {};
  for (const key of Object.keys(value).reverse()) out[key] = reversed((value as Obj)[key]);
  return out;
}

describe('storage: stored JSON in kube\'s order, and served JSON spliced from it', () => {
  it('serves every fully populated v1.25 object, sent in reverse order, in Go\'s order with its resourceVersion after uid, spliced or decoded alike', () => {
    const files = readdirSync(fixtureDir).filter((f) => f.endsWith('.json'));
    let spliced = 0;
    for (const file of files) {
      const object = JSON.parse(readFileSync(`${fixtureDir}/${file}`, 'utf8')) as Obj;
      if (!isBuiltInKind(object.apiVersion, object.kind) || typeof object.metadata !== 'object') continue;
      const sent = reversed(object) as Obj;
      if (object.kind === 'ControllerRevision') sent.data = object.data; // raw JSON: kept as given
      const bytes = stored(sent);
      // What Go writes: the fixture itself, with the store's resourceVersion.
      const expected = JSON.stringify({ ...object, metadata: { ...object.metadata, resourceVersion: '4242' } });
      expect(JSON.stringify(decodeStoredJson(bytes, 4242)), file).to.equal(expected);
      expect(joined(servedJson(bytes, storedPrefix(object.apiVersion, object.kind), '4242')), file).to.equal(expected);
      spliced++;
    }
    expect(spliced).to.be.greaterThan(60);
  });

  it('stores an object without its resourceVersion, in Go\'s order, ended by a newline', () => {
    const { bytes, ordered } = storedForm({ data: { b: '2', a: '1' }, metadata: { resourceVersion: '9', name: 'c' }, apiVersion: 'v1', kind: 'ConfigMap' });
    expect(bytes.toString()).to.equal('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c"},"data":{"a":"1","b":"2"}}\n');
    expect(JSON.stringify(ordered)).to.equal(bytes.toString().trimEnd());
    const widget = storedForm({ spec: { b: 1, a: 2 }, metadata: { resourceVersion: '9', uid: 'u', name: 'w' }, kind: 'Widget', apiVersion: 'example.com/v1' });
    expect(widget.bytes.toString()).to.equal('{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","uid":"u"},"spec":{"a":2,"b":1}}\n');
  });

  it('stores strings escaped as Go\'s encoder writes them, so that reads serve them so', () => {
    const { bytes } = storedForm({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c', annotations: { 'a&b': '<x>' } }, data: { k: 'one\u2028two\u2029' } });
    expect(bytes.toString()).to.equal('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","annotations":{"a\\u0026b":"\\u003cx\\u003e"}},"data":{"k":"one\\u2028two\\u2029"}}\n');
    expect(decodeStoredJson(bytes, 5)).to.deep.include({ data: { k: 'one\u2028two\u2029' } });
  });

  it('splices the resourceVersion after the members Go writes before it, whichever of them are there', () => {
    const prefix = storedPrefix('v1', 'ConfigMap');
    const cases: Array<[string, string]> = [
      ['{}', '{"resourceVersion":"7"}'],
      ['{"name":"x"}', '{"name":"x","resourceVersion":"7"}'],
      ['{"name":"x","namespace":"d","uid":"u","creationTimestamp":null}', '{"name":"x","namespace":"d","uid":"u","resourceVersion":"7","creationTimestamp":null}'],
      ['{"name":"x","labels":{"uid":"u"}}', '{"name":"x","resourceVersion":"7","labels":{"uid":"u"}}'],
      ['{"generation":2,"name":"x"}', '{"resourceVersion":"7","generation":2,"name":"x"}'],
      ['{"name":"a\\"b}","uid":"u\\\\"}', '{"name":"a\\"b}","uid":"u\\\\","resourceVersion":"7"}'],
    ];
    for (const [metadata, served] of cases) {
      const bytes = Buffer.from(`{"kind":"ConfigMap","apiVersion":"v1","metadata":${metadata},"data":{"a":"b"}}\n`);
      expect(joined(servedJson(bytes, prefix, '7')), metadata).to.equal(`{"kind":"ConfigMap","apiVersion":"v1","metadata":${served},"data":{"a":"b"}}`);
      expect(JSON.stringify(decodeStoredJson(bytes, 7)), metadata).to.equal(joined(servedJson(bytes, prefix, '7')));
    }
  });

  it('splices an object that names a resourceVersion outside its metadata (an Event\'s involvedObject), or in an escaped string', () => {
    const prefix = storedPrefix('v1', 'Event');
    const event = stored({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', annotations: { note: '{"resourceVersion":"1"}' } }, involvedObject: { kind: 'Pod', name: 'p', resourceVersion: '41' }, reason: 'Started' });
    const got = joined(servedJson(event, prefix, '42'));
    expect(got).to.equal(JSON.stringify(decodeStoredJson(event, 42)));
    const parsed = JSON.parse(got as string) as Obj;
    expect(parsed.metadata.resourceVersion).to.equal('42');
    expect(parsed.involvedObject.resourceVersion).to.equal('41');
  });

  it('hands out the stored bytes as views, not copies, so that a page of a list copies each item once', () => {
    const bytes = stored({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', uid: 'u' }, data: { big: 'y'.repeat(8192) } });
    const slices = servedJson(bytes, storedPrefix('v1', 'ConfigMap'), '5');
    expect(slices).to.have.length(3);
    const [head, , tail] = slices as Buffer[];
    expect(head.buffer).to.equal(bytes.buffer);
    expect(tail.buffer).to.equal(bytes.buffer);
    expect(head.byteOffset).to.equal(bytes.byteOffset);
    // Up to, not including, the stored newline.
    expect(tail.byteOffset + tail.length).to.equal(bytes.byteOffset + bytes.length - 1);
  });

  it('declines bytes not shaped as this server stores them, so that the caller decodes them', () => {
    const prefix = storedPrefix('v1', 'ConfigMap');
    const cases = [
      '{"kind":"Secret","apiVersion":"v1","metadata":{}}\n', // another kind
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}', // an earlier build's order (no newline)
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}\n', // another order
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"}}', // no newline
      '{"kind":"ConfigMap","apiVersion":"v1","data":{},"metadata":{}}\n', // metadata not next
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"3"}}\n', // already has one
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","uid":"u","resourceVersion":"3"}}\n', // in its place
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":1}}\n', // not a string where Go writes one
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cut},"data":{"resourceVersion":"1"}}\n', // malformed where the splice looks
      '{"kind":"ConfigMap","apiVersion":"v2","metadata":{}}\n', // another version: converted on read
    ];
    for (const text of cases) expect(servedJson(Buffer.from(text), prefix, '9'), text).to.equal(undefined);
  });

  it('reads objects an earlier build stored (apiVersion first, the client\'s order, no newline) in Go\'s order', () => {
    const builtIn = Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"labels":{"b":"","a":""},"uid":"u","name":"old"},"data":{"z":"1","a":"2"}}');
    expect(JSON.stringify(decodeStoredJson(builtIn, 11))).to.equal('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"old","uid":"u","resourceVersion":"11","labels":{"a":"","b":""}},"data":{"a":"2","z":"1"}}');
    // The layout of commit 9159d3e put nothing else first: its objects read the same way.
    const custom = Buffer.from('{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","uid":"u","managedFields":[{"manager":"m"}]},"spec":{"b":1,"a":2}}');
    expect(JSON.stringify(decodeStoredJson(custom, 12))).to.equal('{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"managedFields":[{"manager":"m"}],"name":"w","resourceVersion":"12","uid":"u"},"spec":{"a":2,"b":1}}');
  });

  it('puts the resourceVersion in its sorted place in a custom resource\'s metadata', () => {
    const widget = withResourceVersion({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { annotations: {}, name: 'w', ownerReferences: [], selfLink: '', uid: 'u' } }, '3');
    expect(Object.keys(widget.metadata as Obj)).to.deep.equal(['annotations', 'name', 'ownerReferences', 'resourceVersion', 'selfLink', 'uid']);
    const pod = withResourceVersion({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p', resourceVersion: '1', creationTimestamp: null } }, '3');
    expect(pod.metadata).to.deep.equal({ name: 'p', resourceVersion: '3', creationTimestamp: null });
    expect(Object.keys(pod.metadata as Obj)).to.deep.equal(['name', 'resourceVersion', 'creationTimestamp']);
  });
});
