/**
 * Every metric Carina exports under etcd 3.4's or kube-apiserver v1.25's name has that owner's
 * type, label names and bucket layout: a three-replica cluster serves a little of everything
 * (writes, reads, a list, a watch, a refused credential, a broken TLS handshake), then the
 * leader's and a follower's /metrics are scraped and checked against the table of definitions
 * (test/fixtures/metrics/definitions.json, facts from etcd's and kubernetes' sources).
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { CarinaApiProcess } from '../../support/carina-api-process';
import { parsePrometheusText, sampleValue, type ParsedFamily } from '../../support/prometheus-text';
import { until } from '../../support/until';

interface Definition {
  name: string;
  type: string;
  labels: string[];
  buckets?: number[];
  exported?: boolean;
}

const DEFINITIONS = (JSON.parse(readFileSync(resolve(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'metrics', 'definitions.json'), 'utf8')) as { metrics: Definition[] }).metrics;

/** Families whose samples appear only when something went wrong (or never, in Carina). */
const MAY_HAVE_NO_SAMPLES = new Set([
  'apiserver_request_terminations_total',
  'etcd_network_peer_sent_failures_total',
  // Peers' round trips are measured by the leader only.
  'etcd_network_peer_round_trip_time_seconds',
]);

/** What is wrong with `family` against `definition` (empty: nothing). */
function mismatches(definition: Definition, family: ParsedFamily | undefined): string[] {
  if (family === undefined) return [`${definition.name}: not served`];
  const problems: string[] = [];
  if (family.type !== definition.type) problems.push(`${definition.name}: type ${family.type}, not ${definition.type}`);
  if (family.samples.length === 0 && !MAY_HAVE_NO_SAMPLES.has(definition.name)) problems.push(`${definition.name}: no samples`);
  for (const sample of family.samples) {
    const labels = Object.keys(sample.labels).filter((l) => !(definition.type === 'histogram' && sample.name.endsWith('_bucket') && l === 'le')).sort();
    if (JSON.stringify(labels) !== JSON.stringify(definition.labels)) {
      problems.push(`${definition.name}: sample ${sample.name} has labels ${labels.join(',') || '(none)'}, not ${definition.labels.join(',') || '(none)'}`);
      break;
    }
  }
  if (definition.type === 'histogram') {
    const bySeries = new Map<string, number[]>();
    for (const sample of family.samples) {
      if (!sample.name.endsWith('_bucket')) continue;
      const { le, ...rest } = sample.labels;
      const key = JSON.stringify(rest);
      bySeries.set(key, [...(bySeries.get(key) ?? []), Number(le)]);
    }
    for (const bounds of bySeries.values()) {
      const finite = bounds.filter((b) => Number.isFinite(b));
      if (bounds.length !== finite.length + 1) problems.push(`${definition.name}: a series without its +Inf bucket`);
      if (JSON.stringify(finite) !== JSON.stringify(definition.buckets)) {
        problems.push(`${definition.name}: buckets ${finite.join(',')}, not ${(definition.buckets ?? []).join(',')}`);
        break;
      }
    }
  }
  return problems;
}

describe('metrics by their owners\' names (integration, three replicas)', function () {
  this.timeout(180_000);
  let replicas: CarinaApiProcess[] = [];

  before(async () => {
    replicas = await CarinaApiProcess.startCluster(3);
  });

  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
  });

  async function scrape(replica: CarinaApiProcess): Promise<Map<string, ParsedFamily>> {
    const response = await replica.request('GET', '/metrics');
    expect(response.status, response.text).to.equal(200);
    return parsePrometheusText(response.text);
  }

  async function leaderAndFollower(): Promise<{ leader: CarinaApiProcess; follower: CarinaApiProcess }> {
    const roles = await until('one replica to report etcd_server_is_leader 1', async () => {
      const values = await Promise.all(replicas.map(async (r) => sampleValue(await scrape(r), 'etcd_server_is_leader')));
      return values.filter((v) => v === 1).length === 1 ? values : null;
    }, 30_000);
    const leader = replicas[roles.indexOf(1)];
    return { leader, follower: replicas.find((r) => r !== leader) as CarinaApiProcess };
  }

  it('serves every listed etcd 3.4 and kube-apiserver v1.25 metric with its owner\'s type, labels and buckets', async () => {
    const { leader, follower } = await leaderAndFollower();
    for (const replica of [leader, follower]) {
      const name = `metrics-${replicas.indexOf(replica)}`;
      const created = await replica.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } }) });
      expect(created.status, created.text).to.equal(201);
      expect((await replica.request('GET', `/api/v1/namespaces/default/configmaps/${name}`)).status).to.equal(200);
      expect((await replica.request('GET', '/api/v1/namespaces/default/configmaps')).status).to.equal(200);
      expect((await replica.request('GET', '/api/v1/namespaces/default/configmaps', { anonymous: true, headers: { Authorization: 'Bearer not-a-token' } })).status).to.equal(401);
      const watched = await replica.watch(`/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name=${name}`, (events) => events.length > 0);
      expect(watched.events[0].type).to.equal('ADDED');
      // A client that speaks no TLS: a handshake error (apiserver_tls_handshake_errors_total).
      await new Promise<void>((done) => {
        const socket = connect(replica.port, '127.0.0.1', () => socket.end('GET / HTTP/1.1\r\n\r\n'));
        socket.on('close', () => done());
        socket.on('error', () => done());
      });
    }
    const exported = DEFINITIONS.filter((d) => d.exported !== false);
    for (const replica of [leader, follower]) {
      const families = await until('the leader to have measured its peers\' round trips', async () => {
        const scraped = await scrape(replica);
        return replica !== leader || (scraped.get('etcd_network_peer_round_trip_time_seconds')?.samples.length ?? 0) > 0 ? scraped : null;
      });
      const problems = exported.flatMap((d) => mismatches(d, families.get(d.name)));
      // Present only with the APF work: then it must be kube's too.
      const inflight = DEFINITIONS.find((d) => d.name === 'apiserver_current_inflight_requests') as Definition;
      if (families.has(inflight.name)) problems.push(...mismatches(inflight, families.get(inflight.name)));
      expect(problems, `${replica === leader ? 'leader' : 'follower'}:\n${problems.join('\n')}`).to.deep.equal([]);
      expect(sampleValue(families, 'apiserver_tls_handshake_errors_total')).to.be.greaterThan(0);
      expect(sampleValue(families, 'authentication_attempts', { result: 'failure' })).to.be.greaterThan(0);
      expect(sampleValue(families, 'apiserver_watch_events_total', { group: '', version: 'v1', kind: 'ConfigMap' })).to.be.greaterThan(0);
      expect(sampleValue(families, 'etcd_server_has_leader')).to.equal(1);
      expect(sampleValue(families, 'etcd_server_is_leader')).to.equal(replica === leader ? 1 : 0);
    }
  });

  it('keeps carina_raft_* only where etcd has no name for the value', async () => {
    const families = await scrape(replicas[0]);
    const carinaRaft = [...families.keys()].filter((name) => name.startsWith('carina_raft_')).sort();
    expect(carinaRaft).to.deep.equal(['carina_raft_leader_id', 'carina_raft_peer_lag_entries', 'carina_raft_term']);
  });
});
