/**
 * kube's stored layouts, read from vectors made outside this code: aescbc by `openssl enc
 * -aes-256-cbc` (PKCS#7), aesgcm by Python's `cryptography` AESGCM with the store key as
 * additional data, secretbox by tweetnacl (NaCl's secretbox); each framed as kube-apiserver
 * v1.25 frames it: `k8s:enc:<provider>:v1:<key name>:` + IV/nonce + ciphertext.
 */
import { expect } from 'chai';
import {
  AesCbcTransformer,
  AesGcmTransformer,
  EncryptionAtRest,
  EncryptionError,
  IdentityTransformer,
  SecretboxTransformer,
  buildResourceTransformers,
  parseEncryptionConfiguration,
  type ValueTransformer,
} from '../../../../../src/storage/encryption';

const KEY = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
const KEY_B64 = KEY.toString('base64');
const PLAIN = '{"kind":"Secret","data":{"password":"czNjcjN0"}}';
const STORE_KEY = '/registry/secrets/default/s1';

const CBC_IV = Buffer.from(Array.from({ length: 16 }, (_, i) => 0xa0 + i));
const CBC_CT = 'da54e881eafae68f34aa2ddb00e56b52ebc8f04455a57c27e78aeee850c41f02e275aee76d2510235d3f7ccfe90f9883abce4235cb9998986d600b566eff9b47';
const GCM_NONCE = Buffer.from(Array.from({ length: 12 }, (_, i) => 0xc0 + i));
const GCM_CT_AND_TAG = '7b6a4c0e191cb464ba8a98c140c99c746051875e48833d8051e13b6b440e08d9cef2b59d50b83f4da22e3e57c9e618f474a93bb68241c48e4290582b749a91dd';
const BOX_NONCE = Buffer.from(Array.from({ length: 24 }, (_, i) => 0xd0 + i));
const BOX = '679a91effdabfc56d789f34619c5131ff0db8da4318ab475ff025b898c01f2a12bf5b1f822dfb56696b0b1b36848f4768828049644ff74f8aeab34849bfa620c';

function vector(provider: string, parts: Array<Buffer | string>): Buffer {
  return Buffer.concat([Buffer.from(`k8s:enc:${provider}:v1:key1:`), ...parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'hex') : p))]);
}

function config(providers: string): Map<string, ValueTransformer> {
  return buildResourceTransformers(parseEncryptionConfiguration(`apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: [secrets]\n    providers:\n${providers}`, 'test.yaml'));
}

const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');

function expectDecryptFailure(run: () => unknown, message: string): void {
  try {
    run();
  } catch (err) {
    expect(err).to.be.instanceOf(EncryptionError);
    expect((err as EncryptionError).code).to.equal('DECRYPT_FAILED');
    expect((err as Error).message).to.equal(message);
    return;
  }
  throw new Error(`expected a decryption failure: ${message}`);
}

describe('src/storage/encryption value transformers: kube v1.25\'s byte layout', () => {
  it('reads an aescbc value made by openssl (IV, then AES-256-CBC with PKCS#7 padding)', () => {
    const transformers = config(`      - aescbc:\n          keys:\n            - name: key1\n              secret: ${KEY_B64}\n`);
    const read = transformers.get('secrets')!.fromStorage(vector('aescbc', [CBC_IV, CBC_CT]), STORE_KEY);
    expect(text(read.value)).to.equal(PLAIN);
    expect(read.stale).to.equal(false);
  });

  it('reads an aesgcm value made by Python\'s cryptography, authenticated with the store key; under another key it fails', () => {
    const transformers = config(`      - aesgcm:\n          keys:\n            - name: key1\n              secret: ${KEY_B64}\n`);
    const stored = vector('aesgcm', [GCM_NONCE, GCM_CT_AND_TAG]);
    expect(text(transformers.get('secrets')!.fromStorage(stored, STORE_KEY).value)).to.equal(PLAIN);
    // Moved to another object's key, the value no longer authenticates (kube's additional data).
    expectDecryptFailure(() => transformers.get('secrets')!.fromStorage(stored, '/registry/secrets/default/other'), 'cipher: message authentication failed');
  });

  it('reads a secretbox value (24-byte nonce, then XSalsa20-Poly1305)', () => {
    const transformers = config(`      - secretbox:\n          keys:\n            - name: key1\n              secret: ${KEY_B64}\n`);
    expect(text(transformers.get('secrets')!.fromStorage(vector('secretbox', [BOX_NONCE, BOX]), STORE_KEY).value)).to.equal(PLAIN);
  });

  it('writes what it reads, with a fresh IV or nonce every time (no value is written in clear)', () => {
    for (const transformer of [new AesCbcTransformer(KEY), new AesGcmTransformer(KEY), new SecretboxTransformer(KEY)] as ValueTransformer[]) {
      const a = transformer.toStorage(Buffer.from(PLAIN), STORE_KEY);
      const b = transformer.toStorage(Buffer.from(PLAIN), STORE_KEY);
      expect(Buffer.from(a).equals(Buffer.from(b))).to.equal(false);
      expect(Buffer.from(a).includes(Buffer.from('czNjcjN0'))).to.equal(false);
      expect(text(transformer.fromStorage(a, STORE_KEY).value)).to.equal(PLAIN);
    }
    // Lengths as kube's: CBC pads to whole blocks after a 16-byte IV, GCM adds nonce and tag, secretbox nonce and tag.
    expect(new AesCbcTransformer(KEY).toStorage(Buffer.alloc(16)).length).to.equal(16 + 32);
    expect(new AesGcmTransformer(KEY).toStorage(Buffer.alloc(5), STORE_KEY).length).to.equal(12 + 5 + 16);
    expect(new SecretboxTransformer(KEY).toStorage(Buffer.alloc(5)).length).to.equal(24 + 16 + 5);
  });

  it('checks CBC padding and sizes with kube\'s messages', () => {
    const cbc: ValueTransformer = new AesCbcTransformer(KEY);
    expectDecryptFailure(() => cbc.fromStorage(Buffer.alloc(8), STORE_KEY), 'the stored data was shorter than the required size');
    expectDecryptFailure(() => cbc.fromStorage(Buffer.alloc(16 + 15), STORE_KEY), 'the stored data is not a multiple of the block size');
    // A wrong key decrypts to garbage whose last byte is almost never valid padding.
    const other: ValueTransformer = new AesCbcTransformer(Buffer.alloc(32, 7));
    expect(() => other.fromStorage(Buffer.concat([CBC_IV, Buffer.from(CBC_CT, 'hex')]), STORE_KEY)).to.throw(EncryptionError);
  });

  it('identity refuses encrypted data and passes plain data through', () => {
    const identity: ValueTransformer = new IdentityTransformer();
    expect(text(identity.fromStorage(Buffer.from(PLAIN), STORE_KEY).value)).to.equal(PLAIN);
    expectDecryptFailure(() => identity.fromStorage(vector('aescbc', [CBC_IV, CBC_CT]), STORE_KEY), 'identity transformer tried to read encrypted data');
  });
});

describe('src/storage/encryption prefix transformers: which provider and key read, and what is stale', () => {
  const other = Buffer.alloc(32, 9).toString('base64');

  it('writes with the first key and reads an older key\'s value as stale (rotation: add a key, rewrite, remove the old)', () => {
    const before = config(`      - aescbc:\n          keys:\n            - name: key1\n              secret: ${KEY_B64}\n`).get('secrets')!;
    const old = before.toStorage(Buffer.from(PLAIN), STORE_KEY);
    expect(text(old.subarray(0, 23))).to.equal('k8s:enc:aescbc:v1:key1:');
    const rotated = config(`      - aescbc:\n          keys:\n            - name: key2\n              secret: ${other}\n            - name: key1\n              secret: ${KEY_B64}\n`).get('secrets')!;
    const read = rotated.fromStorage(old, STORE_KEY);
    expect(text(read.value)).to.equal(PLAIN);
    expect(read.stale).to.equal(true);
    const rewritten = rotated.toStorage(read.value, STORE_KEY);
    expect(text(rewritten.subarray(0, 23))).to.equal('k8s:enc:aescbc:v1:key2:');
    expect(rotated.fromStorage(rewritten, STORE_KEY).stale).to.equal(false);
    const after = config(`      - aescbc:\n          keys:\n            - name: key2\n              secret: ${other}\n`).get('secrets')!;
    expect(text(after.fromStorage(rewritten, STORE_KEY).value)).to.equal(PLAIN);
    expectDecryptFailure(() => after.fromStorage(old, STORE_KEY), 'no matching key was found for the provided AES transformer');
  });

  it('reads a value with no prefix as identity when identity is listed (stale, so a rewrite encrypts it), and refuses it otherwise', () => {
    const withIdentity = config(`      - aesgcm:\n          keys:\n            - name: key1\n              secret: ${KEY_B64}\n      - identity: {}\n`).get('secrets')!;
    const read = withIdentity.fromStorage(Buffer.from(PLAIN), STORE_KEY);
    expect(text(read.value)).to.equal(PLAIN);
    expect(read.stale).to.equal(true);
    const without = config(`      - aesgcm:\n          keys:\n            - name: key1\n              secret: ${KEY_B64}\n`).get('secrets')!;
    expectDecryptFailure(() => without.fromStorage(Buffer.from(PLAIN), STORE_KEY), 'no matching prefix found');
  });

  it('with identity first writes plain and still reads the encrypted values (turning encryption off)', () => {
    const on = config(`      - secretbox:\n          keys:\n            - name: key1\n              secret: ${KEY_B64}\n`).get('secrets')!;
    const encrypted = on.toStorage(Buffer.from(PLAIN), STORE_KEY);
    const off = config(`      - identity: {}\n      - secretbox:\n          keys:\n            - name: key1\n              secret: ${KEY_B64}\n`).get('secrets')!;
    expect(text(off.toStorage(Buffer.from(PLAIN), STORE_KEY))).to.equal(PLAIN);
    const read = off.fromStorage(encrypted, STORE_KEY);
    expect(text(read.value)).to.equal(PLAIN);
    expect(read.stale).to.equal(true);
  });

  it('applies only to the configured resources\' key prefixes (EncryptionAtRest)', () => {
    const transformers = config(`      - aescbc:\n          keys:\n            - name: key1\n              secret: ${KEY_B64}\n`);
    const atRest = EncryptionAtRest.forResources(transformers, (gr) => `/registry/${gr.resource}/`);
    expect(atRest.keyPrefixes).to.deep.equal(['/registry/secrets/']);
    expect(text(atRest.toStorage('/registry/configmaps/default/c', Buffer.from(PLAIN)))).to.equal(PLAIN);
    expect(text(atRest.toStorage(STORE_KEY, Buffer.from(PLAIN)).subarray(0, 8))).to.equal('k8s:enc:');
    // A secrets-like name under another resource's prefix is not a Secret.
    expect(text(atRest.toStorage('/registry/secretsx/a', Buffer.from(PLAIN)))).to.equal(PLAIN);
  });
});
