/**
 * `--authorization-webhook-config-file`: a kubeconfig naming the remote authorizer, as v1.25
 * reads it (client-go clientcmd): the current context's cluster (`server`,
 * `certificate-authority` or `-data`, `insecure-skip-tls-verify`) and user (`client-certificate`
 * and `client-key` or their `-data`, `token` or `tokenFile`). Relative file paths are relative
 * to the kubeconfig's folder. Without a current context, a file with exactly one cluster and one
 * user uses those.
 *
 * The result holds credentials: it must never be logged, and errors name fields, never values.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { AuthzError } from '../errors';
import { type JsonObject, objectOrEmpty } from '../../apis/object';

export interface WebhookEndpoint {
  /** The URL the SubjectAccessReview is POSTed to. */
  readonly server: string;
  readonly caPem?: string;
  readonly clientCertPem?: string;
  readonly clientKeyPem?: string;
  readonly bearerToken?: string;
  readonly insecureSkipTlsVerify: boolean;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function named(list: unknown, key: string, name: string | undefined): JsonObject | undefined {
  const entries = Array.isArray(list) ? list.map(objectOrEmpty) : [];
  if (name === undefined) return entries.length === 1 ? objectOrEmpty(entries[0][key]) : undefined;
  const found = entries.find((e) => e.name === name);
  return found === undefined ? undefined : objectOrEmpty(found[key]);
}

function fail(file: string, why: string, cause?: unknown): never {
  throw new AuthzError('WEBHOOK_CONFIG', `invalid authorization webhook config file ${file}: ${why}`, { cause });
}

/** Parses the kubeconfig `text` read from `file` (whose folder resolves relative paths). */
export function parseWebhookKubeconfig(text: string, file: string): WebhookEndpoint {
  let document: JsonObject;
  try {
    document = objectOrEmpty(parseYaml(text));
  } catch (err) {
    fail(file, 'not YAML', err);
  }
  const dir = path.dirname(file);
  const readRelative = (p: string, what: string): string => {
    try {
      return readFileSync(path.isAbsolute(p) ? p : path.join(dir, p), 'utf8');
    } catch (err) {
      fail(file, `cannot read the ${what} file`, err);
    }
  };
  const contextName = str(document['current-context']);
  let clusterName: string | undefined;
  let userName: string | undefined;
  if (contextName !== '') {
    const context = named(document.contexts, 'context', contextName);
    if (context === undefined) fail(file, `no context named ${JSON.stringify(contextName)}`);
    clusterName = str(context.cluster);
    userName = str(context.user);
  }
  const cluster = named(document.clusters, 'cluster', clusterName);
  if (cluster === undefined) fail(file, 'no cluster for the current context');
  const server = str(cluster.server);
  if (server === '') fail(file, 'the cluster has no server');
  const user = named(document.users, 'user', userName) ?? {};
  const decode = (data: string, what: string): string => {
    const decoded = Buffer.from(data, 'base64').toString('utf8');
    if (decoded === '') fail(file, `${what} is not base64`);
    return decoded;
  };
  const pem = (dataKey: string, fileKey: string, from: JsonObject, what: string): string | undefined => {
    if (str(from[dataKey]) !== '') return decode(str(from[dataKey]), dataKey);
    if (str(from[fileKey]) !== '') return readRelative(str(from[fileKey]), what);
    return undefined;
  };
  let bearerToken: string | undefined = str(user.token) || undefined;
  if (bearerToken === undefined && str(user.tokenFile) !== '') bearerToken = readRelative(str(user.tokenFile), 'token').trim();
  return {
    server,
    caPem: pem('certificate-authority-data', 'certificate-authority', cluster, 'certificate authority'),
    clientCertPem: pem('client-certificate-data', 'client-certificate', user, 'client certificate'),
    clientKeyPem: pem('client-key-data', 'client-key', user, 'client key'),
    bearerToken,
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
  };
}

/** Reads and parses `--authorization-webhook-config-file`; throws AuthzError (WEBHOOK_CONFIG). */
export function readWebhookKubeconfig(file: string): WebhookEndpoint {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    fail(file, 'cannot read it', err);
  }
  return parseWebhookKubeconfig(text, file);
}
