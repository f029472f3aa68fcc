/**
 * Starts Carina store replicas (`carina server`, the built CLI) on loopback, for integration
 * tests and benchmarks, with the same shape as EtcdCluster so that a test or a benchmark can run
 * against either. Every process it starts is killed by close(), which also removes the data.
 *
 * As an operator would: the cluster's shared PKI is made once (<dir>/pki) and copied into every
 * member's data directory before it starts; the tests reach the stores with a client
 * certificate of their own from the store CA (`clientTls`, files in `tls`).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EtcdClientTls } from '../../raft/etcd/etcd-client';
import { distinctFreePorts, EtcdMember, waitForAgreedLeader } from './etcd-process';
import { makeStoreTestPki, type StoreTestPki } from './store-test-pki';

export interface CarinaStoreClusterOptions {
  startTimeoutMs?: number;
  /** Extra `carina server` flags for every member. */
  extraArgs?: string[];
}

const CLI = join(__dirname, '..', '..', 'src', 'cli', 'main.js');

export class CarinaStoreCluster {
  readonly members: EtcdMember[] = [];
  /** The shared PKI and the tests' client certificate (files, PEM, flags). */
  pki!: StoreTestPki;

  private constructor(readonly dir: string) {}

  get clientEndpoints(): string[] {
    return this.members.map((m) => m.clientEndpoint);
  }

  static async start(size: number, options: CarinaStoreClusterOptions = {}): Promise<CarinaStoreCluster> {
    const base = process.env.CARINA_TMP ?? tmpdir();
    mkdirSync(base, { recursive: true });
    const cluster = new CarinaStoreCluster(mkdtempSync(join(base, 'carina-store-')));
    try {
      const dataDirs = Array.from({ length: size }, (_, i) => join(cluster.dir, `member-${i + 1}`));
      cluster.pki = await makeStoreTestPki(cluster.dir, dataDirs);
      const list = await distinctFreePorts(size * 2);
      const initialCluster = Array.from({ length: size }, (_, i) => `${i + 1}@127.0.0.1:${list[2 * i + 1]}@127.0.0.1:${list[2 * i]}`).join(',');
      for (let i = 0; i < size; i++) {
        const id = i + 1;
        const dataDir = join(cluster.dir, `member-${id}`);
        const args = (): string[] => [
          CLI,
          'server',
          `--member-id=${id}`,
          `--data-dir=${dataDir}`,
          `--initial-cluster=${initialCluster}`,
          `--listen-etcd-address=127.0.0.1:${list[2 * i]}`,
          // The store alone: these tests speak etcd v3 and need no Kubernetes API.
          '--secure-port=0',
          ...(options.extraArgs ?? []),
        ];
        cluster.members.push(new EtcdMember(`carina-${id}`, dataDir, list[2 * i], list[2 * i + 1], args, process.execPath, cluster.pki.clientTls));
      }
      for (const m of cluster.members) m.start('new');
      await cluster.waitHealthy(options.startTimeoutMs ?? 30_000);
      return cluster;
    } catch (err) {
      await cluster.close();
      throw err;
    }
  }

  /** What a client presents and trusts to reach the members. */
  get clientTls(): EtcdClientTls {
    return this.pki.clientTls;
  }

  member(index: number): EtcdMember {
    const m = this.members[index];
    if (m === undefined) throw new Error(`no carina member ${index}`);
    return m;
  }

  /** Waits until every running member answers Status and all agree on one leader; returns its index. */
  async waitHealthy(timeoutMs = 30_000): Promise<number> {
    const leader = await waitForAgreedLeader(this.members, timeoutMs, 'carina store cluster');
    return Number(leader) - 1;
  }

  async kill(index: number): Promise<void> {
    await this.member(index).kill();
  }

  async restart(index: number): Promise<void> {
    this.member(index).start('existing');
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((m) => m.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
