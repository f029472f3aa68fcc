/**
 * With --api-workers the store runs in the primary and the workers serve HTTP: a worker's
 * /metrics still carries the store's families under etcd's names, and its /status/data the
 * store's report, both handed over by the primary.
 */
import { expect } from 'chai';
import { CarinaApiProcess } from '../../support/carina-api-process';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text';
import { until } from '../../support/until';

describe('metrics and status from API workers (integration)', function () {
  this.timeout(120_000);
  let server: CarinaApiProcess;

  before(async () => {
    server = await CarinaApiProcess.start({ extraArgs: ['--api-workers', '2'] });
  });

  after(async () => {
    await server.stop();
  });

  it('serves the store\'s etcd families and its status report from the primary on every worker', async () => {
    const seen = new Set<string>();
    await until('both workers to have answered with the store\'s metrics', async () => {
      const metrics = parsePrometheusText((await server.request('GET', '/metrics')).text);
      expect(sampleValue(metrics, 'etcd_server_is_leader')).to.equal(1);
      expect(sampleValue(metrics, 'etcd_server_has_leader')).to.equal(1);
      seen.add(String(sampleValue(metrics, 'carina_api_worker_id')));
      return seen.size === 2;
    }, 30_000);
    const status = (await server.request('GET', '/status/data')).json<{ store: { role: string; members: unknown[] } | null }>();
    expect(status.store?.role).to.equal('leader');
    expect(status.store?.members).to.have.length(1);
  });
});
