/**
 * The kubeconfig that gives an operator (and the e2e tests) admin access to a Carina cluster:
 * `<data-dir>/admin.kubeconfig`, with cluster `carina` (the API server's https URL and the
 * cluster CA), user `system:admin` (the admin client certificate and key, inline) and context
 * `carina`, which is the current one.
 *
 * It is YAML, written by the small serializer below rather than a YAML library: a kubeconfig
 * needs only block mappings, block sequences and strings. Every string is double-quoted, so no
 * value can be read back as something else (YAML 1.1, which kubectl's parser follows, would read
 * an unquoted `no` or `0x1F` as a boolean or a number). The reader accepts that same subset
 * (plus plain scalars and comments, for a file touched by hand) and refuses anything else with a
 * KubeconfigError: it is for reading our own files back, not a general YAML parser.
 *
 * The file holds a private key: it is written atomically with mode 0600.
 */
import { promises as fs } from 'node:fs';
import { isIP } from 'node:net';
import * as path from 'node:path';
import { ADMIN_USER, writeFileAtomically, type CertificateAndKey, type ClusterCertificates } from './cluster-ca';

export const ADMIN_KUBECONFIG_NAME = 'admin.kubeconfig';
export const KUBECONFIG_CLUSTER_NAME = 'carina';
export const KUBECONFIG_CONTEXT_NAME = 'carina';

export type KubeconfigErrorCode =
  /** The file is not in the YAML subset this module reads. */
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
// The YAML subset

export type YamlValue = string | number | boolean | null | YamlValue[] | { [key: string]: YamlValue };
type YamlMapping = { [key: string]: YamlValue };

const PLAIN_KEY = /^[A-Za-z0-9_./][A-Za-z0-9_./-]*$/;

function isMapping(value: YamlValue): value is YamlMapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonEmptyCollection(value: YamlValue): value is YamlValue[] | YamlMapping {
  return Array.isArray(value) ? value.length > 0 : isMapping(value) && Object.keys(value).length > 0;
}

/**
 * A double-quoted YAML string. JSON's escapes are all YAML escapes too; beyond JSON, DEL, the C1
 * controls and U+2028/U+2029 are escaped, since YAML 1.1 reads some of them as line breaks.
 */
function quoteString(value: string): string {
  return JSON.stringify(value).replace(/[\u007f-\u009f\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function inlineValue(value: YamlValue): string {
  if (typeof value === 'string') return quoteString(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new KubeconfigError('UNSUPPORTED_YAML', `cannot write the number ${value}`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value === null) return 'null';
  // Only empty collections are written inline.
  return Array.isArray(value) ? '[]' : '{}';
}

function emitMapping(mapping: YamlMapping, indent: number, out: string[]): void {
  const pad = ' '.repeat(indent);
  for (const [key, value] of Object.entries(mapping)) {
    const yamlKey = PLAIN_KEY.test(key) ? key : quoteString(key);
    if (Array.isArray(value) && value.length > 0) {
      // Kubernetes' own style: a sequence under a key is not indented further.
      out.push(`${pad}${yamlKey}:`);
      emitSequence(value, indent, out);
    } else if (isMapping(value) && isNonEmptyCollection(value)) {
      out.push(`${pad}${yamlKey}:`);
      emitMapping(value, indent + 2, out);
    } else {
      out.push(`${pad}${yamlKey}: ${inlineValue(value)}`);
    }
  }
}

function emitSequence(items: YamlValue[], indent: number, out: string[]): void {
  const pad = ' '.repeat(indent);
  for (const item of items) {
    if (isNonEmptyCollection(item)) {
      // The item is written as a block two columns in, and its first line then carries the dash.
      const first = out.length;
      if (Array.isArray(item)) emitSequence(item, indent + 2, out);
      else emitMapping(item, indent + 2, out);
      out[first] = `${pad}- ${out[first].slice(indent + 2)}`;
    } else {
      out.push(`${pad}- ${inlineValue(item)}`);
    }
  }
}

/** The YAML text of a mapping, in the subset parseYamlSubset reads. */
export function toYaml(document: YamlMapping): string {
  const out: string[] = [];
  emitMapping(document, 0, out);
  return `${out.join('\n')}\n`;
}

export function kubeconfigToYaml(config: Kubeconfig): string {
  return toYaml(config);
}

interface Line {
  indent: number;
  text: string;
  /** 1-based, for messages. */
  number: number;
}

const KEY_LINE = /^([A-Za-z0-9_./][A-Za-z0-9_./-]*|"(?:[^"\\]|\\.)*"):(?: +(.*))?$/;

function isSequenceItem(text: string): boolean {
  return text === '-' || text.startsWith('- ');
}

function unsupported(line: Line | undefined, what: string): KubeconfigError {
  return new KubeconfigError('UNSUPPORTED_YAML', line === undefined ? what : `line ${line.number}: ${what}`);
}

function parseScalar(text: string, line: Line): YamlValue {
  if (text.startsWith('"')) {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'string') return value;
    } catch {
      // Falls through to the error below: a YAML-only escape or text after the closing quote.
    }
    throw unsupported(line, `unsupported double-quoted string ${text}`);
  }
  if (text.startsWith("'")) {
    if (!/^'(?:[^']|'')*'$/.test(text)) throw unsupported(line, `unsupported single-quoted string ${text}`);
    return text.slice(1, -1).replace(/''/g, "'");
  }
  if (text === '[]') return [];
  if (text === '{}') return {};
  // A comment after a plain value ends it.
  const plain = text.replace(/\s+#.*$/, '').trimEnd();
  if (plain === 'null' || plain === '~' || plain === '') return null;
  if (plain === 'true') return true;
  if (plain === 'false') return false;
  if (/^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$/.test(plain)) return Number(plain);
  if (/^[[\]{}&*!|>'"%@`,]/.test(plain)) throw unsupported(line, `unsupported value ${text}`);
  return plain;
}

class YamlSubsetParser {
  private position = 0;

  constructor(private readonly lines: Line[]) {}

  parseDocument(): YamlValue {
    if (this.lines.length === 0) return null;
    const value = this.parseBlock(this.lines[0].indent);
    if (this.position < this.lines.length) throw unsupported(this.lines[this.position], 'unexpected indentation');
    return value;
  }

  private parseBlock(indent: number): YamlValue {
    return isSequenceItem(this.lines[this.position].text) ? this.parseSequence(indent) : this.parseMapping(indent);
  }

  private parseSequence(indent: number): YamlValue[] {
    const items: YamlValue[] = [];
    while (this.position < this.lines.length) {
      const line = this.lines[this.position];
      if (line.indent !== indent || !isSequenceItem(line.text)) break;
      const rest = line.text.slice(1);
      const content = rest.trimStart();
      if (content === '') {
        this.position += 1;
        const next = this.lines[this.position];
        items.push(next !== undefined && next.indent > indent ? this.parseBlock(next.indent) : null);
      } else if (KEY_LINE.test(content) || isSequenceItem(content)) {
        // "- key: value" opens a block whose column is that of "key": read it as if it stood on its own line.
        const column = indent + 1 + (rest.length - content.length);
        this.lines[this.position] = { indent: column, text: content, number: line.number };
        items.push(this.parseBlock(column));
      } else {
        items.push(parseScalar(content, line));
        this.position += 1;
      }
    }
    return items;
  }

  private parseMapping(indent: number): YamlMapping {
    const entries: [string, YamlValue][] = [];
    const seen = new Set<string>();
    while (this.position < this.lines.length) {
      const line = this.lines[this.position];
      if (line.indent < indent) break;
      if (line.indent > indent) throw unsupported(line, 'unexpected indentation');
      if (isSequenceItem(line.text)) break;
      const match = KEY_LINE.exec(line.text);
      if (match === null) throw unsupported(line, `expected "key: value", found ${line.text}`);
      const key = match[1].startsWith('"') ? (parseScalar(match[1], line) as string) : match[1];
      if (seen.has(key)) throw unsupported(line, `key ${key} appears twice`);
      seen.add(key);
      this.position += 1;
      const rest = match[2];
      let value: YamlValue;
      if (rest !== undefined && rest.trim() !== '' && !rest.trimStart().startsWith('#')) {
        value = parseScalar(rest.trim(), line);
      } else {
        const next = this.lines[this.position];
        const nested = next !== undefined && (next.indent > indent || (next.indent === indent && isSequenceItem(next.text)));
        value = nested ? this.parseBlock(next.indent) : null;
      }
      entries.push([key, value]);
    }
    return Object.fromEntries(entries);
  }
}

/** Reads the YAML subset that toYaml writes (see the module comment). */
export function parseYamlSubset(text: string): YamlValue {
  const lines: Line[] = [];
  text.split('\n').forEach((raw, index) => {
    const withoutCr = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const content = withoutCr.trimStart();
    if (content === '' || content.startsWith('#') || content === '---') return;
    const indentText = withoutCr.slice(0, withoutCr.length - content.length);
    if (indentText.includes('\t')) throw unsupported({ indent: 0, text: '', number: index + 1 }, 'tab in indentation');
    lines.push({ indent: indentText.length, text: content.trimEnd(), number: index + 1 });
  });
  return new YamlSubsetParser(lines).parseDocument();
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
  const document = parseYamlSubset(text);
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
