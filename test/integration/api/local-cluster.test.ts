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
import { localClusterDown, localClusterUp, type LocalCluster } from '../../../src/cli/local-cluster';
import { distinctFreePorts } from '../../support/etcd-process';

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

  before(async () => {
    const ports = await distinctFreePorts(10);
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

  it('down stops every process it started', async () => {
    await localClusterDown(dir);
    expect(pids.filter(alive)).to.deep.equal([]);
  });
});
