import { expect } from 'chai';
import {
  annotationsOf, ensureMetadata, finalizersOf, labelsOf, metadataOf, nameOf, namespaceOf, resourceVersionOf, uidOf, type JsonObject,
} from '../../../../../src/apis/object';

const POD: JsonObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-0', namespace: 'default', uid: 'u-1', resourceVersion: '42',
    labels: { app: 'web' }, annotations: { note: 'x' }, finalizers: ['example.com/hold'],
  },
};

describe('apis/object: metadata readers', () => {
  it('metadataOf returns the attached metadata object', () => {
    expect(metadataOf(POD)).to.equal(POD.metadata);
  });

  it('metadataOf reads absent, null or non-object metadata as a detached empty object', () => {
    for (const object of [undefined, {}, { metadata: null }, { metadata: 'x' }, { metadata: [] }] as Array<JsonObject | undefined>) {
      const metadata = metadataOf(object);
      expect(metadata).to.deep.equal({});
      expect(object?.metadata).not.to.equal(metadata);
    }
  });

  it('ensureMetadata attaches a new metadata object when absent or malformed, and keeps an existing one', () => {
    const bare: JsonObject = { kind: 'Pod' };
    ensureMetadata(bare).name = 'made';
    expect(bare).to.deep.equal({ kind: 'Pod', metadata: { name: 'made' } });
    const malformed: JsonObject = { metadata: 'x' };
    ensureMetadata(malformed).name = 'fixed';
    expect(malformed).to.deep.equal({ metadata: { name: 'fixed' } });
    expect(ensureMetadata(POD)).to.equal(POD.metadata);
  });

  it('the string fields read as stored, or "" when absent or not strings', () => {
    expect([nameOf(POD), namespaceOf(POD), uidOf(POD), resourceVersionOf(POD)]).to.deep.equal(['web-0', 'default', 'u-1', '42']);
    const odd: JsonObject = { metadata: { name: 7, namespace: null } };
    expect([nameOf(odd), namespaceOf(odd), uidOf(odd), resourceVersionOf(odd), nameOf(undefined)]).to.deep.equal(['', '', '', '', '']);
  });

  it('labels, annotations and finalizers read as copies holding only strings', () => {
    expect(labelsOf(POD)).to.deep.equal({ app: 'web' });
    expect(labelsOf(POD)).not.to.equal((POD.metadata as JsonObject).labels);
    expect(annotationsOf(POD)).to.deep.equal({ note: 'x' });
    expect(finalizersOf(POD)).to.deep.equal(['example.com/hold']);
    const odd: JsonObject = { metadata: { labels: { a: 'b', n: 1 }, annotations: [], finalizers: ['x', 2] } };
    expect(labelsOf(odd)).to.deep.equal({ a: 'b' });
    expect(annotationsOf(odd)).to.deep.equal({});
    expect(finalizersOf(odd)).to.deep.equal(['x']);
    expect([labelsOf({}), annotationsOf(undefined), finalizersOf({})]).to.deep.equal([{}, {}, []]);
  });
});
