/**
 * The files in deploy/ stay usable: HAProxy accepts both configurations (the one for real hosts
 * and the one `carina local-cluster` writes), the systemd unit passes only flags that
 * `carina server` knows, Node gets the same flags wherever a server is started, and the example
 * encryption configuration is valid once given a key (and refused as shipped, so that nobody
 * runs with a published key).
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { haproxyConfig, SERVER_NODE_FLAGS } from '../../../src/cluster';
import { parseEncryptionConfiguration } from '../../../src/storage/encryption';

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
    const serverFlags = unit.slice(unit.indexOf('bin/carina server'));
    const used = [...serverFlags.matchAll(/--([a-z-]+)=/g)].map((m) => m[1]);
    expect(used.length).to.be.greaterThan(5);
    const help = spawnSync(process.execPath, [join(REPO, 'bin', 'carina'), 'server', '--help'], { encoding: 'utf8' }).stdout;
    const known = new Set([...help.matchAll(/^\s+--([a-z-]+)/gm)].map((m) => m[1]));
    expect(used.filter((flag) => !known.has(flag))).to.deep.equal([]);
    const env = readFileSync(join(REPO, 'deploy', 'systemd', 'carina.env.example'), 'utf8');
    for (const variable of [...unit.matchAll(/\$\{([A-Z_]+)\}/g)].map((m) => m[1])) {
      expect(env, variable).to.match(new RegExp(`^${variable}=`, 'm'));
    }
  });

  it('Node is started with the same flags by bin/carina, the systemd unit, local clusters and benchmarks', () => {
    const shebang = readFileSync(join(REPO, 'bin', 'carina'), 'utf8').split('\n')[0];
    const execStart = /^ExecStart=(.*)$/m.exec(readFileSync(join(REPO, 'deploy', 'systemd', 'carina.service'), 'utf8'))?.[1] ?? '';
    expect(SERVER_NODE_FLAGS).to.not.be.empty;
    for (const flag of SERVER_NODE_FLAGS) {
      expect(shebang.split(' ')).to.include(flag);
      expect(execStart.slice(0, execStart.indexOf('bin/carina')).split(' ')).to.include(flag);
    }
    // Run as the README and the Makefile run it: the file itself, through its first line.
    const probe = spawnSync(join(REPO, 'bin', 'carina'), ['--help'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '--require ' + join(__dirname, 'print-exec-argv.js') } });
    expect(probe.status, probe.stderr).to.equal(0);
    expect(JSON.parse(/^execArgv (.*)$/m.exec(probe.stderr)?.[1] ?? '[]')).to.include.members([...SERVER_NODE_FLAGS]);
  });

  it('the example encryption configuration is refused as shipped and accepted with a generated key', () => {
    const file = join(REPO, 'deploy', 'encryption', 'encryption.yaml.example');
    const text = readFileSync(file, 'utf8');
    expect(() => parseEncryptionConfiguration(text, file)).to.throw('secrets must be base64 encoded');
    const config = parseEncryptionConfiguration(text.replace('REPLACE-WITH-32-RANDOM-BYTES-IN-BASE64', Buffer.alloc(32, 5).toString('base64')), file);
    expect(config.resources[0].resources).to.deep.equal(['secrets']);
    expect(config.resources[0].providers.map((p) => Object.keys(p)[0])).to.deep.equal(['aescbc', 'identity']);
  });
});
