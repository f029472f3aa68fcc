/**
 * Regression tests for what was found wrong when the API was tried as a new user would (issue 16),
 * against a real `carina server`: each case is v1.25's answer and would fail on the code before.
 */
import { expect } from 'chai';
import { connect as tlsConnect } from 'node:tls';
import { ProtobufCodec } from '../../../src/codec';
import { CarinaApiProcess } from '../../support/carina-api-process';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const CM = '/api/v1/namespaces/default/configmaps';
const PARTIAL = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const PARTIAL_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

describe('kube-apiserver v1.25 fidelity (issue 16 regressions)', function () {
  this.timeout(60_000);
  let server: CarinaApiProcess;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) => server.request('POST', path, { body: JSON.stringify(body), headers });
  const configMap = (name: string, data: Record<string, string> = { a: '1' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'fidelity' } }, data });

  before(async () => {
    server = await CarinaApiProcess.start({ extraArgs: ['--runtime-config', 'apps/v1/daemonsets=false'] });
  });

  after(async () => {
    await server?.stop();
  });

  it('merges a Secret\'s stringData into data and never stores or returns it', async () => {
    const created = await post('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sd' }, data: { a: Buffer.from('old').toString('base64'), b: Buffer.from('keep').toString('base64') }, stringData: { a: 'new', c: 'plain' } });
    expect(created.status, created.text).to.equal(201);
    for (const secret of [created.json<Obj>(), (await server.request('GET', '/api/v1/namespaces/default/secrets/sd')).json<Obj>()]) {
      expect(secret.stringData).to.equal(undefined);
      expect(secret.data).to.deep.equal({ a: Buffer.from('new').toString('base64'), b: Buffer.from('keep').toString('base64'), c: Buffer.from('plain').toString('base64') });
    }
  });

  it('answers 404 for a cluster-scoped resource under a namespace path', async () => {
    for (const path of ['/apis/rbac.authorization.k8s.io/v1/namespaces/x/clusterroles', '/api/v1/namespaces/default/nodes', '/apis/authorization.k8s.io/v1/namespaces/x/subjectaccessreviews']) {
      const result = await server.request(path.includes('reviews') ? 'POST' : 'GET', path, path.includes('reviews') ? { body: '{}' } : {});
      expect(result.status, path).to.equal(404);
    }
  });

  it('validates write options as v1.25 does: one 422 on the options kind, listing every problem', async () => {
    const bogus = await post(`${CM}?fieldValidation=Bogus`, configMap('fv'));
    expect(bogus.status).to.equal(422);
    expect(bogus.json()).to.deep.include({ message: 'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"', reason: 'Invalid' });
    const long = await post(`${CM}?fieldManager=${'m'.repeat(129)}&dryRun=Maybe`, configMap('fm'));
    expect(long.status).to.equal(422);
    expect(long.json<Obj>().message).to.equal('CreateOptions.meta.k8s.io "" is invalid: [fieldManager: Too long: must have at most 128 bytes, dryRun: Unsupported value: []string{"Maybe"}: supported values: "All"]');
    expect((await post(`${CM}?fieldManager=${'m'.repeat(128)}`, configMap('fm128'))).status).to.equal(201);
    const apply = await server.request('PATCH', `${CM}/fm128?force=true`, { body: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fm128}\n', headers: { 'Content-Type': 'application/apply-patch+yaml' } });
    expect(apply.json<Obj>().message).to.equal('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    expect((await server.request('GET', `${CM}/fv`)).status).to.equal(404);
  });

  it('clears managed fields with [{}] through merge patch, JSON patch and PUT alike', async () => {
    const created = await post(`${CM}?fieldManager=creator`, configMap('mf'));
    expect(created.json<Obj>().metadata.managedFields).to.have.length(1);
    const merge = await server.request('PATCH', `${CM}/mf`, { body: JSON.stringify({ metadata: { managedFields: [{}] } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(merge.status, merge.text).to.equal(200);
    expect(merge.json<Obj>().metadata.managedFields).to.equal(undefined);
    // Untracked objects stay untracked until applied to (v1.25's skip-non-applied manager): apply starts tracking again.
    const seeded = await server.request('PATCH', `${CM}/mf?fieldManager=tool`, { body: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mf}\ndata: {b: "2"}\n', headers: { 'Content-Type': 'application/apply-patch+yaml' } });
    expect(seeded.json<Obj>().metadata.managedFields.map((m: Obj) => m.manager), seeded.text).to.deep.equal(['tool', 'before-first-apply']);
    const json = await server.request('PATCH', `${CM}/mf`, { body: JSON.stringify([{ op: 'replace', path: '/metadata/managedFields', value: [{}] }]), headers: { 'Content-Type': 'application/json-patch+json' } });
    expect(json.status, json.text).to.equal(200);
    expect(json.json<Obj>().metadata.managedFields).to.equal(undefined);
    const current = (await server.request('GET', `${CM}/mf`)).json<Obj>();
    const put = await server.request('PUT', `${CM}/mf?fieldManager=putter`, { body: JSON.stringify({ ...current, data: { c: '3' }, metadata: { ...current.metadata, managedFields: [{}] } }) });
    expect(put.status, put.text).to.equal(200);
    expect(put.json<Obj>().metadata.managedFields.map((m: Obj) => m.manager)).to.deep.equal(['putter']);
  });

  it('serves PartialObjectMetadata and PartialObjectMetadataList for get, list and watch, in JSON and Protobuf', async () => {
    expect((await post(CM, configMap('pm'))).status).to.equal(201);
    const one = await server.request('GET', `${CM}/pm`, { headers: { Accept: PARTIAL } });
    expect(one.status).to.equal(200);
    expect(one.json<Obj>()).to.deep.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
    expect(one.json<Obj>().metadata.name).to.equal('pm');
    expect(one.json<Obj>().data).to.equal(undefined);
    const list = await server.request('GET', `${CM}?labelSelector=app%3Dfidelity`, { headers: { Accept: PARTIAL_LIST } });
    expect(list.json<Obj>()).to.deep.include({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1' });
    expect(list.json<Obj>().items.map((i: Obj) => i.kind)).to.include('PartialObjectMetadata');
    expect(list.json<Obj>().items.every((i: Obj) => i.data === undefined)).to.equal(true);
    const v1beta1 = await server.request('GET', `${CM}/pm`, { headers: { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1' } });
    expect(v1beta1.json<Obj>().apiVersion).to.equal('meta.k8s.io/v1beta1');
    const mismatch = await server.request('GET', CM, { headers: { Accept: PARTIAL } });
    expect(mismatch.status).to.equal(406);
    expect(mismatch.json<Obj>().message).to.contain('you requested PartialObjectMetadata, but the requested object is a list');
    const protobuf = await server.request('GET', `${CM}?labelSelector=app%3Dfidelity`, { headers: { Accept: 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' } });
    expect(protobuf.headers['content-type']).to.equal('application/vnd.kubernetes.protobuf');
    const decoded = ProtobufCodec.load().decode(protobuf.body);
    expect(decoded).to.deep.include({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1' });
    const watched = await server.watch(`${CM}?watch=1&fieldSelector=metadata.name%3Dpm`, (events) => events.length >= 1, 5000, { Accept: PARTIAL });
    expect(watched.events[0].object).to.deep.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
    expect(watched.events[0].object.data).to.equal(undefined);
  });

  it('refuses hostile paths with 400 before routing: a Secret is never reached through configmaps/..', async () => {
    expect((await post('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'target' } })).status).to.equal(201);
    for (const path of [`${CM}/../secrets/target`, `${CM}/%2e%2e/secrets/target`, `${CM}/%C0%AE`, `${CM}/%E0%A4%A`, `${CM}/a%2Fb`, `${CM}/a%5Cb`]) {
      const result = await server.request('DELETE', path);
      expect(result.status, path).to.equal(400);
      expect(result.json<Obj>()).to.deep.include({ kind: 'Status', reason: 'BadRequest' });
    }
    expect((await server.request('GET', '/api/v1/namespaces/default/secrets/target')).status).to.equal(200);
  });

  it('answers 400 to bodies nested too deeply, for creates and every patch type, and stores nothing', async () => {
    expect((await post(CM, configMap('deep'))).status).to.equal(201);
    const nested = (depth: number) => `${'{"x":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const create = await server.request('POST', CM, { body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deeper"},"data":${nested(50_000)}}` });
    expect(create.status).to.equal(400);
    for (const [type, body] of [
      ['application/merge-patch+json', `{"metadata":${nested(50_000)}}`],
      ['application/strategic-merge-patch+json', `{"metadata":${nested(50_000)}}`],
      ['application/json-patch+json', `[{"op":"add","path":"/metadata/annotations","value":${nested(50_000)}}]`],
    ]) {
      const result = await server.request('PATCH', `${CM}/deep`, { body, headers: { 'Content-Type': type } });
      expect(result.status, type).to.be.within(400, 499);
    }
    expect((await server.request('GET', `${CM}/deep`)).json<Obj>().metadata.annotations).to.equal(undefined);
    expect((await server.request('GET', `${CM}/deeper`)).status).to.equal(404);
  });

  it('refuses query values Go does not parse as int64 with 400 and Go\'s text', async () => {
    for (const [query, message] of [
      ['limit=1e3', 'strconv.ParseInt: parsing "1e3": invalid syntax'],
      ['limit=1.5', 'strconv.ParseInt: parsing "1.5": invalid syntax'],
      ['limit=99999999999999999999', 'strconv.ParseInt: parsing "99999999999999999999": value out of range'],
      ['timeoutSeconds=abc', 'strconv.ParseInt: parsing "abc": invalid syntax'],
    ]) {
      const result = await server.request('GET', `${CM}?${query}`);
      expect(result.status, query).to.equal(400);
      expect(result.json<Obj>().message).to.equal(message);
    }
    expect((await server.request('GET', `${CM}?limit=9223372036854775807`)).status).to.equal(200);
  });

  it('answers 415 to a Content-Type that is no media type', async () => {
    const result = await server.request('POST', CM, { body: JSON.stringify(configMap('ct')), headers: { 'Content-Type': 'bogus' } });
    expect(result.status).to.equal(415);
    expect((await server.request('GET', `${CM}/ct`)).status).to.equal(404);
  });

  it('refuses a change of metadata.uid as immutable', async () => {
    const created = (await post(CM, configMap('uid'))).json<Obj>();
    const result = await server.request('PATCH', `${CM}/uid`, { body: JSON.stringify({ metadata: { uid: 'abc' } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(result.status).to.equal(422);
    expect(result.json<Obj>().message).to.equal('ConfigMap "uid" is invalid: metadata.uid: Invalid value: "abc": field is immutable');
    expect((await server.request('GET', `${CM}/uid`)).json<Obj>().metadata.uid).to.equal(created.metadata.uid);
  });

  it('picks the cipher by its own order, as Go\'s TLS server does: AES-128-GCM for a client that asks AES-256-GCM first', async () => {
    const negotiated = async (options: { maxVersion?: 'TLSv1.2' }) => new Promise<string>((resolve, reject) => {
      // Node's client lists TLS_AES_256_GCM_SHA384 (and for TLS 1.2 its default order) first.
      const socket = tlsConnect({ host: '127.0.0.1', port: server.port, ca: server.caPem, servername: 'localhost', ...options }, () => {
        resolve(socket.getCipher().name);
        socket.end();
      });
      socket.on('error', reject);
    });
    expect(await negotiated({})).to.equal('TLS_AES_128_GCM_SHA256');
    expect(await negotiated({ maxVersion: 'TLSv1.2' })).to.equal('ECDHE-RSA-AES128-GCM-SHA256');
  });

  it('answers an HTTP/1.1 request without Host with 400, as Go\'s server does', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: server.port, ca: server.caPem, servername: 'localhost', ALPNProtocols: ['http/1.1'] }, () => {
        socket.write('GET /version HTTP/1.1\r\n\r\n');
      });
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      setTimeout(() => socket.end(), 3000).unref();
    });
    expect(answer.split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request');
    expect(answer).to.contain('missing required Host header');
  });

  it('serves what discovery lists: bindings, pods/binding, pods/eviction, componentstatuses and the connect subresources', async () => {
    const discovery = (await server.request('GET', '/api/v1')).json<{ resources: Obj[] }>().resources.map((r) => r.name);
    expect(discovery).to.include.members(['bindings', 'pods/binding', 'pods/eviction', 'componentstatuses']);
    expect(discovery).to.include.members(['pods/log', 'pods/exec', 'pods/attach', 'pods/portforward', 'pods/proxy', 'nodes/proxy', 'services/proxy']);
    const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'evict' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    for (const name of ['p1', 'p2', 'p3']) expect((await post('/api/v1/namespaces/default/pods', pod(name))).status).to.equal(201);
    const bound = await post('/api/v1/namespaces/default/pods/p1/binding', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p1' }, target: { kind: 'Node', name: 'node-a' } });
    expect(bound.status, bound.text).to.equal(201);
    const p1 = (await server.request('GET', '/api/v1/namespaces/default/pods/p1')).json<Obj>();
    expect(p1.spec.nodeName).to.equal('node-a');
    expect(p1.status.conditions.find((c: Obj) => c.type === 'PodScheduled')?.status).to.equal('True');
    const again = await post('/api/v1/namespaces/default/bindings', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p1' }, target: { kind: 'Node', name: 'node-b' } });
    expect(again.status).to.equal(409);
    expect(again.json<Obj>().message).to.equal('Operation cannot be fulfilled on pods/binding "p1": pod p1 is already assigned to node "node-a"');
    expect((await post('/api/v1/namespaces/default/bindings', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p2' }, target: { kind: 'Node', name: 'node-b' } })).status).to.equal(201);
    // No budget: the eviction deletes the pod.
    const evicted = await post('/api/v1/namespaces/default/pods/p3/eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p3', namespace: 'default' } });
    expect(evicted.status, evicted.text).to.equal(201);
    expect((await server.request('GET', '/api/v1/namespaces/default/pods/p3')).status).to.equal(404);
    // A budget nobody has processed yet refuses with 429, as kube-apiserver without its controller
    // does, for a running pod (a Pending one goes whatever its budget says).
    const p2 = (await server.request('GET', '/api/v1/namespaces/default/pods/p2')).json<Obj>();
    expect((await server.request('PUT', '/api/v1/namespaces/default/pods/p2/status', { body: JSON.stringify({ ...p2, status: { ...p2.status, phase: 'Running' } }) })).status).to.equal(200);
    expect((await post('/apis/policy/v1/namespaces/default/poddisruptionbudgets', { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'pdb' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'evict' } } } })).status).to.equal(201);
    const refused = await post('/api/v1/namespaces/default/pods/p2/eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p2', namespace: 'default' } });
    expect(refused.status).to.equal(429);
    expect(refused.json<Obj>()).to.deep.include({ reason: 'TooManyRequests', message: 'Cannot evict pod as it would violate the pod\'s disruption budget.' });
    expect((await server.request('GET', '/api/v1/namespaces/default/pods/p2')).status).to.equal(200);
    const cs = await server.kubectl(['get', 'componentstatuses', '-o', 'json']);
    expect(cs.code, cs.stderr).to.equal(0);
    const items = (JSON.parse(cs.stdout) as Obj).items as Obj[];
    expect(items.map((i) => i.metadata.name)).to.include('etcd-0');
    expect(items.find((i) => i.metadata.name === 'etcd-0')?.conditions[0]).to.deep.include({ type: 'Healthy', status: 'True' });
    expect(cs.stderr).to.contain('v1 ComponentStatus is deprecated in v1.19+');
  });

  it('records a write\'s managed fields before mutating admission and the strategy, without the reset fields, as v1.25 does', async () => {
    const pods = '/api/v1/namespaces/default/pods';
    const created = await post(`${pods}?fieldManager=maker`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'owned' }, spec: { containers: [{ name: 'c', image: 'nginx' }] }, status: { message: 'from the client' } });
    expect(created.status, created.text).to.equal(201);
    const pod = created.json<Obj>();
    // Admission (ServiceAccount, DefaultTolerationSeconds, Priority) and the strategy (status) did their work...
    expect(pod.spec.serviceAccountName).to.equal('default');
    expect(pod.spec.tolerations).to.have.length(2);
    expect(pod.status.phase).to.equal('Pending');
    const fieldsOf = (object: Obj, manager: string): Obj => (object.metadata.managedFields as Obj[]).find((m) => m.manager === manager)?.fieldsV1 ?? {};
    // ...but the manager owns what it sent and the defaults filled on decoding, nothing else.
    const spec = fieldsOf(pod, 'maker')['f:spec'] as Obj;
    expect(Object.keys(spec)).to.include.members(['f:containers', 'f:dnsPolicy', 'f:restartPolicy', 'f:schedulerName', 'f:terminationGracePeriodSeconds']);
    for (const added of ['f:serviceAccountName', 'f:tolerations', 'f:priority', 'f:volumes']) expect(Object.keys(spec)).to.not.include(added);
    expect(fieldsOf(pod, 'maker')).to.not.have.property('f:status');

    // A main-resource update cannot set status (a reset field): the putter owns its label only.
    const put = await server.request('PUT', `${pods}/owned?fieldManager=putter`, { body: JSON.stringify({ ...pod, metadata: { ...pod.metadata, labels: { tier: 'web' } }, status: { ...pod.status, message: 'ignored' } }) });
    expect(put.status, put.text).to.equal(200);
    expect(put.json<Obj>().status.message).to.equal(undefined);
    expect(fieldsOf(put.json<Obj>(), 'putter')).to.deep.equal({ 'f:metadata': { 'f:labels': { '.': {}, 'f:tier': {} } } });

    // Through /status, spec is the reset field: the agent owns the status it changed.
    const current = put.json<Obj>();
    const status = await server.request('PUT', `${pods}/owned/status?fieldManager=agent`, { body: JSON.stringify({ ...current, spec: { ...current.spec, activeDeadlineSeconds: 5 }, status: { ...current.status, message: 'running' } }) });
    expect(status.status, status.text).to.equal(200);
    const agent = (status.json<Obj>().metadata.managedFields as Obj[]).find((m) => m.manager === 'agent');
    expect(agent).to.deep.include({ operation: 'Update', subresource: 'status' });
    expect(agent?.fieldsV1).to.deep.equal({ 'f:status': { 'f:message': {} } });

    // Server-side apply ignores the reset fields too: the applier does not own the status it sent.
    const applied = await server.request('PATCH', `${pods}/owned?fieldManager=applier`, {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'owned', annotations: { note: 'x' } }, status: { message: 'applied' } }),
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(applied.status, applied.text).to.equal(200);
    expect(fieldsOf(applied.json<Obj>(), 'applier')).to.deep.equal({ 'f:metadata': { 'f:annotations': { 'f:note': {} } } });
    expect(applied.json<Obj>().status.message).to.equal('running');
  });

  it('records a Secret\'s stringData as the data it becomes in the writer\'s managed fields', async () => {
    const created = await post('/api/v1/namespaces/default/secrets?fieldManager=maker', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sd-owned' }, stringData: { token: 'plain' } });
    expect(created.status, created.text).to.equal(201);
    const fields = (created.json<Obj>().metadata.managedFields as Obj[])[0].fieldsV1;
    expect(fields['f:data']).to.deep.equal({ '.': {}, 'f:token': {} });
    expect(fields).to.not.have.property('f:stringData');
  });

  it('keeps the deprecation Warning beside a field-validation warning', async () => {
    const result = await post('/apis/autoscaling/v2beta2/namespaces/default/horizontalpodautoscalers', {
      apiVersion: 'autoscaling/v2beta2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'hpa' }, bogusField: 1,
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'x', apiVersion: 'apps/v1' }, minReplicas: 1, maxReplicas: 2 },
    });
    expect(result.status, result.text).to.equal(201);
    const warnings = ([] as string[]).concat(result.headers.warning ?? []).join('\n');
    expect(warnings).to.contain('autoscaling/v2beta2 HorizontalPodAutoscaler is deprecated in v1.23+');
    expect(warnings).to.contain('unknown field \\"bogusField\\"');
  });

  it('answers a delete of a Service or a ServiceAccount with the deleted object, of a ConfigMap with a Status', async () => {
    expect((await post('/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'gone' } })).status).to.equal(201);
    expect((await post('/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'gone' }, spec: { ports: [{ port: 80 }] } })).status).to.equal(201);
    expect((await post(CM, configMap('gone'))).status).to.equal(201);
    expect((await server.request('DELETE', '/api/v1/namespaces/default/serviceaccounts/gone')).json<Obj>().kind).to.equal('ServiceAccount');
    expect((await server.request('DELETE', '/api/v1/namespaces/default/services/gone')).json<Obj>().kind).to.equal('Service');
    expect((await server.request('DELETE', `${CM}/gone`)).json<Obj>()).to.deep.include({ kind: 'Status', status: 'Success' });
  });

  it('counts server-side apply as APPLY and a collection delete as DELETECOLLECTION in the request metrics', async () => {
    await server.request('PATCH', `${CM}/metrics-apply?fieldManager=m`, { body: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: metrics-apply}\n', headers: { 'Content-Type': 'application/apply-patch+yaml' } });
    await server.request('DELETE', `${CM}?labelSelector=nothing%3Dhere`);
    const metrics = (await server.request('GET', '/metrics')).text;
    expect(metrics).to.match(/apiserver_request_total\{[^}]*verb="APPLY"[^}]*resource="configmaps"/);
    expect(metrics).to.match(/apiserver_request_total\{[^}]*verb="DELETECOLLECTION"[^}]*resource="configmaps"/);
  });

  it('serves a group-version without a resource --runtime-config switched off', async () => {
    const apps = (await server.request('GET', '/apis/apps/v1')).json<{ resources: Obj[] }>().resources.map((r) => r.name);
    expect(apps).to.include('deployments');
    expect(apps).not.to.include('daemonsets');
    expect((await server.request('GET', '/apis/apps/v1/daemonsets')).status).to.equal(404);
    expect((await server.request('GET', '/apis/apps/v1/deployments')).status).to.equal(200);
  });
});

describe('kube-apiserver v1.25 fidelity: the shutdown delay (issue 16)', function () {
  this.timeout(60_000);

  it('fails /readyz but not /healthz or /livez during --shutdown-delay-duration', async () => {
    const server = await CarinaApiProcess.start({ extraArgs: ['--shutdown-delay-duration', '3s'] });
    try {
      server.terminate();
      const deadline = Date.now() + 2000;
      let readyz = 200;
      while (readyz === 200 && Date.now() < deadline) readyz = (await server.request('GET', '/readyz')).status;
      expect(readyz).to.equal(500);
      expect((await server.request('GET', '/healthz')).status).to.equal(200);
      expect((await server.request('GET', '/livez')).status).to.equal(200);
    } finally {
      await server.stop();
    }
  });
});
