/**
 * The kubeconfig that gives an operator (and the e2e tests) admin access to a Carina cluster:
 * `<data-dir>/admin.kubeconfig`, with cluster `carina` (the API server's https URL and the
 * cluster CA), user `system:admin` (the admin client certificate and key, inline) and context
 * `carina`, which is the current one.
 *
 * It is YAML written and read with the `yaml` package. Every string is double-quoted, so no value
 * can be read back as something else (YAML 1.1, which kubectl's parser follows, would read an
 * unquoted `no` or `0x1F` as a boolean or a number). The reader checks that the file has what
 * Carina writes (a current context, its cluster and inline certificates) and refuses the rest
 * with a KubeconfigError.
 *
 * The file holds a private key: it is written atomically with mode 0600.
 */
import { promises as fs } from 'node:fs';
import { isIP } from 'node:net';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { ADMIN_USER, writeFileAtomically, type CertificateAndKey, type ClusterCertificates } from './cluster-ca';

export const ADMIN_KUBECONFIG_NAME = 'admin.kubeconfig';
export const KUBECONFIG_CLUSTER_NAME = 'carina';
export const KUBECONFIG_CONTEXT_NAME = 'carina';

export type KubeconfigErrorCode =
  /** The file is not YAML. */
  | 'UNSUPPORTED_YAML'
  /** The YAML is readable but is not a kubeconfig with what Carina writes (a current context, its cluster and user, inline certificates). */
  | 'INCOMPLETE_KUBECONFIG'
  | 'IO_ERROR';

export class KubeconfigError extends Error {
  readonly code: KubeconfigErrorCode;

  constructor(code: KubeconfigErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'KubeconfigError';
    this.code = code;
  }
}

// Type aliases rather than interfaces, so they are assignable to YamlValue.
export type KubeconfigCluster = { name: string; cluster: { server: string; 'certificate-authority-data': string } };
export type KubeconfigUser = { name: string; user: { 'client-certificate-data': string; 'client-key-data': string } };
export type KubeconfigContext = { name: string; context: { cluster: string; user: string } };
export type Kubeconfig = {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: KubeconfigCluster[];
  users: KubeconfigUser[];
  contexts: KubeconfigContext[];
  'current-context': string;
};

/** `https://host:port`, with an IPv6 address in brackets. */
export function apiServerUrl(host: string, port: number): string {
  return isIP(host) === 6 ? `https://[${host}]:${port}` : `https://${host}:${port}`;
}

const base64 = (pem: string): string => Buffer.from(pem, 'utf8').toString('base64');

export interface KubeconfigOptions {
  /** The API server's URL, e.g. apiServerUrl('127.0.0.1', 6443). */
  server: string;
  caCertPem: string;
  client: CertificateAndKey;
  /** The kubeconfig's name for the user; the identity itself is the certificate's. */
  userName?: string;
}

export function buildKubeconfig(options: KubeconfigOptions): Kubeconfig {
  const userName = options.userName ?? ADMIN_USER;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: KUBECONFIG_CLUSTER_NAME, cluster: { server: options.server, 'certificate-authority-data': base64(options.caCertPem) } }],
    users: [{ name: userName, user: { 'client-certificate-data': base64(options.client.certPem), 'client-key-data': base64(options.client.keyPem) } }],
    contexts: [{ name: KUBECONFIG_CONTEXT_NAME, context: { cluster: KUBECONFIG_CLUSTER_NAME, user: userName } }],
    'current-context': KUBECONFIG_CONTEXT_NAME,
  };
}

/** Writes `config` to `file` as YAML, atomically, mode 0600. */
export async function writeKubeconfig(file: string, config: Kubeconfig): Promise<void> {
  await writeFileAtomically(file, kubeconfigToYaml(config), 0o600);
}

/** Writes `<dataDir>/admin.kubeconfig` for the admin certificate of `certificates`; returns its path. */
export async function writeAdminKubeconfig(dataDir: string, certificates: ClusterCertificates, server: string): Promise<string> {
  const file = path.join(dataDir, ADMIN_KUBECONFIG_NAME);
  await writeKubeconfig(file, buildKubeconfig({ server, caCertPem: certificates.ca.certPem, client: certificates.admin }));
  return file;
}

export async function readKubeconfig(file: string): Promise<Kubeconfig> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    throw new KubeconfigError('IO_ERROR', `cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
  return parseKubeconfig(text);
}

/** What a client needs to reach the cluster of the current context as its user. */
export interface KubeconfigCredentials {
  server: string;
  caCertPem: string;
  clientCertPem: string;
  clientKeyPem: string;
}

export function currentContextCredentials(config: Kubeconfig): KubeconfigCredentials {
  const context = config.contexts.find((entry) => entry.name === config['current-context']);
  if (context === undefined) throw new KubeconfigError('INCOMPLETE_KUBECONFIG', `no context named ${JSON.stringify(config['current-context'])}`);
  const cluster = config.clusters.find((entry) => entry.name === context.context.cluster);
  if (cluster === undefined) throw new KubeconfigError('INCOMPLETE_KUBECONFIG', `no cluster named ${JSON.stringify(context.context.cluster)}`);
  const user = config.users.find((entry) => entry.name === context.context.user);
  if (user === undefined) throw new KubeconfigError('INCOMPLETE_KUBECONFIG', `no user named ${JSON.stringify(context.context.user)}`);
  const decode = (data: string): string => Buffer.from(data, 'base64').toString('utf8');
  return {
    server: cluster.cluster.server,
    caCertPem: decode(cluster.cluster['certificate-authority-data']),
    clientCertPem: decode(user.user['client-certificate-data']),
    clientKeyPem: decode(user.user['client-key-data']),
  };
}

// ---------------------------------------------------------------------------------------------
// YAML, through the `yaml` package.

export type YamlValue = string | number | boolean | null | YamlValue[] | { [key: string]: YamlValue };
type YamlMapping = { [key: string]: YamlValue };

function isMapping(value: YamlValue): value is YamlMapping {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Every string double-quoted, so no value can be read back as something else (YAML 1.1, which
 * kubectl's parser follows, would read an unquoted `no` or `0x1F` as a boolean or a number).
 */
export function kubeconfigToYaml(config: Kubeconfig): string {
  return stringify(config, { defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN', lineWidth: 0 });
}

function parseYaml(text: string): YamlValue {
  try {
    return parse(text) as YamlValue;
  } catch (error) {
    throw new KubeconfigError('UNSUPPORTED_YAML', `not YAML: ${(error as Error).message}`, { cause: error });
  }
}

function field(value: YamlValue | undefined, name: string, where: string): string {
  if (typeof value !== 'string' || value === '') throw new KubeconfigError('INCOMPLETE_KUBECONFIG', `${where}: ${name} is missing or not a string`);
  return value;
}

function namedEntries(document: YamlMapping, listName: string, bodyName: string): { name: string; body: YamlMapping }[] {
  const list = document[listName];
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new KubeconfigError('INCOMPLETE_KUBECONFIG', `${listName} is not a list`);
  return list.map((entry, index) => {
    const where = `${listName}[${index}]`;
    if (!isMapping(entry)) throw new KubeconfigError('INCOMPLETE_KUBECONFIG', `${where} is not a mapping`);
    const body = entry[bodyName];
    if (body === undefined || !isMapping(body)) throw new KubeconfigError('INCOMPLETE_KUBECONFIG', `${where}: ${bodyName} is missing`);
    return { name: field(entry.name, 'name', where), body };
  });
}

/** A kubeconfig from its YAML, checked to have the fields Carina writes. */
export function parseKubeconfig(text: string): Kubeconfig {
  const document = parseYaml(text);
  if (!isMapping(document)) throw new KubeconfigError('INCOMPLETE_KUBECONFIG', 'a kubeconfig is a mapping');
  if (document.kind !== 'Config' || document.apiVersion !== 'v1') throw new KubeconfigError('INCOMPLETE_KUBECONFIG', 'not a v1 Config');
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: namedEntries(document, 'clusters', 'cluster').map(({ name, body }) => ({
      name,
      cluster: { server: field(body.server, 'server', name), 'certificate-authority-data': field(body['certificate-authority-data'], 'certificate-authority-data', name) },
    })),
    users: namedEntries(document, 'users', 'user').map(({ name, body }) => ({
      name,
      user: {
        'client-certificate-data': field(body['client-certificate-data'], 'client-certificate-data', name),
        'client-key-data': field(body['client-key-data'], 'client-key-data', name),
      },
    })),
    contexts: namedEntries(document, 'contexts', 'context').map(({ name, body }) => ({
      name,
      context: { cluster: field(body.cluster, 'cluster', name), user: field(body.user, 'user', name) },
    })),
    'current-context': field(document['current-context'], 'current-context', 'kubeconfig'),
  };
}
