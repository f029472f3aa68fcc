/**
 * componentstatuses: the entries and their conditions, and the health probe kube-apiserver v1.25
 * makes of a component's /healthz (here of a local HTTPS server standing in for a scheduler).
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:https';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { listComponentStatuses } from '../../../../../src/registry';
import { probeHealthEndpoint } from '../../../../../src/registry/virtual/component-statuses';
import { createTestCa, issueServingCertificate } from '../../../../support/test-pki';

describe('componentstatuses', () => {
  describe('probeHealthEndpoint', () => {
    let server: Server;
    let port = 0;
    let answer = { status: 200, body: 'ok' };

    before(async () => {
      const serving = issueServingCertificate(createTestCa());
      server = createServer({ cert: serving.certPem, key: serving.keyPem }, (_req, res) => res.writeHead(answer.status).end(answer.body));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });

    after(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('is healthy with the body of a 2xx answer, whatever the certificate', async () => {
      answer = { status: 200, body: 'ok' };
      expect(await probeHealthEndpoint(`https://127.0.0.1:${port}/healthz`)).to.deep.equal({ status: 'True', message: 'ok', error: '' });
    });

    it('is unhealthy with the status code of any other answer', async () => {
      answer = { status: 500, body: '[-]poststarthook failed' };
      expect(await probeHealthEndpoint(`https://127.0.0.1:${port}/healthz`)).to.deep.equal({ status: 'False', message: '', error: 'HTTP probe failed with statuscode: 500' });
    });

    it('is unhealthy with Go\'s dial error when nothing listens', async () => {
      const free = createTcpServer();
      await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
      const closedPort = (free.address() as AddressInfo).port;
      await new Promise<void>((resolve) => free.close(() => resolve()));
      const url = `https://127.0.0.1:${closedPort}/healthz`;
      expect(await probeHealthEndpoint(url)).to.deep.equal({ status: 'False', message: '', error: `Get "${url}": dial tcp 127.0.0.1:${closedPort}: connect: connection refused` });
    });
  });

  describe('listComponentStatuses', () => {
    it('lists the scheduler, the controller-manager and one etcd entry per store member', async () => {
      const items = await listComponentStatuses({
        storeMemberCount: async () => 3,
        storeProblem: async () => undefined,
        controllerManagerProblem: async () => 'no replica holds the controller lease',
        scheduler: async () => ({ status: 'True', message: 'ok', error: '' }),
      });
      expect(items.map((item) => [(item.metadata as { name: string }).name, item.conditions])).to.deep.equal([
        ['scheduler', [{ type: 'Healthy', status: 'True', message: 'ok' }]],
        ['controller-manager', [{ type: 'Healthy', status: 'False', error: 'no replica holds the controller lease' }]],
        ['etcd-0', [{ type: 'Healthy', status: 'True', message: '{"health":"true","reason":""}' }]],
        ['etcd-1', [{ type: 'Healthy', status: 'True', message: '{"health":"true","reason":""}' }]],
        ['etcd-2', [{ type: 'Healthy', status: 'True', message: '{"health":"true","reason":""}' }]],
      ]);
    });

    it('reports the store\'s problem on its entries', async () => {
      const items = await listComponentStatuses({
        storeMemberCount: async () => { throw new Error('unreachable'); },
        storeProblem: async () => 'store health check timed out',
        controllerManagerProblem: async () => undefined,
        scheduler: async () => ({ status: 'True', message: 'ok', error: '' }),
      });
      expect(items.slice(2)).to.deep.equal([{ kind: 'ComponentStatus', apiVersion: 'v1', metadata: { name: 'etcd-0', creationTimestamp: null }, conditions: [{ type: 'Healthy', status: 'False', error: 'store health check timed out' }] }]);
    });
  });
});
