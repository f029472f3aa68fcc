import { expect } from 'chai';
import { SharedStrings } from '../../../../src/storage/shared-strings';
import { fedWatchCache } from '../../../support/watch-cache-feed';
import { BuiltInStorages } from '../../../../src/registry/built-in-storages';
import type { JsonObject } from '../../../../src/apis/object';

function pod(i: number): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, labels: { app: 'web' } },
    spec: {
      containers: [{ name: 'app', image: 'registry.example.com/app:1.2.3', imagePullPolicy: 'IfNotPresent', args: ['--port', '8080'] }],
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    },
  };
}

describe('SharedStrings', () => {
  it('holds one entry per distinct short value across objects, which encode to the same bytes as before', () => {
    const strings = new SharedStrings();
    const pods = Array.from({ length: 100 }, (_, i) => pod(i));
    const before = pods.map((p) => JSON.stringify(p));
    for (const p of pods) strings.adopt(p);
    // v1, Pod, web, app, the image, IfNotPresent, --port, 8080, the toleration's key, Exists,
    // NoExecute: 11 shared by all, and each Pod's own name.
    expect(strings.size).to.equal(11 + 100);
    expect(pods.map((p) => JSON.stringify(p))).to.deep.equal(before);
  });

  it('leaves long values out of the table and frozen subtrees untouched', () => {
    const strings = new SharedStrings();
    const frozen = Object.freeze({ 'f:spec': Object.freeze({ 'f:containers': Object.freeze({}) }), note: 'inside a frozen tree' });
    const object: JsonObject = { kind: 'ConfigMap', data: { big: 'x'.repeat(65), small: 'y'.repeat(64) }, metadata: { managedFields: [{ fieldsV1: frozen }] } };
    expect(() => strings.adopt(object)).not.to.throw();
    expect(strings.size).to.equal(2); // ConfigMap and the 64-character value
    expect(((object.metadata as JsonObject).managedFields as JsonObject[])[0].fieldsV1).to.equal(frozen);
  });

  it('starts a new table when it is full, so values seen once cannot grow it without bound', () => {
    const strings = new SharedStrings(50);
    for (let i = 0; i < 1000; i++) strings.adopt({ metadata: { name: `object-${i}`, uid: `uid-${i}` } });
    expect(strings.size).to.be.at.most(50);
    expect(strings.size).to.be.greaterThan(0);
  });
});

describe('WatchCache with shared strings', () => {
  it('shares the strings of the objects it fills and applies, but not those under the prefixes of storages holding secrets', async () => {
    const { cache, deliver } = await fedWatchCache([{ key: '/registry/pods/default/pod-1', object: pod(1), modRevision: 5 }], { unsharedStringPrefixes: BuiltInStorages.prefixesHoldingSecrets() });
    expect(cache.sharedStringCount).to.equal(12); // the 11 values every such Pod has, and pod-1
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token' }, data: { token: 'c2VjcmV0LXZhbHVl' } };
    deliver([{ type: 'ADDED', key: '/registry/secrets/default/token', object: secret, revision: 11, size: 100 }], 11);
    expect(cache.sharedStringCount).to.equal(12);
    deliver([{ type: 'ADDED', key: '/registry/pods/default/pod-2', object: pod(2), revision: 12, size: 100 }], 12);
    expect(cache.sharedStringCount).to.equal(13);
    expect(JSON.stringify(cache.get('/registry/pods/default/pod-2'))).to.equal(JSON.stringify(pod(2)));
    cache.stop();
  });
});
