/**
 * Encryption at rest turned on after Secrets were stored in clear: once the Secrets are
 * rewritten, the history compacted and the store defragmented (`etcdctl defrag`, etcd's
 * Maintenance.Defragment), no file of the data directory holds the old plaintext: not LevelDB's
 * tables or log, not the Raft snapshot. The Raft log's segments (wal/*.wal) are left aside: they
 * hold every entry written until a later snapshot lets their segment go, as etcd's WAL does.
 */
import { expect } from 'chai';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CarinaApiProcess } from '../../support/carina-api-process';
import { findEtcdBinary } from '../../support/etcd-process';
import { runCommand } from '../../support/run-command';

const KEY = Buffer.alloc(32, 0x42).toString('base64');
const PLAINTEXT = 'plaintext-before-encryption-7f3a9c';
// A Secret's data is stored base64-encoded in its JSON.
const STORED_FORM = Buffer.from(PLAINTEXT).toString('base64');

/** Files under `dir` (recursively) that hold `needle`, the Raft log's segments left out. */
function filesHolding(dir: string, needle: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.wal'))
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name))
    .filter((path) => readFileSync(path).includes(Buffer.from(needle)));
}

describe('defragmentation after encryption at rest (carina server, etcdctl defrag)', function () {
  this.timeout(180_000);
  let dir: string;
  let server: CarinaApiProcess | undefined;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'carina-defrag-'));
  });

  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves no plaintext of a Secret rewritten encrypted in the data directory once compacted and defragmented', async () => {
    const configFile = join(dir, 'encryption.yaml');
    const providers = (text: string) => writeFileSync(configFile, `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: [secrets]\n    providers:\n${text}`);
    providers('      - identity: {}\n');
    server = await CarinaApiProcess.start({ extraArgs: ['--encryption-provider-config', configFile] });
    const created = await server.kubectl(['create', 'secret', 'generic', 'old-secret', `--from-literal=password=${PLAINTEXT}`]);
    expect(created.code, created.stderr).to.equal(0);

    providers(`      - aescbc:\n          keys:\n            - name: key1\n              secret: ${KEY}\n      - identity: {}\n`);
    await server.stop({ keepData: true });
    await server.launch();
    // kube's documented rewrite: every Secret read and replaced, now stored encrypted.
    const secrets = await server.kubectl(['get', 'secrets', '-A', '-o', 'json']);
    const replaced = await server.kubectl(['replace', '-f', '-'], { input: secrets.stdout });
    expect(replaced.code, replaced.stderr).to.equal(0);
    expect(filesHolding(server.dataDir, STORED_FORM), 'the plaintext on disk before compaction').not.to.deep.equal([]);

    const tls = server.storeClientTls();
    writeFileSync(join(dir, 'ca.crt'), tls.ca);
    writeFileSync(join(dir, 'client.crt'), tls.cert);
    writeFileSync(join(dir, 'client.key'), tls.key);
    const etcdctl = (...args: string[]) =>
      runCommand(findEtcdBinary('etcdctl'), [`--endpoints=https://${server?.etcdEndpoint}`, `--cacert=${join(dir, 'ca.crt')}`, `--cert=${join(dir, 'client.crt')}`, `--key=${join(dir, 'client.key')}`, ...args]);
    const status = await etcdctl('endpoint', 'status', '-w', 'json');
    expect(status.code, status.stderr).to.equal(0);
    const revision = String((JSON.parse(status.stdout) as Array<{ Status: { header: { revision: number } } }>)[0].Status.header.revision);
    // A defragmentation before the compaction rewrites the Raft snapshot with the history as it
    // still is: the snapshot file then holds the plaintext, as one taken on schedule would.
    expect((await etcdctl('defrag')).code).to.equal(0);
    expect(filesHolding(server.dataDir, STORED_FORM).filter((path) => path.includes('/wal/snap/')), 'the plaintext in the Raft snapshot').to.have.length(1);
    const compacted = await etcdctl('compaction', revision);
    expect(compacted.code, compacted.stderr).to.equal(0);
    const defragmented = await etcdctl('defrag');
    expect(defragmented.code, defragmented.stderr).to.equal(0);
    expect(defragmented.stdout).to.contain('Finished defragmenting etcd member');

    expect(filesHolding(server.dataDir, STORED_FORM)).to.deep.equal([]);
    const got = await server.kubectl(['get', 'secret', 'old-secret', '-o', 'jsonpath={.data.password}']);
    expect(Buffer.from(got.stdout, 'base64').toString()).to.equal(PLAINTEXT);
  });
});
