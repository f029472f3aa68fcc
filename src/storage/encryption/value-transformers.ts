/**
 * Value transformers for encryption at rest, byte for byte as kube-apiserver v1.25 writes them
 * (k8s.io/apiserver/pkg/storage/value and value/encrypt/{identity,aes,secretbox}), so that a
 * store written by Carina and one written by kube-apiserver read the same with the same keys.
 *
 * Stored layout: `k8s:enc:<provider>:v1:<key name>:` followed by
 *   aescbc     IV (16 random bytes) | AES-CBC(PKCS#7-padded value)
 *   aesgcm     nonce (12 random bytes) | AES-GCM ciphertext | tag (16 bytes); the additional
 *              authenticated data is the value's store key (e.g. /registry/secrets/ns/name), so a
 *              value copied under another key does not decrypt
 *   secretbox  nonce (24 random bytes) | NaCl secretbox (XSalsa20-Poly1305: tag (16) | ciphertext)
 *   identity   the value as it is, no prefix
 *
 * Reading follows kube's prefixTransformers: every transformer whose prefix the value starts
 * with is tried in configuration order; the first that succeeds wins, and the result is "stale"
 * when that was not the first transformer (another provider, or a key other than the first), so
 * a write rewrites it with the current key. Identity has the empty prefix and refuses a value
 * that starts with `k8s:enc:`, so listing it first decrypts old values while writing plain ones.
 *
 * No key material or value appears in an error message.
 */
import { createCipheriv, createDecipheriv, randomBytes, type CipherGCMTypes } from 'node:crypto';
import nacl from 'tweetnacl';
import { EncryptionError } from './errors';

/** One transformer of stored bytes; `key` is the store key the value lives at. */
export interface ValueTransformer {
  toStorage(plain: Uint8Array, key: string): Uint8Array;
  /** The plain value, and whether it was read by other than the transformer that writes. Throws EncryptionError. */
  fromStorage(stored: Uint8Array, key: string): { value: Uint8Array; stale: boolean };
}

export interface PrefixTransformer {
  prefix: Uint8Array;
  transformer: ValueTransformer;
}

const ENCRYPTED_PREFIX = Buffer.from('k8s:enc:');

function startsWith(data: Uint8Array, prefix: Uint8Array): boolean {
  if (data.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false;
  return true;
}

function concat(parts: Uint8Array[]): Uint8Array {
  return Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p.buffer, p.byteOffset, p.byteLength))));
}

/** kube's identity.NewEncryptCheckTransformer: plain both ways, but never reads encrypted data. */
export class IdentityTransformer implements ValueTransformer {
  toStorage(plain: Uint8Array): Uint8Array {
    return plain;
  }

  fromStorage(stored: Uint8Array): { value: Uint8Array; stale: boolean } {
    if (startsWith(stored, ENCRYPTED_PREFIX)) throw new EncryptionError('DECRYPT_FAILED', 'identity transformer tried to read encrypted data');
    return { value: stored, stale: false };
  }
}

const AES_BLOCK_BYTES = 16;

function aesAlgorithm(mode: 'cbc' | 'gcm', key: Uint8Array): string {
  if (key.length !== 16 && key.length !== 24 && key.length !== 32) throw new EncryptionError('INVALID_KEY', `crypto/aes: invalid key size ${key.length}`);
  return `aes-${key.length * 8}-${mode}`;
}

/** kube's aes.NewCBCTransformer: random IV, PKCS#7 padding, no authentication. */
export class AesCbcTransformer implements ValueTransformer {
  private readonly algorithm: string;

  constructor(private readonly key: Uint8Array) {
    this.algorithm = aesAlgorithm('cbc', key);
  }

  toStorage(plain: Uint8Array): Uint8Array {
    const iv = randomBytes(AES_BLOCK_BYTES);
    const cipher = createCipheriv(this.algorithm, this.key, iv);
    // Node's default padding is PKCS#7, as kube pads: a full block of 16 when the length is a multiple of 16.
    return concat([iv, cipher.update(plain), cipher.final()]);
  }

  fromStorage(stored: Uint8Array): { value: Uint8Array; stale: boolean } {
    if (stored.length < AES_BLOCK_BYTES) throw new EncryptionError('DECRYPT_FAILED', 'the stored data was shorter than the required size');
    const iv = stored.subarray(0, AES_BLOCK_BYTES);
    const data = stored.subarray(AES_BLOCK_BYTES);
    if (data.length % AES_BLOCK_BYTES !== 0) throw new EncryptionError('DECRYPT_FAILED', 'the stored data is not a multiple of the block size');
    if (data.length === 0) throw new EncryptionError('DECRYPT_FAILED', 'invalid PKCS7 data (empty or not padded)');
    const decipher = createDecipheriv(this.algorithm, this.key, iv);
    // Padding is checked here, with kube's messages, rather than by OpenSSL.
    decipher.setAutoPadding(false);
    const padded = concat([decipher.update(data), decipher.final()]);
    const padding = padded[padded.length - 1];
    if (padding === 0 || padding > padded.length) throw new EncryptionError('DECRYPT_FAILED', 'invalid PKCS7 data (empty or not padded)');
    for (let i = padded.length - padding; i < padded.length; i++) {
      if (padded[i] !== padding) throw new EncryptionError('DECRYPT_FAILED', 'invalid padding on input');
    }
    return { value: padded.subarray(0, padded.length - padding), stale: false };
  }
}

const GCM_NONCE_BYTES = 12;
const GCM_TAG_BYTES = 16;

/** kube's aes.NewGCMTransformer: random 12-byte nonce, the store key as additional authenticated data. */
export class AesGcmTransformer implements ValueTransformer {
  private readonly algorithm: CipherGCMTypes;

  constructor(private readonly key: Uint8Array) {
    this.algorithm = aesAlgorithm('gcm', key) as CipherGCMTypes;
  }

  toStorage(plain: Uint8Array, key: string): Uint8Array {
    const nonce = randomBytes(GCM_NONCE_BYTES);
    const cipher = createCipheriv(this.algorithm, this.key, nonce, { authTagLength: GCM_TAG_BYTES });
    cipher.setAAD(Buffer.from(key, 'utf8'));
    return concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  }

  fromStorage(stored: Uint8Array, key: string): { value: Uint8Array; stale: boolean } {
    if (stored.length < GCM_NONCE_BYTES) throw new EncryptionError('DECRYPT_FAILED', 'the stored data was shorter than the required size');
    if (stored.length < GCM_NONCE_BYTES + GCM_TAG_BYTES) throw new EncryptionError('DECRYPT_FAILED', 'cipher: message authentication failed');
    const nonce = stored.subarray(0, GCM_NONCE_BYTES);
    const tag = stored.subarray(stored.length - GCM_TAG_BYTES);
    const decipher = createDecipheriv(this.algorithm, this.key, nonce, { authTagLength: GCM_TAG_BYTES });
    decipher.setAAD(Buffer.from(key, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return { value: concat([decipher.update(stored.subarray(GCM_NONCE_BYTES, stored.length - GCM_TAG_BYTES)), decipher.final()]), stale: false };
    } catch {
      // Go's crypto/cipher message for a wrong key, a changed value or another store key.
      throw new EncryptionError('DECRYPT_FAILED', 'cipher: message authentication failed');
    }
  }
}

const SECRETBOX_NONCE_BYTES = 24;

/** kube's secretbox.NewSecretboxTransformer: random 24-byte nonce, NaCl secretbox (XSalsa20-Poly1305). */
export class SecretboxTransformer implements ValueTransformer {
  constructor(private readonly key: Uint8Array) {
    if (key.length !== nacl.secretbox.keyLength) throw new EncryptionError('INVALID_KEY', `expected key size 32 for secretbox provider, got ${key.length}`);
  }

  toStorage(plain: Uint8Array): Uint8Array {
    const nonce = new Uint8Array(randomBytes(SECRETBOX_NONCE_BYTES));
    return concat([nonce, nacl.secretbox(new Uint8Array(plain), nonce, new Uint8Array(this.key))]);
  }

  fromStorage(stored: Uint8Array): { value: Uint8Array; stale: boolean } {
    if (stored.length < nacl.secretbox.overheadLength + SECRETBOX_NONCE_BYTES) throw new EncryptionError('DECRYPT_FAILED', 'the stored data was shorter than the required size');
    const nonce = new Uint8Array(stored.subarray(0, SECRETBOX_NONCE_BYTES));
    const opened = nacl.secretbox.open(new Uint8Array(stored.subarray(SECRETBOX_NONCE_BYTES)), nonce, new Uint8Array(this.key));
    // kube's (misleading) message for an open that fails authentication.
    if (opened === null) throw new EncryptionError('DECRYPT_FAILED', 'output array was not large enough for encryption');
    return { value: Buffer.from(opened), stale: false };
  }
}

/**
 * kube's NewPrefixTransformers: writes with the first, reads with whichever matches (see the
 * module comment). `noMatch` is the message when none does.
 */
export class PrefixTransformers implements ValueTransformer {
  constructor(
    private readonly transformers: PrefixTransformer[],
    private readonly noMatch: string,
  ) {
    if (transformers.length === 0) throw new EncryptionError('INVALID_CONFIG', 'at least one transformer is required');
  }

  toStorage(plain: Uint8Array, key: string): Uint8Array {
    const first = this.transformers[0];
    return concat([first.prefix, first.transformer.toStorage(plain, key)]);
  }

  fromStorage(stored: Uint8Array, key: string): { value: Uint8Array; stale: boolean } {
    const errors: string[] = [];
    for (let i = 0; i < this.transformers.length; i++) {
      const { prefix, transformer } = this.transformers[i];
      if (!startsWith(stored, prefix)) continue;
      try {
        const result = transformer.fromStorage(stored.subarray(prefix.length), key);
        return { value: result.value, stale: result.stale || i !== 0 };
      } catch (err) {
        // Identity refusing encrypted data must not hide the provider that can read it.
        if (prefix.length === 0) continue;
        errors.push(err instanceof EncryptionError ? err.message : String(err));
      }
    }
    if (errors.length > 0) throw new EncryptionError('DECRYPT_FAILED', errors.length === 1 ? errors[0] : `[${[...new Set(errors)].join(', ')}]`);
    throw new EncryptionError('DECRYPT_FAILED', this.noMatch);
  }
}
