/**
 * The files in deploy/ stay usable: HAProxy accepts both configurations (the one for real hosts
 * and the one `carina local-cluster` writes), and the systemd unit passes only flags that
 * `carina server` knows.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { haproxyConfig } from '../../../src/cli/local-cluster';

const REPO = resolve(__dirname, '..', '..', '..', '..');

function haproxyCheck(file: string): { status: number | null; output: string } {
  const result = spawnSync('haproxy', ['-c', '-f', file], { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('deploy/ configuration', () => {
  it('HAProxy accepts deploy/haproxy/carina.cfg and the loopback configuration', () => {
    const hosts = haproxyCheck(join(REPO, 'deploy', 'haproxy', 'carina.cfg'));
    expect(hosts.status, hosts.output).to.equal(0);
    const dir = mkdtempSync(join(tmpdir(), 'carina-haproxy-'));
    try {
      const file = join(dir, 'haproxy.cfg');
      writeFileSync(file, haproxyConfig(7443, [17010, 17020, 17030]));
      const local = haproxyCheck(file);
      expect(local.status, local.output).to.equal(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the systemd unit passes only flags that carina server knows', () => {
    const unit = readFileSync(join(REPO, 'deploy', 'systemd', 'carina.service'), 'utf8');
    const used = [...unit.matchAll(/--([a-z-]+)=/g)].map((m) => m[1]);
    expect(used.length).to.be.greaterThan(5);
    const help = spawnSync(process.execPath, [join(REPO, 'bin', 'carina'), 'server', '--help'], { encoding: 'utf8' }).stdout;
    const known = new Set([...help.matchAll(/^\s+--([a-z-]+)/gm)].map((m) => m[1]));
    expect(used.filter((flag) => !known.has(flag))).to.deep.equal([]);
    const env = readFileSync(join(REPO, 'deploy', 'systemd', 'carina.env.example'), 'utf8');
    for (const variable of [...unit.matchAll(/\$\{([A-Z_]+)\}/g)].map((m) => m[1])) {
      expect(env, variable).to.match(new RegExp(`^${variable}=`, 'm'));
    }
  });
});
