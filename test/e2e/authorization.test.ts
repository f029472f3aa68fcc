/**
 * Authorization (spec 02 §2.4, §5.8) end to end with kubectl and HTTPS against carina servers:
 * RBAC with v1.25's default policy (roles, bindings, resourceNames, non-resource URLs,
 * aggregation, escalation and bind refusals), the Node authorizer's graph, every review API,
 * the default policy's reconciliation across restarts and concurrent replicas, hostile paths,
 * and the ABAC and Webhook modes. Users come from a static token file.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CarinaApiProcess } from '../support/carina-api-process';
import { httpsRequest, runKubectl, writeKubeconfig, type Credential } from '../support/client-credentials';
import { TestTokenWebhook } from '../support/token-webhook-server';
import { until } from '../support/until';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const TOKENS = [
  'alice-token,alice,1001,devs',
  'bob-token,bob,1002',
  'node1-token,system:node:n1,n1,system:nodes',
  'node2-token,system:node:n2,n2,system:nodes',
  'abe-token,abe,1003',
  'hooky-token,hooky,1004',
].join('\n') + '\n';

const rbac = (kind: string, metadata: Json, rest: Json) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind, metadata, ...rest });
const roleRef = (kind: string, name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });
const user = (name: string) => ({ kind: 'User', name, apiGroup: 'rbac.authorization.k8s.io' });

function tokenFile(dir: string): string {
  const path = join(dir, 'tokens.csv');
  writeFileSync(path, TOKENS);
  return path;
}

describe('authorization: RBAC with v1.25\'s default policy, the Node authorizer and the review APIs (e2e)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: CarinaApiProcess;
  const as = (token: string, args: string[]) => runKubectl(writeKubeconfig(server.url, server.caPem, { token }, dir), args);
  const request = (method: string, path: string, credential?: Credential, body?: unknown) =>
    httpsRequest(server.port, server.caPem, method, path, { credential, body: body === undefined ? undefined : JSON.stringify(body) });
  const apply = async (object: Json) => {
    const result = await server.kubectl(['apply', '-f', '-'], { input: JSON.stringify(object) });
    expect(result.code, result.stderr).to.equal(0);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carina-authz-e2e-'));
    server = await CarinaApiProcess.start({ extraArgs: ['--token-auth-file', tokenFile(dir)] });
    for (const ns of ['dev', 'prod']) expect((await server.kubectl(['create', 'namespace', ns])).code).to.equal(0);
  });

  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a user bound to view in one namespace reads there and nowhere else, and cannot write', async () => {
    expect((await server.kubectl(['-n', 'dev', 'create', 'rolebinding', 'alice-view', '--clusterrole=view', '--user=alice'])).code).to.equal(0);
    await until('the binding to take effect', async () => (await as('alice-token', ['-n', 'dev', 'get', 'configmaps'])).code === 0, 5000);
    const write = await as('alice-token', ['-n', 'dev', 'create', 'configmap', 'x']);
    expect(write.stderr).to.contain('User "alice" cannot create resource "configmaps" in API group "" in the namespace "dev"');
    const elsewhere = await as('alice-token', ['-n', 'prod', 'get', 'configmaps']);
    expect(elsewhere.stderr).to.contain('User "alice" cannot list resource "configmaps" in API group "" in the namespace "prod"');
    const secrets = await as('alice-token', ['-n', 'dev', 'get', 'secrets']);
    expect(secrets.code, 'view does not read secrets').to.equal(1);
    expect((await as('alice-token', ['auth', 'can-i', 'list', 'pods', '-n', 'dev'])).stdout.trim()).to.equal('yes');
    expect((await as('alice-token', ['auth', 'can-i', 'delete', 'pods', '-n', 'dev'])).stdout.trim()).to.equal('no');
  });

  it('resourceNames limit a rule to the named objects; a list must name the object through its field selector', async () => {
    await apply(rbac('Role', { name: 'one-cm', namespace: 'prod' }, { rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['allowed'], verbs: ['get', 'list', 'update'] }] }));
    await apply(rbac('RoleBinding', { name: 'bob-one-cm', namespace: 'prod' }, { roleRef: roleRef('Role', 'one-cm'), subjects: [user('bob')] }));
    for (const name of ['allowed', 'other']) expect((await server.kubectl(['-n', 'prod', 'create', 'configmap', name])).code).to.equal(0);
    await until('the role to apply', async () => (await as('bob-token', ['-n', 'prod', 'get', 'configmap', 'allowed'])).code === 0, 5000);
    expect((await as('bob-token', ['-n', 'prod', 'get', 'configmap', 'other'])).stderr).to.contain('configmaps "other" is forbidden: User "bob" cannot get resource "configmaps"');
    expect((await as('bob-token', ['-n', 'prod', 'get', 'configmaps'])).code).to.equal(1);
    expect((await as('bob-token', ['-n', 'prod', 'get', 'configmaps', '--field-selector', 'metadata.name=allowed'])).code).to.equal(0);
  });

  it('non-resource URLs are granted by ClusterRoles, with a trailing * as a prefix', async () => {
    expect((await request('GET', '/metrics', { token: 'bob-token' })).status).to.equal(403);
    await apply(rbac('ClusterRole', { name: 'metrics-reader' }, { rules: [{ nonResourceURLs: ['/metrics', '/livez/*'], verbs: ['get'] }] }));
    await apply(rbac('ClusterRoleBinding', { name: 'bob-metrics' }, { roleRef: roleRef('ClusterRole', 'metrics-reader'), subjects: [user('bob')] }));
    await until('the metrics grant', async () => (await request('GET', '/metrics', { token: 'bob-token' })).status === 200, 5000);
    expect((await request('GET', '/livez/ping', { token: 'bob-token' })).status).to.equal(200);
    expect((await request('GET', '/openapi/v2', { token: 'bob-token' })).status).to.equal(200, 'system:discovery covers /openapi/*');
    const denied = await request('POST', '/metrics', { token: 'bob-token' });
    expect(denied.status).to.equal(403);
    expect(denied.json()).to.deep.include({ message: 'forbidden: User "bob" cannot post path "/metrics"', reason: 'Forbidden' });
  });

  it('an aggregated ClusterRole picks up a new labelled role within seconds', async () => {
    await apply(rbac('ClusterRole', { name: 'widgets-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, { rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list'] }] }));
    await until('view to aggregate widgets', async () => {
      const view = await server.kubectl(['get', 'clusterrole', 'view', '-o', 'json']);
      return (JSON.parse(view.stdout) as Json).rules.some((r: Json) => r.resources?.includes('widgets'));
    }, 5000);
    // kubectl auth can-i cannot name a group discovery does not know: ask with a SelfSubjectAccessReview.
    const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace: 'dev', verb: 'list', group: 'example.com', resource: 'widgets' } } };
    await until('alice to list widgets through view', async () => (await request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { token: 'alice-token' }, review)).json<Json>().status.allowed === true, 5000);
  });

  it('refuses to grant what the writer does not hold (escalate) and to bind roles without bind', async () => {
    await apply(rbac('Role', { name: 'rbac-manager', namespace: 'dev' }, { rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['create', 'get', 'list', 'update'] }, { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] }));
    await apply(rbac('RoleBinding', { name: 'alice-rbac-manager', namespace: 'dev' }, { roleRef: roleRef('Role', 'rbac-manager'), subjects: [user('alice')] }));
    await until('the manager role', async () => (await as('alice-token', ['auth', 'can-i', 'create', 'roles', '-n', 'dev'])).stdout.trim() === 'yes', 5000);
    const modest = await as('alice-token', ['-n', 'dev', 'create', 'role', 'cm-reader', '--verb=get', '--resource=configmaps']);
    expect(modest.code, modest.stderr).to.equal(0);
    const greedy = await as('alice-token', ['-n', 'dev', 'create', 'role', 'secret-reader', '--verb=get', '--resource=secrets']);
    expect(greedy.code).to.equal(1);
    expect(greedy.stderr).to.contain('roles.rbac.authorization.k8s.io "secret-reader" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:');
    expect(greedy.stderr).to.contain('{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}');
    const bindAdmin = await as('alice-token', ['-n', 'dev', 'create', 'rolebinding', 'alice-admin', '--clusterrole=admin', '--user=alice']);
    expect(bindAdmin.code).to.equal(1);
    expect(bindAdmin.stderr).to.contain('rolebindings.rbac.authorization.k8s.io "alice-admin" is forbidden');
    // With bind on that one ClusterRole, the binding is allowed without holding its permissions.
    await apply(rbac('Role', { name: 'bind-admin', namespace: 'dev' }, { rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['admin'] }] }));
    await apply(rbac('RoleBinding', { name: 'alice-bind-admin', namespace: 'dev' }, { roleRef: roleRef('Role', 'bind-admin'), subjects: [user('alice')] }));
    await until('bind to be granted', async () => (await as('alice-token', ['-n', 'dev', 'create', 'rolebinding', 'bob-admin', '--clusterrole=admin', '--user=bob'])).code === 0, 5000);
    // Nothing of a refused write was stored.
    expect((await server.kubectl(['-n', 'dev', 'get', 'role', 'secret-reader'])).code).to.equal(1);
  });

  it('the Node authorizer lets a node read the secrets and configmaps of its pods, and only while they are bound to it', async () => {
    for (const name of ['s1', 's2']) expect((await server.kubectl(['-n', 'dev', 'create', 'secret', 'generic', name, '--from-literal=k=v'])).code).to.equal(0);
    expect((await server.kubectl(['-n', 'dev', 'create', 'configmap', 'c1'])).code).to.equal(0);
    const pod = (name: string, nodeName: string) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'dev' },
      spec: { nodeName, containers: [{ name: 'c', image: 'nginx', envFrom: [{ configMapRef: { name: 'c1' } }] }], volumes: [{ name: 's', secret: { secretName: 's1' } }] },
    });
    const canGet = async (token: string, path: string) => (await request('GET', path, { token })).status;
    expect(await canGet('node1-token', '/api/v1/namespaces/dev/secrets/s1')).to.equal(403);
    expect((await server.request('POST', '/api/v1/namespaces/dev/pods', { body: JSON.stringify(pod('web', 'n1')) })).status).to.equal(201);
    await until('the graph to take the pod', async () => (await canGet('node1-token', '/api/v1/namespaces/dev/secrets/s1')) === 200, 5000);
    expect(await canGet('node1-token', '/api/v1/namespaces/dev/configmaps/c1')).to.equal(200);
    expect(await canGet('node1-token', '/api/v1/namespaces/dev/secrets/s2')).to.equal(403);
    expect(await canGet('node2-token', '/api/v1/namespaces/dev/secrets/s1')).to.equal(403);
    expect(await canGet('node1-token', '/api/v1/namespaces/dev/secrets')).to.equal(403, 'a node may not list secrets');
    expect(await canGet('node1-token', '/api/v1/nodes')).to.equal(200, 'the static node rules');
    expect((await server.kubectl(['-n', 'dev', 'delete', 'pod', 'web', '--grace-period=0', '--force'])).code).to.equal(0);
    expect((await server.request('POST', '/api/v1/namespaces/dev/pods', { body: JSON.stringify(pod('web2', 'n2')) })).status).to.equal(201);
    await until('the graph to follow the pods', async () => (await canGet('node1-token', '/api/v1/namespaces/dev/secrets/s1')) === 403 && (await canGet('node2-token', '/api/v1/namespaces/dev/secrets/s1')) === 200, 5000);
  });

  it('the Node authorizer follows a pod bound through pods/binding, as a scheduler binds it', async () => {
    expect((await server.kubectl(['-n', 'dev', 'create', 'secret', 'generic', 's3', '--from-literal=k=v'])).code).to.equal(0);
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'scheduled', namespace: 'dev' }, spec: { containers: [{ name: 'c', image: 'nginx' }], volumes: [{ name: 's', secret: { secretName: 's3' } }] } };
    expect((await server.request('POST', '/api/v1/namespaces/dev/pods', { body: JSON.stringify(pod) })).status).to.equal(201);
    expect((await request('GET', '/api/v1/namespaces/dev/secrets/s3', { token: 'node1-token' })).status).to.equal(403);
    const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'scheduled' }, target: { kind: 'Node', name: 'n1' } };
    expect((await server.request('POST', '/api/v1/namespaces/dev/pods/scheduled/binding', { body: JSON.stringify(binding) })).status).to.equal(201);
    await until('the graph to take the binding', async () => (await request('GET', '/api/v1/namespaces/dev/secrets/s3', { token: 'node1-token' })).status === 200, 5000);
  });

  it('kubectl create clusterrole/clusterrolebinding and kubectl auth reconcile work, and reconcile is idempotent', async () => {
    expect((await server.kubectl(['create', 'clusterrole', 'pod-reader', '--verb=get,list', '--resource=pods'])).code).to.equal(0);
    expect((await server.kubectl(['create', 'clusterrolebinding', 'bob-pod-reader', '--clusterrole=pod-reader', '--user=bob'])).code).to.equal(0);
    await until('bob to read pods everywhere', async () => (await as('bob-token', ['auth', 'can-i', 'list', 'pods', '-A'])).stdout.trim() === 'yes', 5000);
    const manifest = [
      rbac('Role', { name: 'reconciled', namespace: 'prod' }, { rules: [{ apiGroups: [''], resources: ['services'], verbs: ['get'] }] }),
      rbac('RoleBinding', { name: 'reconciled', namespace: 'prod' }, { roleRef: roleRef('Role', 'reconciled'), subjects: [user('bob')] }),
    ].map((o) => JSON.stringify(o)).join('\n');
    const first = await server.kubectl(['auth', 'reconcile', '-f', '-'], { input: manifest });
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.contain('role.rbac.authorization.k8s.io/reconciled reconciled');
    const more = manifest.replace('"verbs":["get"]', '"verbs":["get","list"]');
    const second = await server.kubectl(['auth', 'reconcile', '-f', '-'], { input: more });
    expect(second.code, second.stderr).to.equal(0);
    const role = JSON.parse((await server.kubectl(['-n', 'prod', 'get', 'role', 'reconciled', '-o', 'json'])).stdout) as Json;
    // Reconcile adds what is missing as rules of its own, as v1.25's kubectl does.
    expect(role.rules.flatMap((r: Json) => r.verbs)).to.have.members(['get', 'list']);
    await until('bob to list services in prod', async () => (await as('bob-token', ['auth', 'can-i', 'list', 'services', '-n', 'prod'])).stdout.trim() === 'yes', 5000);
  });

  it('serves every review API: SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview, LocalSubjectAccessReview', async () => {
    const discovery = await server.kubectl(['api-resources', '--api-group=authorization.k8s.io', '-o', 'name']);
    expect(discovery.stdout.split('\n').filter((l) => l !== '').sort()).to.deep.equal(['localsubjectaccessreviews.authorization.k8s.io', 'selfsubjectaccessreviews.authorization.k8s.io', 'selfsubjectrulesreviews.authorization.k8s.io', 'subjectaccessreviews.authorization.k8s.io']);
    const rules = await as('alice-token', ['auth', 'can-i', '--list', '-n', 'dev']);
    expect(rules.code).to.equal(0);
    expect(rules.stdout).to.match(/configmaps\s+\[\]\s+\[\]\s+\[get list watch\]/);
    const sar = await server.kubectl(['create', '-o', 'json', '-f', '-'], { input: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'alice', groups: ['devs'], resourceAttributes: { namespace: 'dev', verb: 'list', resource: 'configmaps' } } }) });
    expect(sar.code, sar.stderr).to.equal(0);
    expect((JSON.parse(sar.stdout) as Json).status).to.deep.include({ allowed: true });
    const denied = await server.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'alice', resourceAttributes: { namespace: 'prod', verb: 'list', resource: 'configmaps' } } }) });
    expect(denied.status).to.equal(201);
    expect(denied.json<Json>().status.allowed).to.equal(false);
    const local = await server.request('POST', '/apis/authorization.k8s.io/v1/namespaces/dev/localsubjectaccessreviews', { body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: 'dev' }, spec: { user: 'alice', resourceAttributes: { namespace: 'prod', verb: 'get', resource: 'pods' } } }) });
    // The review's own namespaces disagree: invalid (422); they agree but not with the path: 400.
    expect(local.status).to.equal(422);
    expect(local.text).to.contain('must match metadata.namespace');
    const elsewhere = await server.request('POST', '/apis/authorization.k8s.io/v1/namespaces/dev/localsubjectaccessreviews', { body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: 'prod' }, spec: { user: 'alice', resourceAttributes: { namespace: 'prod', verb: 'get', resource: 'pods' } } }) });
    expect(elsewhere.status).to.equal(400);
    const inDev = await server.request('POST', '/apis/authorization.k8s.io/v1/namespaces/dev/localsubjectaccessreviews', { body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: 'dev' }, spec: { user: 'alice', resourceAttributes: { namespace: 'dev', verb: 'get', resource: 'configmaps' } } }) });
    expect(inDev.status).to.equal(201);
    expect(inDev.json<Json>().status.allowed).to.equal(true);
    // Alice may ask about herself, not about others.
    const sarByAlice = await request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { token: 'alice-token' }, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'bob', resourceAttributes: { verb: 'get', resource: 'pods' } } });
    expect(sarByAlice.status).to.equal(403);
  });

  it('hostile paths never reach a resource the user may not touch', async () => {
    expect((await server.kubectl(['-n', 'dev', 'create', 'secret', 'generic', 'crown-jewels', '--from-literal=k=v'])).code).to.equal(0);
    for (const path of [
      '/api/v1/namespaces/dev/configmaps/../secrets/crown-jewels',
      '/api/v1/namespaces/dev/configmaps/%2e%2e/secrets/crown-jewels',
      '/api/v1/namespaces/dev/configmaps/..%2Fsecrets%2Fcrown-jewels',
      '/api/v1/namespaces/dev/configmaps%2F..%2Fsecrets/crown-jewels',
      '/api/v1/namespaces/dev/configmaps/x/..%5C..%5Csecrets/crown-jewels',
    ]) {
      for (const method of ['GET', 'DELETE']) {
        const result = await request(method, path, { token: 'alice-token' });
        expect(result.status, `${method} ${path}`).to.be.oneOf([400, 403, 404]);
      }
    }
    expect((await server.kubectl(['-n', 'dev', 'get', 'secret', 'crown-jewels'])).code).to.equal(0);
  });
});

describe('authorization: the default policy across restarts and replicas (e2e)', function () {
  this.timeout(180_000);

  it('reconciles the default roles after a restart unless autoupdate is false', async () => {
    const server = await CarinaApiProcess.start();
    try {
      const patch = (name: string, body: Json) => server.kubectl(['patch', 'clusterrole', name, '--type=merge', '-p', JSON.stringify(body)]);
      expect((await patch('system:basic-user', { rules: [] })).code).to.equal(0);
      expect((await patch('system:public-info-viewer', { metadata: { annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } }, rules: [] })).code).to.equal(0);
      await server.stop({ keepData: true });
      await server.launch();
      const rulesOf = async (name: string) => (JSON.parse((await server.kubectl(['get', 'clusterrole', name, '-o', 'json'])).stdout) as Json).rules ?? [];
      await until('system:basic-user to be reconciled', async () => (await rulesOf('system:basic-user')).length > 0, 20_000);
      expect(await rulesOf('system:public-info-viewer')).to.deep.equal([]);
    } finally {
      await server.stop();
    }
  });

  it('three replicas starting at once create the default policy once, without duplicate rules or subjects', async () => {
    const servers = await CarinaApiProcess.startCluster(3);
    try {
      const list = async (kind: string) => (JSON.parse((await servers[1].kubectl(['get', kind, '-o', 'json'])).stdout) as Json).items as Json[];
      await until('the policy on every replica', async () => (await Promise.all(servers.map((s) => s.request('GET', '/readyz')))).every((r) => r.status === 200), 60_000);
      const roles = await list('clusterroles');
      const bindings = await list('clusterrolebindings');
      expect(roles.map((r) => r.metadata.name)).to.include.members(['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:node']);
      for (const role of roles) {
        const rules = (role.rules ?? []).map((r: Json) => JSON.stringify(r));
        expect(new Set(rules).size, role.metadata.name).to.equal(rules.length);
      }
      for (const binding of bindings) {
        const subjects = (binding.subjects ?? []).map((s: Json) => JSON.stringify(s));
        expect(new Set(subjects).size, binding.metadata.name).to.equal(subjects.length);
      }
      const admin = bindings.find((b) => b.metadata.name === 'cluster-admin');
      expect(admin?.subjects).to.deep.equal([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' }]);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  });
});

describe('authorization: ABAC and Webhook modes (e2e)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: CarinaApiProcess;
  const webhook = new TestTokenWebhook();
  let logLength = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carina-authz-modes-'));
    await webhook.start();
    webhook.handler = (call) => {
      const spec = call.body.spec as Json;
      if (spec.user === 'slow') return { body: {}, delayMs: 60_000 };
      if (spec.user === 'garbage') return { body: 'not json at all' };
      const allowed = spec.user === 'hooky' && spec.resourceAttributes?.resource === 'pods';
      return { body: { apiVersion: call.body.apiVersion, kind: 'SubjectAccessReview', status: { allowed, reason: allowed ? 'the webhook says so' : '' } } };
    };
    writeFileSync(join(dir, 'authz-webhook.kubeconfig'), stringify({
      apiVersion: 'v1', kind: 'Config',
      clusters: [{ name: 'hook', cluster: { server: webhook.url, 'certificate-authority-data': Buffer.from(webhook.ca.certPem).toString('base64') } }],
      users: [{ name: 'apiserver', user: { 'client-certificate-data': Buffer.from(webhook.client.certPem).toString('base64'), 'client-key-data': Buffer.from(webhook.client.keyPem).toString('base64') } }],
      contexts: [{ name: 'hook', context: { cluster: 'hook', user: 'apiserver' } }],
      'current-context': 'hook',
    }));
    writeFileSync(join(dir, 'abac.jsonl'), [
      JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec: { user: 'abe', namespace: 'default', resource: 'configmaps', apiGroup: '*', readonly: true } }),
      JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec: { user: 'abe', nonResourcePath: '/metrics', readonly: true } }),
    ].join('\n') + '\n');
    writeFileSync(join(dir, 'tokens.csv'), TOKENS + 'slow-token,slow,1\ngarbage-token,garbage,2\n');
    server = await CarinaApiProcess.start({ extraArgs: [
      '--token-auth-file', join(dir, 'tokens.csv'),
      '--authorization-mode', 'Node,ABAC,Webhook,RBAC',
      '--authorization-policy-file', join(dir, 'abac.jsonl'),
      '--authorization-webhook-config-file', join(dir, 'authz-webhook.kubeconfig'),
      '--authorization-webhook-version', 'v1',
    ] });
  });

  after(async () => {
    await server?.stop();
    await webhook.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const request = (method: string, path: string, token: string) => httpsRequest(server.port, server.caPem, method, path, { credential: { token } });

  it('ABAC: a policy line allows reads of configmaps in default and of /metrics, nothing else', async () => {
    expect((await request('GET', '/api/v1/namespaces/default/configmaps', 'abe-token')).status).to.equal(200);
    expect((await request('GET', '/metrics', 'abe-token')).status).to.equal(200);
    expect((await request('DELETE', '/api/v1/namespaces/default/configmaps/x', 'abe-token')).status).to.equal(403);
    expect((await request('GET', '/api/v1/namespaces/kube-system/configmaps', 'abe-token')).status).to.equal(403);
  });

  it('Webhook: a SubjectAccessReview is sent as v1.25 sends it and its answer decides; a slow or broken webhook denies and says so in the log', async () => {
    expect((await request('GET', '/api/v1/namespaces/default/pods', 'hooky-token')).status).to.equal(200);
    expect((await request('GET', '/api/v1/namespaces/default/secrets', 'hooky-token')).status).to.equal(403);
    const call = webhook.calls.find((c) => (c.body.spec as Json).user === 'hooky');
    expect(call?.body).to.deep.include({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview' });
    expect((call?.body.spec as Json).resourceAttributes).to.deep.include({ namespace: 'default', verb: 'list', resource: 'pods', version: 'v1' });
    expect((call?.body.spec as Json).groups).to.deep.equal(['system:authenticated']);
    logLength = server.log.length;
    const garbage = await request('GET', '/api/v1/namespaces/default/pods', 'garbage-token');
    expect(garbage.status).to.be.oneOf([403, 500]);
    await until('the webhook failure in the log', async () => /webhook/i.test(server.log.slice(logLength)), 10_000);
    expect(server.log).not.to.contain('garbage-token');
  });
});
