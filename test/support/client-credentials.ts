/**
 * Requests and kubeconfigs with credentials other than the admin certificate, for the
 * authentication and authorization tests: a bearer token, a client certificate from another CA,
 * an auth-provider id-token, or none.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { httpsExchange, type CommandResult, type HttpResult } from './carina-api-process';

export interface Credential {
  token?: string;
  certPem?: string;
  keyPem?: string;
  /** kubectl's oidc auth provider with this id-token (kubeconfigs only). */
  oidc?: { idToken: string; issuerUrl: string; clientId: string };
}

export function httpsRequest(port: number, caPem: string, method: string, path: string, options: { credential?: Credential; headers?: Record<string, string | string[]>; body?: string } = {}): Promise<HttpResult> {
  const credential = options.credential ?? {};
  const headers: Record<string, string | string[]> = { ...options.headers };
  if (credential.token !== undefined) headers.Authorization = `Bearer ${credential.token}`;
  if (options.body !== undefined) {
    headers['Content-Type'] ??= 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(options.body));
  }
  return httpsExchange({ host: '127.0.0.1', port, method, path, ca: caPem, cert: credential.certPem, key: credential.keyPem, headers, agent: false }, options.body);
}

/** A kubeconfig file for `server` with one user holding `credential`. */
export function writeKubeconfig(server: string, caPem: string, credential: Credential, dir = mkdtempSync(join(tmpdir(), 'carina-kubeconfig-'))): string {
  const user: Record<string, unknown> = {};
  if (credential.token !== undefined) user.token = credential.token;
  if (credential.certPem !== undefined) user['client-certificate-data'] = Buffer.from(credential.certPem).toString('base64');
  if (credential.keyPem !== undefined) user['client-key-data'] = Buffer.from(credential.keyPem).toString('base64');
  if (credential.oidc !== undefined) {
    user['auth-provider'] = { name: 'oidc', config: { 'id-token': credential.oidc.idToken, 'idp-issuer-url': credential.oidc.issuerUrl, 'client-id': credential.oidc.clientId } };
  }
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'carina', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: 'tester', user }],
    contexts: [{ name: 'tester', context: { cluster: 'carina', user: 'tester' } }],
    'current-context': 'tester',
  };
  const path = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
  writeFileSync(path, stringify(config), { mode: 0o600 });
  return path;
}

export function runKubectl(kubeconfig: string, args: string[], input = ''): Promise<CommandResult> {
  return new Promise((resolvePromise) => {
    const child = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(input);
  });
}
