/**
 * The resource API of one `carina server` over HTTPS, as a client sees it: CRUD with the right
 * status codes and Status bodies, resourceVersion rules, chunked lists, selectors, watch and
 * deletion. Each case would fail if the behaviour it names were missing.
 */
import { expect } from 'chai';
import { CarinaApiProcess } from '../../support/carina-api-process';
import { until } from '../../support/until';

type Obj = Record<string, any>;

const CM = '/api/v1/namespaces/default/configmaps';

function configMap(name: string, data: Record<string, string> = { k: 'v' }, labels?: Record<string, string>): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data });
}

describe('resource API over HTTPS (one carina server)', function () {
  this.timeout(60_000);
  let server: CarinaApiProcess;

  before(async () => {
    server = await CarinaApiProcess.start();
  });

  after(async () => {
    await server?.stop();
  });

  /** A new namespace, once its kube-root-ca.crt is there (every namespace gets one, as in v1.25), so lists see it from the start. */
  async function createNamespace(name: string): Promise<void> {
    await server.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }) });
    await until(`kube-root-ca.crt in ${name}`, async () => (await server.request('GET', `/api/v1/namespaces/${name}/configmaps/kube-root-ca.crt`)).status === 200);
  }

  it('creates, reads, replaces and deletes a configmap with kube-apiserver\'s codes', async () => {
    const created = await server.request('POST', CM, { body: configMap('crud') });
    expect(created.status).to.equal(201);
    const object = created.json<Obj>();
    expect(object.metadata.uid).to.match(/^[0-9a-f-]{36}$/);
    expect(object.metadata.creationTimestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(object.metadata.namespace).to.equal('default');
    const got = await server.request('GET', `${CM}/crud`);
    expect(got.status).to.equal(200);
    expect(got.json<Obj>().metadata.resourceVersion).to.equal(object.metadata.resourceVersion);
    const replaced = await server.request('PUT', `${CM}/crud`, { body: JSON.stringify({ ...object, data: { k: 'v2' } }) });
    expect(replaced.status).to.equal(200);
    expect(replaced.json<Obj>().data.k).to.equal('v2');
    expect(Number(replaced.json<Obj>().metadata.resourceVersion)).to.be.greaterThan(Number(object.metadata.resourceVersion));
    const deleted = await server.request('DELETE', `${CM}/crud`);
    expect(deleted.status).to.equal(200);
    expect(deleted.json<Obj>()).to.deep.include({ kind: 'Status', status: 'Success' });
    expect(deleted.json<Obj>().details).to.deep.equal({ name: 'crud', kind: 'configmaps', uid: object.metadata.uid });
    expect((await server.request('GET', `${CM}/crud`)).status).to.equal(404);
  });

  it('answers NotFound, AlreadyExists and Conflict with their Status bodies', async () => {
    const missing = await server.request('GET', `${CM}/nope`);
    expect(missing.status).to.equal(404);
    expect(missing.json()).to.deep.equal({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'configmaps "nope" not found', reason: 'NotFound', details: { name: 'nope', kind: 'configmaps' }, code: 404 });
    await server.request('POST', CM, { body: configMap('dup') });
    const again = await server.request('POST', CM, { body: configMap('dup') });
    expect(again.status).to.equal(409);
    expect(again.json<Obj>()).to.deep.include({ reason: 'AlreadyExists', message: 'configmaps "dup" already exists' });
    const current = (await server.request('GET', `${CM}/dup`)).json<Obj>();
    await server.request('PUT', `${CM}/dup`, { body: JSON.stringify({ ...current, data: { k: 'first' } }) });
    const stale = await server.request('PUT', `${CM}/dup`, { body: JSON.stringify({ ...current, data: { k: 'second' } }) });
    expect(stale.status).to.equal(409);
    expect(stale.json<Obj>().reason).to.equal('Conflict');
    expect(stale.json<Obj>().message).to.equal('Operation cannot be fulfilled on configmaps "dup": the object has been modified; please apply your changes to the latest version and try again');
    expect((await server.request('GET', `${CM}/dup`)).json<Obj>().data.k).to.equal('first');
  });

  it('rejects bad input with 400, 413 and 415 and stores nothing', async () => {
    const before = (await server.request('GET', CM)).json<Obj>().items.length;
    const malformed = await server.request('POST', CM, { body: '{"apiVersion": "v1", "kind": ' });
    expect(malformed.status).to.equal(400);
    expect(malformed.json<Obj>().reason).to.equal('BadRequest');
    const wrongKind = await server.request('POST', CM, { body: JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }) });
    expect(wrongKind.status).to.equal(400);
    const huge = await server.request('POST', CM, { body: configMap('huge', { k: 'x'.repeat(3 * 1024 * 1024 + 10) }) });
    expect(huge.status).to.equal(413);
    expect(huge.json<Obj>()).to.deep.include({ reason: 'RequestEntityTooLarge', message: 'Request entity too large: limit is 3145728' });
    const unsupported = await server.request('POST', CM, { body: 'x', headers: { 'Content-Type': 'text/plain' } });
    expect(unsupported.status).to.equal(415);
    expect(unsupported.json<Obj>().reason).to.equal('UnsupportedMediaType');
    const slash = await server.request('POST', CM, { body: configMap('a/b') });
    expect(slash.status).to.equal(422);
    const badName = await server.request('POST', CM, { body: configMap('Bad_Name') });
    expect(badName.status).to.equal(422);
    expect(badName.json<Obj>()).to.deep.include({ reason: 'Invalid', code: 422 });
    expect(badName.json<Obj>().details).to.deep.include({ name: 'Bad_Name', kind: 'ConfigMap' });
    expect(badName.json<Obj>().details.causes[0]).to.deep.include({ reason: 'FieldValueInvalid', field: 'metadata.name' });
    expect(badName.json<Obj>().message).to.match(/^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
    expect((await server.request('GET', CM)).json<Obj>().items.length).to.equal(before);
  });

  it('rejects wrong field types with 400 and stores nothing; prunes unknown fields with a Warning', async () => {
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'typed' }, spec: { replicas: 'three', selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } };
    const wrong = await server.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: JSON.stringify(deployment) });
    expect(wrong.status).to.equal(400);
    expect(wrong.json<Obj>().message).to.equal('Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32');
    expect((await server.request('GET', '/apis/apps/v1/namespaces/default/deployments/typed')).status).to.equal(404);
    const number = await server.request('POST', CM, { body: JSON.stringify({ metadata: { name: 'typed-cm' }, data: { a: 5 } }) });
    expect(number.status).to.equal(400);
    expect((await server.request('GET', `${CM}/typed-cm`)).status).to.equal(404);
    const unknown = await server.request('POST', CM, { body: JSON.stringify({ metadata: { name: 'pruned' }, data: { a: '1' }, colour: 'blue' }) });
    expect(unknown.status).to.equal(201);
    expect(unknown.headers.warning).to.equal('299 - "unknown field \\"colour\\""');
    expect(unknown.json<Obj>().colour).to.equal(undefined);
    const strict = await server.request('POST', `${CM}?fieldValidation=Strict`, { body: JSON.stringify({ metadata: { name: 'strict' }, colour: 'blue' }) });
    expect(strict.status).to.equal(400);
    expect(strict.json<Obj>().message).to.contain('strict decoding error: unknown field "colour"');
    // A patched object that does not decode is v1.25's 422 (patch.go wraps the decoder's error in NewInvalid).
    const patchedWrong = await server.request('PATCH', `${CM}/pruned`, { body: JSON.stringify({ data: { a: 7 } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(patchedWrong.status).to.equal(422);
    expect((await server.request('GET', `${CM}/pruned`)).json<Obj>().data).to.deep.equal({ a: '1' });
  });

  it('reports duplicate keys of a YAML body per fieldValidation', async () => {
    const body = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-dup\ndata:\n  a: "1"\n  a: "2"\n';
    const headers = { 'Content-Type': 'application/yaml' };
    const strict = await server.request('POST', `${CM}?fieldValidation=Strict`, { body, headers });
    expect(strict.status).to.equal(400);
    expect(strict.json<Obj>().message).to.equal('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key "a" already set in map');
    const warned = await server.request('POST', CM, { body, headers });
    expect(warned.status).to.equal(201);
    expect(String(warned.headers.warning)).to.contain('already set in map');
    expect(warned.json<Obj>().data).to.deep.equal({ a: '2' });
  });

  it('answers 406 for an Accept it cannot serve, and 404 for unknown resources', async () => {
    const notAcceptable = await server.request('GET', CM, { headers: { Accept: 'text/html' } });
    expect(notAcceptable.status).to.equal(406);
    expect(notAcceptable.json<Obj>().reason).to.equal('NotAcceptable');
    expect((await server.request('GET', '/api/v1/namespaces/default/widgets')).status).to.equal(404);
    expect((await server.request('GET', '/apis/nothing.example.com/v1')).status).to.equal(404);
  });

  it('requires the namespace to exist for namespaced creates', async () => {
    const res = await server.request('POST', '/api/v1/namespaces/absent/configmaps', { body: configMap('x') });
    expect(res.status).to.equal(404);
    expect(res.json<Obj>().message).to.equal('namespaces "absent" not found');
  });

  it('serves generateName, YAML bodies and ?pretty', async () => {
    const generated = await server.request('POST', CM, { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } }) });
    expect(generated.status).to.equal(201);
    expect(generated.json<Obj>().metadata.name).to.match(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    const yaml = await server.request('POST', CM, { body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  a: b\n', headers: { 'Content-Type': 'application/yaml', Accept: 'application/yaml' } });
    expect(yaml.status).to.equal(201);
    expect(yaml.headers['content-type']).to.equal('application/yaml');
    expect(yaml.text).to.contain('name: from-yaml');
    const pretty = await server.request('GET', `${CM}/from-yaml?pretty=true`);
    expect(pretty.text).to.contain('\n  "kind": "ConfigMap"');
  });

  it('lists in chunks at one resourceVersion, with remainingItemCount and continue', async () => {
    await createNamespace('chunks');
    for (let i = 0; i < 7; i++) {
      const res = await server.request('POST', '/api/v1/namespaces/chunks/configmaps', { body: configMap(`c${i}`) });
      expect(res.status).to.equal(201);
    }
    const first = (await server.request('GET', '/api/v1/namespaces/chunks/configmaps?limit=3')).json<Obj>();
    expect(first.items.map((i: Obj) => i.metadata.name)).to.deep.equal(['c0', 'c1', 'c2']);
    expect(first.metadata.remainingItemCount).to.equal(5);
    // A write between chunks is not seen by later chunks: one snapshot.
    await server.request('POST', '/api/v1/namespaces/chunks/configmaps', { body: configMap('c9') });
    const second = (await server.request('GET', `/api/v1/namespaces/chunks/configmaps?limit=3&continue=${first.metadata.continue}`)).json<Obj>();
    expect(second.metadata.resourceVersion).to.equal(first.metadata.resourceVersion);
    expect(second.items.map((i: Obj) => i.metadata.name)).to.deep.equal(['c3', 'c4', 'c5']);
    const third = (await server.request('GET', `/api/v1/namespaces/chunks/configmaps?limit=3&continue=${second.metadata.continue}`)).json<Obj>();
    expect(third.items.map((i: Obj) => i.metadata.name)).to.deep.equal(['c6', 'kube-root-ca.crt']);
    expect(third.metadata.continue).to.equal(undefined);
    expect(third.metadata.remainingItemCount).to.equal(undefined);
    const bad = await server.request('GET', `/api/v1/namespaces/chunks/configmaps?limit=3&resourceVersion=5&continue=${first.metadata.continue}`);
    expect(bad.status).to.equal(400);
  });

  it('streams an unpaged list of more than one page as one consistent JSON document', async () => {
    await createNamespace('many');
    const names: string[] = ['kube-root-ca.crt'];
    for (let batch = 0; batch < 12; batch++) {
      await Promise.all(Array.from({ length: 100 }, (_, i) => {
        const name = `m-${String(batch * 100 + i).padStart(4, '0')}`;
        names.push(name);
        return server.request('POST', '/api/v1/namespaces/many/configmaps', { body: configMap(name) });
      }));
    }
    // resourceVersion=0 ignores limit, as kube's cacher does: the whole collection, no continue.
    for (const rv of ['', '0', '0&limit=5']) {
      const res = await server.request('GET', `/api/v1/namespaces/many/configmaps${rv === '' ? '' : `?resourceVersion=${rv}`}`);
      expect(res.status).to.equal(200);
      const list = res.json<Obj>();
      expect(list).to.deep.include({ kind: 'ConfigMapList', apiVersion: 'v1' });
      expect(list.metadata.resourceVersion).to.match(/^\d+$/);
      expect(list.metadata.continue).to.equal(undefined);
      expect(list.items.map((i: Obj) => i.metadata.name)).to.deep.equal([...names].sort());
      expect(list.items.every((i: Obj) => i.kind === 'ConfigMap' && i.apiVersion === 'v1')).to.equal(true);
    }
    // Each item is the object a GET answers, byte for byte (the store path splices the
    // resourceVersion into the stored JSON instead of decoding and encoding), unpaged or paged.
    const unpaged = await server.request('GET', '/api/v1/namespaces/many/configmaps');
    const items = unpaged.json<Obj>().items as Obj[];
    const firstPage = (await server.request('GET', '/api/v1/namespaces/many/configmaps?limit=600')).json<Obj>();
    expect(firstPage.metadata.remainingItemCount).to.equal(601);
    const secondPage = (await server.request('GET', `/api/v1/namespaces/many/configmaps?limit=600&continue=${encodeURIComponent(firstPage.metadata.continue)}`)).json<Obj>();
    expect(JSON.stringify([...firstPage.items, ...secondPage.items])).to.equal(JSON.stringify(items.slice(0, 1200)));
    for (const name of ['kube-root-ca.crt', 'm-0000', 'm-0500', 'm-1199']) {
      const item = items.find((i) => i.metadata.name === name);
      const single = await server.request('GET', `/api/v1/namespaces/many/configmaps/${name}`);
      expect(JSON.stringify(item), name).to.equal(single.body.toString('utf8').trimEnd());
    }
  });

  it('reads a list exactly at an older resourceVersion, and 504s for one from the future', async () => {
    const rv = (await server.request('POST', CM, { body: configMap('exact-a') })).json<Obj>().metadata.resourceVersion;
    await server.request('POST', CM, { body: configMap('exact-b') });
    const exact = (await server.request('GET', `${CM}?resourceVersion=${rv}&resourceVersionMatch=Exact`)).json<Obj>();
    expect(exact.metadata.resourceVersion).to.equal(rv);
    const names = exact.items.map((i: Obj) => i.metadata.name);
    expect(names).to.include('exact-a');
    expect(names).to.not.include('exact-b');
    const future = await server.request('GET', `${CM}/exact-a?resourceVersion=999999999`);
    expect(future.status).to.equal(504);
    expect(future.headers['retry-after']).to.equal('1');
    expect(future.json<Obj>().message).to.contain('Too large resource version');
  });

  it('filters lists by label and field selectors, and rejects unknown field labels', async () => {
    await server.request('POST', CM, { body: configMap('sel-a', {}, { tier: 'web' }) });
    await server.request('POST', CM, { body: configMap('sel-b', {}, { tier: 'db' }) });
    const web = (await server.request('GET', `${CM}?labelSelector=tier%3Dweb`)).json<Obj>();
    expect(web.items.map((i: Obj) => i.metadata.name)).to.deep.equal(['sel-a']);
    const notWeb = (await server.request('GET', `${CM}?labelSelector=tier,tier!%3Dweb`)).json<Obj>();
    expect(notWeb.items.map((i: Obj) => i.metadata.name)).to.deep.equal(['sel-b']);
    const byName = (await server.request('GET', `${CM}?fieldSelector=metadata.name%3Dsel-b`)).json<Obj>();
    expect(byName.items.map((i: Obj) => i.metadata.name)).to.deep.equal(['sel-b']);
    const unknown = await server.request('GET', `${CM}?fieldSelector=spec.color%3Dred`);
    expect(unknown.status).to.equal(400);
    // ConfigMaps have no field-label conversion of their own, so the scheme's default message applies.
    expect(unknown.json<Obj>().message).to.equal('"spec.color" is not a known field selector: only "metadata.name", "metadata.namespace"');
  });

  it('watches: synthetic ADDED for rv unset, then changes; from an exact version, only later changes', async () => {
    await createNamespace('watched');
    const base = (await server.request('POST', '/api/v1/namespaces/watched/configmaps', { body: configMap('w1') })).json<Obj>();
    const path = '/api/v1/namespaces/watched/configmaps?watch=1&fieldSelector=metadata.name%3Dw1';
    const initial = server.openWatch(path, (events) => events.length >= 3);
    // Its synthetic ADDED arrived: the watch is established before the changes.
    await until('the watch\'s synthetic ADDED', async () => initial.events.length > 0, 10_000);
    const updated = await server.request('PUT', '/api/v1/namespaces/watched/configmaps/w1', { body: JSON.stringify({ ...base, data: { k: 'changed' } }) });
    await server.request('DELETE', '/api/v1/namespaces/watched/configmaps/w1');
    const seen = await initial.done;
    expect(seen.status).to.equal(200);
    expect(seen.events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED', 'DELETED']);
    expect(seen.events[1].object.metadata).to.include({ resourceVersion: updated.json<Obj>().metadata.resourceVersion });
    const fromExact = await server.watch(`${path}&resourceVersion=${base.metadata.resourceVersion}`, (events) => events.length >= 2, 5000);
    expect(fromExact.events.map((e) => e.type)).to.deep.equal(['MODIFIED', 'DELETED']);
  });

  it('sends bookmarks marking the end of a streaming list', async () => {
    const res = await server.watch('/api/v1/namespaces?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true', (events) => events.some((e) => e.type === 'BOOKMARK'));
    const types = res.events.map((e) => e.type);
    expect(types.slice(0, -1).every((t) => t === 'ADDED')).to.equal(true);
    const bookmark = res.events[res.events.length - 1];
    expect(bookmark.type).to.equal('BOOKMARK');
    expect((bookmark.object.metadata as Obj).annotations).to.deep.equal({ 'k8s.io/initial-events-end': 'true' });
    expect(types.filter((t) => t === 'ADDED').length).to.be.greaterThanOrEqual(4);
  });

  it('ends a watch after timeoutSeconds', async () => {
    // From the list's resourceVersion the watch has nothing to send (an old one would end it at
    // once with a 410 ERROR event), and the client would wait ten times the second asked for:
    // only timeoutSeconds ends it first.
    const { resourceVersion } = (await server.request('GET', CM)).json<Obj>().metadata;
    const res = await server.watch(`${CM}?watch=1&resourceVersion=${resourceVersion}&timeoutSeconds=1`, () => false, 10_000);
    expect(res.status).to.equal(200);
    expect(res.events).to.deep.equal([]);
    expect(res.endedBy).to.equal('server');
  });

  it('keeps an object with finalizers until the last one is removed', async () => {
    const created = (await server.request('POST', CM, { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/hold'] } }) })).json<Obj>();
    const deleting = await server.request('DELETE', `${CM}/held`);
    expect(deleting.status).to.equal(200);
    expect(deleting.json<Obj>().metadata.deletionTimestamp).to.be.a('string');
    const still = (await server.request('GET', `${CM}/held`)).json<Obj>();
    expect(still.metadata.deletionTimestamp).to.be.a('string');
    const released = await server.request('PUT', `${CM}/held`, { body: JSON.stringify({ ...still, metadata: { ...still.metadata, finalizers: [] } }) });
    expect(released.status).to.equal(200);
    expect((await server.request('GET', `${CM}/held`)).status).to.equal(404);
    expect(created.metadata.uid).to.be.a('string');
  });

  it('deletes a scheduled pod gracefully; gracePeriodSeconds=0 removes it at once', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'graceful' }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'busybox' }] } };
    expect((await server.request('POST', '/api/v1/namespaces/default/pods', { body: JSON.stringify(pod) })).status).to.equal(201);
    const requestedAt = Date.now();
    const first = await server.request('DELETE', '/api/v1/namespaces/default/pods/graceful');
    const answeredAt = Date.now();
    expect(first.status).to.equal(200);
    expect(first.json<Obj>().metadata.deletionGracePeriodSeconds).to.equal(30);
    // 30 s after the moment the server served the DELETE, in whole seconds (rounded down): however
    // long the request took, that moment lies between the request and its answer.
    const deadline = Date.parse(first.json<Obj>().metadata.deletionTimestamp);
    expect(deadline).to.be.within(Math.floor(requestedAt / 1000) * 1000 + 30_000, answeredAt + 30_000);
    expect((await server.request('GET', '/api/v1/namespaces/default/pods/graceful')).status).to.equal(200);
    const now = await server.request('DELETE', '/api/v1/namespaces/default/pods/graceful?gracePeriodSeconds=0');
    expect(now.status).to.equal(200);
    expect((await server.request('GET', '/api/v1/namespaces/default/pods/graceful')).status).to.equal(404);
    // An unscheduled pod has nothing to wait for.
    await server.request('POST', '/api/v1/namespaces/default/pods', { body: JSON.stringify({ ...pod, metadata: { name: 'unscheduled' }, spec: { containers: pod.spec.containers } }) });
    await server.request('DELETE', '/api/v1/namespaces/default/pods/unscheduled');
    expect((await server.request('GET', '/api/v1/namespaces/default/pods/unscheduled')).status).to.equal(404);
  });

  it('checks delete preconditions on uid and resourceVersion', async () => {
    const created = (await server.request('POST', CM, { body: configMap('pre') })).json<Obj>();
    const wrongUid = await server.request('DELETE', `${CM}/pre`, { body: JSON.stringify({ preconditions: { uid: 'not-it' } }) });
    expect(wrongUid.status).to.equal(409);
    expect(wrongUid.json<Obj>().message).to.contain('the UID in the precondition (not-it) does not match the UID in record');
    const wrongRv = await server.request('DELETE', `${CM}/pre`, { body: JSON.stringify({ preconditions: { resourceVersion: '1' } }) });
    expect(wrongRv.status).to.equal(409);
    const ok = await server.request('DELETE', `${CM}/pre`, { body: JSON.stringify({ preconditions: { uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion } }) });
    expect(ok.status).to.equal(200);
  });

  it('deletes a namespace only after emptying it', async () => {
    await server.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } }) });
    await server.request('POST', '/api/v1/namespaces/doomed/configmaps', { body: configMap('inside') });
    const del = await server.request('DELETE', '/api/v1/namespaces/doomed');
    expect(del.status).to.equal(200);
    const terminating = await server.request('POST', '/api/v1/namespaces/doomed/configmaps', { body: configMap('late') });
    expect([403, 404]).to.include(terminating.status);
    await until('the namespace to be removed', async () => (await server.request('GET', '/api/v1/namespaces/doomed')).status === 404, 20_000);
    expect((await server.request('GET', '/api/v1/namespaces/doomed/configmaps/inside')).status).to.equal(404);
  });

  it('serves health, discovery, OpenAPI and metrics', async () => {
    expect((await server.request('GET', '/readyz')).text).to.equal('ok');
    const verbose = await server.request('GET', '/livez?verbose');
    expect(verbose.text).to.contain('[+]etcd ok');
    expect(verbose.text).to.contain('livez check passed');
    const version = (await server.request('GET', '/version')).json<Obj>();
    expect(version).to.include({ major: '1', minor: '25' });
    const core = (await server.request('GET', '/api/v1')).json<Obj>();
    const ns = core.resources.find((r: Obj) => r.name === 'namespaces');
    expect(ns).to.include({ namespaced: false, kind: 'Namespace' });
    expect(ns.shortNames).to.deep.equal(['ns']);
    const v3 = (await server.request('GET', '/openapi/v3')).json<Obj>();
    expect(Object.keys(v3.paths)).to.include('apis/apps/v1');
    const metrics = await server.request('GET', '/metrics');
    expect(metrics.text).to.match(/apiserver_request_total\{[^}]*resource="configmaps"[^}]*\} \d+/);
    expect(metrics.text).to.contain('apiserver_request_duration_seconds_bucket');
  });

  it('serves every row of the resourceVersion tables for get and list (spec §4.4)', async () => {
    await createNamespace('rvtable');
    const base = '/api/v1/namespaces/rvtable/configmaps';
    const a = (await server.request('POST', base, { body: configMap('a') })).json<Obj>();
    const rvA = Number(a.metadata.resourceVersion);
    await server.request('POST', base, { body: configMap('b') });
    const list = async (query: string) => server.request('GET', `${base}?${query}`);
    const rvOf = (res: { json: <T>() => T }) => Number(res.json<Obj>().metadata.resourceVersion);
    // get: unset (most recent), 0 (any), N (not older than N)
    expect((await server.request('GET', `${base}/a`)).status).to.equal(200);
    expect((await server.request('GET', `${base}/a?resourceVersion=0`)).json<Obj>().metadata.name).to.equal('a');
    expect((await server.request('GET', `${base}/a?resourceVersion=${rvA}`)).status).to.equal(200);
    // list, no limit: unset, 0, N
    const latest = await list('');
    expect(latest.json<Obj>().items).to.have.length(3);
    expect(rvOf(await list('resourceVersion=0'))).to.be.greaterThanOrEqual(rvA);
    expect(rvOf(await list(`resourceVersion=${rvA}`))).to.be.greaterThanOrEqual(rvA);
    // list, limit without continue: unset (most recent), 0 (any), N (exact)
    const limited = (await list('limit=1')).json<Obj>();
    expect(limited.items).to.have.length(1);
    expect(limited.metadata.continue).to.be.a('string');
    expect((await list('limit=1&resourceVersion=0')).status).to.equal(200);
    const exact = (await list(`limit=5&resourceVersion=${rvA}`)).json<Obj>();
    expect(exact.metadata.resourceVersion).to.equal(String(rvA));
    expect(exact.items.map((i: Obj) => i.metadata.name)).to.deep.equal(['a', 'kube-root-ca.crt']);
    // list with limit and continue: unset and 0 follow the token; another version is 400
    expect((await list(`limit=1&continue=${limited.metadata.continue}`)).json<Obj>().items[0].metadata.name).to.equal('b');
    expect((await list(`limit=1&resourceVersion=0&continue=${limited.metadata.continue}`)).json<Obj>().items[0].metadata.name).to.equal('b');
    expect((await list(`limit=1&resourceVersion=${rvA}&continue=${limited.metadata.continue}`)).status).to.equal(400);
    // resourceVersionMatch=Exact: unset and 0 invalid, N exact
    expect((await list('resourceVersionMatch=Exact')).status).to.equal(422);
    expect((await list('resourceVersionMatch=Exact&resourceVersion=0')).status).to.equal(422);
    expect(rvOf(await list(`resourceVersionMatch=Exact&resourceVersion=${rvA}`))).to.equal(rvA);
    expect(rvOf(await list(`resourceVersionMatch=Exact&resourceVersion=${rvA}&limit=1`))).to.equal(rvA);
    // resourceVersionMatch=NotOlderThan: unset invalid, 0 any, N not older than
    expect((await list('resourceVersionMatch=NotOlderThan')).status).to.equal(422);
    expect((await list('resourceVersionMatch=NotOlderThan&resourceVersion=0')).status).to.equal(200);
    expect(rvOf(await list(`resourceVersionMatch=NotOlderThan&resourceVersion=${rvA}`))).to.be.greaterThanOrEqual(rvA);
  });

  it('splits spec and status between the object and its status subresource', async () => {
    const body = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'split' }, spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } };
    const created = (await server.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: JSON.stringify(body) })).json<Obj>();
    const withStatus = { ...created, spec: { ...created.spec, replicas: 5 }, status: { replicas: 3, observedGeneration: 1 } };
    const statusPut = (await server.request('PUT', '/apis/apps/v1/namespaces/default/deployments/split/status', { body: JSON.stringify(withStatus) })).json<Obj>();
    expect(statusPut.status.replicas).to.equal(3);
    expect(statusPut.spec.replicas).to.equal(1);
    const mainPut = (await server.request('PUT', '/apis/apps/v1/namespaces/default/deployments/split', { body: JSON.stringify({ ...statusPut, spec: { ...statusPut.spec, replicas: 2 }, status: { replicas: 99 } }) })).json<Obj>();
    expect(mainPut.spec.replicas).to.equal(2);
    expect(mainPut.status.replicas).to.equal(3);
    expect(mainPut.metadata.generation).to.equal(2);
  });

  it('allocates cluster IPs without duplicates and releases them on delete', async () => {
    const svc = (name: string, clusterIP?: string) => JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...(clusterIP ? { clusterIP } : {}) } });
    const first = await server.request('POST', '/api/v1/namespaces/default/services', { body: svc('ip-a', '10.0.0.200') });
    expect(first.status).to.equal(201);
    expect(first.json<Obj>().spec.clusterIPs).to.deep.equal(['10.0.0.200']);
    const clash = await server.request('POST', '/api/v1/namespaces/default/services', { body: svc('ip-b', '10.0.0.200') });
    expect(clash.status).to.equal(422);
    expect(clash.json<Obj>().message).to.equal('Service "ip-b" is invalid: spec.clusterIPs[0]: Invalid value: "10.0.0.200": provided IP is already allocated');
    const outside = await server.request('POST', '/api/v1/namespaces/default/services', { body: svc('ip-c', '10.9.9.9') });
    expect(outside.status).to.equal(422);
    expect(outside.json<Obj>().message).to.contain('provided IP is not in the valid range. The range of valid IPs is 10.0.0.0/24');
    await server.request('DELETE', '/api/v1/namespaces/default/services/ip-a');
    const reused = await server.request('POST', '/api/v1/namespaces/default/services', { body: svc('ip-b', '10.0.0.200') });
    expect(reused.status).to.equal(201);
  });

  it('serves one stored object in every version of its resource (HPA v1/v2, core and events.k8s.io Events)', async () => {
    const hpa = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'scaler' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 70 } };
    expect((await server.request('POST', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers', { body: JSON.stringify(hpa) })).status).to.equal(201);
    const v2 = (await server.request('GET', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/scaler')).json<Obj>();
    expect(v2.apiVersion).to.equal('autoscaling/v2');
    expect(v2.spec.metrics).to.deep.equal([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }]);
    const v1 = (await server.request('GET', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/scaler')).json<Obj>();
    expect(v1.spec.targetCPUUtilizationPercentage).to.equal(70);
    const event = { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'ev1' }, eventTime: '2026-01-01T00:00:00.000000Z', reportingController: 'example.com/ctl', reportingInstance: 'ctl-1', action: 'Tested', reason: 'Testing', type: 'Normal', note: 'hello', regarding: { kind: 'Pod', name: 'p', namespace: 'default' } };
    expect((await server.request('POST', '/apis/events.k8s.io/v1/namespaces/default/events', { body: JSON.stringify(event) })).status).to.equal(201);
    const core = (await server.request('GET', '/api/v1/namespaces/default/events/ev1')).json<Obj>();
    expect(core).to.deep.include({ apiVersion: 'v1', kind: 'Event', message: 'hello', reportingComponent: 'example.com/ctl' });
    expect(core.involvedObject).to.deep.include({ kind: 'Pod', name: 'p' });
  });

  it('runs dryRun=All on every verb without storing anything; refuses unknown dryRun values', async () => {
    const created = await server.request('POST', `${CM}?dryRun=All`, { body: configMap('dry') });
    expect(created.status).to.equal(201);
    expect(created.json<Obj>().metadata.uid).to.be.a('string');
    expect((await server.request('GET', `${CM}/dry`)).status).to.equal(404);
    const real = (await server.request('POST', CM, { body: configMap('dry', { k: 'v' }) })).json<Obj>();
    const put = await server.request('PUT', `${CM}/dry?dryRun=All`, { body: JSON.stringify({ ...real, data: { k: 'put' } }) });
    expect(put.json<Obj>().data).to.deep.equal({ k: 'put' });
    const patch = await server.request('PATCH', `${CM}/dry?dryRun=All`, { body: JSON.stringify({ data: { k: 'patched' } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(patch.json<Obj>().data).to.deep.equal({ k: 'patched' });
    const del = await server.request('DELETE', `${CM}/dry?dryRun=All`);
    expect(del.status).to.equal(200);
    const after = (await server.request('GET', `${CM}/dry`)).json<Obj>();
    expect(after.data).to.deep.equal({ k: 'v' });
    expect(after.metadata.resourceVersion).to.equal(real.metadata.resourceVersion);
    const bad = await server.request('POST', `${CM}?dryRun=Some`, { body: configMap('dry2') });
    expect(bad.status).to.equal(422);
    expect(bad.json<Obj>().message).to.equal('CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All"');
  });

  it('answers a meta.k8s.io Table when asked, with the v1.25 columns and PartialObjectMetadata rows', async () => {
    await server.request('POST', CM, { body: configMap('tabled', { a: '1', b: '2' }) });
    const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    const table = (await server.request('GET', `${CM}?fieldSelector=metadata.name%3Dtabled`, { headers: { Accept: accept } })).json<Obj>();
    expect(table).to.deep.include({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
    expect(table.columnDefinitions.map((c: Obj) => c.name)).to.deep.equal(['Name', 'Data', 'Age']);
    expect(table.rows).to.have.length(1);
    expect(table.rows[0].cells.slice(0, 2)).to.deep.equal(['tabled', 2]);
    expect(table.rows[0].object).to.deep.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
    const one = (await server.request('GET', `${CM}/tabled?includeObject=Object`, { headers: { Accept: accept } })).json<Obj>();
    expect(one.rows[0].object.data).to.deep.equal({ a: '1', b: '2' });
    // A kind without printer columns gets the default Name / Created At table (spec §2.3).
    const leases = (await server.request('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases', { headers: { Accept: accept } })).json<Obj>();
    expect(leases.columnDefinitions.map((c: Obj) => c.name)).to.include('Name');
  });

  it('applies server-side: creates, tracks managers, conflicts between appliers, force takes ownership', async () => {
    const applyAs = (manager: string, body: Obj, force = false) => server.request('PATCH', `${CM}/applied-ssa?fieldManager=${manager}${force ? '&force=true' : ''}`, { body: JSON.stringify(body), headers: { 'Content-Type': 'application/apply-patch+yaml' } });
    const base = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied-ssa' } };
    const created = await applyAs('alice', { ...base, data: { a: '1' } });
    expect(created.status).to.equal(201);
    expect(created.json<Obj>().metadata.managedFields).to.deep.equal([{ manager: 'alice', operation: 'Apply', apiVersion: 'v1', time: created.json<Obj>().metadata.managedFields[0].time, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }]);
    const conflict = await applyAs('bob', { ...base, data: { a: '2' } });
    expect(conflict.status).to.equal(409);
    expect(conflict.json<Obj>().message).to.equal('Apply failed with 1 conflict: conflict with "alice": .data.a');
    expect(conflict.json<Obj>().details.causes).to.deep.equal([{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.a' }]);
    const shared = await applyAs('bob', { ...base, data: { a: '1', b: '2' } });
    expect(shared.status).to.equal(200);
    const forced = await applyAs('bob', { ...base, data: { a: '3', b: '2' } }, true);
    expect(forced.json<Obj>().data).to.deep.equal({ a: '3', b: '2' });
    const managers = forced.json<Obj>().metadata.managedFields.map((m: Obj) => [m.manager, Object.keys(m.fieldsV1['f:data'] ?? {}).sort()]);
    expect(managers).to.deep.equal([['bob', ['f:a', 'f:b']]]);
    const noManager = await server.request('PATCH', `${CM}/applied-ssa`, { body: JSON.stringify(base), headers: { 'Content-Type': 'application/apply-patch+yaml' } });
    expect(noManager.status).to.equal(422);
    expect(noManager.json<Obj>().message).to.equal('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
  });

  it('keeps field ownership across versions: a v1 apply conflicts with the v2 owner of the same setting', async () => {
    const path = (version: string, manager: string, force = false) => `/apis/autoscaling/${version}/namespaces/default/horizontalpodautoscalers/versioned?fieldManager=${manager}${force ? '&force=true' : ''}`;
    const applyAt = (version: string, manager: string, spec: Obj, force = false) => server.request('PATCH', path(version, manager, force), {
      body: JSON.stringify({ apiVersion: `autoscaling/${version}`, kind: 'HorizontalPodAutoscaler', metadata: { name: 'versioned' }, spec }),
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
    const metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
    expect((await applyAt('v2', 'alice', { scaleTargetRef: target, maxReplicas: 5, metrics })).status).to.equal(201);
    const conflict = await applyAt('v1', 'bob', { scaleTargetRef: target, maxReplicas: 5, targetCPUUtilizationPercentage: 50 });
    expect(conflict.status).to.equal(409);
    expect(conflict.json<Obj>().details.causes.map((c: Obj) => c.field)).to.include('.spec.metrics');
    const forced = await applyAt('v1', 'bob', { scaleTargetRef: target, maxReplicas: 5, targetCPUUtilizationPercentage: 50 }, true);
    expect(forced.status).to.equal(200);
    const v2 = (await server.request('GET', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/versioned')).json<Obj>();
    expect(v2.spec.metrics[0].resource.target.averageUtilization).to.equal(50);
    const alice = (v2.metadata.managedFields as Obj[]).find((m) => m.manager === 'alice');
    expect(alice?.apiVersion).to.equal('autoscaling/v2');
    expect(Object.keys(alice?.fieldsV1['f:spec'] ?? {})).not.to.include('f:metrics');
  });

  it('walks the field-ownership table of spec §3.2 with three appliers and an updater', async () => {
    const url = (manager: string, force = false) => `${CM}/owned?fieldManager=${manager}${force ? '&force=true' : ''}`;
    const apply = (manager: string, data: Record<string, string>, force = false) => server.request('PATCH', url(manager, force), { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owned' }, data }), headers: { 'Content-Type': 'application/apply-patch+yaml' } });
    const owners = (o: Obj) => Object.fromEntries((o.metadata.managedFields as Obj[]).map((m) => [`${m.manager}/${m.operation}`, Object.keys(m.fieldsV1?.['f:data'] ?? {}).filter((k) => k !== '.').sort()]));
    expect((await apply('a', { x: '1', y: '1' })).status).to.equal(201);
    // Owned by A, B applies another value without force: conflict, nothing changes.
    expect((await apply('b', { x: '2' })).status).to.equal(409);
    // With force: the value changes and B alone owns it.
    let o = (await apply('b', { x: '2' }, true)).json<Obj>();
    expect(o.data).to.deep.equal({ x: '2', y: '1' });
    expect(owners(o)).to.deep.equal({ 'a/Apply': ['f:y'], 'b/Apply': ['f:x'] });
    // C applies the same value: shared by B and C.
    o = (await apply('c', { x: '2' })).json<Obj>();
    expect(owners(o)['c/Apply']).to.deep.equal(['f:x']);
    expect(owners(o)['b/Apply']).to.deep.equal(['f:x']);
    // A shared field changed by another applier without force: a conflict naming both owners.
    const shared = await apply('a', { x: '3', y: '1' });
    expect(shared.status).to.equal(409);
    // structured-merge-diff groups several conflicts by manager.
    expect(shared.json<Obj>().message).to.equal('Apply failed with 2 conflicts: conflicts with "b":\n- .data.x\nconflicts with "c":\n- .data.x');
    // B drops the field while C still owns it: the value stays, owned by C.
    o = (await apply('b', {})).json<Obj>();
    expect(o.data.x).to.equal('2');
    // C drops it too: no owner is left, so the field goes.
    o = (await apply('c', {})).json<Obj>();
    expect(o.data).to.deep.equal({ y: '1' });
    // A non-apply write by D takes the field it changes, without conflict, as an Update.
    const updated = await server.request('PATCH', `${CM}/owned?fieldManager=d`, { body: JSON.stringify({ data: { y: '9' } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(updated.status).to.equal(200);
    expect(owners(updated.json<Obj>())['d/Update']).to.deep.equal(['f:y']);
    expect(owners(updated.json<Obj>())['a/Apply'] ?? []).to.not.include('f:y');
  });

  it('clears managed fields with [{}] and leaves them with [] (spec §4.2)', async () => {
    const created = (await server.request('POST', `${CM}?fieldManager=maker`, { body: configMap('managed', { a: '1' }) })).json<Obj>();
    expect(created.metadata.managedFields.map((m: Obj) => `${m.manager}/${m.operation}`)).to.deep.equal(['maker/Update']);
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    const kept = (await server.request('PATCH', `${CM}/managed`, { body: JSON.stringify({ metadata: { managedFields: [] } }), headers: merge })).json<Obj>();
    expect(kept.metadata.managedFields).to.have.length(1);
    const cleared = (await server.request('PATCH', `${CM}/managed`, { body: JSON.stringify({ metadata: { managedFields: [{}] } }), headers: merge })).json<Obj>();
    expect(cleared.metadata.managedFields).to.equal(undefined);
  });

  it('patches with merge patch and JSON patch; a failed JSON patch test is 422 and changes nothing', async () => {
    await server.request('POST', CM, { body: configMap('patched', { a: '1', b: '2' }) });
    const merged = await server.request('PATCH', `${CM}/patched`, { body: JSON.stringify({ data: { a: null, c: '3' } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(merged.status).to.equal(200);
    expect(merged.json<Obj>().data).to.deep.equal({ b: '2', c: '3' });
    const jsonPatched = await server.request('PATCH', `${CM}/patched`, { body: JSON.stringify([{ op: 'replace', path: '/data/b', value: 'two' }]), headers: { 'Content-Type': 'application/json-patch+json' } });
    expect(jsonPatched.json<Obj>().data).to.deep.equal({ b: 'two', c: '3' });
    const failedTest = await server.request('PATCH', `${CM}/patched`, { body: JSON.stringify([{ op: 'test', path: '/data/b', value: 'nope' }, { op: 'remove', path: '/data/c' }]), headers: { 'Content-Type': 'application/json-patch+json' } });
    expect(failedTest.status).to.equal(422);
    expect((await server.request('GET', `${CM}/patched`)).json<Obj>().data).to.deep.equal({ b: 'two', c: '3' });
    const wrongType = await server.request('PATCH', `${CM}/patched`, { body: '{}', headers: { 'Content-Type': 'text/plain' } });
    expect(wrongType.status).to.equal(415);
  });

  it('deletes a collection by label selector, leaving the rest', async () => {
    await createNamespace('sweep');
    for (const [name, tier] of [['s1', 'gone'], ['s2', 'gone'], ['s3', 'kept']]) {
      await server.request('POST', '/api/v1/namespaces/sweep/configmaps', { body: configMap(name, {}, { tier }) });
    }
    const res = await server.request('DELETE', '/api/v1/namespaces/sweep/configmaps?labelSelector=tier%3Dgone');
    expect(res.status).to.equal(200);
    // v1.25's Store.DeleteCollection answers with the list it deleted from.
    const answer = res.json<Obj>();
    expect(answer).to.deep.include({ kind: 'ConfigMapList', apiVersion: 'v1' });
    expect(answer.items.map((i: Obj) => i.metadata.name)).to.deep.equal(['s1', 's2']);
    const left = (await server.request('GET', '/api/v1/namespaces/sweep/configmaps')).json<Obj>();
    expect(left.items.map((i: Obj) => i.metadata.name)).to.deep.equal(['kube-root-ca.crt', 's3']);
  });

  it('answers 405 for a verb the resource path does not take', async () => {
    const res = await server.request('POST', `${CM}/some-name`, { body: configMap('some-name') });
    expect(res.status).to.equal(405);
    expect(res.json<Obj>()).to.deep.include({ reason: 'MethodNotAllowed', code: 405 });
    const namespaces = await server.request('DELETE', '/api/v1/namespaces');
    expect(namespaces.status).to.equal(405);
  });

  it('warns on a deprecated API version and counts it in apiserver_requested_deprecated_apis', async () => {
    const res = await server.request('GET', '/apis/autoscaling/v2beta2/namespaces/default/horizontalpodautoscalers');
    expect(res.status).to.equal(200);
    expect(res.headers.warning).to.equal('299 - "autoscaling/v2beta2 HorizontalPodAutoscaler is deprecated in v1.23+, unavailable in v1.26+; use autoscaling/v2 HorizontalPodAutoscaler"');
    const current = await server.request('GET', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers');
    expect(current.headers.warning).to.equal(undefined);
    const metrics = (await server.request('GET', '/metrics')).text;
    expect(metrics).to.match(/apiserver_requested_deprecated_apis\{group="autoscaling",version="v2beta2",resource="horizontalpodautoscalers",subresource="",removed_release="1.26"\} 1/);
  });

  it('serves a request without a certificate as system:anonymous: health and version only, 403 for the rest', async () => {
    const anonymous = await server.request('GET', '/api/v1/namespaces', { anonymous: true });
    expect(anonymous.status).to.equal(403);
    expect(anonymous.json<Obj>()).to.deep.include({
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
      details: { kind: 'namespaces' },
    });
    const named = await server.request('GET', '/apis/apps/v1/namespaces/default/deployments/web/scale', { anonymous: true });
    expect(named.json<Obj>().message).to.equal('deployments.apps "web" is forbidden: User "system:anonymous" cannot get resource "deployments/scale" in API group "apps" in the namespace "default"');
    const discovery = await server.request('GET', '/apis', { anonymous: true });
    expect(discovery.status).to.equal(403);
    expect(discovery.json<Obj>().message).to.equal('forbidden: User "system:anonymous" cannot get path "/apis"');
    for (const path of ['/readyz', '/livez', '/healthz', '/version']) {
      expect((await server.request('GET', path, { anonymous: true })).status, path).to.equal(200);
    }
    // With the admin certificate the same list is served.
    expect((await server.request('GET', '/api/v1/namespaces')).status).to.equal(200);
  });
});
