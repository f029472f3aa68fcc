/**
 * The audit webhook end to end (--audit-webhook-config-file and its mode, batch and backoff
 * flags): `carina server` POSTing audit.k8s.io/v1 EventLists to a receiver this test runs, and
 * what each mode does when the receiver is down: batch and blocking lose the events (counted in
 * apiserver_audit_error_total{plugin="webhook"}) and serve the request; blocking-strict refuses
 * it with v1.25's 500, counted in apiserver_audit_requests_rejected_total. And the log backend
 * beside it in batch mode with truncation (--audit-log-mode=batch, --audit-log-truncate-*).
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CarinaApiProcess } from '../support/carina-api-process';
import { until } from '../support/until';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  rules: [
    { level: 'None', users: ['system:apiserver'] },
    { level: 'None', nonResourceURLs: ['*'] },
    { level: 'Request', resources: [{ group: '', resources: ['configmaps'] }] },
    { level: 'None' },
  ],
};

function configMap(name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } });
}

async function metric(server: CarinaApiProcess, line: RegExp): Promise<number> {
  const text = (await server.request('GET', '/metrics')).text;
  const match = line.exec(text);
  return match === null ? 0 : Number(match[1]);
}

/** A port nothing listens on now. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('audit webhook (e2e: carina server with --audit-webhook-config-file)', function () {
  this.timeout(180_000);
  let dir: string;
  const servers: CarinaApiProcess[] = [];

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'carina-audit-webhook-e2e-'));
    writeFileSync(join(dir, 'policy.yaml'), stringify(POLICY));
  });

  after(async () => {
    for (const server of servers) await server.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const kubeconfig = (name: string, url: string): string => {
    const file = join(dir, `${name}.kubeconfig`);
    writeFileSync(file, stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'receiver', cluster: { server: url } }],
      users: [{ name: 'apiserver', user: { token: 'audit-receiver-token' } }],
      contexts: [{ name: 'audit', context: { cluster: 'receiver', user: 'apiserver' } }],
      'current-context': 'audit',
    }));
    return file;
  };

  const start = async (config: string, extra: string[]): Promise<CarinaApiProcess> => {
    const server = await CarinaApiProcess.start({ extraArgs: ['--audit-policy-file', join(dir, 'policy.yaml'), '--audit-webhook-config-file', config, ...extra] });
    servers.push(server);
    return server;
  };

  describe('batch mode, receiver up then down', () => {
    let receiver: Server;
    const lists: Json[] = [];
    const authorizations: Array<string | undefined> = [];
    let server: CarinaApiProcess;

    before(async () => {
      receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          lists.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json);
          authorizations.push(req.headers.authorization);
          res.end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/audit`;
      server = await start(kubeconfig('batch', url), ['--audit-webhook-batch-max-wait', '200ms', '--audit-webhook-initial-backoff', '50ms']);
    });

    after(() => new Promise((resolve) => receiver.close(resolve)));

    it('POSTs the request\'s stages as audit.k8s.io/v1 EventLists with the kubeconfig\'s token', async () => {
      const created = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: configMap('hooked'), headers: { 'content-type': 'application/json' } });
      expect(created.status).to.equal(201);
      const events = await until('the create\'s two events at the receiver', async () => {
        const found = lists.flatMap((l) => l.items as Json[]).filter((e) => e.verb === 'create' && e.objectRef?.resource === 'configmaps');
        return found.length >= 2 ? found : undefined;
      });
      expect(lists[0]).to.include({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1' });
      expect(lists[0].metadata).to.deep.equal({});
      expect(events.map((e) => e.stage)).to.deep.equal(['RequestReceived', 'ResponseComplete']);
      expect(events[1]).to.include({ kind: 'Event', apiVersion: 'audit.k8s.io/v1', level: 'Request' });
      expect(events[1].objectRef).to.include({ resource: 'configmaps', namespace: 'default', name: 'hooked' });
      expect(events[1].requestObject.data).to.deep.equal({ k: 'v' });
      expect(events[1].responseStatus).to.deep.equal({ metadata: {}, code: 201 });
      expect(authorizations[0]).to.equal('Bearer audit-receiver-token');
    });

    it('serves requests while the receiver is down and counts the lost events as plugin "webhook"', async () => {
      await new Promise((resolve) => receiver.close(resolve));
      receiver.closeAllConnections();
      const before = await metric(server, /^apiserver_audit_error_total\{plugin="webhook"\} (\S+)$/m);
      const got = await server.request('GET', '/api/v1/namespaces/default/configmaps/hooked');
      expect(got.status).to.equal(200);
      const after = await until('the lost events counted', async () => {
        const now = await metric(server, /^apiserver_audit_error_total\{plugin="webhook"\} (\S+)$/m);
        return now >= before + 2 ? now : undefined;
      });
      expect(after).to.be.at.least(before + 2);
      expect(server.log).to.include('Error in audit plugin \'webhook\' affecting');
    });
  });

  it('blocking mode: a receiver that is down loses the events, the request is served', async () => {
    const server = await start(kubeconfig('blocking', `http://127.0.0.1:${await closedPort()}/audit`), ['--audit-webhook-mode', 'blocking']);
    const created = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: configMap('blocking'), headers: { 'content-type': 'application/json' } });
    expect(created.status).to.equal(201);
    // RequestReceived was waited for (and lost) before the create ran; ResponseComplete follows it.
    const lost = await until('both events counted', async () => {
      const n = await metric(server, /^apiserver_audit_error_total\{plugin="webhook"\} (\S+)$/m);
      return n >= 2 ? n : undefined;
    });
    expect(lost).to.equal(2);
    expect(await metric(server, /^apiserver_audit_requests_rejected_total (\S+)$/m)).to.equal(0);
    await server.stop();
  });

  it('blocking-strict mode: a receiver that is down fails the request with v1.25\'s 500, and nothing is written', async () => {
    const server = await start(kubeconfig('strict', `http://127.0.0.1:${await closedPort()}/audit`), ['--audit-webhook-mode', 'blocking-strict']);
    const refused = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: configMap('strict'), headers: { 'content-type': 'application/json' } });
    expect(refused.status).to.equal(500);
    expect(refused.json()).to.deep.include({ kind: 'Status', status: 'Failure', message: 'Internal error occurred: failed to store audit event', reason: 'InternalError', code: 500 });
    expect(await metric(server, /^apiserver_audit_requests_rejected_total (\S+)$/m)).to.equal(1);
    // Only RequestReceived was tried: the refused request has no later event.
    expect(await metric(server, /^apiserver_audit_error_total\{plugin="webhook"\} (\S+)$/m)).to.equal(1);
    expect((await server.request('GET', '/api/v1/namespaces/default/configmaps/strict')).status).to.equal(500);
    await server.stop();
  });

  it('the log beside the webhook, batched and truncated: a large event loses its objects and says so', async () => {
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const logPath = join(dir, 'batched.log');
      const server = await start(kubeconfig('union', `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/audit`), [
        '--audit-webhook-batch-max-wait', '100ms', '--audit-log-path', logPath, '--audit-log-mode', 'batch', '--audit-log-batch-max-wait', '100ms',
        '--audit-log-truncate-enabled', '--audit-log-truncate-max-event-size', '4000', '--audit-log-truncate-max-batch-size', '8000',
      ]);
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'large' }, data: { k: 'x'.repeat(6000) } });
      expect((await server.request('POST', '/api/v1/namespaces/default/configmaps', { body, headers: { 'content-type': 'application/json' } })).status).to.equal(201);
      const events = await until('the large create in the log', async () => {
        if (!existsSync(logPath)) return undefined;
        const found = readFileSync(logPath, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Json).filter((e) => e.objectRef?.name === 'large');
        return found.length > 0 ? found : undefined;
      });
      expect(events[0].stage).to.equal('ResponseComplete');
      expect(events[0]).not.to.have.property('requestObject');
      expect(events[0].annotations['audit.k8s.io/truncated']).to.equal('true');
      await server.stop();
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
