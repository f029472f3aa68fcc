/**
 * The connect subresources of kube-apiserver v1.25 (pkg/registry/core/pod/rest/subresources.go,
 * log.go, node/rest/proxy.go, service/proxy.go; apiserver handlers/rest.go ConnectResource):
 * pods/log (a stream read from the kubelet), pods/exec, pods/attach and pods/portforward (HTTP/1.1
 * upgrades passed to the kubelet), pods/proxy, nodes/proxy and services/proxy (any request passed
 * to the pod, the kubelet or one of the service's endpoints, with the path after `/proxy`).
 *
 * Each finds its backend here (the pod's node and its kubelet, the pod's IP, an endpoint) and
 * hands the request to src/proxy, the one proxy. Authorization already ran in the filter chain
 * with the request's verb (`create` on pods/exec for a POST, `get` for a GET, as in v1.25);
 * connect admission (operation CONNECT, the options object) runs here before anything is
 * dialled, as ConnectResource runs it before Connect.
 */
import { isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import { Readable } from 'node:stream';
import { errors, ApiError } from '../../util';
import type { UserInfo } from '../../authn';
import type { ServedResource } from '../../registry';
import {
  isProxyableAddress, joinHostPort, kubeletEndpoint, proxyRequest, proxyUpgrade, reachFailure, streamedGet, upgradeFailure, UnknownReasonError,
  type LinkRewriting, type ProxyTransport,
} from '../../proxy';
import type { RequestScope } from '../request-scope';
import type { JsonObject } from '../../apis/object';

/** A CONNECT request as admission sees it (the options object is the request's object). */
export interface ConnectAdmissionAttributes {
  operation: 'CONNECT';
  group: string;
  version: string;
  resource: string;
  subresource: string;
  kind: string;
  namespace: string;
  name: string;
  object: JsonObject;
  dryRun: false;
  userInfo: UserInfo;
  recorder: { warn(text: string): void; annotate(key: string, value: string): void };
}

/** What the connect handlers are built with (src/server/kubelet-connection.ts assembles it). */
export interface ConnectConfig {
  kubelet: {
    /** Carina's kubelet client certificate; the kubelet's serving certificate checked against --kubelet-certificate-authority when given. */
    transport: ProxyTransport;
    /** The same without verifying the kubelet (pods/log's insecureSkipTLSVerifyBackend). */
    insecureTransport: ProxyTransport;
    preferredAddressTypes: readonly string[];
    defaultPort: number;
  };
  /** pods/proxy, services/proxy and nodes/proxy to another port than the kubelet's (kube's proxy transport). */
  proxyTransport: ProxyTransport;
  /** Mutating then validating admission of a CONNECT; throws the refusal. */
  admit(attributes: ConnectAdmissionAttributes): Promise<void>;
}

/** The kind each connect subresource takes as its options (what admission and discovery name). */
const CONNECT_KINDS: Record<string, string> = {
  'pods/exec': 'PodExecOptions',
  'pods/attach': 'PodAttachOptions',
  'pods/portforward': 'PodPortForwardOptions',
  'pods/proxy': 'PodProxyOptions',
  'nodes/proxy': 'NodeProxyOptions',
  'services/proxy': 'ServiceProxyOptions',
};

/** Whether this resource/subresource pair is one of the connect subresources (pods/log included). */
export function isConnectSubresource(resource: string, subresource: string): boolean {
  return resource === 'pods' && subresource === 'log' || CONNECT_KINDS[`${resource}/${subresource}`] !== undefined;
}

/** The proxies' methods (proxyMethods of v1.25's pod, node and service proxy REST): OPTIONS among them. */
const PROXY_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/** The methods each takes, as routes: v1.25 registers GET and POST for exec, attach and port-forward; others get 405. */
const CONNECT_METHODS: Record<string, readonly string[]> = {
  'pods/log': ['GET'],
  'pods/exec': ['GET', 'POST'],
  'pods/attach': ['GET', 'POST'],
  'pods/portforward': ['GET', 'POST'],
  'pods/proxy': PROXY_METHODS,
  'nodes/proxy': PROXY_METHODS,
  'services/proxy': PROXY_METHODS,
};

// ---------------------------------------------------------------------------------------------
// Query options, converted as v1.25's parameter codec converts them

/** Go's strconv.ParseBool. */
function parseBool(value: string, name: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  throw errors.badRequest(`strconv.ParseBool: parsing "${value}": invalid syntax (${name})`);
}

function boolParam(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  return value === null || value === '' ? false : parseBool(value, name);
}

function intParam(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name);
  if (value === null || value === '') return undefined;
  if (!/^[+-]?\d+$/.test(value)) throw errors.badRequest(`strconv.ParseInt: parsing "${value}": invalid syntax`);
  return Number(value);
}

/** v1 PodLogOptions from the query, checked as ValidatePodLogOptions checks them. */
function podLogOptions(scope: RequestScope): JsonObject {
  const q = scope.query;
  const options: JsonObject = { kind: 'PodLogOptions', apiVersion: 'v1' };
  const container = q.get('container');
  if (container !== null && container !== '') options.container = container;
  for (const name of ['follow', 'previous', 'timestamps', 'insecureSkipTLSVerifyBackend']) if (boolParam(q, name)) options[name] = true;
  for (const name of ['sinceSeconds', 'tailLines', 'limitBytes']) {
    const value = intParam(q, name);
    if (value !== undefined) options[name] = value;
  }
  const sinceTime = q.get('sinceTime');
  if (sinceTime !== null && sinceTime !== '') {
    const ms = Date.parse(sinceTime);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(sinceTime) || Number.isNaN(ms)) throw errors.badRequest(`parsing time "${sinceTime}" as "2006-01-02T15:04:05Z07:00": cannot parse "${sinceTime}" as "2006"`);
    // RFC 3339 at second precision, as metav1.Time is encoded.
    options.sinceTime = new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  }
  const causes: Array<{ field: string; reason: string; message: string; text: string }> = [];
  if (typeof options.tailLines === 'number' && options.tailLines < 0) causes.push({ field: 'tailLines', reason: 'FieldValueInvalid', message: `Invalid value: ${options.tailLines}: must be greater than or equal to 0`, text: '' });
  if (typeof options.limitBytes === 'number' && options.limitBytes < 1) causes.push({ field: 'limitBytes', reason: 'FieldValueInvalid', message: `Invalid value: ${options.limitBytes}: must be greater than 0`, text: '' });
  if (options.sinceSeconds !== undefined && options.sinceTime !== undefined) causes.push({ field: '', reason: 'FieldValueForbidden', message: 'Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified', text: '' });
  else if (typeof options.sinceSeconds === 'number' && options.sinceSeconds < 1) causes.push({ field: 'sinceSeconds', reason: 'FieldValueInvalid', message: `Invalid value: ${options.sinceSeconds}: must be greater than 0`, text: '' });
  if (causes.length > 0) {
    const described = causes.map((c) => (c.field === '' ? c.message : `${c.field}: ${c.message}`));
    const message = `PodLogOptions "${scope.name}" is invalid: ${described.length === 1 ? described[0] : `[${described.join(', ')}]`}`;
    throw errors.invalid('', 'PodLogOptions', scope.name, message, causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field })));
  }
  return options;
}

/** v1 PodExecOptions / PodAttachOptions: stdout and stderr end up true whatever was asked (v1's defaulting runs after the query's conversion). */
function streamOptions(scope: RequestScope, kind: 'PodExecOptions' | 'PodAttachOptions'): JsonObject {
  const q = scope.query;
  const options: JsonObject = { kind, apiVersion: 'v1' };
  if (boolParam(q, 'stdin')) options.stdin = true;
  for (const name of ['stdout', 'stderr']) boolParam(q, name);
  options.stdout = true;
  options.stderr = true;
  if (boolParam(q, 'tty')) options.tty = true;
  const container = q.get('container');
  if (container !== null && container !== '') options.container = container;
  if (kind === 'PodExecOptions') options.command = q.getAll('command');
  return options;
}

function portForwardOptions(scope: RequestScope): JsonObject {
  const ports = scope.query.getAll('ports').flatMap((p) => p.split(',')).filter((p) => p !== '').map((p) => {
    if (!/^\d+$/.test(p)) throw errors.badRequest(`strconv.ParseInt: parsing "${p}": invalid syntax`);
    return Number(p);
  });
  return { kind: 'PodPortForwardOptions', apiVersion: 'v1', ...(ports.length > 0 ? { ports } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Objects the locations are read from

function served(scope: RequestScope, resource: string): ServedResource {
  const found = scope.config.resolver.lookup('', 'v1', resource);
  if (found === undefined) throw new Error(`the catalogue has no ${resource}`);
  return found;
}

async function getObject(scope: RequestScope, resource: string, namespace: string, name: string): Promise<JsonObject> {
  return scope.registry.get(served(scope, resource), namespace, name, null, scope.ctx.trace);
}

function containerNames(pod: JsonObject, kinds: readonly string[]): string[] {
  const spec = (pod.spec ?? {}) as Record<string, unknown>;
  return kinds.flatMap((kind) => (Array.isArray(spec[kind]) ? (spec[kind] as Array<{ name?: unknown }>) : []).map((c) => String(c.name ?? '')));
}

/** validateContainer: the named container must exist; none named picks the only one. */
function podContainer(pod: JsonObject, requested: string | undefined): string {
  const name = (pod.metadata as { name?: string }).name ?? '';
  if (requested === undefined || requested === '') {
    const containers = containerNames(pod, ['containers']);
    if (containers.length === 1) return containers[0];
    if (containers.length === 0) throw errors.badRequest(`a container name must be specified for pod ${name}`);
    const all = containerNames(pod, ['initContainers', 'containers', 'ephemeralContainers']);
    throw errors.badRequest(`a container name must be specified for pod ${name}, choose one of: [${all.join(' ')}]`);
  }
  if (!containerNames(pod, ['initContainers', 'containers', 'ephemeralContainers']).includes(requested)) throw errors.badRequest(`container ${requested} is not valid for pod ${name}`);
  return requested;
}

async function kubeletOf(scope: RequestScope, nodeName: string): Promise<{ base: URL; endpoint: ReturnType<typeof kubeletEndpoint> }> {
  const node = await getObject(scope, 'nodes', '', nodeName);
  const connect = scope.config.connect as ConnectConfig;
  const endpoint = kubeletEndpoint(node, connect.kubelet.preferredAddressTypes, connect.kubelet.defaultPort);
  return { base: new URL(`${endpoint.scheme}://${joinHostPort(endpoint.hostname, endpoint.port)}`), endpoint };
}

/** isProxyableHostname: every address the name resolves to must be global unicast (nodes/proxy since v1.25.4). */
async function checkProxyableHost(hostname: string): Promise<void> {
  let addresses: string[];
  if (isIP(hostname) !== 0) addresses = [hostname];
  else {
    try {
      addresses = (await lookup(hostname, { all: true })).map((a) => a.address);
    } catch {
      throw errors.badRequest(`lookup ${hostname}: no such host`);
    }
  }
  if (addresses.length === 0) throw errors.badRequest('No addresses for hostname');
  if (!addresses.every(isProxyableAddress)) throw errors.badRequest('address not allowed');
}

/** utilnet.SplitSchemeNamePort: "name", "name:port" or "scheme:name:port" (scheme http or https). */
function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(':');
  let scheme = '';
  let name: string;
  let port = '';
  if (parts.length === 1) name = parts[0];
  else if (parts.length === 2) [name, port] = parts;
  else if (parts.length === 3) [scheme, name, port] = parts;
  else return undefined;
  if (name === '' || (scheme !== '' && scheme !== 'http' && scheme !== 'https')) return undefined;
  return { scheme, name, port };
}

// ---------------------------------------------------------------------------------------------
// The handlers

/** The path after `/proxy` (raw, as sent: the request-info filter has refused dots and encoded slashes), '' for none. */
function proxySubpath(scope: RequestScope): string {
  const segments = scope.ctx.rawPath.split('/');
  const at = segments.findIndex((segment, i) => segments[i + 1] === 'proxy' && decodeURIComponent(segment) === scope.name);
  // `/proxy` has no path, `/proxy/` has `/`.
  if (at < 0 || segments.length <= at + 2) return '';
  return `/${segments.slice(at + 2).join('/')}`;
}

function connectUser(scope: RequestScope): UserInfo {
  return scope.ctx.user;
}

async function admitConnect(scope: RequestScope, options: JsonObject): Promise<void> {
  const connect = scope.config.connect as ConnectConfig;
  await connect.admit({
    operation: 'CONNECT',
    group: scope.resource.group,
    version: scope.resource.version,
    resource: scope.resource.resource,
    subresource: scope.subresource,
    kind: String(options.kind),
    namespace: scope.namespace,
    name: scope.name,
    object: options,
    dryRun: false,
    userInfo: connectUser(scope),
    recorder: { warn: (text) => scope.ctx.response.warn(text), annotate: (key, value) => { scope.ctx.annotations[key] = value; } },
  });
}

/** The request's headers as they go on: credentials were removed by authentication, the listener's own are replaced. */
function forwardHeaders(scope: RequestScope, extra: Record<string, string> = {}): Record<string, string | readonly string[] | undefined> {
  const headers: Record<string, string | readonly string[] | undefined> = { ...scope.ctx.headers, ...extra };
  const forwardedFor = scope.ctx.header('x-forwarded-for');
  if (scope.ctx.remoteAddress !== '') headers['x-forwarded-for'] = forwardedFor === undefined ? scope.ctx.remoteAddress : `${forwardedFor}, ${scope.ctx.remoteAddress}`;
  return headers;
}

/** An upgrade passed to `target`; resolves when the session is over (the audit and metrics record it then). */
async function upgradeTo(scope: RequestScope, target: URL, transport: ProxyTransport, translate: (err: unknown) => ApiError): Promise<void> {
  const upgrade = scope.ctx.upgrade;
  if (upgrade === undefined) throw errors.badRequest('Upgrade request required');
  let outcome;
  try {
    outcome = await proxyUpgrade({ client: upgrade.socket, head: upgrade.head, method: scope.ctx.method, target, headers: forwardHeaders(scope), transport });
  } catch (err) {
    throw translate(err);
  }
  upgrade.taken = true;
  scope.ctx.response.status = outcome.status;
  await outcome.closed;
}

/**
 * A plain or upgrade request passed to the backend (`scheme://host`, the host as Go's request URL
 * names it) + the subpath: the upgrade-aware handler, whose transport rewrites links under the
 * proxy's path.
 */
async function proxyTo(scope: RequestScope, backend: { scheme: string; host: string }, subpath: string, transport: ProxyTransport): Promise<void> {
  const target = new URL(`${backend.scheme}://${backend.host}`);
  target.pathname = subpath === '' ? '/' : subpath;
  target.search = searchOf(scope);
  if (scope.ctx.upgrade !== undefined) return upgradeTo(scope, target, transport, upgradeFailure);
  if (subpath === '') {
    // An empty path is redirected to one ending in a slash (the upgrade-aware handler's hack for issue 4958).
    const query = searchOf(scope);
    scope.ctx.response.writeEncoded(301, 'text/html; charset=utf-8', '', { Location: `${scope.ctx.rawPath}/${query}` });
    return;
  }
  const rawPrefix = scope.ctx.rawPath.slice(0, scope.ctx.rawPath.length - subpath.length);
  // The request's URL has neither scheme nor host in Go: links become absolute paths under the prefix.
  const rewriting: LinkRewriting = {
    scheme: '',
    host: '',
    pathPrepend: rewritingPath(rawPrefix),
    backendHost: backend.host,
    requestHost: scope.ctx.header('host') ?? scope.ctx.header(':authority') ?? '',
  };
  const body = scope.ctx.method === 'GET' || scope.ctx.method === 'HEAD' ? undefined : Readable.from(scope.ctx.bodyStream());
  const sink = scope.ctx.response.stream();
  try {
    await proxyRequest({ method: scope.ctx.method, target, headers: forwardHeaders(scope), body, transport, rewriting }, sink);
  } catch (err) {
    throw reachFailure(err);
  }
}

/** The decoded path as Go's request URL holds it, byte for byte (the request-info filter checked every escape). */
function rewritingPath(rawPath: string): string {
  return rawPath.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function searchOf(scope: RequestScope): string {
  const text = scope.query.toString();
  return text === '' ? '' : `?${text}`;
}

async function podLog(scope: RequestScope): Promise<void> {
  const options = podLogOptions(scope);
  const pod = await getObject(scope, 'pods', scope.namespace, scope.name);
  const container = podContainer(pod, options.container as string | undefined);
  const nodeName = ((pod.spec ?? {}) as { nodeName?: string }).nodeName ?? '';
  if (nodeName === '') {
    // No node: an empty stream, which kube's handler answers with 204 No Content.
    scope.ctx.response.writeEncoded(204, 'text/plain', '');
    return;
  }
  const { base } = await kubeletOf(scope, nodeName);
  const params = new URLSearchParams();
  if (options.follow === true) params.append('follow', 'true');
  if (options.previous === true) params.append('previous', 'true');
  if (options.timestamps === true) params.append('timestamps', 'true');
  for (const name of ['sinceSeconds', 'sinceTime', 'tailLines', 'limitBytes']) if (options[name] !== undefined) params.append(name, String(options[name]));
  params.sort();
  const target = new URL(`/containerLogs/${encodeURIComponent(scope.namespace)}/${encodeURIComponent(scope.name)}/${encodeURIComponent(container)}`, base);
  target.search = params.toString();
  const connect = scope.config.connect as ConnectConfig;
  const transport = options.insecureSkipTLSVerifyBackend === true ? connect.kubelet.insecureTransport : connect.kubelet.transport;
  let response;
  try {
    // The log is copied as it comes (streamed-get.ts); the kubelet applies every option.
    response = await streamedGet(target, transport);
  } catch (err) {
    // LocationStreamer hands the client's error on as it is: `Get "URL": <dial error>`, a 500 without a reason.
    throw new UnknownReasonError(`Get "${target.href}": ${(err as Error).message}`);
  }
  if (response.status < 200 || response.status > 206) throw logResponseError(response.status, await response.readText(LOG_ERROR_BODY_MAX_BYTES), scope.name);
  await response.copyTo(scope.ctx.response.stream(), 'text/plain');
}

/** How much of a kubelet's error body becomes the message (GenericHttpResponseChecker's maxReadLength). */
const LOG_ERROR_BODY_MAX_BYTES = 50_000;

/** GenericHttpResponseChecker: a kubelet's failure becomes a Status with its body as the message. */
function logResponseError(status: number, text: string, name: string): ApiError {
  if (status === 500) return errors.internal(text);
  if (status === 400) return errors.badRequest(text);
  if (status === 404) return new ApiError(404, 'NotFound', `the server could not find the requested resource ( pods/log ${name})`, { name, kind: 'pods/log', causes: [{ reason: 'UnexpectedServerResponse', message: text }] });
  return new ApiError(status, status >= 500 ? 'InternalError' : 'BadRequest', `an error on the server ("${text}") has prevented the request from succeeding ( pods/log ${name})`, { name, kind: 'pods/log', causes: [{ reason: 'UnexpectedServerResponse', message: text }] });
}

async function podStream(scope: RequestScope, path: 'exec' | 'attach'): Promise<void> {
  const options = streamOptions(scope, path === 'exec' ? 'PodExecOptions' : 'PodAttachOptions');
  await admitConnect(scope, options);
  const pod = await getObject(scope, 'pods', scope.namespace, scope.name);
  const container = podContainer(pod, options.container as string | undefined);
  const nodeName = ((pod.spec ?? {}) as { nodeName?: string }).nodeName ?? '';
  if (nodeName === '') throw errors.badRequest(`pod ${scope.name} does not have a host assigned`);
  const { base } = await kubeletOf(scope, nodeName);
  const params = new URLSearchParams();
  for (const command of (options.command as string[] | undefined) ?? []) params.append('command', command);
  if (options.stderr === true) params.append('error', '1');
  if (options.stdin === true) params.append('input', '1');
  if (options.stdout === true) params.append('output', '1');
  if (options.tty === true) params.append('tty', '1');
  const target = new URL(`/${path}/${encodeURIComponent(scope.namespace)}/${encodeURIComponent(scope.name)}/${encodeURIComponent(container)}`, base);
  target.search = params.toString();
  await upgradeTo(scope, target, (scope.config.connect as ConnectConfig).kubelet.transport, upgradeFailure);
}

async function podPortForward(scope: RequestScope): Promise<void> {
  const options = portForwardOptions(scope);
  await admitConnect(scope, options);
  const pod = await getObject(scope, 'pods', scope.namespace, scope.name);
  const nodeName = ((pod.spec ?? {}) as { nodeName?: string }).nodeName ?? '';
  if (nodeName === '') throw errors.badRequest(`pod ${scope.name} does not have a host assigned`);
  const { base } = await kubeletOf(scope, nodeName);
  const target = new URL(`/portForward/${encodeURIComponent(scope.namespace)}/${encodeURIComponent(scope.name)}`, base);
  const ports = options.ports as number[] | undefined;
  if (ports !== undefined) target.search = new URLSearchParams({ port: ports.join(',') }).toString();
  await upgradeTo(scope, target, (scope.config.connect as ConnectConfig).kubelet.transport, upgradeFailure);
}

async function podProxy(scope: RequestScope): Promise<void> {
  const subpath = proxySubpath(scope);
  await admitConnect(scope, { kind: 'PodProxyOptions', apiVersion: 'v1', ...(subpath === '' ? {} : { path: subpath }) });
  const id = splitSchemeNamePort(scope.name);
  if (id === undefined) throw errors.badRequest(`invalid pod request "${scope.name}"`);
  const pod = await getObject(scope, 'pods', scope.namespace, id.name);
  let port = id.port;
  if (port === '') {
    const withPort = ((pod.spec as { containers?: Array<{ ports?: Array<{ containerPort?: number }> }> } | undefined)?.containers ?? []).find((c) => (c.ports ?? []).length > 0);
    if (withPort?.ports?.[0].containerPort !== undefined) port = String(withPort.ports[0].containerPort);
  }
  const status = (pod.status ?? {}) as { podIP?: string; podIPs?: Array<{ ip?: string }> };
  const podIp = status.podIPs?.[0]?.ip ?? '';
  if (podIp === '' || !isProxyableAddress(podIp)) throw errors.badRequest('address not allowed');
  const host = port === '' ? (podIp.includes(':') ? `[${podIp}]` : podIp) : joinHostPort(podIp, port);
  await proxyTo(scope, { scheme: id.scheme === '' ? 'http' : id.scheme, host }, subpath, (scope.config.connect as ConnectConfig).proxyTransport);
}

async function nodeProxy(scope: RequestScope): Promise<void> {
  const subpath = proxySubpath(scope);
  await admitConnect(scope, { kind: 'NodeProxyOptions', apiVersion: 'v1', ...(subpath === '' ? {} : { path: subpath }) });
  const id = splitSchemeNamePort(scope.name);
  if (id === undefined) throw errors.badRequest(`invalid node request "${scope.name}"`);
  const connect = scope.config.connect as ConnectConfig;
  const { endpoint } = await kubeletOf(scope, id.name);
  await checkProxyableHost(endpoint.hostname);
  if (id.port === '' || id.port === String(endpoint.port)) {
    await proxyTo(scope, { scheme: endpoint.scheme, host: joinHostPort(endpoint.hostname, endpoint.port) }, subpath, connect.kubelet.transport);
    return;
  }
  // Another port of the node: the requested scheme (http by default) and the proxy transport.
  await proxyTo(scope, { scheme: id.scheme === '' ? 'http' : id.scheme, host: joinHostPort(endpoint.hostname, id.port) }, subpath, connect.proxyTransport);
}

async function serviceProxy(scope: RequestScope): Promise<void> {
  const subpath = proxySubpath(scope);
  await admitConnect(scope, { kind: 'ServiceProxyOptions', apiVersion: 'v1', ...(subpath === '' ? {} : { path: subpath }) });
  const id = splitSchemeNamePort(scope.name);
  if (id === undefined) throw errors.badRequest(`invalid service request "${scope.name}"`);
  const service = await getObject(scope, 'services', scope.namespace, id.name);
  const ports = ((service.spec ?? {}) as { ports?: Array<{ name?: string; port?: number }> }).ports ?? [];
  // The port is given by name or by number; none given picks the service's only (unnamed) port.
  const servicePort = ports.find((p) => (id.port === '' ? (p.name ?? '') === '' : (p.name ?? '') === id.port || String(p.port) === id.port));
  if (servicePort === undefined) throw errors.serviceUnavailable(`no service port "${id.port}" found for service "${id.name}"`);
  const endpointsObject = await getObject(scope, 'endpoints', scope.namespace, id.name);
  const candidates: string[] = [];
  for (const subset of (endpointsObject.subsets ?? []) as Array<{ addresses?: Array<{ ip?: string }>; ports?: Array<{ name?: string; port?: number }> }>) {
    const endpointPort = (subset.ports ?? []).find((p) => (p.name ?? '') === (servicePort.name ?? ''));
    if (endpointPort?.port === undefined) continue;
    for (const address of subset.addresses ?? []) if (address.ip !== undefined) candidates.push(joinHostPort(address.ip, endpointPort.port));
  }
  if (candidates.length === 0) throw errors.serviceUnavailable(`no endpoints available for service "${scope.name}"`);
  const chosen = candidates[Math.floor(Math.random() * candidates.length)];
  await proxyTo(scope, { scheme: id.scheme === '' ? 'http' : id.scheme, host: chosen }, subpath, (scope.config.connect as ConnectConfig).proxyTransport);
}

/** Serves one connect subresource request; the verb's routes are v1.25's. */
export async function connect(scope: RequestScope): Promise<void> {
  if (scope.config.connect === undefined) throw errors.pathNotFound();
  const key = `${scope.resource.resource}/${scope.subresource}`;
  const methods = CONNECT_METHODS[key];
  const method = scope.ctx.method === 'HEAD' ? 'GET' : scope.ctx.method;
  if (methods === undefined || !methods.includes(method)) throw errors.methodNotAllowed();
  if (scope.resource.namespaced && scope.namespace === '') throw errors.pathNotFound();
  switch (key) {
    case 'pods/log': return podLog(scope);
    case 'pods/exec': return podStream(scope, 'exec');
    case 'pods/attach': return podStream(scope, 'attach');
    case 'pods/portforward': return podPortForward(scope);
    case 'pods/proxy': return podProxy(scope);
    case 'nodes/proxy': return nodeProxy(scope);
    case 'services/proxy': return serviceProxy(scope);
  }
  throw errors.pathNotFound();
}
