/**
 * A node joins as `kubeadm join` does it (spec 02 §2.2, §2.3, §3, §5.5), with curl, openssl and
 * kubectl against a `carina server --enable-bootstrap-token-auth --controllers=*,bootstrapsigner,tokencleaner`:
 *
 * 1. the admin makes a bootstrap token Secret (as `kubeadm token create`);
 * 2. the node reads kube-public/cluster-info anonymously and without trusting the server yet,
 *    checks the `jws-kubeconfig-<id>` signature of its kubeconfig with the token (HMAC-SHA256
 *    computed by openssl) and the CA's public key pin, and from then on trusts that CA;
 * 3. it authenticates with the token and submits a kubelet client CSR (openssl, ECDSA);
 * 4. csrapproving approves it (the bootstrappers' RBAC that cluster-info's publication set up),
 *    csrsigning signs it;
 * 5. it acts as `system:node:<name>` with the certificate;
 * and the token cleaner removes an expired token, whose signature then leaves cluster-info.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CarinaApiProcess } from '../support/carina-api-process';
import { runKubectl, writeKubeconfig } from '../support/client-credentials';
import { until } from '../support/until';
import { runCommand as run } from '../support/run-command';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const TOKEN_ID = 'abcdef';
const TOKEN = `${TOKEN_ID}.0123456789abcdef`;

function tokenSecret(id: string, secret: string, extra: Record<string, string>): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    stringData: { 'token-id': id, 'token-secret': secret, 'usage-bootstrap-authentication': 'true', 'usage-bootstrap-signing': 'true', ...extra },
  });
}

describe('joining a node with a bootstrap token, as kubeadm join does (e2e: curl, openssl, kubectl)', function () {
  this.timeout(120_000);
  let server: CarinaApiProcess;
  let dir: string;
  const file = (name: string) => join(dir, name);

  async function ok(command: string, args: string[], input?: string | Buffer): Promise<string> {
    const result = await run(command, args, { cwd: dir, input });
    expect(result.code, `${command} ${args.join(' ')}: ${result.stderr}`).to.equal(0);
    return result.stdout;
  }

  /** curl with the given extra arguments; the body parsed as JSON. */
  async function curlJson(args: string[], input?: string): Promise<{ status: number; body: Json }> {
    const out = await ok('curl', ['-sS', '-w', '\n%{http_code}', ...args], input);
    const newline = out.lastIndexOf('\n');
    return { status: Number(out.slice(newline + 1)), body: JSON.parse(out.slice(0, newline)) as Json };
  }

  async function clusterInfo(): Promise<Record<string, string>> {
    // kubeadm's first read of cluster-info trusts nothing yet: no credentials, no CA (-k).
    const { status, body } = await curlJson(['-k', `${server.url}/api/v1/namespaces/kube-public/configmaps/cluster-info`]);
    expect(status).to.equal(200);
    return body.data as Record<string, string>;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carina-join-e2e-'));
    server = await CarinaApiProcess.start({ extraArgs: ['--enable-bootstrap-token-auth', '--controllers', '*,bootstrapsigner,tokencleaner'] });
  });

  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads cluster-info anonymously, checks its signature with the token, gets a node certificate and acts as the node', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const created = await server.kubectl(['create', '-f', '-'], { input: tokenSecret(TOKEN_ID, '0123456789abcdef', { 'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token', expiration: future, description: 'for worker-1' }) });
    expect(created.code, created.stderr).to.equal(0);

    // Discovery: the signed kubeconfig, verified with the token as kubeadm does (HS256 only).
    const data = await until('cluster-info signed with the token', async () => {
      const found = await clusterInfo();
      return found[`jws-kubeconfig-${TOKEN_ID}`] !== undefined ? found : undefined;
    });
    const [header, payload, signature] = data[`jws-kubeconfig-${TOKEN_ID}`].split('.');
    expect(payload).to.equal('');
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).to.deep.equal({ alg: 'HS256', kid: TOKEN_ID });
    const signingInput = `${header}.${Buffer.from(data.kubeconfig).toString('base64url')}`;
    const mac = async (key: string) => Buffer.from(await ok('openssl', ['dgst', '-sha256', '-mac', 'HMAC', '-macopt', `key:${key}`, '-binary'], signingInput), 'latin1').toString('base64url');
    expect(await mac(TOKEN)).to.equal(signature);
    expect(await mac(`${TOKEN_ID}.0123456789abcdee`)).not.to.equal(signature);

    // The CA it carries is the cluster's: its public key pin matches (--discovery-token-ca-cert-hash).
    const kubeconfig = parse(data.kubeconfig) as Json;
    expect(kubeconfig.clusters[0].cluster.server).to.equal(server.url);
    writeFileSync(file('discovered-ca.crt'), Buffer.from(kubeconfig.clusters[0].cluster['certificate-authority-data'], 'base64'));
    writeFileSync(file('cluster-ca.crt'), server.caPem);
    const pin = async (ca: string) => {
      const spki = await run('openssl', ['x509', '-in', ca, '-pubkey', '-noout'], { cwd: dir });
      const der = await run('openssl', ['pkey', '-pubin', '-outform', 'der'], { cwd: dir, input: spki.stdout });
      return (await ok('openssl', ['dgst', '-sha256'], Buffer.from(der.stdout, 'latin1'))).trim().split(' ').pop();
    };
    expect(await pin('discovered-ca.crt')).to.equal(await pin('cluster-ca.crt'));

    // TLS bootstrap: a kubelet client request, sent with the token, trusting the discovered CA.
    await ok('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'node.key']);
    await ok('openssl', ['req', '-new', '-key', 'node.key', '-subj', '/O=system:nodes/CN=system:node:worker-1', '-out', 'node.csr']);
    const request = JSON.stringify({
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { generateName: 'node-csr-' },
      spec: { request: readFileSync(file('node.csr')).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'key encipherment', 'client auth'] },
    });
    const auth = ['--cacert', 'discovered-ca.crt', '-H', `Authorization: Bearer ${TOKEN}`];
    const submitted = await curlJson([...auth, '-X', 'POST', '-H', 'Content-Type: application/json', '--data-binary', '@-', `${server.url}/apis/certificates.k8s.io/v1/certificatesigningrequests`], request);
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(201);
    const name = submitted.body.metadata.name as string;
    expect(submitted.body.spec).to.deep.include({ username: `system:bootstrap:${TOKEN_ID}`, groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'] });

    const issued = await until('the node CSR to be approved and signed', async () => {
      const { body } = await curlJson([...auth, `${server.url}/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}`]);
      return body.status?.certificate !== undefined ? body : undefined;
    });
    expect(issued.status.conditions).to.have.length(1);
    expect(issued.status.conditions[0]).to.include({ type: 'Approved', reason: 'AutoApproved', message: 'Auto approving kubelet client certificate after SubjectAccessReview.' });
    writeFileSync(file('node.crt'), Buffer.from(issued.status.certificate, 'base64'));
    expect(await ok('openssl', ['verify', '-CAfile', 'discovered-ca.crt', 'node.crt'])).to.contain('node.crt: OK');
    expect(await ok('openssl', ['x509', '-in', 'node.crt', '-noout', '-subject'])).to.match(/O ?= ?system:nodes, CN ?= ?system:node:worker-1/);
    const listed = await server.kubectl(['get', 'csr', name]);
    expect(listed.stdout).to.match(new RegExp(`^${name}\\s+\\S+\\s+kubernetes\\.io/kube-apiserver-client-kubelet\\s+system:bootstrap:${TOKEN_ID}\\s+<none>\\s+Approved,Issued$`, 'm'));

    // The node, with its certificate.
    const asNode = writeKubeconfig(server.url, readFileSync(file('discovered-ca.crt'), 'utf8'), { certPem: readFileSync(file('node.crt'), 'utf8'), keyPem: readFileSync(file('node.key'), 'utf8') }, dir);
    const node = JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'worker-1', labels: { 'kubernetes.io/hostname': 'worker-1' } } });
    const registered = await runKubectl(asNode, ['create', '-f', '-'], node);
    expect(registered.code, registered.stderr).to.equal(0);
    const nodes = await runKubectl(asNode, ['get', 'nodes', '-o', 'name']);
    expect(nodes.stdout.trim()).to.equal('node/worker-1');
    const secrets = await runKubectl(asNode, ['get', 'secrets', '-n', 'kube-system']);
    expect(secrets.stderr).to.contain('User "system:node:worker-1" cannot list resource "secrets"');
  });

  it('a token outside kubeadm\'s group may not ask for node certificates; an expired token is cleaned up and its signature goes', async () => {
    const soon = new Date(Date.now() + 4000).toISOString().replace(/\.\d+Z$/, 'Z');
    expect((await server.kubectl(['create', '-f', '-'], { input: tokenSecret('ghijkl', 'ghijkl0123456789', { expiration: soon }) })).code).to.equal(0);
    await until('ghijkl\'s signature', async () => (await clusterInfo())['jws-kubeconfig-ghijkl'] !== undefined);
    writeFileSync(file('cluster-ca.crt'), server.caPem);
    const denied = await curlJson(['--cacert', 'cluster-ca.crt', '-H', 'Authorization: Bearer ghijkl.ghijkl0123456789', '-X', 'POST', '-H', 'Content-Type: application/json', '--data-binary', '@-', `${server.url}/apis/certificates.k8s.io/v1/certificatesigningrequests`],
      JSON.stringify({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'x' }, spec: { request: '', signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['client auth'] } }));
    expect(denied.status).to.equal(403);
    expect(denied.body.message).to.contain('User "system:bootstrap:ghijkl" cannot create resource "certificatesigningrequests"');

    await until('the token cleaner to delete the expired token', async () => (await server.kubectl(['get', 'secret', '-n', 'kube-system', 'bootstrap-token-ghijkl', '--ignore-not-found'])).stdout === '', 20_000);
    await until('its signature to leave cluster-info', async () => (await clusterInfo())['jws-kubeconfig-ghijkl'] === undefined);
    expect((await clusterInfo())[`jws-kubeconfig-${TOKEN_ID}`]).to.be.a('string');
    const refused = await curlJson(['--cacert', 'cluster-ca.crt', '-H', 'Authorization: Bearer ghijkl.ghijkl0123456789', `${server.url}/api`]);
    expect(refused.status).to.equal(401);
  });
});
