/**
 * Secrets encrypted at rest (--encryption-provider-config, kube's EncryptionConfiguration) on a
 * real `carina server`: the raw store, read through the store's own etcd API with a client
 * certificate, holds no Secret value in clear, only kube's `k8s:enc:<provider>:v1:<key>:`
 * framing; the API serves the plain values; and a key rotation as kube documents it (add a key
 * first, rewrite every Secret with `kubectl get secrets -A -o json | kubectl replace -f -`,
 * remove the old key) leaves every Secret under the new key and readable without the old one.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdClient } from '../../../raft/etcd/etcd-client';
import { prefixEnd } from '../../../raft/kv/key-range';
import { CarinaApiProcess } from '../../support/carina-api-process';

const KEY1 = Buffer.alloc(32, 0x11).toString('base64');
const KEY2 = Buffer.alloc(32, 0x22).toString('base64');
const KEY3 = Buffer.alloc(32, 0x33).toString('base64');
const SECRET_TEXT = 'correct-horse-battery-staple';

function config(providers: string): string {
  return `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: [secrets]\n    providers:\n${providers}`;
}
const aescbc = (...keys: Array<[string, string]>) =>
  `      - aescbc:\n          keys:\n${keys.map(([name, secret]) => `            - name: ${name}\n              secret: ${secret}\n`).join('')}`;

describe('secrets encrypted at rest: raw store, API, key rotation (carina server --encryption-provider-config)', function () {
  this.timeout(180_000);
  let dir: string;
  let file: string;
  let server: CarinaApiProcess;

  async function rawSecrets(): Promise<Map<string, Buffer>> {
    const client = new EtcdClient({ endpoints: [server.etcdEndpoint], tls: server.storeClientTls(), timeoutMs: 10_000 });
    try {
      const key = Buffer.from('/registry/secrets/');
      const response = await client.range({ key, rangeEnd: prefixEnd(key) });
      return new Map(response.kvs.map((kv) => [Buffer.from(kv.key).toString(), Buffer.from(kv.value)]));
    } finally {
      await client.close();
    }
  }

  async function restartWith(providers: string): Promise<void> {
    writeFileSync(file, config(providers));
    await server.stop({ keepData: true });
    await server.launch();
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carina-encryption-'));
    file = join(dir, 'encryption.yaml');
    writeFileSync(file, config(aescbc(['key1', KEY1]) + '      - identity: {}\n'));
    server = await CarinaApiProcess.start({ extraArgs: ['--encryption-provider-config', file] });
  });

  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores Secrets under k8s:enc:aescbc:v1:key1: with no value in clear, and serves them plain', async () => {
    for (const [ns, name] of [['default', 's1'], ['kube-system', 's2']]) {
      const created = await server.kubectl(['create', 'secret', 'generic', name, '-n', ns, `--from-literal=password=${SECRET_TEXT}`]);
      expect(created.code, created.stderr).to.equal(0);
    }
    const raw = await rawSecrets();
    expect([...raw.keys()].sort()).to.deep.equal(['/registry/secrets/default/s1', '/registry/secrets/kube-system/s2']);
    for (const value of raw.values()) {
      expect(value.subarray(0, 23).toString()).to.equal('k8s:enc:aescbc:v1:key1:');
      expect(value.includes(Buffer.from(SECRET_TEXT))).to.equal(false);
      expect(value.includes(Buffer.from(Buffer.from(SECRET_TEXT).toString('base64')))).to.equal(false);
      expect(value.includes(Buffer.from('"password"'))).to.equal(false);
    }
    const got = await server.kubectl(['get', 'secret', 's1', '-n', 'default', '-o', 'jsonpath={.data.password}']);
    expect(Buffer.from(got.stdout, 'base64').toString()).to.equal(SECRET_TEXT);
    // An unpaged LIST (streamed from the stored bytes) serves them decrypted too.
    const listed = await server.kubectl(['get', '--raw', '/api/v1/namespaces/default/secrets']);
    expect(listed.code, listed.stderr).to.equal(0);
    const s1 = (JSON.parse(listed.stdout) as { items: Array<{ metadata: { name: string }; data: Record<string, string> }> }).items.find((item) => item.metadata.name === 's1');
    expect(Buffer.from(s1?.data.password ?? '', 'base64').toString()).to.equal(SECRET_TEXT);
    // Other resources are not in the configuration: stored as they are.
    expect((await server.kubectl(['create', 'configmap', 'plain', `--from-literal=v=${SECRET_TEXT}`])).code).to.equal(0);
  });

  it('keeps no private key anywhere in the store: the CA keys never enter it, only the cluster CA certificate', async () => {
    const client = new EtcdClient({ endpoints: [server.etcdEndpoint], tls: server.storeClientTls(), timeoutMs: 10_000 });
    try {
      const all = await client.range({ key: Buffer.from([0]), rangeEnd: Buffer.from([0]) });
      expect(all.kvs.length).to.be.above(0);
      for (const kv of all.kvs) expect(Buffer.from(kv.value).includes(Buffer.from('PRIVATE KEY')), Buffer.from(kv.key).toString()).to.equal(false);
      const published = all.kvs.find((kv) => Buffer.from(kv.key).toString() === '/carina/pki/ca.crt');
      expect(Buffer.from(published?.value ?? []).toString()).to.contain('BEGIN CERTIFICATE');
    } finally {
      await client.close();
    }
  });

  it('rotates twice: a new key added first, every Secret rewritten by kubectl replace, the old key removed, all still readable', async () => {
    await restartWith(aescbc(['key2', KEY2], ['key1', KEY1]));
    // Readable with key1 still listed, though key2 now writes.
    const before = await server.kubectl(['get', 'secret', 's2', '-n', 'kube-system', '-o', 'jsonpath={.data.password}']);
    expect(Buffer.from(before.stdout, 'base64').toString()).to.equal(SECRET_TEXT);
    const all = await server.kubectl(['get', 'secrets', '-A', '-o', 'json']);
    expect(all.code, all.stderr).to.equal(0);
    const replaced = await server.kubectl(['replace', '-f', '-'], { input: all.stdout });
    expect(replaced.code, replaced.stderr).to.equal(0);
    for (const [key, value] of await rawSecrets()) expect(value.subarray(0, 23).toString(), key).to.equal('k8s:enc:aescbc:v1:key2:');

    // Once more: the objects are now unchanged by a replace (same manager, same fields), and must
    // still be rewritten, as kube rewrites data read with an older key ("stale").
    await restartWith(aescbc(['key3', KEY3], ['key2', KEY2]));
    const again = await server.kubectl(['get', 'secrets', '-A', '-o', 'json']);
    expect((await server.kubectl(['replace', '-f', '-'], { input: again.stdout })).code).to.equal(0);
    for (const [key, value] of await rawSecrets()) expect(value.subarray(0, 23).toString(), key).to.equal('k8s:enc:aescbc:v1:key3:');

    await restartWith(aescbc(['key3', KEY3]));
    for (const [ns, name] of [['default', 's1'], ['kube-system', 's2']]) {
      const got = await server.kubectl(['get', 'secret', name, '-n', ns, '-o', 'jsonpath={.data.password}']);
      expect(got.code, got.stderr).to.equal(0);
      expect(Buffer.from(got.stdout, 'base64').toString()).to.equal(SECRET_TEXT);
    }
  });

  it('refuses to start with an invalid configuration, with kube\'s message', async () => {
    writeFileSync(file, config(`      - aescbc:\n          keys:\n            - name: k\n              secret: ${Buffer.alloc(7).toString('base64')}\n`));
    await server.stop({ keepData: true });
    let failure = '';
    await server.launch().catch((err: Error) => {
      failure = err.message;
    });
    expect(failure).to.contain('secret is not of the expected length, got 7, expected one of [16 24 32]');
    expect(failure).not.to.contain(Buffer.alloc(7).toString('base64'));
  });
});
