/**
 * CertificateSigningRequests end to end (spec 02 §2.3, §3, §4.1, §8) with the real kubectl,
 * curl and openssl against a `carina server`: a key and request made with openssl, submitted
 * and listed with kubectl (v1.25's columns), approved or denied with `kubectl certificate`,
 * signed by the cluster CA, the certificate checked with openssl and used with kubectl; the
 * approval subresource with curl; v1.25's validation; a signer's refusal as a Failed condition.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CarinaApiProcess, type CommandResult } from '../support/carina-api-process';
import { runKubectl, writeKubeconfig } from '../support/client-credentials';
import { runCommand as run } from '../support/run-command';
import { until } from '../support/until';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('certificate signing requests (e2e: kubectl, curl and openssl against carina server)', function () {
  this.timeout(120_000);
  let server: CarinaApiProcess;
  let dir: string;
  const file = (name: string) => join(dir, name);

  async function ok(command: string, args: string[], input?: string): Promise<string> {
    const result = await run(command, args, { cwd: dir, input });
    expect(result.code, `${command} ${args.join(' ')}: ${result.stderr}`).to.equal(0);
    return result.stdout;
  }

  async function kubectl(args: string[], input?: string): Promise<CommandResult> {
    return server.kubectl(args, { input });
  }

  /** An openssl key (RSA unless `ec`) and request for `subject`, as a CSR manifest. */
  async function opensslRequest(name: string, subject: string, spec: Json, ec = false): Promise<string> {
    if (ec) await ok('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`]);
    else await ok('openssl', ['genrsa', '-out', `${name}.key`, '2048']);
    await ok('openssl', ['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`]);
    return JSON.stringify({
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: { request: readFileSync(file(`${name}.csr`)).toString('base64'), ...spec },
    });
  }

  async function csr(name: string): Promise<Json> {
    const result = await kubectl(['get', 'csr', name, '-o', 'json']);
    expect(result.code, result.stderr).to.equal(0);
    return JSON.parse(result.stdout) as Json;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carina-csr-e2e-'));
    server = await CarinaApiProcess.start();
    writeFileSync(file('ca.crt'), server.caPem);
    // The admin's certificate and key, for curl.
    const config = readFileSync(server.kubeconfig, 'utf8');
    const field = (name: string) => Buffer.from(new RegExp(`${name}: (\\S+)`).exec(config)?.[1] ?? '', 'base64');
    writeFileSync(file('admin.crt'), field('client-certificate-data'));
    writeFileSync(file('admin.key'), field('client-key-data'), { mode: 0o600 });
  });

  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('openssl request → kubectl create → kubectl certificate approve → a certificate kubectl then uses', async () => {
    const manifest = await opensslRequest('alice', '/O=devs/CN=alice', { signerName: 'kubernetes.io/kube-apiserver-client', expirationSeconds: 86400, usages: ['client auth'] });
    const created = await kubectl(['create', '-f', '-'], manifest);
    expect(created.code, created.stderr).to.equal(0);
    const pending = await kubectl(['get', 'csr', 'alice']);
    expect(pending.stdout.split('\n')[0].split(/\s+/)).to.deep.equal(['NAME', 'AGE', 'SIGNERNAME', 'REQUESTOR', 'REQUESTEDDURATION', 'CONDITION']);
    expect(pending.stdout).to.match(/^alice\s+\S+\s+kubernetes\.io\/kube-apiserver-client\s+system:admin\s+24h\s+Pending$/m);
    // The requester is the authenticated user, whatever the manifest said.
    expect((await csr('alice')).spec).to.deep.include({ username: 'system:admin', groups: ['system:masters', 'system:authenticated'] });

    const approved = await kubectl(['certificate', 'approve', 'alice']);
    expect(approved.code, approved.stderr).to.equal(0);
    expect(approved.stdout).to.contain('certificatesigningrequest.certificates.k8s.io/alice approved');
    await until('alice to be issued', async () => (await kubectl(['get', 'csr', 'alice'])).stdout.includes('Approved,Issued'));
    const object = await csr('alice');
    expect(object.status.conditions).to.have.length(1);
    expect(object.status.conditions[0]).to.include({ type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'This CSR was approved by kubectl certificate approve.' });

    const pem = await kubectl(['get', 'csr', 'alice', '-o', 'jsonpath={.status.certificate}']);
    writeFileSync(file('alice.crt'), Buffer.from(pem.stdout, 'base64'));
    expect(await ok('openssl', ['verify', '-CAfile', 'ca.crt', 'alice.crt'])).to.contain('alice.crt: OK');
    const text = await ok('openssl', ['x509', '-in', 'alice.crt', '-noout', '-text']);
    expect(text).to.match(/Subject: O ?= ?devs, CN ?= ?alice/);
    expect(text).to.contain('CA:FALSE');
    expect(text).to.contain('TLS Web Client Authentication');
    const dates = await ok('openssl', ['x509', '-in', 'alice.crt', '-noout', '-startdate', '-enddate']);
    const [start, end] = [...dates.matchAll(/=(.*)$/gm)].map((m) => Date.parse(m[1]));
    // 24h requested: five minutes backdated, the end not (a day is over 8 hours: the backdate comes off the end).
    expect(end - start).to.equal(24 * 3600 * 1000);

    const asAlice = writeKubeconfig(server.url, server.caPem, { certPem: readFileSync(file('alice.crt'), 'utf8'), keyPem: readFileSync(file('alice.key'), 'utf8') }, dir);
    const denied = await runKubectl(asAlice, ['get', 'configmaps', '-n', 'default']);
    expect(denied.stderr).to.contain('User "alice" cannot list resource "configmaps"');
    expect((await kubectl(['create', 'rolebinding', 'alice-view', '--clusterrole=view', '--user=alice', '-n', 'default'])).code).to.equal(0);
    await until('alice to read configmaps', async () => (await runKubectl(asAlice, ['get', 'configmaps', '-n', 'default'])).code === 0);
  });

  it('kubectl certificate deny: Denied, never issued, and the approval cannot follow', async () => {
    expect((await kubectl(['create', '-f', '-'], await opensslRequest('bob', '/CN=bob', { signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] }))).code).to.equal(0);
    const denied = await kubectl(['certificate', 'deny', 'bob']);
    expect(denied.code, denied.stderr).to.equal(0);
    expect((await kubectl(['get', 'csr', 'bob'])).stdout).to.match(/^bob\s+.*\s+<none>\s+Denied$/m);
    // kubectl refuses by itself; the server refuses too when asked directly.
    const again = await kubectl(['certificate', 'approve', 'bob']);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.contain('certificate signing request "bob" is already Denied');
    const current = await csr('bob');
    const both = { ...current, status: { conditions: [...current.status.conditions, { type: 'Approved', status: 'True', reason: 'Anyway' }] } };
    const refused = await server.request('PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/bob/approval', { body: JSON.stringify(both) });
    expect(refused.status).to.equal(422);
    expect(refused.json<Json>().message).to.equal('CertificateSigningRequest.certificates.k8s.io "bob" is invalid: status.conditions[1].type: Invalid value: "Approved": Approved and Denied conditions are mutually exclusive');
    const removed = await server.request('PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/bob/approval', { body: JSON.stringify({ ...current, status: {} }) });
    expect(removed.json<Json>().message).to.contain('status.conditions: Forbidden: updates may not remove a condition of type "Denied"');
    expect((await csr('bob')).status.certificate).to.equal(undefined);
  });

  it('serves the approval subresource (discovery, GET, PUT with curl) and keeps approvals from other paths', async () => {
    const resources = await server.request('GET', '/apis/certificates.k8s.io/v1');
    expect(resources.json<Json>().resources.map((r: Json) => [r.name, r.verbs])).to.deep.include(['certificatesigningrequests/approval', ['get', 'patch', 'update']]);
    expect((await kubectl(['create', '-f', '-'], await opensslRequest('carol', '/CN=carol', { signerName: 'example.com/custom', usages: ['client auth'] }, true))).code).to.equal(0);
    const current = await csr('carol');
    // Unconditional updates (no resourceVersion), as CSRs allow.
    const approvedBody = { ...current, metadata: { name: 'carol' }, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'ByCurl', message: 'approved with curl' }] } };
    // The object itself and its status may not approve.
    for (const path of ['', '/status']) {
      const refused = await server.request('PUT', `/apis/certificates.k8s.io/v1/certificatesigningrequests/carol${path}`, { body: JSON.stringify(approvedBody) });
      expect(refused.status, path).to.equal(path === '' ? 200 : 422);
      if (path === '/status') expect(refused.json<Json>().message).to.contain('status.conditions: Forbidden: updates may not add a condition of type "Approved"');
    }
    expect((await csr('carol')).status.conditions).to.equal(undefined);
    const curl = await run('curl', ['-sS', '--cacert', 'ca.crt', '--cert', 'admin.crt', '--key', 'admin.key', '-X', 'PUT', '-H', 'Content-Type: application/json', '--data-binary', '@-',
      `${server.url}/apis/certificates.k8s.io/v1/certificatesigningrequests/carol/approval`], { cwd: dir, input: JSON.stringify(approvedBody) });
    expect(curl.code, curl.stderr).to.equal(0);
    const answer = JSON.parse(curl.stdout) as Json;
    expect(answer.status.conditions[0]).to.include({ type: 'Approved', reason: 'ByCurl' });
    expect(answer.status.conditions[0].lastUpdateTime).to.match(/Z$/);
    expect((await server.request('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests/carol/approval')).json<Json>().status.conditions).to.have.length(1);
    // A custom signer's request stays unsigned: no built-in signer names it.
    expect((await kubectl(['get', 'csr', 'carol'])).stdout).to.match(/^carol\s+.*\s+Approved$/m);
    // Server-side apply through the approval subresource records its manager there.
    expect((await kubectl(['create', '-f', '-'], await opensslRequest('dave', '/CN=dave', { signerName: 'example.com/custom', usages: ['client auth'] }, true))).code).to.equal(0);
    const applied = await server.request('PATCH', '/apis/certificates.k8s.io/v1/certificatesigningrequests/dave/approval?fieldManager=approver', {
      body: JSON.stringify({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'dave' }, status: { conditions: [{ type: 'Denied', status: 'True', reason: 'Applied', message: 'no' }] } }),
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(applied.status, applied.text).to.equal(200);
    expect(applied.json<Json>().status.conditions.map((c: Json) => c.type)).to.deep.equal(['Denied']);
    expect(applied.json<Json>().metadata.managedFields.find((m: Json) => m.manager === 'approver')).to.include({ operation: 'Apply', subresource: 'approval' });
  });

  it('refuses what v1.25 refuses: the legacy signer, a request that is no CSR, a short expiration, unknown usages', async () => {
    const legacy = await kubectl(['create', '-f', '-'], await opensslRequest('legacy', '/CN=x', { signerName: 'kubernetes.io/legacy-unknown', usages: ['client auth'] }));
    expect(legacy.stderr).to.contain('spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version');
    const notCsr = await kubectl(['create', '-f', '-'], JSON.stringify({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'junk' }, spec: { request: Buffer.from('hello').toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] } }));
    expect(notCsr.stderr).to.contain('spec.request: Invalid value: []byte{0x68, 0x65, 0x6c, 0x6c, 0x6f}: PEM block type must be CERTIFICATE REQUEST');
    const short = await kubectl(['create', '-f', '-'], await opensslRequest('short', '/CN=x', { signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth', 'flying'], expirationSeconds: 300 }));
    expect(short.stderr).to.contain('spec.usages[1]: Unsupported value: "flying"');
    expect(short.stderr).to.contain('spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 600 seconds (10 minutes)');
    expect((await kubectl(['get', 'csr', 'legacy', 'junk', 'short', '--ignore-not-found'])).stdout).to.equal('');
  });

  it('a request its signer refuses gets Failed (SignerValidationFailure) and no certificate', async () => {
    expect((await kubectl(['create', '-f', '-'], await opensslRequest('server', '/CN=server', { signerName: 'kubernetes.io/kube-apiserver-client', usages: ['server auth'] }))).code).to.equal(0);
    expect((await kubectl(['certificate', 'approve', 'server'])).code).to.equal(0);
    await until('the Failed condition', async () => (await kubectl(['get', 'csr', 'server'])).stdout.includes('Approved,Failed'));
    const failed = (await csr('server')).status.conditions.find((c: Json) => c.type === 'Failed');
    expect(failed).to.include({ status: 'True', reason: 'SignerValidationFailure', message: 'invalid usage for client certificate: server auth' });
    expect((await csr('server')).status.certificate).to.equal(undefined);
  });

  it('a node serving certificate from kubelet-serving: the DNS and IP names kept, server auth, ten minutes when asked', async () => {
    await ok('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'serving.key']);
    await ok('openssl', ['req', '-new', '-key', 'serving.key', '-subj', '/O=system:nodes/CN=system:node:worker-9', '-addext', 'subjectAltName=DNS:worker-9,IP:10.0.0.9', '-out', 'serving.csr']);
    const manifest = JSON.stringify({
      apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'serving' },
      spec: { request: readFileSync(file('serving.csr')).toString('base64'), signerName: 'kubernetes.io/kubelet-serving', usages: ['digital signature', 'key encipherment', 'server auth'], expirationSeconds: 600 },
    });
    expect((await kubectl(['create', '-f', '-'], manifest)).code).to.equal(0);
    expect((await kubectl(['certificate', 'approve', 'serving'])).code).to.equal(0);
    await until('the serving certificate', async () => (await kubectl(['get', 'csr', 'serving'])).stdout.includes('Approved,Issued'));
    writeFileSync(file('serving.crt'), Buffer.from((await csr('serving')).status.certificate, 'base64'));
    const text = await ok('openssl', ['x509', '-in', 'serving.crt', '-noout', '-text']);
    expect(text).to.contain('DNS:worker-9, IP Address:10.0.0.9');
    expect(text).to.contain('TLS Web Server Authentication');
    expect(text).to.contain('CA:FALSE');
    const dates = await ok('openssl', ['x509', '-in', 'serving.crt', '-noout', '-startdate', '-enddate']);
    const [start, end] = [...dates.matchAll(/=(.*)$/gm)].map((m) => Date.parse(m[1]));
    expect(end - start).to.equal(15 * 60 * 1000);
  });
});
