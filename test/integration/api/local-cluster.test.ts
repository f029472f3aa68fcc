/**
 * `carina local-cluster` (make cluster): three replicas and HAProxy on loopback. kubectl works
 * through the load balancer with the cluster's kubeconfig and keeps working when a replica is
 * killed; `down` stops every process it started.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localClusterDown, localClusterUp, type LocalCluster } from '../../../src/cluster';
import { distinctFreePorts } from '../../support/etcd-process';
import { until } from '../../support/until';

function kubectl(kubeconfig: string, ...args: string[]): { code: number; stdout: string; stderr: string } {
  const result = spawnSync('kubectl', ['--kubeconfig', kubeconfig, '--request-timeout=20s', ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('carina local-cluster: three replicas behind HAProxy', function () {
  this.timeout(180_000);
  const dir = mkdtempSync(join(tmpdir(), 'carina-local-cluster-'));
  let cluster: LocalCluster;
  let pids: number[] = [];
  let ports: number[] = [];
  /** The store takes only clients with a certificate from its CA: the one local-cluster points at. */
  const storeClientFlags = () => ['--cacert', cluster.storeClient.cacert, '--cert', cluster.storeClient.cert, '--key', cluster.storeClient.key];

  before(async () => {
    ports = await distinctFreePorts(10);
    cluster = await localClusterUp({
      dir,
      replicas: 3,
      ports: [0, 1, 2].map((i) => ({ api: ports[3 * i], etcd: ports[3 * i + 1], raft: ports[3 * i + 2] })),
      lbPort: ports[9],
    });
    pids = [...cluster.members.map((m) => m.pidFile), join(dir, 'haproxy.pid')].map((f) => Number(readFileSync(f, 'utf8')));
  });

  after(async () => {
    await localClusterDown(dir);
    rmSync(dir, { recursive: true, force: true });
  });

  it('carina members shows one leader and every member caught up; /metrics shows the Raft state', async () => {
    const result = spawnSync(process.execPath, [join(__dirname, '..', '..', '..', '..', 'bin', 'carina'), 'members', '--endpoints', `127.0.0.1:${ports[1]}`, ...storeClientFlags()], { encoding: 'utf8', timeout: 30_000 });
    expect(result.status, result.stderr).to.equal(0);
    const rows = result.stdout.trim().split('\n');
    expect(rows[0]).to.match(/^ID\s+NAME\s+ENDPOINT\s+ROLE\s+TERM\s+INDEX\s+APPLIED\s+LAG\s+HEALTH$/);
    expect(rows.slice(1).every((r) => /\sok$/.test(r)), result.stdout).to.equal(true);
    expect(rows.slice(1).filter((r) => /\sleader\s/.test(r))).to.have.length(1);
    expect(rows.slice(1).filter((r) => /\sfollower\s/.test(r))).to.have.length(2);
    let leaders = 0;
    for (const member of cluster.members) {
      const metrics = spawnSync('curl', ['-sk', '--cert', join(dir, `member-${member.id}`, 'pki', 'admin.crt'), '--key', join(dir, `member-${member.id}`, 'pki', 'admin.key'), `${member.apiUrl}/metrics`], { encoding: 'utf8' }).stdout;
      const match = /^etcd_server_is_leader (\d)$/m.exec(metrics);
      expect(match, metrics.slice(0, 200)).to.not.equal(null);
      leaders += Number(match?.[1]);
      expect(metrics).to.match(/^etcd_server_proposals_applied_total \d+$/m);
    }
    expect(leaders).to.equal(1);
  });

  it('serves kubectl through the load balancer, and keeps serving when a replica is killed', () => {
    const ns = kubectl(cluster.kubeconfig, 'get', 'ns', '-o', 'name');
    expect(ns.stdout, ns.stderr).to.contain('namespace/kube-system');
    expect(kubectl(cluster.kubeconfig, 'create', 'configmap', 'before-kill').code).to.equal(0);
    process.kill(pids[0], 'SIGKILL');
    for (let i = 0; i < 8; i++) {
      const created = kubectl(cluster.kubeconfig, 'create', 'configmap', `after-kill-${i}`);
      expect(created.code, created.stderr).to.equal(0);
    }
    const listed = kubectl(cluster.kubeconfig, 'get', 'cm', '-o', 'name');
    expect(listed.stdout).to.contain('configmap/before-kill');
    expect(listed.stdout).to.contain('configmap/after-kill-7');
  });

  it('a leader told to stop hands leadership over before it goes', async () => {
    const result = spawnSync(process.execPath, [join(__dirname, '..', '..', '..', '..', 'bin', 'carina'), 'members', '--endpoints', `127.0.0.1:${ports[4]},127.0.0.1:${ports[7]}`, ...storeClientFlags()], { encoding: 'utf8', timeout: 30_000 });
    const leaderRow = result.stdout.split('\n').find((r) => /\sleader\s/.test(r));
    expect(leaderRow, result.stdout).to.be.a('string');
    const leaderId = Number(String(leaderRow).split(/\s+/)[0]);
    const pid = pids[leaderId - 1];
    process.kill(pid, 'SIGTERM');
    await until('the leader to stop', () => !alive(pid), 20_000);
    expect(readFileSync(join(dir, `member-${leaderId}.log`), 'utf8')).to.contain(`member ${leaderId}: handed leadership over before stopping`);
  });

  it('down stops every process it started', async () => {
    await localClusterDown(dir);
    expect(pids.filter(alive)).to.deep.equal([]);
  });
});
