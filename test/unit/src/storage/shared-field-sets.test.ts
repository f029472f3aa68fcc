import { expect } from 'chai';
import { SharedFieldSets } from '../../../../src/storage/shared-field-sets';
import { fedWatchCache } from '../../../support/watch-cache-feed';
import type { JsonObject } from '../../../../src/apis/object';

/** A Pod with the managedFields a client writes: the same set of fields for every Pod of one template. */
function pod(name: string, revision: number, fieldsV1: JsonObject = { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {} } } } }): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      resourceVersion: String(revision),
      managedFields: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', time: `2026-11-27T08:00:${String(revision % 60).padStart(2, '0')}Z`, fieldsType: 'FieldsV1', fieldsV1 }],
    },
    spec: { containers: [{ name: 'app', image: `app:${name}` }] },
  };
}

function treeOf(object: JsonObject): unknown {
  return ((object.metadata as JsonObject).managedFields as JsonObject[])[0].fieldsV1;
}

describe('SharedFieldSets', () => {
  it('holds one copy of equal fieldsV1 trees, frozen, and objects encode to the same bytes as before', () => {
    const sets = new SharedFieldSets();
    const a = pod('a', 1);
    const b = pod('b', 2);
    const before = [JSON.stringify(a), JSON.stringify(b)];
    sets.adopt(a);
    sets.adopt(b);
    expect(treeOf(b)).to.equal(treeOf(a));
    expect(Object.isFrozen(treeOf(a))).to.equal(true);
    expect(Object.isFrozen((treeOf(a) as JsonObject)['f:metadata'])).to.equal(true);
    expect([JSON.stringify(a), JSON.stringify(b)]).to.deep.equal(before);
    expect(() => {
      ((treeOf(a) as JsonObject)['f:metadata'] as JsonObject)['f:annotations'] = {};
    }).to.throw(TypeError);
  });

  it('shares the equal parts of trees that differ in one key, as the Pods of one template do', () => {
    const sets = new SharedFieldSets();
    const volume = (name: string): JsonObject => ({
      'f:spec': {
        'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {} } },
        'f:volumes': { '.': {}, [`k:{"name":"${name}"}`]: { '.': {}, 'f:name': {}, 'f:projected': { '.': {}, 'f:sources': {} } } },
      },
    });
    const a = pod('a', 1, volume('kube-api-access-x7k2p'));
    const b = pod('b', 2, volume('kube-api-access-9g8pz'));
    const textOfB = JSON.stringify(b);
    sets.adopt(a);
    sets.adopt(b);
    const specOf = (o: JsonObject) => (treeOf(o) as JsonObject)['f:spec'] as JsonObject;
    expect(treeOf(b)).to.not.equal(treeOf(a));
    expect(specOf(b)['f:containers']).to.equal(specOf(a)['f:containers']);
    const volumesOf = (o: JsonObject) => specOf(o)['f:volumes'] as JsonObject;
    expect(volumesOf(b)['k:{"name":"kube-api-access-9g8pz"}']).to.equal(volumesOf(a)['k:{"name":"kube-api-access-x7k2p"}']);
    expect(JSON.stringify(b)).to.equal(textOfB);
  });

  it('shares only subtrees whose JSON is the same, key order included', () => {
    const sets = new SharedFieldSets();
    const a = pod('a', 1, { 'f:metadata': { 'f:x': {} }, 'f:spec': { 'f:y': {} } });
    const b = pod('b', 2, { 'f:spec': { 'f:y': {} }, 'f:metadata': { 'f:x': {} } });
    sets.adopt(a);
    sets.adopt(b);
    expect(treeOf(b)).to.not.equal(treeOf(a));
    expect((treeOf(b) as JsonObject)['f:spec']).to.equal((treeOf(a) as JsonObject)['f:spec']);
    expect(JSON.stringify(treeOf(b))).to.equal('{"f:spec":{"f:y":{}},"f:metadata":{"f:x":{}}}');
  });

  it('adopting an object twice changes nothing', () => {
    const sets = new SharedFieldSets();
    const a = pod('a', 1);
    sets.adopt(a);
    const tree = treeOf(a);
    const size = sets.size;
    sets.adopt(a);
    expect(treeOf(a)).to.equal(tree);
    expect(sets.size).to.equal(size);
  });
});

describe('WatchCache with shared managedFields trees', () => {
  it('shares equal trees among the objects it holds, through the fill and the live events', async () => {
    const { cache, deliver } = await fedWatchCache([{ key: '/registry/pods/default/a', object: pod('a', 5), modRevision: 5 }]);
    const changed = { 'f:spec': { 'f:nodeName': {} } };
    deliver([
      { type: 'ADDED', key: '/registry/pods/default/b', object: pod('b', 11), revision: 11, size: 100 },
      { type: 'ADDED', key: '/registry/pods/default/c', object: pod('c', 12, changed), revision: 12, size: 100 },
    ], 12);
    const [a, b, c] = cache.list('/registry/pods/').items;
    expect(treeOf(b)).to.equal(treeOf(a));
    expect(treeOf(c)).to.not.equal(treeOf(a));
    expect(JSON.stringify(cache.get('/registry/pods/default/b'))).to.equal(JSON.stringify(pod('b', 11)));
    // The live event's object is the one the cache holds, sharing with the filled one.
    deliver([{ type: 'MODIFIED', key: '/registry/pods/default/c', object: pod('c', 13), revision: 13, size: 100 }], 13);
    expect(treeOf(cache.get('/registry/pods/default/c') as JsonObject)).to.equal(treeOf(a));
    cache.stop();
  });
});
