import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { decodeStoredJson, servedJson, storedPrefix } from '../../../../src/storage/stored-json';
import { packagePath } from '../../../../src/util/package-root';

const fixtureDir = packagePath('test', 'fixtures', 'k8s-testdata-v1.25');

/** What ObjectStore writes for an object: its JSON less metadata.resourceVersion. */
function stored(object: Record<string, unknown>): Buffer {
  const { resourceVersion: _dropped, ...metadata } = (object.metadata ?? {}) as Record<string, unknown>;
  return Buffer.from(JSON.stringify({ ...object, metadata }));
}

/** The slices servedJson gives, as one string. */
function joined(slices: Buffer[] | undefined): string | undefined {
  return slices === undefined ? undefined : Buffer.concat(slices).toString('utf8');
}

describe('storage: served JSON spliced from stored JSON', () => {
  it('gives the same bytes as decoding and encoding again, for one fully populated object of every v1.25 kind', () => {
    const files = readdirSync(fixtureDir).filter((f) => f.endsWith('.json'));
    expect(files.length).to.be.greaterThan(100);
    let spliced = 0;
    for (const file of files) {
      const object = JSON.parse(readFileSync(`${fixtureDir}/${file}`, 'utf8')) as Record<string, unknown>;
      if (typeof object.apiVersion !== 'string' || typeof object.kind !== 'string' || typeof object.metadata !== 'object') continue;
      // The stored field order: apiVersion, kind, metadata first, as the registry writes objects.
      const { apiVersion, kind, metadata, ...rest } = object;
      const bytes = stored({ apiVersion, kind, metadata, ...rest });
      const expected = JSON.stringify(decodeStoredJson(bytes, 4242));
      const got = servedJson(bytes, storedPrefix(apiVersion, kind), '4242');
      expect(joined(got), file).to.equal(expected);
      spliced++;
    }
    expect(spliced).to.be.greaterThan(100);
  });

  it('adds the resourceVersion to empty metadata, and keeps strings with braces, quotes and escapes whole', () => {
    const prefix = storedPrefix('v1', 'ConfigMap');
    const empty = Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{},"data":{"a":"b"}}');
    expect(joined(servedJson(empty, prefix, '7'))).to.equal('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"7"},"data":{"a":"b"}}');
    const tricky = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', annotations: { 'a}': '{"q\\"":[1,{}]}', b: '\\' }, labels: {}, finalizers: ['f]'] }, data: { '}': '{' } };
    const bytes = stored(tricky);
    expect(joined(servedJson(bytes, prefix, '8'))).to.equal(JSON.stringify(decodeStoredJson(bytes, 8)));
  });

  it('puts the resourceVersion first in metadata, so that finding metadata\'s end (past managedFields) is not needed', () => {
    const prefix = storedPrefix('v1', 'ConfigMap');
    const bytes = Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","managedFields":[{"manager":"m"}]},"data":{}}');
    expect(joined(servedJson(bytes, prefix, '12'))).to.equal('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"12","name":"x","managedFields":[{"manager":"m"}]},"data":{}}');
    // Spacing inside metadata is passed on as it is, as it is elsewhere in the object.
    const spaced = Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name": "spaced"}}');
    expect(joined(servedJson(spaced, prefix, '13'))).to.equal('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"13","name": "spaced"}}');
  });

  it('splices an object that names a resourceVersion outside its metadata (an Event\'s involvedObject), or in an escaped string', () => {
    const prefix = storedPrefix('v1', 'Event');
    const event = stored({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', annotations: { note: '{"resourceVersion":"1"}' } }, involvedObject: { kind: 'Pod', name: 'p', resourceVersion: '41' }, reason: 'Started' });
    const got = joined(servedJson(event, prefix, '42'));
    expect(got).to.equal(JSON.stringify(decodeStoredJson(event, 42)));
    const parsed = JSON.parse(got as string) as { metadata: { resourceVersion: string }; involvedObject: { resourceVersion: string } };
    expect(parsed.metadata.resourceVersion).to.equal('42');
    expect(parsed.involvedObject.resourceVersion).to.equal('41');
  });

  it('hands out the stored bytes as views, not copies, so that a page of a list copies each item once', () => {
    const bytes = stored({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { big: 'y'.repeat(8192) } });
    const slices = servedJson(bytes, storedPrefix('v1', 'ConfigMap'), '5');
    expect(slices).to.have.length(3);
    const [head, , tail] = slices as Buffer[];
    expect(head.buffer).to.equal(bytes.buffer);
    expect(tail.buffer).to.equal(bytes.buffer);
    expect(head.byteOffset).to.equal(bytes.byteOffset);
    expect(tail.byteOffset + tail.length).to.equal(bytes.byteOffset + bytes.length);
  });

  it('declines bytes not shaped as this server stores them, so that the caller decodes them', () => {
    const prefix = storedPrefix('v1', 'ConfigMap');
    const cases = [
      '{"apiVersion":"v1","kind":"Secret","metadata":{}}', // another kind
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{}}', // another order
      '{"apiVersion":"v1","kind":"ConfigMap","data":{},"metadata":{}}', // metadata not next
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"3"}}', // already has one
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","resourceVersion":"3"}}', // one after other fields
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cut},"data":{"resourceVersion":"1"}}', // malformed, where the walk must look
      '{"apiVersion":"v2","kind":"ConfigMap","metadata":{}}', // another version: converted on read
    ];
    for (const text of cases) expect(servedJson(Buffer.from(text), prefix, '9'), text).to.equal(undefined);
  });
});
