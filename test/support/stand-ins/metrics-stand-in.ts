/**
 * An extension API server for the aggregation layer's tests: metrics.k8s.io/v1beta1 as
 * metrics-server serves it (NodeMetrics and PodMetrics, get and list), run as its own process:
 *
 *     node dist/test/support/stand-ins/metrics-stand-in.js CONFIG.json
 *
 * It serves TLS with its own certificate (for metrics-server.kube-system.svc) and, as an
 * extension API server configured from extension-apiserver-authentication does, takes a request
 * only with a client certificate from the request-header CA whose CN is an allowed name, and
 * reads the user from X-Remote-User / X-Remote-Group. Each request is printed as
 * `request <CN> user=<user> groups=<g1,g2> <METHOD> <PATH>`; `ready` once it listens.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';

export interface MetricsStandInConfig {
  port: number;
  servingCertPem: string;
  servingKeyPem: string;
  requestHeaderCaPem: string;
  allowedNames: string[];
  nodes: Array<{ name: string; cpu: string; memory: string }>;
  pods: Array<{ namespace: string; name: string; containers: Array<{ name: string; cpu: string; memory: string }> }>;
}

const GROUP_VERSION = 'metrics.k8s.io/v1beta1';

/** The schemas metrics-server publishes, cut down to what the tests read (kubectl explain). */
function schemas(ref: (name: string) => string): Record<string, object> {
  const usage = { type: 'object', description: 'The memory and CPU usage.', additionalProperties: { type: 'string' } };
  return {
    'io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics': {
      type: 'object',
      description: 'NodeMetrics sets resource usage metrics of a node.',
      properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, timestamp: { type: 'string', description: 'The following fields define time interval from which metrics were collected.' }, window: { type: 'string' }, usage: { ...usage, description: 'The memory usage is the memory working set.' } },
      'x-kubernetes-group-version-kind': [{ group: 'metrics.k8s.io', version: 'v1beta1', kind: 'NodeMetrics' }],
    },
    'io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics': {
      type: 'object',
      description: 'PodMetrics sets resource usage metrics of a pod.',
      properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, timestamp: { type: 'string' }, window: { type: 'string' }, containers: { type: 'array', description: 'Metrics for all containers are collected within the same time window.', items: { $ref: ref('io.k8s.metrics.pkg.apis.metrics.v1beta1.ContainerMetrics') } } },
      'x-kubernetes-group-version-kind': [{ group: 'metrics.k8s.io', version: 'v1beta1', kind: 'PodMetrics' }],
    },
    'io.k8s.metrics.pkg.apis.metrics.v1beta1.ContainerMetrics': { type: 'object', description: 'ContainerMetrics sets resource usage metrics of a container.', properties: { name: { type: 'string', description: 'Container name corresponding to the one from pod.spec.containers.' }, usage } },
  };
}

function openApiV2(): object {
  const get = (kind: string) => ({ get: { operationId: `list${kind}`, produces: ['application/json'], responses: { 200: { description: 'OK', schema: { $ref: `#/definitions/io.k8s.metrics.pkg.apis.metrics.v1beta1.${kind}` } } } } });
  return {
    swagger: '2.0',
    info: { title: 'metrics-server stand-in', version: 'v0.0.0' },
    paths: { [`/apis/${GROUP_VERSION}/nodes`]: get('NodeMetrics'), [`/apis/${GROUP_VERSION}/pods`]: get('PodMetrics') },
    definitions: schemas((name) => `#/definitions/${name}`),
  };
}

function openApiV3(): object {
  // kubectl explain finds a resource's kind on its paths' operations.
  const get = (kind: string) => ({ get: { operationId: `read${kind}`, 'x-kubernetes-action': 'get', 'x-kubernetes-group-version-kind': { group: 'metrics.k8s.io', version: 'v1beta1', kind }, responses: { 200: { description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/io.k8s.metrics.pkg.apis.metrics.v1beta1.${kind}` } } } } } } });
  return {
    openapi: '3.0.0',
    info: { title: 'metrics-server stand-in', version: 'v0.0.0' },
    paths: { [`/apis/${GROUP_VERSION}/nodes/{name}`]: get('NodeMetrics'), [`/apis/${GROUP_VERSION}/namespaces/{namespace}/pods/{name}`]: get('PodMetrics') },
    components: { schemas: schemas((name) => `#/components/schemas/${name}`) },
  };
}

function main(): void {
  const config = JSON.parse(readFileSync(process.argv[2], 'utf8')) as MetricsStandInConfig;
  const timestamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const nodeMetrics = (n: MetricsStandInConfig['nodes'][number]) => ({ metadata: { name: n.name, creationTimestamp: timestamp }, timestamp, window: '10s', usage: { cpu: n.cpu, memory: n.memory } });
  const podMetrics = (p: MetricsStandInConfig['pods'][number]) => ({ metadata: { name: p.name, namespace: p.namespace, creationTimestamp: timestamp }, timestamp, window: '10s', containers: p.containers.map((c) => ({ name: c.name, usage: { cpu: c.cpu, memory: c.memory } })) });
  const server = https.createServer({ cert: config.servingCertPem, key: config.servingKeyPem, ca: config.requestHeaderCaPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const cn: string | string[] | undefined = (req.socket as TLSSocket).getPeerCertificate?.()?.subject?.CN;
    const name = Array.isArray(cn) ? cn.join(',') : cn ?? '';
    const url = new URL(req.url ?? '/', 'https://x');
    const groups = req.headersDistinct['x-remote-group'] ?? [];
    process.stdout.write(`request ${name} user=${String(req.headers['x-remote-user'] ?? '')} groups=${groups.join(',')} ${req.method ?? ''} ${url.pathname}\n`);
    const send = (status: number, body: object) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (!config.allowedNames.includes(name) || req.headers['x-remote-user'] === undefined) return send(401, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    const path = url.pathname.replace(/\/$/, '');
    if (path === '/openapi/v2') return send(200, openApiV2());
    if (path === '/openapi/v3') return send(200, { paths: { [`apis/${GROUP_VERSION}`]: { serverRelativeURL: `/openapi/v3/apis/${GROUP_VERSION}?hash=stand-in` } } });
    if (path === `/openapi/v3/apis/${GROUP_VERSION}`) return send(200, openApiV3());
    if (path === `/apis/${GROUP_VERSION}`) {
      return send(200, {
        kind: 'APIResourceList', apiVersion: 'v1', groupVersion: GROUP_VERSION,
        resources: [
          { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
          { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
        ],
      });
    }
    const list = (kind: string, items: object[]) => send(200, { kind, apiVersion: GROUP_VERSION, metadata: {}, items });
    const notFound = (resource: string, object: string) => send(404, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `${resource}.metrics.k8s.io "${object}" not found`, reason: 'NotFound', code: 404 });
    const nodeMatch = new RegExp(`^/apis/${GROUP_VERSION}/nodes(?:/([^/]+))?$`).exec(path);
    if (nodeMatch !== null) {
      if (nodeMatch[1] === undefined) return list('NodeMetricsList', config.nodes.map(nodeMetrics));
      const found = config.nodes.find((n) => n.name === nodeMatch[1]);
      return found === undefined ? notFound('nodes', nodeMatch[1]) : send(200, { kind: 'NodeMetrics', apiVersion: GROUP_VERSION, ...nodeMetrics(found) });
    }
    const podMatch = new RegExp(`^/apis/${GROUP_VERSION}(?:/namespaces/([^/]+))?/pods(?:/([^/]+))?$`).exec(path);
    if (podMatch !== null) {
      const inNamespace = config.pods.filter((p) => podMatch[1] === undefined || p.namespace === podMatch[1]);
      if (podMatch[2] === undefined) return list('PodMetricsList', inNamespace.map(podMetrics));
      const found = inNamespace.find((p) => p.name === podMatch[2]);
      return found === undefined ? notFound('pods', podMatch[2]) : send(200, { kind: 'PodMetrics', apiVersion: GROUP_VERSION, ...podMetrics(found) });
    }
    send(404, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', code: 404 });
  });
  server.listen(config.port, '0.0.0.0', () => process.stdout.write('ready\n'));
  process.on('SIGTERM', () => process.exit(0));
}

if (require.main === module) main();
