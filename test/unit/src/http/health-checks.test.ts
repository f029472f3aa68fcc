import { expect } from 'chai';
import { runHealthChecks, startupHookCheck, type HealthCheck } from '../../../../src/http/health-checks';

const ok = (name: string): HealthCheck => ({ name, check: async () => undefined });
const bad = (name: string): HealthCheck => ({ name, check: async () => 'down' });

describe('health checks', () => {
  it('answers ok, or the verbose list with its closing line', async () => {
    expect(await runHealthChecks('livez', [ok('ping'), ok('etcd')], new URLSearchParams())).to.deep.equal({ status: 200, body: 'ok' });
    const verbose = await runHealthChecks('livez', [ok('ping'), ok('etcd')], new URLSearchParams('verbose'));
    expect(verbose?.body).to.equal('[+]ping ok\n[+]etcd ok\nlivez check passed\n');
  });

  it('fails with 500 and names the failed check; exclude skips it', async () => {
    const failed = await runHealthChecks('readyz', [ok('ping'), bad('etcd')], new URLSearchParams());
    expect(failed?.status).to.equal(500);
    expect(failed?.body).to.contain('[-]etcd failed: reason withheld');
    expect(failed?.body).to.match(/readyz check failed\n$/);
    const excluded = await runHealthChecks('readyz', [ok('ping'), bad('etcd')], new URLSearchParams('verbose&exclude=etcd'));
    expect(excluded?.status).to.equal(200);
    expect(excluded?.body).to.contain('[+]etcd excluded: ok');
  });

  it('runs one check by path, and knows no others', async () => {
    expect(await runHealthChecks('livez', [ok('ping'), bad('etcd')], new URLSearchParams(), 'ping')).to.deep.equal({ status: 200, body: 'ok' });
    expect((await runHealthChecks('livez', [ok('ping'), bad('etcd')], new URLSearchParams(), 'etcd'))?.status).to.equal(500);
    expect(await runHealthChecks('livez', [ok('ping')], new URLSearchParams(), 'nope')).to.equal(undefined);
  });
});

describe('start-up hooks and --livez-grace-period', () => {
  it('counts an unfinished hook as live during the grace period only', async () => {
    let now = 1000;
    let done = false;
    const hook = startupHookCheck('poststarthook/x', () => done, 5000, 1000, () => now);
    expect(await hook.check()).to.equal(undefined);
    now = 7000;
    expect(await hook.check()).to.equal('not finished');
    done = true;
    expect(await hook.check()).to.equal(undefined);
    const ready = startupHookCheck('poststarthook/x', () => false, 0, 1000, () => 1000);
    expect(await ready.check()).to.equal('not finished');
  });
});
