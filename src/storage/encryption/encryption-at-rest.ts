/**
 * EncryptionAtRest: what ObjectStore applies to the stored bytes of an object, chosen by the
 * object's store key. Each configured group-resource owns the key prefix its objects live under
 * (given by the composition root, which knows the registry's key layout); a key under none of
 * them is stored as it is, as kube-apiserver stores a resource the configuration does not name.
 *
 * Invariant: for every key, fromStorage(key, toStorage(key, v)).value equals v, and a value
 * written under one configured key prefix is never read with another prefix's transformer.
 */
import type { GroupResource } from './encryption-config';
import type { ValueTransformer } from './value-transformers';

/** The contract ObjectStore sees; both calls are synchronous and may throw EncryptionError. */
export interface StoredValueTransformer {
  toStorage(key: string, plain: Uint8Array): Uint8Array;
  /**
   * The plain bytes, and whether a write should re-encrypt them (read with an older key or
   * provider). `resourceKey`, when given, chooses the providers instead of `key`: a value still
   * stored at a key of an earlier layout is read with its resource's providers.
   */
  fromStorage(key: string, stored: Uint8Array, resourceKey?: string): { value: Uint8Array; stale: boolean };
}

export class EncryptionAtRest implements StoredValueTransformer {
  /** Longest prefix first, so a nested prefix wins over the one containing it. */
  private readonly entries: Array<{ keyPrefix: string; transformer: ValueTransformer }>;

  constructor(entries: Array<{ keyPrefix: string; transformer: ValueTransformer }>) {
    for (const e of entries) {
      if (!e.keyPrefix.endsWith('/')) throw new RangeError(`key prefix "${e.keyPrefix}" must end with "/"`);
    }
    this.entries = [...entries].sort((a, b) => b.keyPrefix.length - a.keyPrefix.length);
  }

  /**
   * From the group-resource transformers of an EncryptionConfiguration and the key prefix of
   * each group-resource's objects.
   */
  static forResources(transformers: Map<string, ValueTransformer>, keyPrefixOf: (gr: GroupResource) => string): EncryptionAtRest {
    return new EncryptionAtRest([...transformers].map(([name, transformer]) => {
      const dot = name.indexOf('.');
      const gr = dot < 0 ? { group: '', resource: name } : { group: name.slice(dot + 1), resource: name.slice(0, dot) };
      return { keyPrefix: keyPrefixOf(gr), transformer };
    }));
  }

  /** The key prefixes whose values are transformed. */
  get keyPrefixes(): string[] {
    return this.entries.map((e) => e.keyPrefix);
  }

  private transformerFor(key: string): ValueTransformer | undefined {
    for (const e of this.entries) if (key.startsWith(e.keyPrefix)) return e.transformer;
    return undefined;
  }

  toStorage(key: string, plain: Uint8Array): Uint8Array {
    const transformer = this.transformerFor(key);
    return transformer === undefined ? plain : transformer.toStorage(plain, key);
  }

  fromStorage(key: string, stored: Uint8Array, resourceKey = key): { value: Uint8Array; stale: boolean } {
    const transformer = this.transformerFor(resourceKey);
    return transformer === undefined ? { value: stored, stale: false } : transformer.fromStorage(stored, key);
  }
}
