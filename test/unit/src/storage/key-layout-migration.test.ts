/**
 * The move of a store written with an earlier build's keys to kube's layout: which objects move
 * (by the group their apiVersion names), that each batch is one transaction, that values encrypted
 * at rest are re-encrypted for their new key, that a lease stays attached, and that concurrent or
 * repeated migrations move each object once.
 */
import { expect } from 'chai';
import { memoryKv } from '../../../support/memory-kv';
import { buildResourceTransformers, EncryptionAtRest, parseEncryptionConfiguration } from '../../../../src/storage/encryption';
import { migrateKeyLayout, STORAGE_LAYOUT, STORAGE_LAYOUT_KEY, type KeyMove } from '../../../../src/storage';
import { keyLayoutMoves } from '../../../../src/registry';
import { resourceKeyPrefix } from '../../../../src/apis/catalogue';
import type { KeyValue } from '../../../../raft';

const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');
const bytes = (s: string) => Buffer.from(s, 'utf8');

function object(apiVersion: string, kind: string, namespace: string, name: string): string {
  return JSON.stringify({ kind, apiVersion, metadata: { name, namespace, uid: `uid-${apiVersion}-${name}` } });
}

/** Two groups' Certificates and a CRD's "services" beside the core Service, as an earlier build stored them. */
function legacyStore() {
  const kv = memoryKv();
  kv.store.put({ key: bytes('/registry/certificates/default/a'), value: bytes(object('cert-manager.io/v1', 'Certificate', 'default', 'a')) });
  kv.store.put({ key: bytes('/registry/certificates/default/b'), value: bytes(object('networking.internal.knative.dev/v1alpha1', 'Certificate', 'default', 'b')) });
  kv.store.put({ key: bytes('/registry/services/specs/default/kubernetes'), value: bytes(object('v1', 'Service', 'default', 'kubernetes')) });
  kv.store.put({ key: bytes('/registry/services/specs/default/hello'), value: bytes(object('serving.knative.dev/v1', 'Service', 'default', 'hello')) });
  kv.store.put({ key: bytes('/registry/endpoints/default/kubernetes'), value: bytes(object('v1', 'Endpoints', 'default', 'kubernetes')) });
  kv.store.put({ key: bytes('/registry/configmaps/default/settings'), value: bytes(object('v1', 'ConfigMap', 'default', 'settings')) });
  return kv;
}

const CUSTOM = [
  { group: 'cert-manager.io', resource: 'certificates' },
  { group: 'networking.internal.knative.dev', resource: 'certificates' },
  { group: 'serving.knative.dev', resource: 'services' },
];

function keys(kv: ReturnType<typeof memoryKv>): string[] {
  return kv.store.range({ key: bytes('/'), rangeEnd: bytes('\0') }).kvs.map((item) => text(item.key));
}

const quiet = () => undefined;

describe('migrateKeyLayout', () => {
  it('moves each object under a shared old prefix to its own group\'s key and leaves the core objects where they are', async () => {
    const kv = legacyStore();
    const configMapRevision = kv.store.get('/registry/configmaps/default/settings')?.modRevision;
    const summary = await migrateKeyLayout(kv, async () => keyLayoutMoves(CUSTOM), { log: quiet });
    expect(summary).to.include({ ran: true, moved: 4 });
    expect(keys(kv)).to.deep.equal([
      STORAGE_LAYOUT_KEY,
      '/registry/cert-manager.io/certificates/default/a',
      '/registry/configmaps/default/settings',
      '/registry/networking.internal.knative.dev/certificates/default/b',
      '/registry/services/endpoints/default/kubernetes',
      '/registry/services/specs/default/kubernetes',
      '/registry/serving.knative.dev/services/default/hello',
    ]);
    expect(text(kv.store.get('/registry/cert-manager.io/certificates/default/a')?.value ?? new Uint8Array())).to.equal(object('cert-manager.io/v1', 'Certificate', 'default', 'a'));
    expect(text(kv.store.get('/registry/services/specs/default/kubernetes')?.value ?? new Uint8Array())).to.equal(object('v1', 'Service', 'default', 'kubernetes'));
    expect(kv.store.get('/registry/configmaps/default/settings')?.modRevision).to.equal(configMapRevision);
    expect(text(kv.store.get(STORAGE_LAYOUT_KEY)?.value ?? new Uint8Array())).to.equal(STORAGE_LAYOUT);
  });

  it('reads only the layout key on the next start', async () => {
    const kv = legacyStore();
    await migrateKeyLayout(kv, async () => keyLayoutMoves(CUSTOM), { log: quiet });
    const revision = kv.store.revision;
    let asked = false;
    const again = await migrateKeyLayout(kv, async () => {
      asked = true;
      return keyLayoutMoves(CUSTOM);
    }, { log: quiet });
    expect(again.ran).to.equal(false);
    expect(asked).to.equal(false);
    expect(kv.store.revision).to.equal(revision);
  });

  it('moves a batch in one transaction, so every object of a batch gets the same revision', async () => {
    const kv = memoryKv();
    for (let i = 0; i < 5; i++) kv.store.put({ key: bytes(`/registry/widgets/w${i}`), value: bytes(object('example.com/v1', 'Widget', '', `w${i}`)) });
    const before = kv.store.revision;
    const summary = await migrateKeyLayout(kv, async () => keyLayoutMoves([{ group: 'example.com', resource: 'widgets' }]), { log: quiet, batchItems: 2 });
    expect(summary).to.include({ moved: 5, batches: 3 });
    const revisions = [0, 1, 2, 3, 4].map((i) => kv.store.get(`/registry/example.com/widgets/w${i}`)?.modRevision);
    expect(revisions).to.deep.equal([before + 1, before + 1, before + 2, before + 2, before + 3]);
  });

  it('decrypts with the resource\'s providers and encrypts again for the new key (AES-GCM binds a value to its key)', async () => {
    const config = parseEncryptionConfiguration([
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: EncryptionConfiguration',
      'resources:',
      '  - resources: [widgets.example.com]',
      '    providers:',
      `      - aesgcm: {keys: [{name: key1, secret: ${Buffer.alloc(32, 7).toString('base64')}}]}`,
    ].join('\n'), 'test.yaml');
    const transformers = buildResourceTransformers(config);
    // What an earlier build wrote: the widget encrypted under its plural-only key.
    const legacy = EncryptionAtRest.forResources(transformers, (gr) => `/registry/${gr.resource}/`);
    const current = EncryptionAtRest.forResources(transformers, resourceKeyPrefix);
    const plain = object('example.com/v1', 'Widget', '', 'w1');
    const kv = memoryKv();
    kv.store.put({ key: bytes('/registry/widgets/w1'), value: legacy.toStorage('/registry/widgets/w1', bytes(plain)) });
    await migrateKeyLayout(kv, async () => keyLayoutMoves([{ group: 'example.com', resource: 'widgets' }]), { log: quiet, transformer: current });
    const stored = kv.store.get('/registry/example.com/widgets/w1')?.value ?? new Uint8Array();
    expect(text(stored)).to.match(/^k8s:enc:aesgcm:v1:key1:/);
    expect(text(current.fromStorage('/registry/example.com/widgets/w1', stored).value)).to.equal(plain);
  });

  it('keeps an object\'s lease', async () => {
    const kv = memoryKv();
    kv.store.leaseGrant(77n, 3600);
    kv.store.put({ key: bytes('/registry/endpoints/default/e1'), value: bytes(object('v1', 'Endpoints', 'default', 'e1')), lease: 77n });
    await migrateKeyLayout(kv, async () => keyLayoutMoves([]), { log: quiet });
    expect(kv.store.get('/registry/services/endpoints/default/e1')?.lease).to.equal(77n);
  });

  it('moves each object once when two replicas migrate at the same time', async () => {
    const kv = memoryKv();
    for (let i = 0; i < 30; i++) kv.store.put({ key: bytes(`/registry/widgets/w${String(i).padStart(2, '0')}`), value: bytes(object('example.com/v1', 'Widget', '', `w${i}`)) });
    const moves = async () => keyLayoutMoves([{ group: 'example.com', resource: 'widgets' }]);
    const [first, second] = await Promise.all([
      migrateKeyLayout(kv, moves, { log: quiet, batchItems: 4 }),
      migrateKeyLayout(kv, moves, { log: quiet, batchItems: 4 }),
    ]);
    expect(first.moved + second.moved).to.equal(30);
    const stored = keys(kv).filter((key) => key.startsWith('/registry/'));
    expect(stored).to.have.length(30);
    expect(stored.every((key) => key.startsWith('/registry/example.com/widgets/'))).to.equal(true);
  });

  it('moves the newest value when an old key changes between its read and its move', async () => {
    const changed = object('example.com/v1', 'Widget', '', 'w1').replace('"uid-', '"changed-uid-');
    const kv = memoryKv({ beforeTxn: () => void kv.store.put({ key: bytes('/registry/widgets/w1'), value: bytes(changed) }) });
    kv.store.put({ key: bytes('/registry/widgets/w1'), value: bytes(object('example.com/v1', 'Widget', '', 'w1')) });
    const summary = await migrateKeyLayout(kv, async () => keyLayoutMoves([{ group: 'example.com', resource: 'widgets' }]), { log: quiet });
    expect(summary.moved).to.equal(1);
    expect(keys(kv)).to.not.include('/registry/widgets/w1');
    expect(text(kv.store.get('/registry/example.com/widgets/w1')?.value ?? new Uint8Array())).to.equal(changed);
  });

  it('leaves an object in place, and says so, when its new key is already taken', async () => {
    const kv = memoryKv();
    kv.store.put({ key: bytes('/registry/widgets/w1'), value: bytes(object('example.com/v1', 'Widget', '', 'w1')) });
    kv.store.put({ key: bytes('/registry/example.com/widgets/w1'), value: bytes(object('example.com/v1', 'Widget', '', 'w1-new')) });
    const lines: string[] = [];
    const summary = await migrateKeyLayout(kv, async () => keyLayoutMoves([{ group: 'example.com', resource: 'widgets' }]), { log: (line) => lines.push(line) });
    expect(summary.leftInPlace).to.deep.equal(['/registry/widgets/w1']);
    expect(keys(kv)).to.include('/registry/widgets/w1');
    expect(lines.join('\n')).to.contain('left 1 in place');
  });

  describe('on a store that relocates (the embedded one)', () => {
    const relocatingKv = (hooks?: Parameters<typeof memoryKv>[0]) => Object.assign(memoryKv(hooks), { relocates: true });

    it('keeps each moved object\'s modRevision (its resourceVersion), createRevision, version and lease, and compacts after the last batch', async () => {
      const kv = relocatingKv();
      kv.store.leaseGrant(77n, 3600);
      kv.store.put({ key: bytes('/registry/endpoints/default/e1'), value: bytes(object('v1', 'Endpoints', 'default', 'e1')), lease: 77n });
      kv.store.put({ key: bytes('/registry/endpoints/default/e1'), value: bytes(object('v1', 'Endpoints', 'default', 'e1')), lease: 77n });
      for (let i = 0; i < 5; i++) kv.store.put({ key: bytes(`/registry/widgets/w${i}`), value: bytes(object('example.com/v1', 'Widget', '', `w${i}`)) });
      const before = new Map(kv.store.range({ key: bytes('/registry/'), rangeEnd: bytes('/registry0') }).kvs.map((item) => [text(item.key).replace(/^\/registry\/(endpoints|widgets)\//, ''), item]));
      const lines: string[] = [];
      const summary = await migrateKeyLayout(kv, async () => keyLayoutMoves([{ group: 'example.com', resource: 'widgets' }]), { log: (line) => lines.push(line), batchItems: 2 });
      expect(summary).to.include({ moved: 6, batches: 4, compactedAt: kv.store.revision });
      expect(kv.store.compactRevision).to.equal(kv.store.revision);
      const after = kv.store.range({ key: bytes('/registry/'), rangeEnd: bytes('/registry0') }).kvs;
      expect(after.map((item) => text(item.key))).to.deep.equal([
        '/registry/example.com/widgets/w0', '/registry/example.com/widgets/w1', '/registry/example.com/widgets/w2',
        '/registry/example.com/widgets/w3', '/registry/example.com/widgets/w4', '/registry/services/endpoints/default/e1',
      ]);
      for (const item of after) {
        const was = before.get(text(item.key).replace(/^\/registry\/(example\.com\/widgets|services\/endpoints)\//, '')) as KeyValue;
        expect({ create: item.createRevision, mod: item.modRevision, version: item.version, lease: item.lease }, text(item.key)).to.deep.equal({ create: was.createRevision, mod: was.modRevision, version: was.version, lease: was.lease });
      }
      expect(lines.join('\n')).to.contain(`keeping their resourceVersions; compacted the store at revision ${kv.store.revision}`);
    });

    it('re-encrypts a value for its new key', async () => {
      const config = parseEncryptionConfiguration([
        'apiVersion: apiserver.config.k8s.io/v1',
        'kind: EncryptionConfiguration',
        'resources:',
        '  - resources: [widgets.example.com]',
        '    providers:',
        `      - aesgcm: {keys: [{name: key1, secret: ${Buffer.alloc(32, 7).toString('base64')}}]}`,
      ].join('\n'), 'test.yaml');
      const transformers = buildResourceTransformers(config);
      const legacy = EncryptionAtRest.forResources(transformers, (gr) => `/registry/${gr.resource}/`);
      const current = EncryptionAtRest.forResources(transformers, resourceKeyPrefix);
      const plain = object('example.com/v1', 'Widget', '', 'w1');
      const kv = relocatingKv();
      kv.store.put({ key: bytes('/registry/widgets/w1'), value: legacy.toStorage('/registry/widgets/w1', bytes(plain)) });
      const revision = kv.store.revision;
      await migrateKeyLayout(kv, async () => keyLayoutMoves([{ group: 'example.com', resource: 'widgets' }]), { log: quiet, transformer: current });
      const stored = kv.store.get('/registry/example.com/widgets/w1');
      expect(stored?.modRevision).to.equal(revision);
      expect(text(current.fromStorage('/registry/example.com/widgets/w1', stored?.value ?? new Uint8Array()).value)).to.equal(plain);
    });

    it('moves each object once when two replicas migrate at the same time', async () => {
      const kv = relocatingKv();
      for (let i = 0; i < 30; i++) kv.store.put({ key: bytes(`/registry/widgets/w${String(i).padStart(2, '0')}`), value: bytes(object('example.com/v1', 'Widget', '', `w${i}`)) });
      const revisions = kv.store.range({ key: bytes('/registry/widgets/'), rangeEnd: bytes('/registry/widgets0') }).kvs.map((item) => item.modRevision);
      const moves = async () => keyLayoutMoves([{ group: 'example.com', resource: 'widgets' }]);
      const [first, second] = await Promise.all([
        migrateKeyLayout(kv, moves, { log: quiet, batchItems: 4 }),
        migrateKeyLayout(kv, moves, { log: quiet, batchItems: 4 }),
      ]);
      expect(first.moved + second.moved).to.equal(30);
      const stored = kv.store.range({ key: bytes('/registry/'), rangeEnd: bytes('/registry0') }).kvs;
      expect(stored.map((item) => text(item.key)).every((key) => key.startsWith('/registry/example.com/widgets/'))).to.equal(true);
      expect(stored.map((item) => item.modRevision)).to.deep.equal(revisions);
    });
  });

  it('refuses a layout this build does not know', async () => {
    const kv = memoryKv();
    kv.store.put({ key: bytes(STORAGE_LAYOUT_KEY), value: bytes('kube-v9.99') });
    const moves = async (): Promise<KeyMove[]> => [];
    let failure: unknown;
    try {
      await migrateKeyLayout(kv, moves, { log: quiet });
    } catch (err) {
      failure = err;
    }
    expect(String(failure)).to.contain('layout "kube-v9.99"');
  });
});
