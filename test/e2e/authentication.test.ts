/**
 * Every way a client authenticates (spec 02 §5), end to end with the real kubectl and HTTPS
 * requests against a `carina server` started with kube-apiserver's authentication flags: static
 * tokens, bootstrap tokens, service-account tokens (TokenRequest, audiences, binding to a pod,
 * revocation, issuer discovery), OpenID Connect through kubectl's oidc auth provider, a token
 * webhook, an authenticating proxy, impersonation, and the 401s for every bad credential.
 * Identities are read back with TokenReview and with the user names RBAC's 403s carry.
 */
import * as k8s from '@kubernetes/client-node';
import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CarinaApiProcess } from '../support/carina-api-process';
import { httpsRequest, runKubectl, writeKubeconfig, type Credential } from '../support/client-credentials';
import { TestOidcProvider } from '../support/oidc-provider';
import { createTestCa, issueClientCertificate } from '../support/test-pki';
import { TestTokenWebhook } from '../support/token-webhook-server';
import { until } from '../support/until';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

describe('authentication (e2e: kubectl and HTTPS against carina server)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: CarinaApiProcess;
  const provider = new TestOidcProvider();
  const webhook = new TestTokenWebhook();
  const proxyCa = createTestCa({ commonName: 'front-proxy-ca', keyIndex: 2 });
  const proxy = issueClientCertificate(proxyCa, 'front-proxy', [], { keyIndex: 3 });
  const strangerProxy = issueClientCertificate(proxyCa, 'somebody-else', [], { keyIndex: 3 });

  const request = (method: string, path: string, credential?: Credential, body?: unknown, headers: Record<string, string | string[]> = {}) =>
    httpsRequest(server.port, server.caPem, method, path, { credential, body: body === undefined ? undefined : JSON.stringify(body), headers });
  const kubectlWith = (credential: Credential, args: string[]) => runKubectl(writeKubeconfig(server.url, server.caPem, credential, dir), args);

  /** TokenReview as the admin: what the server's authenticators make of `token`. */
  async function review(token: string, audiences?: string[]): Promise<Json> {
    const result = await server.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, ...(audiences ? { audiences } : {}) } }),
    });
    expect(result.status, result.text).to.equal(201);
    return result.json<Json>().status as Json;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carina-authn-e2e-'));
    writeFileSync(join(dir, 'tokens.csv'), 'alice-token,alice,1001,"devs,qa"\nbob-token,bob,1002\n');
    await provider.start();
    writeFileSync(join(dir, 'oidc-ca.pem'), provider.ca.certPem);
    await webhook.start();
    webhook.handler = (call) => {
      const token = String((call.body.spec as Json | undefined)?.token ?? '');
      const status = token === 'webhook-good'
        ? { authenticated: true, user: { username: 'webby', uid: 'w-1', groups: ['hooked'] } }
        : { authenticated: false, error: 'unknown token' };
      return { body: TestTokenWebhook.review(call, status) };
    };
    writeFileSync(join(dir, 'webhook.kubeconfig'), stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'hook', cluster: { server: webhook.url, 'certificate-authority-data': Buffer.from(webhook.ca.certPem).toString('base64') } }],
      users: [{ name: 'apiserver', user: { 'client-certificate-data': Buffer.from(webhook.client.certPem).toString('base64'), 'client-key-data': Buffer.from(webhook.client.keyPem).toString('base64') } }],
      contexts: [{ name: 'hook', context: { cluster: 'hook', user: 'apiserver' } }],
      'current-context': 'hook',
    }));
    writeFileSync(join(dir, 'proxy-ca.pem'), proxyCa.certPem);
    server = await CarinaApiProcess.start({
      extraArgs: [
        '--token-auth-file', join(dir, 'tokens.csv'),
        '--enable-bootstrap-token-auth',
        '--oidc-issuer-url', provider.issuerUrl,
        '--oidc-client-id', 'carina',
        '--oidc-ca-file', join(dir, 'oidc-ca.pem'),
        '--oidc-username-claim', 'email',
        '--oidc-groups-claim', 'groups',
        '--oidc-groups-prefix', 'oidc:',
        '--authentication-token-webhook-config-file', join(dir, 'webhook.kubeconfig'),
        '--authentication-token-webhook-version', 'v1',
        '--requestheader-client-ca-file', join(dir, 'proxy-ca.pem'),
        '--requestheader-allowed-names', 'front-proxy',
        '--requestheader-username-headers', 'X-Remote-User',
        '--requestheader-group-headers', 'X-Remote-Group',
        '--requestheader-extra-headers-prefix', 'X-Remote-Extra-',
      ],
    });
  });

  after(async () => {
    await server?.stop();
    await provider.stop();
    await webhook.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a static token authenticates as its user, uid and groups; kubectl --token acts as that user', async () => {
    expect(await review('alice-token')).to.deep.include({ authenticated: true, user: { username: 'alice', uid: '1001', groups: ['devs', 'qa', 'system:authenticated'] } });
    const denied = await kubectlWith({ token: 'alice-token' }, ['get', 'configmaps', '-n', 'default']);
    expect(denied.code).to.equal(1);
    expect(denied.stderr).to.contain('User "alice" cannot list resource "configmaps" in API group "" in the namespace "default"');
  });

  it('answers 401 with a Status for a bad bearer token, and never falls back to anonymous', async () => {
    const header = b64url(JSON.stringify({ alg: 'RS256', kid: 'x' }));
    const payload = b64url(JSON.stringify({ iss: 'https://kubernetes.default.svc.cluster.local', sub: 'system:serviceaccount:default:x', exp: 9_999_999_999 }));
    for (const token of ['nope', 'a.b.c', `${header}.${payload}.${b64url('sig')}`, `${header}.!!!.sig`, 'x'.repeat(20 * 1024)]) {
      for (const path of ['/api/v1/namespaces', '/version']) {
        const result = await request('GET', path, { token });
        expect(result.status, `${path} with ${token.slice(0, 20)}`).to.equal(401);
        expect(result.json()).to.deep.include({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 });
        expect(result.text).not.to.contain(token.slice(0, 20));
      }
    }
    // Not a bearer credential at all: anonymous, who may read /version only.
    expect((await request('GET', '/version', undefined, undefined, { Authorization: 'Basic YWxpY2U6cHc=' })).status).to.equal(200);
    expect((await request('GET', '/api/v1/namespaces', undefined, undefined, { Authorization: 'Basic YWxpY2U6cHc=' })).status).to.equal(403);
    const kubectl = await kubectlWith({ token: 'bogus' }, ['get', 'ns']);
    expect(kubectl.code).to.equal(1);
    expect(kubectl.stderr).to.contain('Unauthorized');
  });

  it('bootstrap tokens authenticate while their Secret allows it, as system:bootstrap:<id>', async () => {
    const secret = (name: string, id: string, data: Record<string, string>) => ({
      apiVersion: 'v1', kind: 'Secret', type: 'bootstrap.kubernetes.io/token',
      metadata: { name, namespace: 'kube-system' },
      stringData: { 'token-id': id, ...data },
    });
    const future = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const past = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    expect((await server.request('POST', '/api/v1/namespaces/kube-system/secrets', { body: JSON.stringify(secret('bootstrap-token-abcdef', 'abcdef', { 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:bootstrappers:workers', expiration: future })) })).status).to.equal(201);
    expect((await server.request('POST', '/api/v1/namespaces/kube-system/secrets', { body: JSON.stringify(secret('bootstrap-token-zzzzzz', 'zzzzzz', { 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', expiration: past })) })).status).to.equal(201);
    await until('the bootstrap token Secret in the cache', async () => (await review('abcdef.0123456789abcdef')).authenticated === true, 5000);
    expect(await review('abcdef.0123456789abcdef')).to.deep.include({ user: { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:workers', 'system:authenticated'] } });
    // authenticated is omitempty: a refused token's review has none.
    expect((await review('abcdef.00000000000000ff')).authenticated).to.equal(undefined);
    expect((await review('zzzzzz.0123456789abcdef')).authenticated).to.equal(undefined);
    expect((await request('GET', '/api', { token: 'zzzzzz.0123456789abcdef' })).status).to.equal(401);
  });

  it('service-account tokens: kubectl create token with duration and audience, revocation when the account or the pod goes', async () => {
    expect((await server.kubectl(['create', 'namespace', 'sa-test'])).code).to.equal(0);
    expect((await server.kubectl(['-n', 'sa-test', 'create', 'serviceaccount', 'robot'])).code).to.equal(0);
    const created = await server.kubectl(['-n', 'sa-test', 'create', 'token', 'robot', '--duration=15m']);
    expect(created.code, created.stderr).to.equal(0);
    const token = created.stdout.trim();
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as Json;
    expect(claims.exp - claims.iat).to.equal(900);
    expect(claims.sub).to.equal('system:serviceaccount:sa-test:robot');
    expect(await review(token)).to.deep.include({ authenticated: true, user: { username: 'system:serviceaccount:sa-test:robot', uid: claims['kubernetes.io'].serviceaccount.uid, groups: ['system:serviceaccounts', 'system:serviceaccounts:sa-test', 'system:authenticated'] } });
    const asRobot = await kubectlWith({ token }, ['-n', 'sa-test', 'get', 'pods']);
    expect(asRobot.stderr).to.contain('User "system:serviceaccount:sa-test:robot" cannot list resource "pods"');

    // Another audience: not for this API, but TokenReview asked about it says yes.
    const vault = (await server.kubectl(['-n', 'sa-test', 'create', 'token', 'robot', '--audience=vault'])).stdout.trim();
    expect((await request('GET', '/api/v1/namespaces/sa-test/pods', { token: vault })).status).to.equal(401);
    expect(await review(vault, ['vault'])).to.deep.include({ authenticated: true, audiences: ['vault'] });

    // Tampered, and unsigned (alg none): 401.
    const [head, body] = token.split('.');
    const forgedBody = b64url(JSON.stringify({ ...claims, sub: 'system:serviceaccount:kube-system:admin' }));
    expect((await request('GET', '/api', { token: `${head}.${forgedBody}.${token.split('.')[2]}` })).status).to.equal(401);
    expect((await request('GET', '/api', { token: `${b64url(JSON.stringify({ alg: 'none' }))}.${body}.` })).status).to.equal(401);
    const hmac = `${b64url(JSON.stringify({ alg: 'HS256' }))}.${body}`;
    expect((await request('GET', '/api', { token: `${hmac}.${createHmac('sha256', 'x').update(hmac).digest('base64url')}` })).status).to.equal(401);

    // Bound to a pod: valid while the pod exists.
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1', namespace: 'sa-test' }, spec: { serviceAccountName: 'robot', containers: [{ name: 'c', image: 'nginx' }] } };
    expect((await server.request('POST', '/api/v1/namespaces/sa-test/pods', { body: JSON.stringify(pod) })).status).to.equal(201);
    const bound = await server.kubectl(['-n', 'sa-test', 'create', 'token', 'robot', '--bound-object-kind=Pod', '--bound-object-name=p1']);
    expect(bound.code, bound.stderr).to.equal(0);
    const podToken = bound.stdout.trim();
    expect(await review(podToken)).to.deep.nested.include({ 'user.extra.authentication\\.kubernetes\\.io/pod-name': ['p1'] });
    expect((await request('GET', '/api', { token: podToken })).status).to.equal(200);
    expect((await server.kubectl(['-n', 'sa-test', 'delete', 'pod', 'p1', '--grace-period=0'])).code).to.equal(0);
    await until('the pod-bound token to be refused', async () => (await request('GET', '/api', { token: podToken })).status === 401, 5000);

    // A request for a too short token is refused with kube's message.
    const short = await server.request('POST', '/api/v1/namespaces/sa-test/serviceaccounts/robot/token', { body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 100 } }) });
    expect(short.status).to.equal(422);
    expect(short.text).to.contain('may not specify a duration less than 10 minutes');

    // Deleting the account revokes its tokens at once, cache or not.
    expect((await request('GET', '/api', { token })).status).to.equal(200);
    expect((await server.kubectl(['-n', 'sa-test', 'delete', 'serviceaccount', 'robot'])).code).to.equal(0);
    await until('the deleted account\'s token to be refused', async () => (await request('GET', '/api', { token })).status === 401, 5000);
  });

  it('@kubernetes/client-node with a bearer token acts as the token\'s service account; a bad token is a 401', async () => {
    expect((await server.kubectl(['create', 'namespace', 'client-node'])).code).to.equal(0);
    expect((await server.kubectl(['-n', 'client-node', 'create', 'serviceaccount', 'reader'])).code).to.equal(0);
    expect((await server.kubectl(['-n', 'client-node', 'create', 'rolebinding', 'reader-view', '--clusterrole=view', '--serviceaccount=client-node:reader'])).code).to.equal(0);
    expect((await server.kubectl(['-n', 'client-node', 'create', 'configmap', 'visible', '--from-literal=k=v'])).code).to.equal(0);
    const token = (await server.kubectl(['-n', 'client-node', 'create', 'token', 'reader'])).stdout.trim();
    const clientFor = (bearer: string) => {
      const config = new k8s.KubeConfig();
      config.loadFromOptions({
        clusters: [{ name: 'carina', server: server.url, caData: Buffer.from(server.caPem).toString('base64') }],
        users: [{ name: 'reader', token: bearer }],
        contexts: [{ name: 'carina', cluster: 'carina', user: 'reader' }],
        currentContext: 'carina',
      });
      return config.makeApiClient(k8s.CoreV1Api);
    };
    await until('the binding to apply', async () => (await clientFor(token).listNamespacedConfigMap('client-node').catch(() => undefined))?.body.items.some((i) => i.metadata?.name === 'visible'), 5000);
    const denied = await clientFor(token).listNamespacedSecret('client-node').then(() => 200, (err: { statusCode?: number }) => err.statusCode);
    expect(denied).to.equal(403);
    const bad = await clientFor('not-a-token').listNamespacedConfigMap('client-node').then(() => 200, (err: { statusCode?: number }) => err.statusCode);
    expect(bad).to.equal(401);
  });

  it('publishes the service-account issuer discovery documents to service accounts', async () => {
    expect((await server.kubectl(['-n', 'sa-test', 'create', 'serviceaccount', 'reader'])).code).to.equal(0);
    const token = (await server.kubectl(['-n', 'sa-test', 'create', 'token', 'reader'])).stdout.trim();
    const configuration = await request('GET', '/.well-known/openid-configuration', { token });
    expect(configuration.status, configuration.text).to.equal(200);
    expect(configuration.json()).to.deep.include({ issuer: 'https://kubernetes.default.svc.cluster.local', response_types_supported: ['id_token'], subject_types_supported: ['public'] });
    const jwks = await request('GET', '/openid/v1/jwks', { token });
    expect(jwks.status).to.equal(200);
    const keys = jwks.json<{ keys: Json[] }>().keys;
    expect(keys.map((k) => k.kid)).to.include(JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8')).kid);
    expect((await request('GET', '/openid/v1/jwks')).status).to.equal(403);
  });

  it('OpenID Connect: kubectl with an oidc auth-provider id-token acts as the email claim, with prefixed groups', async () => {
    const idToken = await provider.idToken({ email: 'olivia@example.com', email_verified: true, groups: ['ops'] });
    expect(await review(idToken)).to.deep.include({ authenticated: true, user: { username: 'olivia@example.com', groups: ['oidc:ops', 'system:authenticated'] } });
    const kubectl = await kubectlWith({ oidc: { idToken, issuerUrl: provider.issuerUrl, clientId: 'carina' } }, ['get', 'ns']);
    expect(kubectl.stderr).to.contain('User "olivia@example.com" cannot list resource "namespaces"');
    for (const bad of [
      await provider.idToken({ email: 'o@example.com', aud: 'someone-else' }),
      await provider.idToken({ email: 'o@example.com', exp: Math.floor(Date.now() / 1000) - 600 }),
      await provider.idToken({ email: 'o@example.com' }, { key: 'foreign' }),
      await provider.idToken({ email: 'o@example.com', email_verified: false }),
    ]) {
      expect((await request('GET', '/api', { token: bad })).status).to.equal(401);
    }
    // A rotated key is fetched when a token names it.
    provider.rotate();
    const rotated = await provider.idToken({ email: 'rotated@example.com', email_verified: true });
    await until('a token signed with the rotated key to be accepted', async () => (await request('GET', '/version', { token: rotated })).status === 200, 10_000);
  });

  it('a token webhook decides tokens nobody else claims (TokenReview v1 sent, with the token)', async () => {
    expect(await review('webhook-good')).to.deep.include({ authenticated: true, user: { username: 'webby', uid: 'w-1', groups: ['hooked', 'system:authenticated'] } });
    const kubectl = await kubectlWith({ token: 'webhook-good' }, ['get', 'ns']);
    expect(kubectl.stderr).to.contain('User "webby" cannot list resource "namespaces"');
    expect((await request('GET', '/api', { token: 'webhook-bad' })).status).to.equal(401);
    const call = webhook.calls.find((c) => (c.body.spec as Json).token === 'webhook-good');
    expect(call?.body).to.deep.include({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview' });
    expect(call?.clientCommonName).to.equal('kube-apiserver');
  });

  it('an authenticating proxy\'s headers count only behind its verified certificate', async () => {
    const headers = { 'X-Remote-User': 'carol', 'X-Remote-Group': ['viewers-b', 'other'], 'X-Remote-Extra-Scopes': 'a%2Fb' };
    const asCarol = await request('GET', '/api/v1/namespaces', { certPem: proxy.certPem, keyPem: proxy.keyPem }, undefined, headers);
    expect(asCarol.status).to.equal(403);
    expect(asCarol.text).to.contain('User \\"carol\\" cannot list resource \\"namespaces\\"');
    const binding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'proxy-group-view' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', name: 'viewers-b', apiGroup: 'rbac.authorization.k8s.io' }] };
    expect((await server.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: JSON.stringify(binding) })).status).to.equal(201);
    await until('the group binding to apply', async () => (await request('GET', '/api/v1/namespaces', { certPem: proxy.certPem, keyPem: proxy.keyPem }, undefined, headers)).status === 200, 5000);
    // Without the proxy's certificate the headers are ignored: anonymous.
    const spoofed = await request('GET', '/api/v1/namespaces', undefined, undefined, headers);
    expect(spoofed.status).to.equal(403);
    expect(spoofed.text).to.contain('system:anonymous');
    // A certificate from the proxy CA with a name not allowed is no proxy, and no user either.
    expect((await request('GET', '/api/v1/namespaces', { certPem: strangerProxy.certPem, keyPem: strangerProxy.keyPem }, undefined, headers)).status).to.equal(401);
  });

  it('impersonation: the admin may, others need the impersonate verb for each value, as v1.25 checks it', async () => {
    const asJane = await server.kubectl(['get', 'configmaps', '-n', 'default', '--as=jane', '--as-group=dev']);
    expect(asJane.stderr).to.contain('User "jane" cannot list resource "configmaps"');
    const refused = await kubectlWith({ token: 'alice-token' }, ['get', 'pods', '--as=jane']);
    expect(refused.stderr).to.contain('users "jane" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope');
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'impersonate-jane' }, rules: [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['jane'] }, { apiGroups: [''], resources: ['groups'], verbs: ['impersonate'], resourceNames: ['dev'] }] };
    const binding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'alice-impersonates-jane' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'impersonate-jane' }, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }] };
    expect((await server.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: JSON.stringify(role) })).status).to.equal(201);
    expect((await server.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: JSON.stringify(binding) })).status).to.equal(201);
    await until('alice to impersonate jane', async () => (await kubectlWith({ token: 'alice-token' }, ['get', 'pods', '--as=jane', '--as-group=dev'])).stderr.includes('User "jane" cannot list'), 5000);
    const otherGroup = await kubectlWith({ token: 'alice-token' }, ['get', 'pods', '--as=jane', '--as-group=ops']);
    expect(otherGroup.stderr).to.contain('groups "ops" is forbidden: User "alice" cannot impersonate resource "groups"');
    const john = await kubectlWith({ token: 'alice-token' }, ['get', 'pods', '--as=john']);
    expect(john.stderr).to.contain('users "john" is forbidden');
    const groupOnly = await request('GET', '/api', { token: 'alice-token' }, undefined, { 'Impersonate-Group': 'dev' });
    expect(groupOnly.status).to.equal(500);
    expect(groupOnly.text).to.contain('without impersonating a user');
  });
});

describe('authentication with --anonymous-auth=false (e2e)', function () {
  this.timeout(60_000);
  let server: CarinaApiProcess;
  before(async () => {
    server = await CarinaApiProcess.start({ extraArgs: ['--anonymous-auth=false'] });
  });
  after(async () => server?.stop());

  it('answers 401 to a request without credentials, even for /version', async () => {
    for (const path of ['/version', '/healthz', '/api/v1/namespaces']) {
      const result = await server.request('GET', path, { anonymous: true });
      expect(result.status, path).to.equal(401);
    }
    expect((await server.request('GET', '/version')).status).to.equal(200);
  });
});
