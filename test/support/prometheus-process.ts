/**
 * Debian's Prometheus (test/support/install-test-deps.sh installs it) as a test runs it: one
 * process on a loopback port with its own data directory, scraping Carina replicas over HTTPS
 * with a client certificate, evaluating deploy/prometheus/carina-rules.yaml, and asked through
 * its HTTP API for query results and alerts. stop() kills it and removes its directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distinctFreePorts } from './raft-cluster';
import { until } from './until';

export interface PrometheusOptions {
  /** host:port of each replica's API (its /metrics). */
  targets: string[];
  /** The cluster CA and a client certificate allowed GET /metrics (PEM). */
  tls: { ca: string; cert: string; key: string };
  ruleFiles: string[];
  scrapeIntervalSeconds?: number;
}

export interface PrometheusAlert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
}

export class PrometheusProcess {
  private child?: ChildProcess;
  log = '';

  private constructor(private readonly dir: string, readonly port: number) {}

  static async start(options: PrometheusOptions): Promise<PrometheusProcess> {
    const dir = mkdtempSync(join(tmpdir(), 'carina-prometheus-'));
    const [port] = await distinctFreePorts(1);
    writeFileSync(join(dir, 'ca.crt'), options.tls.ca);
    writeFileSync(join(dir, 'client.crt'), options.tls.cert);
    writeFileSync(join(dir, 'client.key'), options.tls.key, { mode: 0o600 });
    const interval = `${options.scrapeIntervalSeconds ?? 1}s`;
    // JSON is YAML: no YAML writer needed.
    writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify({
      global: { scrape_interval: interval, scrape_timeout: interval, evaluation_interval: interval },
      rule_files: options.ruleFiles,
      scrape_configs: [{
        job_name: 'carina',
        scheme: 'https',
        tls_config: { ca_file: join(dir, 'ca.crt'), cert_file: join(dir, 'client.crt'), key_file: join(dir, 'client.key') },
        static_configs: [{ targets: options.targets }],
      }],
    }, null, 2));
    const prometheus = new PrometheusProcess(dir, port);
    const child = spawn('prometheus', [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--storage.tsdb.retention.time=1h',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    prometheus.child = child;
    child.stdout?.on('data', (d: Buffer) => (prometheus.log += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (prometheus.log += d.toString()));
    try {
      await until('Prometheus to be ready', async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode})`);
        return (await prometheus.get('/-/ready')).status === 200;
      }, 30_000, () => prometheus.log.split('\n').slice(-20).join('\n'));
    } catch (err) {
      await prometheus.stop();
      throw err;
    }
    return prometheus;
  }

  private get(path: string): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port: this.port, path, agent: false, timeout: 10_000 }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer in 10 s`)));
      req.on('error', reject);
    });
  }

  /** An instant query's vector: each series' labels and value. */
  async query(promql: string): Promise<Array<{ labels: Record<string, string>; value: number }>> {
    const response = await this.get(`/api/v1/query?query=${encodeURIComponent(promql)}`);
    if (response.status !== 200) throw new Error(`query ${promql}: ${response.status} ${response.text}`);
    const body = JSON.parse(response.text) as { data: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
    if (body.data.resultType !== 'vector') throw new Error(`query ${promql}: a ${body.data.resultType}, not a vector`);
    return body.data.result.map((r) => ({ labels: r.metric, value: Number(r.value[1]) }));
  }

  async alerts(): Promise<PrometheusAlert[]> {
    const response = await this.get('/api/v1/alerts');
    if (response.status !== 200) throw new Error(`alerts: ${response.status} ${response.text}`);
    return (JSON.parse(response.text) as { data: { alerts: PrometheusAlert[] } }).data.alerts;
  }

  async firing(alertname: string): Promise<PrometheusAlert[]> {
    return (await this.alerts()).filter((a) => a.labels.alertname === alertname && a.state === 'firing');
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    this.child = undefined;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
