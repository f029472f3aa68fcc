/**
 * The kubeconfig that names a token webhook (`--authentication-token-webhook-config-file`, spec
 * 02 §4.2 item 4; read by client-go's clientcmd in kube-apiserver): the current context's
 * cluster (`server`, `certificate-authority` or `-data`, `insecure-skip-tls-verify`,
 * `tls-server-name`) and user (`client-certificate`/`client-key` or their `-data`, `token` or
 * `tokenFile`, `username`/`password`). Relative file paths are resolved from the kubeconfig's
 * directory, as clientcmd does.
 *
 * src/certificates/kubeconfig.ts reads only the subset Carina writes (inline data, no token),
 * so this reader uses the `yaml` package. Errors name the file (and the line for YAML syntax)
 * and never quote a credential.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { AuthnError, errorText, fileMessage } from './errors';
import { asJsonObject, type JsonObject } from '../apis/object';

export interface WebhookClientConfig {
  /** The URL TokenReviews are POSTed to, path included. */
  readonly server: string;
  readonly caPem?: string;
  readonly insecureSkipTlsVerify: boolean;
  readonly tlsServerName?: string;
  readonly clientCertPem?: string;
  readonly clientKeyPem?: string;
  readonly bearerToken?: string;
  readonly basicAuth?: { readonly username: string; readonly password: string };
}

function invalid(file: string, what: string, line?: number): AuthnError {
  return new AuthnError('INVALID_WEBHOOK_CONFIG', fileMessage(file, line, what), { file, line });
}

function named(document: JsonObject, list: string, body: string, name: string, file: string): JsonObject | undefined {
  const entries = document[list];
  if (entries === undefined || entries === null) return undefined;
  if (!Array.isArray(entries)) throw invalid(file, `${list} is not a list`);
  for (const entry of entries) {
    const item = asJsonObject(entry);
    if (item?.name === name) {
      const inner = asJsonObject(item[body]);
      if (inner === undefined) throw invalid(file, `${list} entry ${JSON.stringify(name)} has no ${body}`);
      return inner;
    }
  }
  return undefined;
}

function optionalString(value: unknown, what: string, file: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw invalid(file, `${what} is not a string`);
  return value;
}

async function readFileFor(what: string, reference: string, base: string, file: string): Promise<string> {
  const resolved = path.isAbsolute(reference) ? reference : path.join(base, reference);
  try {
    return await fs.readFile(resolved, 'utf8');
  } catch (error) {
    throw new AuthnError('INVALID_WEBHOOK_CONFIG', fileMessage(file, undefined, `cannot read ${what} ${resolved}: ${errorText(error)}`), { file, cause: error });
  }
}

function decodeData(value: string, what: string, file: string): string {
  if (!/^[A-Za-z0-9+/=\s]*$/.test(value)) throw invalid(file, `${what} is not base64`);
  return Buffer.from(value, 'base64').toString('utf8');
}

/** The webhook client of a kubeconfig's text; `file` names it and anchors relative paths. */
export async function parseWebhookKubeconfig(text: string, file: string): Promise<WebhookClientConfig> {
  const document = parseDocument(text, { prettyErrors: false });
  if (document.errors.length > 0) {
    const first = document.errors[0];
    const line = text.slice(0, first.pos[0]).split('\n').length;
    throw invalid(file, `not valid YAML: ${first.message.split('\n')[0]}`, line);
  }
  const root = asJsonObject(document.toJS());
  if (root === undefined) throw invalid(file, 'a kubeconfig is a mapping');
  const contextName = optionalString(root['current-context'], 'current-context', file);
  if (contextName === undefined) throw invalid(file, 'invalid configuration: no current-context is set');
  const context = named(root, 'contexts', 'context', contextName, file);
  if (context === undefined) throw invalid(file, `invalid configuration: context ${JSON.stringify(contextName)} not found`);
  const clusterName = optionalString(context.cluster, 'context.cluster', file) ?? '';
  const cluster = named(root, 'clusters', 'cluster', clusterName, file);
  if (cluster === undefined) throw invalid(file, `invalid configuration: cluster ${JSON.stringify(clusterName)} not found`);
  const userName = optionalString(context.user, 'context.user', file);
  const user = userName === undefined ? {} : named(root, 'users', 'user', userName, file) ?? {};
  const base = path.dirname(file);

  const server = optionalString(cluster.server, 'cluster.server', file);
  if (server === undefined) throw invalid(file, 'invalid configuration: cluster has no server');
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw invalid(file, `cluster.server ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid(file, `cluster.server ${JSON.stringify(server)} is neither http nor https`);

  const caData = optionalString(cluster['certificate-authority-data'], 'certificate-authority-data', file);
  const caFile = optionalString(cluster['certificate-authority'], 'certificate-authority', file);
  const caPem = caData !== undefined ? decodeData(caData, 'certificate-authority-data', file) : caFile !== undefined ? await readFileFor('certificate-authority', caFile, base, file) : undefined;

  const certData = optionalString(user['client-certificate-data'], 'client-certificate-data', file);
  const certFile = optionalString(user['client-certificate'], 'client-certificate', file);
  const keyData = optionalString(user['client-key-data'], 'client-key-data', file);
  const keyFile = optionalString(user['client-key'], 'client-key', file);
  const clientCertPem = certData !== undefined ? decodeData(certData, 'client-certificate-data', file) : certFile !== undefined ? await readFileFor('client-certificate', certFile, base, file) : undefined;
  const clientKeyPem = keyData !== undefined ? decodeData(keyData, 'client-key-data', file) : keyFile !== undefined ? await readFileFor('client-key', keyFile, base, file) : undefined;
  if ((clientCertPem === undefined) !== (clientKeyPem === undefined)) throw invalid(file, 'invalid configuration: client certificate and key must be given together');

  let bearerToken = optionalString(user.token, 'user.token', file);
  const tokenFile = optionalString(user.tokenFile, 'user.tokenFile', file);
  if (bearerToken === undefined && tokenFile !== undefined) bearerToken = (await readFileFor('tokenFile', tokenFile, base, file)).trim();
  const username = optionalString(user.username, 'user.username', file);
  const password = optionalString(user.password, 'user.password', file);

  return {
    server,
    ...(caPem === undefined ? {} : { caPem }),
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    ...(optionalString(cluster['tls-server-name'], 'tls-server-name', file) === undefined ? {} : { tlsServerName: cluster['tls-server-name'] as string }),
    ...(clientCertPem === undefined ? {} : { clientCertPem, clientKeyPem }),
    ...(bearerToken === undefined ? {} : { bearerToken }),
    ...(username === undefined ? {} : { basicAuth: { username, password: password ?? '' } }),
  };
}

/** Reads --authentication-token-webhook-config-file; AuthnError IO_ERROR or INVALID_WEBHOOK_CONFIG. */
export async function loadWebhookKubeconfig(file: string): Promise<WebhookClientConfig> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    throw new AuthnError('IO_ERROR', fileMessage(file, undefined, `cannot read: ${errorText(error)}`), { file, cause: error });
  }
  return parseWebhookKubeconfig(text, file);
}
