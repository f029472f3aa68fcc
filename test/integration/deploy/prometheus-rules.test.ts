/**
 * deploy/prometheus and deploy/grafana: Debian's promtool accepts the rules and passes their unit
 * tests (each alert fires on what should fire it, with its labels, and not before its `for`),
 * and the rules and the dashboard read only metrics Carina serves (the table of definitions that
 * test/integration/api/metrics-definitions.test.ts checks a live replica against), the rules'
 * own recordings, and Prometheus' `up`. Needs promtool (test/support/install-test-deps.sh).
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const REPO = resolve(__dirname, '..', '..', '..', '..');
const RULES_DIR = join(REPO, 'deploy', 'prometheus');

function promtool(args: string[]): { status: number | null; output: string } {
  const result = spawnSync('promtool', args, { cwd: RULES_DIR, encoding: 'utf8', timeout: 120_000 });
  if (result.error !== undefined) throw new Error(`promtool could not run (install it with test/support/install-test-deps.sh): ${result.error.message}`);
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Metric names a PromQL expression reads: identifiers not followed by `(` and not PromQL's words or label names. */
function metricNames(expr: string): string[] {
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\{[^}]*\}/g, '{}');
  const words = new Set(['sum', 'min', 'max', 'avg', 'count', 'topk', 'bottomk', 'quantile', 'stddev', 'stdvar', 'group', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'le', 'instance', 'job', 'cluster', 'verb', 'code', 'resource', 'To', 'grpc_type', 'grpc_code', 'grpc_method', 'operation', 'kind', 'result', 'inf', 'nan']);
  const names = new Set<string>();
  for (const match of withoutStrings.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*(?![a-zA-Z0-9_:]*\s*\()/g)) {
    const name = match[0];
    const before = withoutStrings.slice(0, match.index);
    // Durations ([5m], [15m:1m]) and label lists (by (a, b)) are not metrics.
    if (/\[[^\]]*$/.test(before) || /(?:by|without|on|ignoring)\s*\([^)]*$/.test(before)) continue;
    // 1e9 is a number, not a metric called e9.
    if (words.has(name) || /[0-9.]$/.test(before)) continue;
    names.add(name);
  }
  return [...names];
}

function served(): Set<string> {
  const table = JSON.parse(readFileSync(join(REPO, 'test', 'fixtures', 'metrics', 'definitions.json'), 'utf8')) as { metrics: Array<{ name: string; type: string; exported?: boolean }> };
  const names = new Set<string>(['up']);
  for (const m of table.metrics) {
    if (m.exported === false) continue;
    names.add(m.name);
    if (m.type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(m.name + suffix);
  }
  return names;
}

describe('deploy/: Prometheus rules and the Grafana dashboard', () => {
  const rulesText = readFileSync(join(RULES_DIR, 'carina-rules.yaml'), 'utf8');
  const recorded = new Set([...rulesText.matchAll(/^\s+- record: (\S+)$/gm)].map((m) => m[1]));
  const expressions = (): string[] => {
    // Each rule's expr: a one-line value or a `|` block, up to the next key.
    const exprs: string[] = [];
    const lines = rulesText.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const inline = /^\s+expr: (?!\|)(.+)$/.exec(lines[i]);
      if (inline !== null) exprs.push(inline[1]);
      else if (/^\s+expr: \|$/.test(lines[i])) {
        const block: string[] = [];
        const indent = (/^(\s+)/.exec(lines[i + 1]) ?? ['', ''])[1].length;
        for (i++; i < lines.length && (lines[i].trim() === '' || /^(\s+)/.exec(lines[i])?.[1].length === indent || (/^(\s+)/.exec(lines[i])?.[1].length ?? 0) > indent); i++) block.push(lines[i]);
        i--;
        exprs.push(block.join('\n'));
      }
    }
    return exprs;
  };

  it('promtool accepts the rules', () => {
    const checked = promtool(['check', 'rules', 'carina-rules.yaml']);
    expect(checked.status, checked.output).to.equal(0);
    expect(checked.output).to.contain('SUCCESS');
  });

  it('promtool runs the rules\' unit tests and they pass', () => {
    const tested = promtool(['test', 'rules', 'carina-rules.test.yaml']);
    expect(tested.status, tested.output).to.equal(0);
    expect(tested.output).to.contain('SUCCESS');
  });

  it('ships the alerts operators expect, by the mixins\' names', () => {
    const alerts = new Set([...rulesText.matchAll(/^\s+- alert: (\S+)$/gm)].map((m) => m[1]));
    for (const name of ['etcdNoLeader', 'etcdMembersDown', 'etcdInsufficientMembers', 'etcdHighNumberOfLeaderChanges', 'etcdHighFsyncDurations', 'etcdHighCommitDurations', 'etcdMemberCommunicationSlow', 'etcdHighNumberOfFailedGRPCRequests', 'etcdHighNumberOfFailedProposals', 'KubeAPIErrorBudgetBurn', 'KubeAPITerminatedRequests', 'KubeAPIDown']) {
      expect(alerts.has(name), name).to.equal(true);
    }
  });

  it('the rules read only metrics Carina serves, their own recordings and up', () => {
    const known = served();
    const exprs = expressions();
    expect(exprs.length).to.be.greaterThan(30);
    expect(exprs.flatMap(metricNames)).to.include.members(['etcd_server_has_leader', 'up', 'apiserver_request_slo_duration_seconds_bucket', 'apiserver_request:burnrate1h']);
    const unknown = exprs.flatMap(metricNames).filter((name) => !known.has(name) && !recorded.has(name));
    expect([...new Set(unknown)]).to.deep.equal([]);
  });

  it('the dashboard is Grafana JSON whose queries read only metrics Carina serves and the rules record', () => {
    const dashboard = JSON.parse(readFileSync(join(REPO, 'deploy', 'grafana', 'carina-dashboard.json'), 'utf8')) as { uid: string; panels: Array<{ type: string; targets?: Array<{ expr: string }> }> };
    expect(dashboard.uid).to.equal('carina-overview');
    const exprs = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
    expect(exprs.length).to.be.greaterThan(20);
    expect(exprs.flatMap(metricNames)).to.include.members(['apiserver_request_total', 'etcd_network_peer_round_trip_time_seconds_bucket', 'apiserver_request:burnrate5m']);
    const known = served();
    const unknown = exprs.flatMap(metricNames).filter((name) => !known.has(name) && !recorded.has(name));
    expect([...new Set(unknown)]).to.deep.equal([]);
  });
});
