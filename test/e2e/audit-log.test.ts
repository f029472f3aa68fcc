/**
 * The audit log end to end (--audit-policy-file, --audit-log-path, --audit-log-max*): a
 * `carina server` with a policy, requests made with kubectl and curl, and the JSON lines the
 * log file holds: stages (RequestReceived, ResponseStarted for a watch and a 401,
 * ResponseComplete), levels per rule, impersonation, omitManagedFields, no credential in
 * the file, and rotation by size.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CarinaApiProcess } from '../support/carina-api-process';
import { httpsRequest } from '../support/client-credentials';
import { until } from '../support/until';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('audit log (e2e: carina server with --audit-policy-file and --audit-log-path)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: CarinaApiProcess;
  const events = (): Json[] => {
    const out: Json[] = [];
    for (const name of readdirSync(dir).filter((n) => n.startsWith('audit')).sort()) {
      if (!name.endsWith('.log')) continue;
      for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) if (line !== '') out.push(JSON.parse(line) as Json);
    }
    return out;
  };
  const eventsFor = (match: (e: Json) => boolean) => events().filter(match);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carina-audit-e2e-'));
    writeFileSync(join(dir, 'policy.yaml'), stringify({
      apiVersion: 'audit.k8s.io/v1',
      kind: 'Policy',
      rules: [
        { level: 'None', nonResourceURLs: ['/healthz*', '/readyz*', '/livez*'] },
        { level: 'None', users: ['system:apiserver'] },
        { level: 'RequestResponse', namespaces: ['big'], omitStages: ['RequestReceived'] },
        { level: 'RequestResponse', resources: [{ group: '', resources: ['secrets'] }], omitStages: ['RequestReceived'] },
        { level: 'Request', resources: [{ group: '', resources: ['configmaps'] }], omitManagedFields: true },
        { level: 'Metadata' },
      ],
    }));
    server = await CarinaApiProcess.start({ extraArgs: ['--audit-policy-file', join(dir, 'policy.yaml'), '--audit-log-path', join(dir, 'audit.log'), '--audit-log-maxsize', '1', '--audit-log-maxbackup', '2'] });
    expect((await server.kubectl(['create', 'namespace', 'big'])).code).to.equal(0);
  });

  after(async () => {
    await server?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('writes RequestReceived and ResponseComplete for a request at Request level, with the request object and no managedFields', async () => {
    expect((await server.kubectl(['create', 'configmap', 'audited', '--from-literal=k=v'])).code).to.equal(0);
    // The name is known from the request's object, so only the last stage's objectRef has it (as in v1.25).
    const mine = await until('the create\'s events', async () => {
      const last = eventsFor((e) => e.verb === 'create' && e.objectRef?.name === 'audited' && e.stage === 'ResponseComplete')[0];
      return last === undefined ? undefined : eventsFor((e) => e.auditID === last.auditID);
    });
    expect(mine.map((e) => e.stage)).to.deep.equal(['RequestReceived', 'ResponseComplete']);
    const [received, complete] = mine;
    expect(received.auditID).to.equal(complete.auditID);
    expect(received).not.to.have.property('responseStatus');
    expect(complete.level).to.equal('Request');
    expect(complete.user.username).to.equal('system:admin');
    expect(complete.sourceIPs).to.deep.equal(['127.0.0.1']);
    expect(complete.responseStatus).to.deep.equal({ metadata: {}, code: 201 });
    expect(complete.requestObject.data).to.deep.equal({ k: 'v' });
    expect(complete).not.to.have.property('responseObject');
    expect(complete.annotations['authorization.k8s.io/decision']).to.equal('allow');
    expect(complete.requestReceivedTimestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('logs a YAML body\'s object as the handler decoded it', async () => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: audited-yaml\ndata:\n  k: from-yaml\n';
    const created = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: yaml, headers: { 'Content-Type': 'application/yaml' } });
    expect(created.status, created.text).to.equal(201);
    const complete = await until('the YAML create\'s event', async () => eventsFor((e) => e.verb === 'create' && e.objectRef?.name === 'audited-yaml' && e.stage === 'ResponseComplete')[0]);
    expect(complete.requestObject).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'audited-yaml' }, data: { k: 'from-yaml' } });
  });

  it('answers with the Audit-Id of the events', async () => {
    const result = await server.request('GET', '/api/v1/namespaces/default/configmaps/audited');
    const id = String(result.headers['audit-id']);
    const event = await until('the get\'s event', async () => eventsFor((e) => e.auditID === id && e.stage === 'ResponseComplete')[0]);
    expect(event.verb).to.equal('get');
    expect(event.objectRef).to.deep.equal({ resource: 'configmaps', namespace: 'default', name: 'audited', apiVersion: 'v1' });
  });

  it('writes a failure\'s Status as responseStatus', async () => {
    await server.kubectl(['get', 'configmap', 'missing']);
    const event = await until('the 404\'s event', async () => eventsFor((e) => e.verb === 'get' && e.objectRef?.name === 'missing' && e.stage === 'ResponseComplete')[0]);
    expect(event.responseStatus).to.deep.equal({ metadata: {}, status: 'Failure', message: 'configmaps "missing" not found', reason: 'NotFound', details: { name: 'missing', kind: 'configmaps' }, code: 404 });
  });

  it('writes ResponseStarted when a watch starts, then ResponseComplete when it ends', async () => {
    await server.watch('/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1', () => false, 3000);
    const stages = await until('the watch\'s events', async () => {
      const found = eventsFor((e) => e.verb === 'watch' && e.objectRef?.resource === 'configmaps').map((e) => e.stage);
      return found.includes('ResponseComplete') ? found : undefined;
    });
    expect(stages).to.deep.equal(['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
  });

  it('writes a failed authentication as one ResponseStarted event without user, and never the token', async () => {
    const result = await httpsRequest(server.port, server.caPem, 'GET', '/api/v1/namespaces/default/pods?audit-probe=1', { credential: { token: 'bogus-token-1234' } });
    expect(result.status).to.equal(401);
    const event = await until('the 401\'s event', async () => eventsFor((e) => e.requestURI === '/api/v1/namespaces/default/pods?audit-probe=1')[0]);
    expect(event.stage).to.equal('ResponseStarted');
    expect(event.user).to.deep.equal({});
    expect(event.responseStatus).to.deep.equal({ metadata: {}, message: 'Authentication failed, attempted: bearer', code: 401 });
    expect(readFileSync(join(dir, 'audit.log'), 'utf8')).not.to.include('bogus-token-1234');
  });

  it('names the impersonated user beside the one who asked', async () => {
    await server.kubectl(['get', 'configmaps', '--as', 'jane', '--as-group', 'qa']);
    const event = await until('the impersonated list', async () => eventsFor((e) => e.verb === 'list' && e.impersonatedUser?.username === 'jane' && e.stage === 'ResponseComplete')[0]);
    expect(event.user.username).to.equal('system:admin');
    expect(event.impersonatedUser).to.deep.equal({ username: 'jane', groups: ['qa', 'system:authenticated'] });
    expect(event.responseStatus.code).to.equal(403);
  });

  it('blanks Secret values even at RequestResponse', async () => {
    expect((await server.kubectl(['create', 'secret', 'generic', 'creds', '--from-literal=password=hunter2-secret'])).code).to.equal(0);
    const event = await until('the secret\'s event', async () => eventsFor((e) => e.verb === 'create' && e.objectRef?.name === 'creds')[0]);
    expect(event.level).to.equal('RequestResponse');
    expect(event.requestObject.data).to.deep.equal({ password: '' });
    expect(event.responseObject.data).to.deep.equal({ password: '' });
    expect(readFileSync(join(dir, 'audit.log'), 'utf8')).not.to.include(Buffer.from('hunter2-secret').toString('base64'));
  });

  it('leaves out what the policy says None for (the server\'s own writes, health checks)', () => {
    expect(eventsFor((e) => e.user?.username === 'system:apiserver')).to.have.length(0);
    expect(eventsFor((e) => String(e.requestURI).startsWith('/readyz'))).to.have.length(0);
  });

  it('rotates the file by --audit-log-maxsize, keeping --audit-log-maxbackup backups', async () => {
    const big = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'big' }, data: { payload: 'x'.repeat(300 * 1024) } };
    for (let i = 0; i < 4; i++) {
      const result = await curlCreate({ ...big, metadata: { ...big.metadata, name: `big-${i}` } });
      expect(result).to.equal(201);
    }
    // Each event (request and response, ~600 KB) fills most of a 1 MB file: every create after the first rotates it.
    const backups = () => readdirSync(dir).filter((n) => /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log$/.test(n));
    await until('three rotations, two backups kept', async () => backups().length === 2 && eventsFor((e) => e.objectRef?.name === 'big-3').length > 0);
    const kept = eventsFor((e) => e.objectRef?.namespace === 'big' && e.verb === 'create' && String(e.objectRef?.name).startsWith('big-')).map((e) => e.objectRef.name);
    expect(kept.sort()).to.deep.equal(['big-1', 'big-2', 'big-3']);
  });

  function curlCreate(object: Json): Promise<number> {
    const kubeconfig = readFileSync(server.kubeconfig, 'utf8');
    const field = (name: string) => Buffer.from(new RegExp(`${name}: (\\S+)`).exec(kubeconfig)?.[1] ?? '', 'base64');
    writeFileSync(join(dir, 'ca.crt'), server.caPem);
    writeFileSync(join(dir, 'admin.crt'), field('client-certificate-data'));
    writeFileSync(join(dir, 'admin.key'), field('client-key-data'));
    writeFileSync(join(dir, 'body.json'), JSON.stringify(object));
    return new Promise((resolve) => {
      const child = spawn('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '--cacert', join(dir, 'ca.crt'), '--cert', join(dir, 'admin.crt'), '--key', join(dir, 'admin.key'), '-H', 'Content-Type: application/json', '--data-binary', `@${join(dir, 'body.json')}`, `${server.url}/api/v1/namespaces/big/configmaps`]);
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', () => resolve(Number(out)));
    });
  }
});
