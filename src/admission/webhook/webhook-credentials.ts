/**
 * The credentials the API server presents to an admission webhook (spec 02 §4.4 point 10;
 * apiserver pkg/util/webhook/authentication.go): the kubeconfig named by the plugin's
 * WebhookAdmissionConfiguration `kubeConfigFile`, whose `users` entries are named after the
 * servers they are for. For a target `host:port` (a URL's host, port 443 when absent; a
 * Service's `<name>.<namespace>.svc:<port>`), the first of these is used:
 *
 *   1. the user named exactly `host:port`;
 *   2. `*.<suffix>` wildcards, longest suffix first (`*.ns.svc:443`, then `*.svc:443`);
 *   3. for port 443 only, the same two without the port (`host`, `*.ns.svc`, `*.svc`);
 *   4. the user named `*`;
 *   5. the current context's user;
 *   6. none (the call goes out without credentials).
 *
 * A user may hold a client certificate and key, a bearer token (`token` or `tokenFile`), or a
 * username and password; an `auth-provider` is refused when it is chosen, as v1.25 does.
 * Relative paths are read from the kubeconfig's directory. Files are read when the kubeconfig is
 * loaded (once, at start); no message quotes a credential.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { WebhookConfigurationError, errorText } from './errors';
import { asJsonObject, type JsonObject } from '../../apis/object';

export interface WebhookCredentials {
  readonly clientCertPem?: string;
  readonly clientKeyPem?: string;
  readonly bearerToken?: string;
  readonly basicAuth?: { readonly username: string; readonly password: string };
  /** Set for a user that cannot be used (an auth provider): calls through it fail with this text. */
  readonly unusable?: string;
  /** Names the entry, so that clients with different credentials are kept apart. */
  readonly entry: string;
}

export interface CredentialsResolver {
  forHost(hostPort: string): WebhookCredentials;
  forService(name: string, namespace: string, port: number): WebhookCredentials;
}

const ANONYMOUS: WebhookCredentials = { entry: '' };

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Host and port of `host:port` (IPv6 in brackets); port '' when there is none. */
function splitHostPort(target: string): { host: string; port: string } {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(target);
  if (match === null) return { host: target, port: '' };
  return { host: match[1].replace(/^\[|\]$/g, ''), port: match[2] ?? '' };
}

/** Credentials from an admission kubeconfig, matched by the webhook's host. */
export class KubeconfigCredentialsResolver implements CredentialsResolver {
  constructor(private readonly users: ReadonlyMap<string, WebhookCredentials>, private readonly currentUser: string | undefined) {}

  static readonly none = new KubeconfigCredentialsResolver(new Map(), undefined);

  forHost(hostPort: string): WebhookCredentials {
    return this.resolve(hostPort);
  }

  forService(name: string, namespace: string, port: number): WebhookCredentials {
    return this.resolve(`${name}.${namespace}.svc:${port}`);
  }

  private wildcard(target: string): WebhookCredentials | undefined {
    const steps = target.split('.');
    for (let i = 1; i < steps.length; i++) {
      const found = this.users.get(`*.${steps.slice(i).join('.')}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  private resolve(target: string): WebhookCredentials {
    const exact = this.users.get(target) ?? this.wildcard(target);
    if (exact !== undefined) return exact;
    const { host, port } = splitHostPort(target);
    if (port === '443') {
      const withoutPort = this.users.get(host) ?? this.wildcard(host);
      if (withoutPort !== undefined) return withoutPort;
    }
    const star = this.users.get('*');
    if (star !== undefined) return star;
    if (this.currentUser !== undefined) {
      const current = this.users.get(this.currentUser);
      if (current !== undefined) return current;
    }
    return ANONYMOUS;
  }
}

function readReferenced(what: string, reference: string, base: string, file: string): string {
  const resolved = path.isAbsolute(reference) ? reference : path.join(base, reference);
  try {
    return readFileSync(resolved, 'utf8');
  } catch (err) {
    throw new WebhookConfigurationError(`${file}: cannot read ${what} ${resolved}: ${errorText(err)}`, { cause: err });
  }
}

function decodeData(value: string, what: string, file: string): string {
  if (!/^[A-Za-z0-9+/=\s]*$/.test(value)) throw new WebhookConfigurationError(`${file}: ${what} is not base64`);
  return Buffer.from(value, 'base64').toString('utf8');
}

function credentialsOf(name: string, user: JsonObject, base: string, file: string): WebhookCredentials {
  const where = `user ${JSON.stringify(name)}`;
  if (user['auth-provider'] !== undefined && user['auth-provider'] !== null) return { entry: name, unusable: 'auth provider not supported' };
  const certData = text(user['client-certificate-data']);
  const certFile = text(user['client-certificate']);
  const keyData = text(user['client-key-data']);
  const keyFile = text(user['client-key']);
  const clientCertPem = certData !== undefined ? decodeData(certData, `${where}: client-certificate-data`, file) : certFile !== undefined ? readReferenced(`${where}'s client-certificate`, certFile, base, file) : undefined;
  const clientKeyPem = keyData !== undefined ? decodeData(keyData, `${where}: client-key-data`, file) : keyFile !== undefined ? readReferenced(`${where}'s client-key`, keyFile, base, file) : undefined;
  if ((clientCertPem === undefined) !== (clientKeyPem === undefined)) throw new WebhookConfigurationError(`${file}: ${where}: client certificate and key must be given together`);
  let bearerToken = text(user.token);
  const tokenFile = text(user.tokenFile);
  if (bearerToken === undefined && tokenFile !== undefined) bearerToken = (readReferenced(`${where}'s tokenFile`, tokenFile, base, file)).trim();
  const username = text(user.username);
  const password = text(user.password);
  return {
    entry: name,
    ...(clientCertPem === undefined ? {} : { clientCertPem, clientKeyPem }),
    ...(bearerToken === undefined ? {} : { bearerToken }),
    ...(username === undefined && password === undefined ? {} : { basicAuth: { username: username ?? '', password: password ?? '' } }),
  };
}

/**
 * Reads the kubeConfigFile of a WebhookAdmissionConfiguration (at start, synchronously);
 * WebhookConfigurationError when it cannot be used.
 */
export function loadCredentialsResolver(file: string): KubeconfigCredentialsResolver {
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch (err) {
    throw new WebhookConfigurationError(`${file}: cannot read: ${errorText(err)}`, { cause: err });
  }
  const document = parseDocument(source, { prettyErrors: false });
  if (document.errors.length > 0) {
    const line = source.slice(0, document.errors[0].pos[0]).split('\n').length;
    throw new WebhookConfigurationError(`${file}:${line}: not valid YAML: ${document.errors[0].message.split('\n')[0]}`);
  }
  const root = asJsonObject(document.toJS()) ?? {};
  const base = path.dirname(file);
  const users = new Map<string, WebhookCredentials>();
  for (const entry of Array.isArray(root.users) ? root.users : []) {
    const item = asJsonObject(entry);
    const name = text(item?.name);
    if (item === undefined || name === undefined) continue;
    users.set(name, credentialsOf(name, asJsonObject(item.user) ?? {}, base, file));
  }
  let currentUser: string | undefined;
  const currentContext = text(root['current-context']);
  if (currentContext !== undefined) {
    for (const entry of Array.isArray(root.contexts) ? root.contexts : []) {
      const item = asJsonObject(entry);
      if (item?.name === currentContext) currentUser = text(asJsonObject(item.context)?.user);
    }
  }
  return new KubeconfigCredentialsResolver(users, currentUser);
}
