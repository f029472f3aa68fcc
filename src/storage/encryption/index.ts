/**
 * Encryption at rest (kube-apiserver's --encryption-provider-config): the EncryptionConfiguration
 * loader, kube's value transformers (identity, aescbc, aesgcm, secretbox) and the
 * StoredValueTransformer that ObjectStore applies by store key. Other modules use only this.
 */
export { EncryptionError, isEncryptionError, type EncryptionErrorCode } from './errors';
export {
  ENCRYPTION_CONFIG_API_VERSION,
  ENCRYPTION_CONFIG_KIND,
  buildResourceTransformers,
  loadEncryptionConfiguration,
  parseEncryptionConfiguration,
  parseGroupResource,
  validateEncryptionConfiguration,
  type EncryptionConfiguration,
  type EncryptionKey,
  type GroupResource,
  type ProviderConfiguration,
  type ResourceConfiguration,
} from './encryption-config';
export { EncryptionAtRest, type StoredValueTransformer } from './encryption-at-rest';
export {
  AesCbcTransformer,
  AesGcmTransformer,
  IdentityTransformer,
  PrefixTransformers,
  SecretboxTransformer,
  type PrefixTransformer,
  type ValueTransformer,
} from './value-transformers';
