/**
 * Each verb's handler, reached through the whole pipeline in process (test/support/in-process-api.ts):
 * request info, authentication, authorization, the handler, admission, the registry and the
 * store, and back through the response writer. One ConfigMap namespace per test.
 */
import { expect } from 'chai';
import { NOBODY_TOKEN } from '../../../../support/in-process-api';
import { inProcessApiSuite } from '../../../../support/in-process-api-suite';

interface ObjectMeta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  labels?: Record<string, string>;
  managedFields?: Array<{ manager: string; operation: string }>;
}

interface ConfigMap {
  kind: string;
  apiVersion: string;
  metadata: ObjectMeta;
  data?: Record<string, string>;
}

interface ConfigMapList {
  kind: string;
  metadata: { resourceVersion: string };
  items: ConfigMap[];
}

describe('the request pipeline in process: one test per handler', function () {
  this.timeout(60_000);
  const suite = inProcessApiSuite('handlers');

  async function createConfigMap(name: string, data: Record<string, string>, labels?: Record<string, string>): Promise<ConfigMap> {
    const response = await suite.api.request({ method: 'POST', path: suite.configMaps, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data } });
    expect(response.status, response.text).to.equal(201);
    return response.json<ConfigMap>();
  }

  it('create answers 201 with the stored object and its system fields', async () => {
    const response = await suite.api.request({ method: 'POST', path: suite.configMaps, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'created' }, data: { a: '1' } } });
    expect(response.status).to.equal(201);
    expect(response.headers['content-type']).to.equal('application/json');
    const object = response.json<ConfigMap>();
    expect(object).to.include({ kind: 'ConfigMap', apiVersion: 'v1' });
    expect(object.metadata).to.include({ name: 'created', namespace: suite.namespace });
    expect(object.metadata.uid).to.match(/^[0-9a-f-]{36}$/);
    expect(Number(object.metadata.resourceVersion)).to.be.greaterThan(0);
    expect(object.data).to.deep.equal({ a: '1' });
  });

  it('get answers 200 with the object, and 404 with v1.25\'s Status for a missing name', async () => {
    const created = await createConfigMap('got', { a: '1' });
    const found = await suite.api.request({ method: 'GET', path: `${suite.configMaps}/got` });
    expect(found.status).to.equal(200);
    expect(found.json<ConfigMap>()).to.deep.equal(created);
    const missing = await suite.api.request({ method: 'GET', path: `${suite.configMaps}/absent` });
    expect(missing.status).to.equal(404);
    expect(missing.json()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'configmaps "absent" not found', reason: 'NotFound', details: { name: 'absent', kind: 'configmaps' }, code: 404,
    });
  });

  it('list answers the namespace\'s objects in name order, with a resourceVersion', async () => {
    await createConfigMap('b', { v: 'b' });
    await createConfigMap('a', { v: 'a' });
    const response = await suite.api.request({ method: 'GET', path: suite.configMaps });
    expect(response.status).to.equal(200);
    const list = response.json<ConfigMapList>();
    expect(list.kind).to.equal('ConfigMapList');
    expect(list.items.map((item) => item.metadata.name)).to.deep.equal(['a', 'b']);
    expect(Number(list.metadata.resourceVersion)).to.be.greaterThan(0);
  });

  it('update (PUT) replaces the object and answers 200 with a new resourceVersion', async () => {
    const created = await createConfigMap('put', { a: '1' });
    const response = await suite.api.request({ method: 'PUT', path: `${suite.configMaps}/put`, body: { ...created, data: { a: '2' } } });
    expect(response.status, response.text).to.equal(200);
    const updated = response.json<ConfigMap>();
    expect(updated.data).to.deep.equal({ a: '2' });
    expect(updated.metadata.uid).to.equal(created.metadata.uid);
    expect(Number(updated.metadata.resourceVersion)).to.be.greaterThan(Number(created.metadata.resourceVersion));
  });

  it('patch applies a JSON patch, a merge patch and a strategic merge patch', async () => {
    await createConfigMap('patched', { a: '1', b: '2' });
    const path = `${suite.configMaps}/patched`;
    const json = await suite.api.request({ method: 'PATCH', path, headers: { 'content-type': 'application/json-patch+json' }, body: [{ op: 'replace', path: '/data/a', value: 'json' }] });
    expect(json.status, json.text).to.equal(200);
    expect(json.json<ConfigMap>().data).to.deep.equal({ a: 'json', b: '2' });
    const merge = await suite.api.request({ method: 'PATCH', path, headers: { 'content-type': 'application/merge-patch+json' }, body: { data: { b: null, c: 'merge' } } });
    expect(merge.status, merge.text).to.equal(200);
    expect(merge.json<ConfigMap>().data).to.deep.equal({ a: 'json', c: 'merge' });
    const strategic = await suite.api.request({ method: 'PATCH', path, headers: { 'content-type': 'application/strategic-merge-patch+json' }, body: { metadata: { labels: { tier: 'x' } }, data: { d: 'strategic' } } });
    expect(strategic.status, strategic.text).to.equal(200);
    const object = strategic.json<ConfigMap>();
    expect(object.data).to.deep.equal({ a: 'json', c: 'merge', d: 'strategic' });
    expect(object.metadata.labels).to.deep.equal({ tier: 'x' });
  });

  it('apply (server-side) creates with 201, then updates with 200, recording its field manager', async () => {
    const path = `${suite.configMaps}/applied?fieldManager=tester`;
    const body = (value: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { k: value } });
    const first = await suite.api.request({ method: 'PATCH', path, headers: { 'content-type': 'application/apply-patch+yaml' }, body: body('one') });
    expect(first.status, first.text).to.equal(201);
    const second = await suite.api.request({ method: 'PATCH', path, headers: { 'content-type': 'application/apply-patch+yaml' }, body: body('two') });
    expect(second.status, second.text).to.equal(200);
    const object = second.json<ConfigMap>();
    expect(object.data).to.deep.equal({ k: 'two' });
    expect(object.metadata.managedFields?.map((entry) => [entry.manager, entry.operation])).to.deep.equal([['tester', 'Apply']]);
  });

  it('delete answers 200 with store.go\'s Success Status naming the object, which is then gone', async () => {
    const created = await createConfigMap('deleted', { a: '1' });
    const response = await suite.api.request({ method: 'DELETE', path: `${suite.configMaps}/deleted` });
    expect(response.status, response.text).to.equal(200);
    expect(response.json()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
      details: { name: 'deleted', kind: 'configmaps', uid: created.metadata.uid },
    });
    expect((await suite.api.request({ method: 'GET', path: `${suite.configMaps}/deleted` })).status).to.equal(404);
  });

  it('deletecollection answers 200 and removes every object of the namespace', async () => {
    await createConfigMap('one', { a: '1' });
    await createConfigMap('two', { a: '2' });
    const response = await suite.api.request({ method: 'DELETE', path: suite.configMaps });
    expect(response.status, response.text).to.equal(200);
    expect((await suite.api.request({ method: 'GET', path: suite.configMaps })).json<ConfigMapList>().items).to.deep.equal([]);
  });

  it('watch streams an ADDED, MODIFIED and DELETED event for what happens after it starts', async () => {
    const listed = await suite.api.request({ method: 'GET', path: suite.configMaps });
    const from = listed.json<ConfigMapList>().metadata.resourceVersion;
    const watch = await suite.api.watch({ path: `${suite.configMaps}?watch=true&resourceVersion=${from}` });
    try {
      expect(watch.status).to.equal(200);
      expect(watch.headers['content-type']).to.equal('application/json');
      expect(watch.headers['transfer-encoding']).to.equal('chunked');
      const created = await createConfigMap('watched', { a: '1' });
      await suite.api.request({ method: 'PUT', path: `${suite.configMaps}/watched`, body: { ...created, data: { a: '2' } } });
      await suite.api.request({ method: 'DELETE', path: `${suite.configMaps}/watched` });
      const events = [await watch.next(), await watch.next(), await watch.next()];
      expect(events.map((event) => [event?.type, (event?.object.data as Record<string, string>).a])).to.deep.equal([['ADDED', '1'], ['MODIFIED', '2'], ['DELETED', '2']]);
    } finally {
      watch.close();
    }
  });

  it('the filter chain refuses a user without rights with v1.25\'s 403 Status before any handler', async () => {
    const response = await suite.api.request({ method: 'GET', path: suite.configMaps, token: NOBODY_TOKEN });
    expect(response.status).to.equal(403);
    expect(response.json()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: `configmaps is forbidden: User "nobody" cannot list resource "configmaps" in API group "" in the namespace "${suite.namespace}"`,
      reason: 'Forbidden', details: { kind: 'configmaps' }, code: 403,
    });
  });
});
