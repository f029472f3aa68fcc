/**
 * The registry's paths (src/registry/generic-registry.ts) as a client meets them, through the
 * whole pipeline in process (test/support/in-process-api.ts): optimistic concurrency, server-side
 * apply's conflicts, delete preconditions, finalizers, deletecollection's selector, and a watch
 * from a resourceVersion. The Status bodies are v1.25's, word for word (apiserver's
 * registry/generic/registry/store.go and rest/delete.go, apimachinery's managedfields conflict.go).
 */
import { expect } from 'chai';
import type { InjectResponse } from '../../../../support/in-process-api';
import { inProcessApiSuite } from '../../../../support/in-process-api-suite';

interface ConfigMap {
  kind: string;
  apiVersion: string;
  metadata: { name: string; uid: string; resourceVersion: string; finalizers?: string[]; deletionTimestamp?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

function conflictStatus(message: string, name: string, kind: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Conflict', details: { name, kind }, code: 409 };
}

describe('the registry\'s paths through the request pipeline in process', function () {
  this.timeout(60_000);
  const suite = inProcessApiSuite('paths');

  async function create(name: string, extra: { labels?: Record<string, string>; finalizers?: string[] } = {}): Promise<ConfigMap> {
    const response = await suite.api.request({ method: 'POST', path: suite.configMaps, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data: { k: 'v' } } });
    expect(response.status, response.text).to.equal(201);
    return response.json<ConfigMap>();
  }

  function deleteWith(name: string, body: Record<string, unknown>): Promise<InjectResponse> {
    return suite.api.request({ method: 'DELETE', path: `${suite.configMaps}/${name}`, body: { apiVersion: 'v1', kind: 'DeleteOptions', ...body } });
  }

  it('create then get: the object read is the object created', async () => {
    const created = await create('read-back');
    const read = await suite.api.request({ method: 'GET', path: `${suite.configMaps}/read-back` });
    expect(read.status).to.equal(200);
    expect(read.json<ConfigMap>()).to.deep.equal(created);
  });

  it('an update naming a stale resourceVersion is 409 Conflict with store.go\'s optimistic-lock message', async () => {
    const created = await create('stale');
    const first = await suite.api.request({ method: 'PUT', path: `${suite.configMaps}/stale`, body: { ...created, data: { k: 'first' } } });
    expect(first.status, first.text).to.equal(200);
    const second = await suite.api.request({ method: 'PUT', path: `${suite.configMaps}/stale`, body: { ...created, data: { k: 'second' } } });
    expect(second.status).to.equal(409);
    expect(second.json()).to.deep.equal(conflictStatus('Operation cannot be fulfilled on configmaps "stale": the object has been modified; please apply your changes to the latest version and try again', 'stale', 'configmaps'));
    const kept = await suite.api.request({ method: 'GET', path: `${suite.configMaps}/stale` });
    expect(kept.json<ConfigMap>().data).to.deep.equal({ k: 'first' });
  });

  it('an update that changes nothing writes nothing: the resourceVersion stays', async () => {
    const created = await create('unchanged');
    const response = await suite.api.request({ method: 'PUT', path: `${suite.configMaps}/unchanged`, body: created });
    expect(response.status, response.text).to.equal(200);
    expect(response.json<ConfigMap>().metadata.resourceVersion).to.equal(created.metadata.resourceVersion);
  });

  it('a patch is read-modify-write on the current object; one naming a stale resourceVersion is 409', async () => {
    const created = await create('patched');
    const path = `${suite.configMaps}/patched`;
    const merge = { 'content-type': 'application/merge-patch+json' };
    const patched = await suite.api.request({ method: 'PATCH', path, headers: merge, body: { data: { added: 'yes' } } });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.json<ConfigMap>().data).to.deep.equal({ k: 'v', added: 'yes' });
    const stale = await suite.api.request({ method: 'PATCH', path, headers: merge, body: { metadata: { resourceVersion: created.metadata.resourceVersion }, data: { k: 'late' } } });
    expect(stale.status).to.equal(409);
    expect(stale.json()).to.deep.equal(conflictStatus('Operation cannot be fulfilled on configmaps "patched": the object has been modified; please apply your changes to the latest version and try again', 'patched', 'configmaps'));
  });

  it('apply by a second field manager that changes an owned field is 409 with the conflict named; force takes it over', async () => {
    const path = (manager: string, force = false) => `${suite.configMaps}/applied?fieldManager=${manager}${force ? '&force=true' : ''}`;
    const body = (value: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { k: value } });
    const yaml = { 'content-type': 'application/apply-patch+yaml' };
    const first = await suite.api.request({ method: 'PATCH', path: path('mgr-a'), headers: yaml, body: body('a') });
    expect(first.status, first.text).to.equal(201);
    const conflicting = await suite.api.request({ method: 'PATCH', path: path('mgr-b'), headers: yaml, body: body('b') });
    expect(conflicting.status).to.equal(409);
    expect(conflicting.json()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'Apply failed with 1 conflict: conflict with "mgr-a": .data.k',
      reason: 'Conflict',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "mgr-a"', field: '.data.k' }] },
      code: 409,
    });
    const forced = await suite.api.request({ method: 'PATCH', path: path('mgr-b', true), headers: yaml, body: body('b') });
    expect(forced.status, forced.text).to.equal(200);
    expect(forced.json<ConfigMap>().data).to.deep.equal({ k: 'b' });
  });

  it('a delete whose uid precondition does not match is 409 with rest.BeforeDelete\'s message, and deletes nothing', async () => {
    const created = await create('uid-guarded');
    const response = await deleteWith('uid-guarded', { preconditions: { uid: 'not-the-uid' } });
    expect(response.status).to.equal(409);
    expect(response.json()).to.deep.equal(conflictStatus(`Operation cannot be fulfilled on ConfigMap "uid-guarded": the UID in the precondition (not-the-uid) does not match the UID in record (${created.metadata.uid}). The object might have been deleted and then recreated`, 'uid-guarded', 'ConfigMap'));
    expect((await suite.api.request({ method: 'GET', path: `${suite.configMaps}/uid-guarded` })).status).to.equal(200);
  });

  it('a delete whose resourceVersion precondition does not match is 409 with rest.BeforeDelete\'s message; a matching one deletes', async () => {
    const created = await create('rv-guarded');
    const response = await deleteWith('rv-guarded', { preconditions: { resourceVersion: '1' } });
    expect(response.status).to.equal(409);
    expect(response.json()).to.deep.equal(conflictStatus(`Operation cannot be fulfilled on ConfigMap "rv-guarded": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${created.metadata.resourceVersion}). The object might have been modified`, 'rv-guarded', 'ConfigMap'));
    const matching = await deleteWith('rv-guarded', { preconditions: { uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion } });
    expect(matching.status, matching.text).to.equal(200);
    expect((await suite.api.request({ method: 'GET', path: `${suite.configMaps}/rv-guarded` })).status).to.equal(404);
  });

  it('a delete of an object with a finalizer marks it; removing the finalizer removes it, answered as last stored', async () => {
    await create('finalized', { finalizers: ['example.com/hold'] });
    const marked = await suite.api.request({ method: 'DELETE', path: `${suite.configMaps}/finalized` });
    expect(marked.status, marked.text).to.equal(200);
    const terminating = marked.json<ConfigMap>();
    expect(terminating.metadata.deletionTimestamp).to.be.a('string');
    expect(terminating.metadata.finalizers).to.deep.equal(['example.com/hold']);
    const again = await suite.api.request({ method: 'DELETE', path: `${suite.configMaps}/finalized` });
    expect(again.status).to.equal(200);
    expect(again.json<ConfigMap>().metadata.resourceVersion).to.equal(terminating.metadata.resourceVersion);
    const released = await suite.api.request({ method: 'PATCH', path: `${suite.configMaps}/finalized`, headers: { 'content-type': 'application/json-patch+json' }, body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    expect(released.status, released.text).to.equal(200);
    expect(released.json<ConfigMap>().metadata.finalizers).to.deep.equal(['example.com/hold']);
    expect(released.json<ConfigMap>().metadata.resourceVersion).to.equal(terminating.metadata.resourceVersion);
    expect((await suite.api.request({ method: 'GET', path: `${suite.configMaps}/finalized` })).status).to.equal(404);
  });

  it('deletecollection with a label selector deletes only the objects it selects, and answers with the list of them', async () => {
    await create('keep', { labels: { app: 'other' } });
    const dropped = [await create('drop-1', { labels: { app: 'gone' } }), await create('drop-2', { labels: { app: 'gone' } })];
    const response = await suite.api.request({ method: 'DELETE', path: `${suite.configMaps}?labelSelector=app%3Dgone` });
    expect(response.status, response.text).to.equal(200);
    // v1.25's Store.DeleteCollection returns the list it deleted from, its items as listed.
    const answer = response.json<{ kind: string; apiVersion: string; metadata: { resourceVersion: string }; items: ConfigMap[] }>();
    expect({ kind: answer.kind, apiVersion: answer.apiVersion }).to.deep.equal({ kind: 'ConfigMapList', apiVersion: 'v1' });
    expect(Number(answer.metadata.resourceVersion)).to.be.at.least(Number(dropped[1].metadata.resourceVersion));
    expect(answer.items).to.deep.equal(dropped);
    const left = await suite.api.request({ method: 'GET', path: suite.configMaps });
    expect(left.json<{ items: ConfigMap[] }>().items.map((item) => item.metadata.name)).to.deep.equal(['keep']);
  });

  it('a watch from a resourceVersion gets exactly the events after it, in order', async () => {
    await create('before');
    const from = (await create('at')).metadata.resourceVersion;
    const after = await create('after');
    await suite.api.request({ method: 'PUT', path: `${suite.configMaps}/after`, body: { ...after, data: { k: 'changed' } } });
    await suite.api.request({ method: 'DELETE', path: `${suite.configMaps}/before` });
    const watch = await suite.api.watch({ path: `${suite.configMaps}?watch=true&resourceVersion=${from}` });
    try {
      expect(watch.status).to.equal(200);
      const events = [await watch.next(), await watch.next(), await watch.next()];
      const seen = events.map((event) => [event?.type, (event?.object.metadata as { name: string }).name]);
      expect(seen).to.deep.equal([['ADDED', 'after'], ['MODIFIED', 'after'], ['DELETED', 'before']]);
      // Nothing older than `from` (the `before` and `at` ADDED events) and nothing else.
      await create('later');
      const next = await watch.next();
      expect([next?.type, (next?.object.metadata as { name: string }).name]).to.deep.equal(['ADDED', 'later']);
    } finally {
      watch.close();
    }
  });
});
