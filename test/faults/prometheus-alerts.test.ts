/**
 * A real Prometheus (Debian's) scrapes a three-replica cluster on loopback with a monitoring
 * credential (a client certificate in group system:monitoring, which v1.25's default policy lets
 * GET /metrics) and evaluates deploy/prometheus/carina-rules.yaml while faults are injected as
 * the chaos suite's kill faults do (SIGKILL, restart on the same data):
 * 1. the leader is killed: CarinaLeaderChanged fires, the killed member is `up` 0, and it comes
 *    back when restarted;
 * 2. the leader and a follower are killed (the survivor has no quorum): etcdNoLeader fires for
 *    the survivor after its minute; both are restarted and etcdNoLeader resolves.
 * Throughout, a small client workload writes and reads; at the end every target is up, and
 * Prometheus computes the request rate and the 99th percentile latencies from what it scraped
 * (their size is the loaded machine's, not asserted: bench/ measures it). The run's timeline
 * is logged (and written to $CARINA_ALERT_TIMELINE_FILE when set). Bounded in time; every
 * process it started is stopped.
 */
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { issueClientCertificate } from '../../src/certificates';
import { CarinaApiProcess } from '../support/carina-api-process';
import { PrometheusProcess } from '../support/prometheus-process';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text';
import { until } from '../support/until';

const REPO = resolve(__dirname, '..', '..', '..');
const RULES = join(REPO, 'deploy', 'prometheus', 'carina-rules.yaml');
/** etcdNoLeader's `for` is one minute; evaluation and scrape add a few seconds. */
const NO_LEADER_FIRING_MS = 120_000;

describe('a real Prometheus watching a three-replica cluster through faults (loopback)', function () {
  this.timeout(600_000);
  let replicas: CarinaApiProcess[] = [];
  let prometheus: PrometheusProcess | undefined;
  const started = Date.now();
  const timeline: string[] = [];
  const note = (line: string) => timeline.push(`${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s  ${line}`);
  let workload: { stop(): Promise<number> } | undefined;

  before(async () => {
    replicas = await CarinaApiProcess.startCluster(3);
    note('three replicas ready');
    const clusterCa = { certPem: readFileSync(join(replicas[0].dataDir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(replicas[0].dataDir, 'pki', 'ca.key'), 'utf8') };
    const monitoring = await issueClientCertificate(clusterCa, { user: 'prometheus', groups: ['system:monitoring'] });
    prometheus = await PrometheusProcess.start({
      targets: replicas.map((r) => `127.0.0.1:${r.port}`),
      tls: { ca: clusterCa.certPem, cert: monitoring.certPem, key: monitoring.keyPem },
      ruleFiles: [RULES],
    });
    note(`Prometheus ready on 127.0.0.1:${prometheus.port}, scraping every second`);
  });

  after(async () => {
    await workload?.stop();
    await prometheus?.stop();
    await Promise.all(replicas.map((r) => r.stop()));
    const text = timeline.join('\n');
    console.log(`alert timeline:\n${text}`);
    const file = process.env.CARINA_ALERT_TIMELINE_FILE;
    if (file !== undefined && file !== '') writeFileSync(file, `${text}\n`);
  });

  function running(): CarinaApiProcess[] {
    return replicas.filter((r) => r.pid !== undefined);
  }

  /** Writes a ConfigMap and reads the list every 200 ms through whichever replica is running. */
  function startWorkload(): { stop(): Promise<number> } {
    let stopped = false;
    let done = 0;
    const loop = (async () => {
      for (let i = 0; !stopped && i < 5000; i++) {
        const live = running();
        const replica = live[i % Math.max(1, live.length)];
        if (replica !== undefined) {
          try {
            await replica.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `load-${i}` } }) });
            await replica.request('GET', '/api/v1/namespaces/default/configmaps?limit=50');
            done++;
          } catch {
            // A replica killed under the request: the next iteration picks a running one.
          }
        }
        // Fixed sleep: the workload's pace is what Prometheus' rates are computed over; a steady
        // client waits on no event, and rounds sent back to back would spin on killed replicas.
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        await loop;
        return done;
      },
    };
  }

  async function leader(among: CarinaApiProcess[]): Promise<CarinaApiProcess> {
    return until('a leader among the running replicas', async () => {
      for (const replica of among) {
        const metrics = await replica.request('GET', '/metrics');
        if (sampleValue(parsePrometheusText(metrics.text), 'etcd_server_is_leader') === 1) return replica;
      }
      return null;
    }, 30_000);
  }

  async function targetsUp(): Promise<number> {
    const p = prometheus as PrometheusProcess;
    return (await p.query('sum(up{job="carina"})'))[0]?.value ?? 0;
  }

  async function waitFiring(alertname: string, timeoutMs: number, match: (labels: Record<string, string>) => boolean = () => true): Promise<void> {
    const p = prometheus as PrometheusProcess;
    await until(`${alertname} to fire`, async () => (await p.firing(alertname)).some((a) => match(a.labels)), timeoutMs, () => JSON.stringify(timeline));
    note(`${alertname} firing`);
  }

  it('fires the leader-change and no-leader alerts during the faults, resolves them after, and computes the request rate and latencies', async () => {
    const p = prometheus as PrometheusProcess;
    await until('Prometheus to see all three replicas up', async () => (await targetsUp()) === 3, 30_000);
    note('up: 3 targets');
    expect(await p.firing('etcdNoLeader')).to.deep.equal([]);
    expect(await p.firing('CarinaLeaderChanged')).to.deep.equal([]);
    workload = startWorkload();

    // Fault 1: the leader is killed.
    const first = await leader(replicas);
    const firstIndex = replicas.indexOf(first);
    await first.killAndWait('SIGKILL');
    note(`fault 1: SIGKILL of the leader, member ${firstIndex + 1}`);
    await leader(running());
    note('a new leader elected among the two others');
    await waitFiring('CarinaLeaderChanged', 60_000);
    await until('Prometheus to see the killed member down', async () => (await targetsUp()) === 2, 30_000);
    note('up: 2 targets');
    await first.launch();
    note(`member ${firstIndex + 1} restarted and ready`);
    await until('Prometheus to see all three replicas up again', async () => (await targetsUp()) === 3, 30_000);
    note('up: 3 targets');

    // Fault 2: the leader and a follower are killed; the survivor has no quorum.
    const second = await leader(replicas);
    const follower = replicas.find((r) => r !== second) as CarinaApiProcess;
    const survivor = replicas.find((r) => r !== second && r !== follower) as CarinaApiProcess;
    await Promise.all([second.killAndWait('SIGKILL'), follower.killAndWait('SIGKILL')]);
    note(`fault 2: SIGKILL of the leader (member ${replicas.indexOf(second) + 1}) and a follower (member ${replicas.indexOf(follower) + 1}); member ${replicas.indexOf(survivor) + 1} is alone`);
    await until('the survivor to report no leader', async () => sampleValue(parsePrometheusText((await survivor.request('GET', '/metrics')).text), 'etcd_server_has_leader') === 0, 30_000);
    note(`member ${replicas.indexOf(survivor) + 1} reports etcd_server_has_leader 0`);
    const pending = (await p.alerts()).filter((a) => a.labels.alertname === 'etcdNoLeader');
    expect(pending.map((a) => a.state)).to.not.include('firing');
    await waitFiring('etcdNoLeader', NO_LEADER_FIRING_MS, (labels) => labels.instance === `127.0.0.1:${survivor.port}`);
    await Promise.all([second.launch(), follower.launch()]);
    note('both restarted and ready');
    await until('etcdNoLeader to resolve', async () => (await p.alerts()).every((a) => a.labels.alertname !== 'etcdNoLeader'), 60_000);
    note('etcdNoLeader resolved');
    await until('Prometheus to see all three replicas up at the end', async () => (await targetsUp()) === 3, 30_000);
    note('up: 3 targets');

    // Once healed the series the rules and dashboards read are whole: requests flow through the
    // replicas, and Prometheus computes a request and a WAL fsync 99th percentile from the
    // histograms the replicas export. A missing or empty histogram gives no value or NaN. How
    // large they are depends on the machine the test shares, so only that they are real latencies.
    const healedAt = Date.now();
    const rate = await until('requests in the 20 s after the recovery', async () => {
      if (Date.now() - healedAt < 20_000) return null;
      const value = (await p.query('sum(rate(apiserver_request_total{job="carina"}[20s]))'))[0]?.value ?? 0;
      return value > 0 ? value : null;
    }, 90_000);
    const p99 = (await p.query('histogram_quantile(0.99, sum by (le) (rate(apiserver_request_duration_seconds_bucket{job="carina",verb!="WATCH"}[20s])))'))[0]?.value ?? NaN;
    const fsync = (await p.query('histogram_quantile(0.99, sum by (le) (rate(etcd_disk_wal_fsync_duration_seconds_bucket{job="carina"}[5m])))'))[0]?.value ?? NaN;
    note(`after the recovery: request rate ${rate.toFixed(2)}/s, request p99 ${p99.toFixed(3)} s; WAL fsync p99 over the run ${fsync.toFixed(4)} s`);
    expect(p99, 'request p99 after the recovery (s)').to.be.finite.and.above(0);
    expect(fsync, 'WAL fsync p99 over the run (s)').to.be.finite.and.above(0);
    const served = await workload.stop();
    workload = undefined;
    note(`workload stopped after ${served} write+list rounds`);
    expect(served).to.be.greaterThan(20);
    const changes = (await p.query('max(etcd_server_leader_changes_seen_total{job="carina"})'))[0]?.value ?? 0;
    expect(changes).to.be.greaterThan(1);
  });
});
