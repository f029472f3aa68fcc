/**
 * kube-apiserver's --encryption-provider-config: an EncryptionConfiguration
 * (apiserver.config.k8s.io/v1) read, validated and turned into one transformer per group-resource,
 * as k8s.io/apiserver v1.25 does it (pkg/server/options/encryptionconfig/config.go,
 * pkg/apis/config/validation/validation.go), with its messages:
 *
 *   apiVersion: apiserver.config.k8s.io/v1
 *   kind: EncryptionConfiguration
 *   resources:
 *     - resources: [secrets]              # group-resources: "secrets", "deployments.apps", ...
 *       providers:                        # the first writes; all read
 *         - aescbc: { keys: [{ name: key2, secret: <base64 of 32 bytes> }, { name: key1, ... }] }
 *         - identity: {}
 *
 * Providers: identity, aescbc, aesgcm (16, 24 or 32-byte keys), secretbox (32-byte keys). kms
 * validates as kube validates it but cannot be built: Carina has no KMS plugin client.
 * Rotation is kube's: add a key first (it writes), rewrite every object of the resource
 * (`kubectl get secrets -A -o json | kubectl replace -f -`), then drop the old key.
 *
 * Validation errors are formatted as apimachinery's field.ErrorList aggregate: one error as
 * "<field>: <type>: <detail>", several in brackets joined by ", ". Secrets show as "REDACTED".
 */
import { readFile } from 'node:fs/promises';
import YAML from 'yaml';
import { EncryptionError } from './errors';
import {
  AesCbcTransformer,
  AesGcmTransformer,
  IdentityTransformer,
  PrefixTransformers,
  SecretboxTransformer,
  type PrefixTransformer,
  type ValueTransformer,
} from './value-transformers';
import { isJsonObject } from '../../apis/object';

export const ENCRYPTION_CONFIG_API_VERSION = 'apiserver.config.k8s.io/v1';
export const ENCRYPTION_CONFIG_KIND = 'EncryptionConfiguration';

export interface EncryptionKey {
  name: string;
  /** base64 of the key bytes. */
  secret: string;
}

export interface ProviderConfiguration {
  identity?: Record<string, never>;
  aescbc?: { keys?: EncryptionKey[] };
  aesgcm?: { keys?: EncryptionKey[] };
  secretbox?: { keys?: EncryptionKey[] };
  kms?: { name?: string; endpoint?: string; apiVersion?: string; cachesize?: number; timeout?: string };
}

export interface ResourceConfiguration {
  resources: string[];
  providers: ProviderConfiguration[];
}

export interface EncryptionConfiguration {
  resources: ResourceConfiguration[];
}

/** A group-resource as kube parses it: "secrets" is core, "deployments.apps" is apps. */
export interface GroupResource {
  group: string;
  resource: string;
}

export function parseGroupResource(text: string): GroupResource {
  const dot = text.indexOf('.');
  return dot < 0 ? { group: '', resource: text } : { group: text.slice(dot + 1), resource: text.slice(0, dot) };
}

const PROVIDER_NAMES = ['kms', 'aesgcm', 'aescbc', 'secretbox', 'identity'] as const;
type ProviderName = (typeof PROVIDER_NAMES)[number];
const AES_KEY_SIZES = [16, 24, 32];
const SECRETBOX_KEY_SIZES = [32];

const PREFIX: Record<'aescbc' | 'aesgcm' | 'secretbox', string> = {
  aescbc: 'k8s:enc:aescbc:v1:',
  aesgcm: 'k8s:enc:aesgcm:v1:',
  secretbox: 'k8s:enc:secretbox:v1:',
};

// --- Decoding -------------------------------------------------------------------------------------

/**
 * Decodes the file's text (YAML or JSON) into the v1 type, leniently as kube's universal decoder
 * does (unknown fields are dropped), then validates it.
 */
export function parseEncryptionConfiguration(text: string, file: string): EncryptionConfiguration {
  if (text.length === 0) throw new EncryptionError('INVALID_CONFIG', `error while parsing file: encryption provider configuration file "${file}" is empty`);
  let raw: unknown;
  try {
    raw = YAML.parse(text);
  } catch (err) {
    // The parser's message quotes no more than a line and column.
    throw new EncryptionError('INVALID_CONFIG', `error while parsing file: error decoding encryption provider configuration file "${file}": ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isJsonObject(raw)) throw new EncryptionError('INVALID_CONFIG', `error while parsing file: error decoding encryption provider configuration file "${file}": Object 'Kind' is missing`);
  const apiVersion = typeof raw.apiVersion === 'string' ? raw.apiVersion : '';
  const kind = typeof raw.kind === 'string' ? raw.kind : '';
  if (kind === '') throw new EncryptionError('INVALID_CONFIG', `error while parsing file: error decoding encryption provider configuration file "${file}": Object 'Kind' is missing`);
  if (apiVersion !== ENCRYPTION_CONFIG_API_VERSION || kind !== ENCRYPTION_CONFIG_KIND) {
    throw new EncryptionError('INVALID_CONFIG', `error while parsing file: error decoding encryption provider configuration file "${file}": no kind "${kind}" is registered for version "${apiVersion}"`);
  }
  const config = decodeConfiguration(raw);
  const problems = validateEncryptionConfiguration(config);
  if (problems.length > 0) throw new EncryptionError('INVALID_CONFIG', `error while parsing file: ${aggregate(problems)}`);
  return config;
}

function decodeConfiguration(raw: Record<string, unknown>): EncryptionConfiguration {
  const resources = Array.isArray(raw.resources) ? raw.resources : [];
  return {
    resources: resources.map((entry) => {
      const e = isJsonObject(entry) ? entry : {};
      return {
        resources: Array.isArray(e.resources) ? e.resources.map((r) => String(r)) : [],
        providers: Array.isArray(e.providers) ? e.providers.map(decodeProvider) : [],
      };
    }),
  };
}

function decodeKeys(value: unknown): { keys?: EncryptionKey[] } {
  const keys = isJsonObject(value) && Array.isArray(value.keys) ? value.keys : [];
  return {
    keys: keys.map((k) => {
      const o = isJsonObject(k) ? k : {};
      return { name: typeof o.name === 'string' ? o.name : '', secret: typeof o.secret === 'string' ? o.secret : '' };
    }),
  };
}

function decodeProvider(value: unknown): ProviderConfiguration {
  const p = isJsonObject(value) ? value : {};
  const provider: ProviderConfiguration = {};
  // A key that is present but null is absent, as Go decodes a null pointer.
  if (p.identity !== undefined && p.identity !== null) provider.identity = {};
  if (p.aescbc !== undefined && p.aescbc !== null) provider.aescbc = decodeKeys(p.aescbc);
  if (p.aesgcm !== undefined && p.aesgcm !== null) provider.aesgcm = decodeKeys(p.aesgcm);
  if (p.secretbox !== undefined && p.secretbox !== null) provider.secretbox = decodeKeys(p.secretbox);
  if (isJsonObject(p.kms)) {
    const k = p.kms;
    provider.kms = {
      name: typeof k.name === 'string' ? k.name : '',
      endpoint: typeof k.endpoint === 'string' ? k.endpoint : '',
      // v1.25's defaults (config/v1/defaults.go): apiVersion v1, cachesize 1000, timeout 3s.
      apiVersion: typeof k.apiVersion === 'string' && k.apiVersion !== '' ? k.apiVersion : 'v1',
      cachesize: typeof k.cachesize === 'number' ? k.cachesize : 1000,
      timeout: typeof k.timeout === 'string' ? k.timeout : '3s',
    };
  }
  return provider;
}

// --- Validation -----------------------------------------------------------------------------------

type FieldError = { field: string; type: 'Required value' | 'Invalid value'; value?: string; detail: string };

function required(field: string, detail: string): FieldError {
  return { field, type: 'Required value', detail };
}

function invalid(field: string, value: string, detail: string): FieldError {
  return { field, type: 'Invalid value', value, detail };
}

function formatFieldError(e: FieldError): string {
  return e.type === 'Invalid value' ? `${e.field}: ${e.type}: ${e.value}: ${e.detail}` : `${e.field}: ${e.type}: ${e.detail}`;
}

/** apimachinery's utilerrors aggregate: duplicates dropped, one message alone, several in brackets. */
function aggregate(errors: FieldError[]): string {
  const messages = [...new Set(errors.map(formatFieldError))];
  return messages.length === 1 ? messages[0] : `[${messages.join(', ')}]`;
}

function configuredProviders(p: ProviderConfiguration): ProviderName[] {
  return PROVIDER_NAMES.filter((name) => p[name] !== undefined);
}

/** Go's %v of a provider struct would print pointers; the names of the providers it holds say as much. */
function providerValue(p: ProviderConfiguration): string {
  return `{${configuredProviders(p).join(', ')}}`;
}

function validateKeys(keys: EncryptionKey[] | undefined, path: string, sizes: number[]): FieldError[] {
  if (keys === undefined || keys.length === 0) return [required(path, 'at least one keys is required')];
  const errors: FieldError[] = [];
  keys.forEach((key, i) => {
    const at = `${path}[${i}]`;
    if (key.name === '') errors.push(required(`${at}.name`, 'name is a mandatory field for a key'));
    if (key.secret === '') {
      errors.push(required(`${at}.secret`, 'secret is a mandatory field for a key'));
      return;
    }
    const bytes = decodeBase64Strict(key.secret);
    if (bytes === undefined) {
      errors.push(invalid(`${at}.secret`, '"REDACTED"', 'secrets must be base64 encoded'));
      return;
    }
    if (!sizes.includes(bytes.length)) errors.push(invalid(`${at}.secret`, '"REDACTED"', `secret is not of the expected length, got ${bytes.length}, expected one of [${sizes.join(' ')}]`));
  });
  return errors;
}

/** Go's base64.StdEncoding: padded standard alphabet, nothing else (Buffer.from would accept anything). */
function decodeBase64Strict(text: string): Buffer | undefined {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}

function parseGoDurationMs(text: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let consumed = 0;
  const sign = text.startsWith('-') ? -1 : 1;
  const body = text.replace(/^[-+]/, '');
  if (body === '0') return 0;
  for (const m of body.matchAll(re)) {
    if (m.index !== consumed) return undefined;
    total += Number(m[1]) * units[m[2]];
    consumed += m[0].length;
  }
  return consumed === body.length && body.length > 0 ? sign * total : undefined;
}

function validateKms(kms: NonNullable<ProviderConfiguration['kms']>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (!kms.name) errors.push(required(`${path}.name`, 'name is a mandatory field for a provider'));
  if (kms.apiVersion !== 'v1' && (kms.name ?? '').includes(':')) errors.push(invalid(`${path}.name`, JSON.stringify(kms.name), `invalid KMS provider name ${kms.name}, must not contain ':'`));
  const timeoutMs = parseGoDurationMs(kms.timeout ?? '');
  if (timeoutMs === undefined || timeoutMs <= 0) errors.push(invalid(`${path}.timeout`, JSON.stringify(kms.timeout), 'timeout should be a positive value'));
  if (!kms.endpoint) errors.push(invalid(`${path}.endpoint`, '""', 'endpoint is a mandatory field for a kms'));
  else if (!kms.endpoint.startsWith('unix:')) errors.push(invalid(`${path}.endpoint`, JSON.stringify(kms.endpoint), `unsupported scheme ${JSON.stringify(/^([a-z][a-z0-9+.-]*):/i.exec(kms.endpoint)?.[1] ?? '')} for KMS provider, only unix is supported`));
  if (kms.cachesize === 0) errors.push(invalid(`${path}.cachesize`, '0', 'cachesize should be a positive value, or negative to disable'));
  if (kms.apiVersion !== 'v1' && kms.apiVersion !== 'v2') errors.push(invalid(`${path}.apiVersion`, JSON.stringify(kms.apiVersion), 'unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported'));
  return errors;
}

/** v1.25's ValidateEncryptionConfiguration, returning every field error. */
export function validateEncryptionConfiguration(config: EncryptionConfiguration): FieldError[] {
  if (config.resources.length === 0) return [required('resources', 'at least one resources is required')];
  const errors: FieldError[] = [];
  config.resources.forEach((entry, i) => {
    const r = `resources[${i}].resources`;
    const p = `resources[${i}].providers`;
    if (entry.resources.length === 0) errors.push(required(r, `at least one ${r} is required`));
    if (entry.providers.length === 0) errors.push(required(p, `at least one ${p} is required`));
    entry.providers.forEach((provider, j) => {
      const path = `${p}[${j}]`;
      const names = configuredProviders(provider);
      if (names.length === 0) errors.push(invalid(path, providerValue(provider), 'provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity'));
      if (names.length > 1) errors.push(invalid(path, providerValue(provider), 'more than one provider specified in a single element, should split into different list elements'));
      if (provider.kms !== undefined) errors.push(...validateKms(provider.kms, `${path}.kms`));
      else if (provider.aesgcm !== undefined) errors.push(...validateKeys(provider.aesgcm.keys, `${path}.aesgcm.keys`, AES_KEY_SIZES));
      else if (provider.aescbc !== undefined) errors.push(...validateKeys(provider.aescbc.keys, `${path}.aescbc.keys`, AES_KEY_SIZES));
      else if (provider.secretbox !== undefined) errors.push(...validateKeys(provider.secretbox.keys, `${path}.secretbox.keys`, SECRETBOX_KEY_SIZES));
    });
  });
  return errors;
}

// --- Transformers ---------------------------------------------------------------------------------

function keyedTransformer(prefix: string, keys: EncryptionKey[], make: (key: Buffer) => ValueTransformer, noMatch: string): PrefixTransformer {
  const perKey = keys.map((k) => ({ prefix: Buffer.from(`${k.name}:`), transformer: make(Buffer.from(k.secret, 'base64')) }));
  return { prefix: Buffer.from(prefix), transformer: new PrefixTransformers(perKey, noMatch) };
}

function providerTransformer(provider: ProviderConfiguration): PrefixTransformer {
  if (provider.aesgcm !== undefined) return keyedTransformer(PREFIX.aesgcm, provider.aesgcm.keys ?? [], (k) => new AesGcmTransformer(k), 'no matching key was found for the provided AES transformer');
  if (provider.aescbc !== undefined) return keyedTransformer(PREFIX.aescbc, provider.aescbc.keys ?? [], (k) => new AesCbcTransformer(k), 'no matching key was found for the provided AES transformer');
  if (provider.secretbox !== undefined) return keyedTransformer(PREFIX.secretbox, provider.secretbox.keys ?? [], (k) => new SecretboxTransformer(k), 'no matching key was found for the provided Secretbox transformer');
  if (provider.identity !== undefined) return { prefix: new Uint8Array(0), transformer: new IdentityTransformer() };
  if (provider.kms !== undefined) throw new EncryptionError('INVALID_CONFIG', `error while building transformers: could not configure KMS plugin ${JSON.stringify(provider.kms.name)}: KMS providers are not supported by Carina`);
  throw new EncryptionError('INVALID_CONFIG', 'error while building transformers: provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity');
}

/**
 * One transformer per group-resource ("secrets", "deployments.apps"): the providers of every
 * entry naming it, in file order (kube appends a later entry's providers after an earlier one's).
 */
export function buildResourceTransformers(config: EncryptionConfiguration): Map<string, ValueTransformer> {
  const lists = new Map<string, PrefixTransformer[]>();
  for (const entry of config.resources) {
    const transformers = entry.providers.map(providerTransformer);
    for (const resource of entry.resources) {
      const gr = parseGroupResource(resource);
      const name = gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
      lists.set(name, [...(lists.get(name) ?? []), ...transformers]);
    }
  }
  const result = new Map<string, ValueTransformer>();
  for (const [name, list] of lists) result.set(name, new PrefixTransformers(list, 'no matching prefix found'));
  return result;
}

/** Reads, validates and builds the file given to --encryption-provider-config. */
export async function loadEncryptionConfiguration(file: string): Promise<Map<string, ValueTransformer>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new EncryptionError('INVALID_CONFIG', `error while parsing file: error opening encryption provider configuration file "${file}": ${(err as Error).message}`, { cause: err });
  }
  return buildResourceTransformers(parseEncryptionConfiguration(text, file));
}
