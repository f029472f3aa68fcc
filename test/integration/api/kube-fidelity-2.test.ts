/**
 * Regression tests for the smaller differences from kube-apiserver v1.25 found while real
 * operators and clients were run against Carina (issue 29), against a real `carina server`:
 * each case is v1.25's answer and would fail on the code before.
 */
import { expect } from 'chai';
import https from 'node:https';
import { CarinaApiProcess } from '../../support/carina-api-process';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const CM = '/api/v1/namespaces/default/configmaps';

describe('kube-apiserver v1.25 fidelity (issue 29 leftovers)', function () {
  this.timeout(60_000);
  let server: CarinaApiProcess;
  const post = (path: string, body: unknown) => server.request('POST', path, { body: JSON.stringify(body) });
  const configMap = (name: string, data: Record<string, string> = { a: '1' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

  before(async () => {
    server = await CarinaApiProcess.start();
  });

  after(async () => {
    await server?.stop();
  });

  it('serves the deprecated watch paths: a collection, or one object by the name in the path', async () => {
    const watched = (await post(CM, configMap('legacy-watched'))).json<Obj>();
    await post(CM, configMap('legacy-other'));
    const rv = watched.metadata.resourceVersion as string;
    const one = server.watch(`/api/v1/watch/namespaces/default/configmaps/legacy-watched?resourceVersion=${rv}`, (events) => events.length >= 1);
    // The server writes ConfigMaps of its own meanwhile (kube-root-ca.crt, extension-apiserver-authentication): only this test's count.
    const ours = <E extends { object: Obj }>(events: E[]): E[] => events.filter((e) => String((e.object.metadata as Obj).name).startsWith('legacy-'));
    const all = server.watch(`/api/v1/watch/namespaces/default/configmaps?resourceVersion=${rv}`, (events) => ours(events).length >= 2);
    const across = server.watch(`/api/v1/watch/configmaps?resourceVersion=${rv}`, (events) => ours(events).length >= 2);
    // The watches start from rv: later writes reach them whenever they open.
    await post(CM, configMap('legacy-third'));
    const changed = await server.request('PUT', `${CM}/legacy-watched`, { body: JSON.stringify({ ...watched, data: { a: '2' } }) });
    expect(changed.status, changed.text).to.equal(200);
    const seenOne = await one;
    expect(seenOne.status).to.equal(200);
    expect(seenOne.events.map((e) => [e.type, (e.object.metadata as Obj).name])).to.deep.equal([['MODIFIED', 'legacy-watched']]);
    for (const seen of [await all, await across]) {
      expect(seen.status).to.equal(200);
      expect(ours(seen.events).map((e) => [e.type, (e.object.metadata as Obj).name]).slice(0, 2)).to.deep.equal([['ADDED', 'legacy-other'], ['ADDED', 'legacy-third']]);
    }
  });

  it('refuses on a named watch path a field selector for another name, a subresource, another method and a missing namespace', async () => {
    await post(CM, configMap('legacy-named'));
    const other = await server.request('GET', '/api/v1/watch/namespaces/default/configmaps/legacy-named?fieldSelector=metadata.name%3Dx');
    expect(other.status).to.equal(400);
    expect(other.json<Obj>().message).to.equal("fieldSelector metadata.name doesn't match requested name");
    expect((await server.request('GET', '/api/v1/watch/namespaces/default/configmaps/legacy-named/status')).status).to.equal(404);
    expect((await server.request('GET', '/api/v1/watch/configmaps/legacy-named')).status).to.equal(404);
    expect((await server.request('POST', '/api/v1/watch/namespaces/default/configmaps', { body: JSON.stringify(configMap('never')) })).status).to.equal(405);
    expect((await server.request('GET', `${CM}/never`)).status).to.equal(404);
  });

  it('answers a GET of a named object with ?watch=true with the object, as a get', async () => {
    await post(CM, configMap('named-get'));
    const res = await server.request('GET', `${CM}/named-get?watch=true`);
    expect(res.status).to.equal(200);
    expect(res.json<Obj>()).to.include({ kind: 'ConfigMap' });
    expect(res.json<Obj>().metadata.name).to.equal('named-get');
  });

  it('refuses a create that carries a resourceVersion with v1.25\'s 500 and no reason, before looking for an existing object; dry-run keeps the version', async () => {
    const refusal = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'resourceVersion should not be set on objects to be created', code: 500 };
    const withVersion = (name: string, resourceVersion: string) => ({ ...configMap(name), metadata: { name, resourceVersion } });
    const refused = await post(CM, withVersion('rv-refused', '12345'));
    expect(refused.status).to.equal(500);
    expect(refused.json<Obj>()).to.deep.equal(refusal);
    expect((await server.request('GET', `${CM}/rv-refused`)).status).to.equal(404);
    const existing = (await post(CM, configMap('rv-existing'))).json<Obj>();
    const again = await post(CM, existing);
    expect(again.status).to.equal(500);
    expect(again.json<Obj>()).to.deep.equal(refusal);
    const applied = await server.request('PATCH', `${CM}/rv-applied?fieldManager=test`, { body: JSON.stringify(withVersion('rv-applied', '7')), headers: { 'Content-Type': 'application/apply-patch+yaml' } });
    expect(applied.status).to.equal(500);
    expect(applied.json<Obj>()).to.deep.equal(refusal);
    // Versions Go does not parse as a uint64 other than 0 pass, and the server sets its own.
    for (const [name, version] of [['rv-zero', '0'], ['rv-negative', '-1'], ['rv-text', 'abc']]) {
      const created = await post(CM, withVersion(name, version));
      expect(created.status, version).to.equal(201);
      expect(created.json<Obj>().metadata.resourceVersion).to.match(/^[1-9][0-9]*$/);
    }
    const dryRun = await post(`${CM}?dryRun=All`, withVersion('rv-dry', '12345'));
    expect(dryRun.status).to.equal(201);
    expect(dryRun.json<Obj>().metadata.resourceVersion).to.equal('12345');
  });

  it('writes Go\'s reason phrases in HTTP/1.1 status lines: 413 Request Entity Too Large', async () => {
    const statusLine = await new Promise<string>((resolve, reject) => {
      const body = JSON.stringify({ ...configMap('too-large'), data: { a: 'x'.repeat(4 * 1024 * 1024) } });
      const { ca, cert, key } = server.clientCredentials();
      const req = https.request({ host: '127.0.0.1', port: server.port, method: 'POST', path: CM, ca, cert, key, agent: false, headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) } }, (res) => {
        res.resume();
        resolve(`${res.statusCode} ${res.statusMessage}`);
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(statusLine).to.equal('413 Request Entity Too Large');
  });

  it('answers a JSON or merge patch that changes the kind with v1.25\'s 422 from decoding the patched object', async () => {
    await post(CM, configMap('kind-patched'));
    const jsonPatch = await server.request('PATCH', `${CM}/kind-patched`, { body: JSON.stringify([{ op: 'replace', path: '/kind', value: 'Secret' }]), headers: { 'Content-Type': 'application/json-patch+json' } });
    expect(jsonPatch.status, jsonPatch.text).to.equal(422);
    const status = jsonPatch.json<Obj>();
    expect(status.reason).to.equal('Invalid');
    expect(status.message).to.match(/^ "" is invalid: patch: Invalid value: "\{.*\\"kind\\":\\"Secret\\".*\}": converting \(v1\.Secret\) to \(core\.ConfigMap\): unknown conversion$/);
    expect(status.details.causes[0]).to.include({ reason: 'FieldValueInvalid', field: 'patch' });
    const mergePatch = await server.request('PATCH', `${CM}/kind-patched`, { body: JSON.stringify({ kind: 'Widget' }), headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(mergePatch.status, mergePatch.text).to.equal(422);
    expect(mergePatch.json<Obj>().message).to.match(/: no kind "Widget" is registered for version "v1" in scheme "pkg\/api\/legacyscheme\/scheme\.go:30"$/);
  });

  it('refuses a delete whose preconditions fail with rest.BeforeDelete\'s messages, naming the kind', async () => {
    const created = (await post(CM, configMap('preconditioned'))).json<Obj>();
    const { uid, resourceVersion } = created.metadata;
    const wrongUid = await server.request('DELETE', `${CM}/preconditioned`, { body: JSON.stringify({ preconditions: { uid: 'not-it' } }) });
    expect(wrongUid.status).to.equal(409);
    expect(wrongUid.json<Obj>()).to.deep.include({
      message: `Operation cannot be fulfilled on ConfigMap "preconditioned": the UID in the precondition (not-it) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
      details: { name: 'preconditioned', kind: 'ConfigMap' },
    });
    const wrongVersion = await server.request('DELETE', `${CM}/preconditioned`, { body: JSON.stringify({ preconditions: { resourceVersion: '1' } }) });
    expect(wrongVersion.status).to.equal(409);
    expect(wrongVersion.json<Obj>().message).to.equal(`Operation cannot be fulfilled on ConfigMap "preconditioned": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${resourceVersion}). The object might have been modified`);
  });

  it('moves a terminating pod\'s deletionTimestamp by the difference when a delete shortens its grace period; longer or none changes nothing', async () => {
    const pods = '/api/v1/namespaces/default/pods';
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'shortened' }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'busybox' }] } };
    expect((await post(pods, pod)).status).to.equal(201);
    const first = (await server.request('DELETE', `${pods}/shortened?gracePeriodSeconds=300`)).json<Obj>();
    expect(first.metadata.deletionGracePeriodSeconds).to.equal(300);
    const firstDeadline = Date.parse(first.metadata.deletionTimestamp);
    const shorter = (await server.request('DELETE', `${pods}/shortened?gracePeriodSeconds=100`)).json<Obj>();
    expect(shorter.metadata.deletionGracePeriodSeconds).to.equal(100);
    expect(Date.parse(shorter.metadata.deletionTimestamp)).to.equal(firstDeadline - 200_000);
    for (const query of ['?gracePeriodSeconds=200', '']) {
      const unchanged = (await server.request('DELETE', `${pods}/shortened${query}`)).json<Obj>();
      expect(unchanged.metadata, query).to.include({ deletionTimestamp: shorter.metadata.deletionTimestamp, deletionGracePeriodSeconds: 100, resourceVersion: shorter.metadata.resourceVersion });
    }
    const now = await server.request('DELETE', `${pods}/shortened?gracePeriodSeconds=0`);
    expect(now.status).to.equal(200);
    expect(now.json<Obj>().metadata).to.include({ deletionTimestamp: new Date(firstDeadline - 300_000).toISOString().replace('.000Z', 'Z'), deletionGracePeriodSeconds: 0 });
    expect((await server.request('GET', `${pods}/shortened`)).status).to.equal(404);
  });

  it('answers an update that removes the last finalizer of a terminating object with the object as last stored', async () => {
    await post(CM, { ...configMap('last-finalizer'), metadata: { name: 'last-finalizer', finalizers: ['example.com/hold'] } });
    expect((await server.request('DELETE', `${CM}/last-finalizer`)).status).to.equal(200);
    const terminating = (await server.request('GET', `${CM}/last-finalizer`)).json<Obj>();
    const released = await server.request('PUT', `${CM}/last-finalizer`, { body: JSON.stringify({ ...terminating, metadata: { ...terminating.metadata, finalizers: [] }, data: { a: 'changed' } }) });
    expect(released.status).to.equal(200);
    expect(released.json<Obj>()).to.deep.equal(terminating);
    expect((await server.request('GET', `${CM}/last-finalizer`)).status).to.equal(404);
  });

  it('escapes <, > and & in JSON as Go\'s encoder does: stored objects, lists, watch events and the server\'s own Status', async () => {
    const rv = (await post(CM, configMap('html-escaped', { page: '<b>bold</b> & more' }))).json<Obj>().metadata.resourceVersion as string;
    const escaped = '"page":"\\u003cb\\u003ebold\\u003c/b\\u003e \\u0026 more"';
    expect((await server.request('GET', `${CM}/html-escaped`)).text).to.contain(escaped);
    expect((await server.request('GET', `${CM}?fieldSelector=metadata.name%3Dhtml-escaped`)).text).to.contain(escaped);
    const watched = await new Promise<string>((resolve, reject) => {
      const { ca, cert, key } = server.clientCredentials();
      const req = https.request({ host: '127.0.0.1', port: server.port, path: `${CM}?watch=1&fieldSelector=metadata.name%3Dhtml-escaped&resourceVersion=${Number(rv) - 1}`, ca, cert, key, agent: false }, (res) => {
        res.once('data', (chunk: Buffer) => {
          resolve(chunk.toString());
          req.destroy();
        });
      });
      req.on('error', reject);
      req.end();
    });
    expect(watched).to.contain(escaped);
    const missing = await server.request('GET', `${CM}/a%26b`);
    expect(missing.status).to.equal(404);
    expect(missing.text).to.contain('"message":"configmaps \\"a\\u0026b\\" not found"');
  });
});
