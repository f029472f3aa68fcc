/**
 * The data directory holds every Secret: whatever mode it had, `carina server` leaves no file of
 * it readable by other users, those the store writes later (WAL segments, LevelDB tables made by
 * a memtable flush) included, and says so once when the directory was open to others.
 */
import { expect } from 'chai';
import { chmodSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CarinaApiProcess } from '../../support/carina-api-process';
import { until } from '../../support/until';

/** Every path under `dir` (itself included) with its permission bits. */
function modesUnder(dir: string): Array<{ path: string; mode: number; isDirectory: boolean }> {
  const found = [{ path: dir, mode: statSync(dir).mode & 0o777, isDirectory: true }];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath ?? entry.path, entry.name);
    const stat = statSync(path);
    found.push({ path, mode: stat.mode & 0o777, isDirectory: stat.isDirectory() });
  }
  return found;
}

/** What others may read or enter; certificates and public keys excepted (the PKI writes them 0644, as kubeadm does). */
function openToOthers(dir: string): string[] {
  return modesUnder(dir)
    .filter(({ path }) => !/\/pki\/.*\.(crt|pub)$/.test(path))
    .filter(({ mode, isDirectory }) => (isDirectory ? mode !== 0o700 : (mode & 0o077) !== 0))
    .map(({ path, mode }) => `${path} ${mode.toString(8)}`);
}

describe('the data directory\'s modes (carina server)', function () {
  this.timeout(120_000);
  let server: CarinaApiProcess | undefined;

  after(async () => {
    await server?.stop();
  });

  it('makes a 0755 data directory 0700 with a warning, and every file of the store 0600, later ones included', async () => {
    server = await CarinaApiProcess.start({ dataDirMode: 0o755 });
    expect(server.log.match(/other users could read the store/g) ?? []).to.have.length(1);
    expect(server.log).to.contain('had mode 0755');
    expect(openToOthers(server.dataDir)).to.deep.equal([]);
    // Enough data for LevelDB to flush its memtable (4 MiB) into a new table, and a WAL that grows.
    const value = 'x'.repeat(700 * 1024);
    for (let i = 0; i < 8; i++) {
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `big-${i}` }, stringData: { value } });
      expect((await server.request('POST', '/api/v1/namespaces/default/secrets', { body })).status).to.equal(201);
    }
    const dir = server.dataDir;
    await until('a LevelDB table written after start', async () => readdirSync(join(dir, 'kv')).some((f) => f.endsWith('.ldb')));
    expect(openToOthers(dir)).to.deep.equal([]);
  });

  it('tightens what an earlier run left open on restart', async () => {
    if (server === undefined) throw new Error('the first case did not start a server');
    await server.stop({ keepData: true });
    chmodSync(join(server.dataDir, 'members.json'), 0o644);
    chmodSync(join(server.dataDir, 'wal'), 0o755);
    writeFileSync(join(server.dataDir, 'left-by-hand'), 'x', { mode: 0o644 });
    chmodSync(join(server.dataDir, 'left-by-hand'), 0o644);
    await server.launch();
    expect(openToOthers(server.dataDir)).to.deep.equal([]);
  });
});
