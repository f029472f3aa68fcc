/**
 * The aggregation layer end to end (issue 31): a metrics.k8s.io/v1beta1 extension API server
 * stand-in, in a network namespace this file makes, registered with an APIService; kubectl top,
 * api-resources and discovery through Carina; the front-proxy certificate and X-Remote-*
 * headers; RBAC before anything leaves; the Available condition and its reasons; 503 once the
 * extension is gone.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClusterCa, issueServingCertificate } from '../../src/certificates';
import { haproxyConfig } from '../../src/cluster';
import { CarinaApiProcess } from '../support/carina-api-process';
import { distinctFreePorts } from '../support/etcd-process';
import { NodeNetwork, nodeNetworkUnavailable, type StandIn } from '../support/stand-ins/node-network';
import { until } from '../support/until';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const METRICS_PORT = 4443;

describe('aggregation layer: an extension API server behind an APIService (e2e)', function () {
  this.timeout(120_000);
  let network: NodeNetwork;
  let server: CarinaApiProcess;
  let metrics: StandIn;
  let dir: string;
  const cleanup = () => network?.remove();

  const post = async (path: string, object: Obj) => {
    const created = await server.request('POST', path, { body: JSON.stringify(object), headers: { 'Content-Type': 'application/json' } });
    expect(created.status, created.text).to.equal(201);
  };
  const condition = async (): Promise<Obj | undefined> => {
    const apiService = (await server.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io')).json<Obj>();
    return (apiService.status?.conditions ?? []).find((c: Obj) => c.type === 'Available');
  };
  const metricsRequests = () => metrics.output().split('\n').filter((l) => l.startsWith('request '));

  before(async () => {
    const unavailable = nodeNetworkUnavailable();
    if (unavailable !== undefined) throw new Error(`these tests need network namespaces: ${unavailable}`);
    process.once('exit', cleanup);
    dir = mkdtempSync(join(tmpdir(), 'carina-aggregation-'));
    network = await NodeNetwork.create();
    server = await CarinaApiProcess.start();
    // The extension server trusts what extension-apiserver-authentication tells it, as metrics-server does.
    const configMap = await until('extension-apiserver-authentication', async () => {
      const answer = await server.request('GET', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication');
      return answer.status === 200 ? answer.json<Obj>() : undefined;
    }, 30_000);
    const servingCa = await createClusterCa();
    const serving = await issueServingCertificate(servingCa, { dnsNames: ['metrics-server.kube-system.svc'] });
    metrics = await network.startStandIn('metrics-stand-in.js', {
      port: METRICS_PORT,
      servingCertPem: serving.certPem,
      servingKeyPem: serving.keyPem,
      requestHeaderCaPem: configMap.data['requestheader-client-ca-file'],
      allowedNames: JSON.parse(configMap.data['requestheader-allowed-names']) as string[],
      nodes: [{ name: 'worker', cpu: '250m', memory: '512Mi' }],
      pods: [{ namespace: 'default', name: 'busy', containers: [{ name: 'c', cpu: '120m', memory: '64Mi' }] }],
    });
    await post('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'worker' } });
    const status = await server.request('PATCH', '/api/v1/nodes/worker/status', { body: JSON.stringify({ status: { capacity: { cpu: '4', memory: '8Gi' }, allocatable: { cpu: '4', memory: '8Gi' } } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(status.status, status.text).to.equal(200);
    await post('/api/v1/namespaces/kube-system/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'metrics-server' }, spec: { ports: [{ name: 'https', port: 443, targetPort: METRICS_PORT }] } });
    await post('/api/v1/namespaces/kube-system/endpoints', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'metrics-server' }, subsets: [{ addresses: [{ ip: network.address }], ports: [{ name: 'https', port: METRICS_PORT }] }] });
    await post('/apis/apiregistration.k8s.io/v1/apiservices', {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1beta1.metrics.k8s.io' },
      spec: { group: 'metrics.k8s.io', version: 'v1beta1', service: { namespace: 'kube-system', name: 'metrics-server', port: 443 }, caBundle: Buffer.from(servingCa.certPem).toString('base64'), groupPriorityMinimum: 100, versionPriority: 100 },
    });
  });

  after(async () => {
    await server?.stop();
    cleanup();
    process.off('exit', cleanup);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('writes extension-apiserver-authentication and a local APIService for every built-in group-version', async () => {
    const configMap = (await server.request('GET', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication')).json<Obj>();
    expect(Object.keys(configMap.data).sort()).to.deep.equal(['client-ca-file', 'requestheader-allowed-names', 'requestheader-client-ca-file', 'requestheader-extra-headers-prefix', 'requestheader-group-headers', 'requestheader-username-headers']);
    expect(configMap.data['requestheader-username-headers']).to.equal('["X-Remote-User"]');
    expect(configMap.data['requestheader-group-headers']).to.equal('["X-Remote-Group"]');
    expect(configMap.data['requestheader-extra-headers-prefix']).to.equal('["X-Remote-Extra-"]');
    const apps = await until('v1.apps to be Available', async () => {
      const answer = (await server.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.apps')).json<Obj>();
      return answer.status?.conditions?.some((c: Obj) => c.type === 'Available' && c.status === 'True') === true ? answer : undefined;
    }, 30_000);
    expect(apps.spec).to.deep.include({ group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 });
    expect(apps.spec.service).to.equal(undefined);
    expect(apps.status.conditions[0]).to.deep.include({ reason: 'Local', message: 'Local APIServices are always available' });
    const names = (await server.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices')).json<Obj>().items.map((i: Obj) => i.metadata.name);
    expect(names).to.include.members(['v1.', 'v1.apiregistration.k8s.io', 'v1.rbac.authorization.k8s.io', 'v2.autoscaling', 'v1.coordination.k8s.io']);
  });

  it('a CRD\'s group-version gets a local APIService kept by kube-apiserver (automanaged true, 1000/100), gone with the CRD', async () => {
    const manifest = 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gizmos.tools.example.com\nspec:\n  group: tools.example.com\n  scope: Namespaced\n' +
      '  names: {plural: gizmos, singular: gizmo, kind: Gizmo, listKind: GizmoList}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object}}\n';
    const applied = await server.kubectl(['apply', '-f', '-'], { input: manifest });
    expect(applied.code, applied.stderr).to.equal(0);
    const apiService = await until('v1.tools.example.com', async () => {
      const answer = await server.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.tools.example.com');
      return answer.status === 200 ? answer.json<Obj>() : undefined;
    }, 30_000);
    expect(apiService.metadata.labels).to.deep.equal({ 'kube-aggregator.kubernetes.io/automanaged': 'true' });
    expect(apiService.spec).to.deep.equal({ group: 'tools.example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 100 });
    const listed = await server.kubectl(['get', 'apiservices', 'v1.tools.example.com', '--no-headers']);
    expect(listed.stdout).to.match(/^v1\.tools\.example\.com\s+Local\s+True\s+/);
    expect((await server.kubectl(['delete', 'crd', 'gizmos.tools.example.com'])).code).to.equal(0);
    await until('v1.tools.example.com to go', async () => (await server.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.tools.example.com')).status === 404, 30_000);
  });

  it('the APIService becomes Available; discovery and kubectl api-resources list its group', async () => {
    await until('v1beta1.metrics.k8s.io to be Available', async () => (await condition())?.status === 'True', 30_000, () => metrics.output());
    expect(await condition()).to.deep.include({ reason: 'Passed', message: 'all checks passed' });
    const groups = (await server.request('GET', '/apis')).json<Obj>().groups.map((g: Obj) => g.name);
    expect(groups).to.include('metrics.k8s.io');
    const group = (await server.request('GET', '/apis/metrics.k8s.io')).json<Obj>();
    expect(group).to.deep.include({ kind: 'APIGroup', name: 'metrics.k8s.io', preferredVersion: { groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' } });
    const resources = await server.kubectl(['api-resources', '--api-group', 'metrics.k8s.io', '--no-headers']);
    expect(resources.code, resources.stderr).to.equal(0);
    expect(resources.stdout).to.match(/^nodes\s+metrics\.k8s\.io\/v1beta1\s+false\s+NodeMetrics/m);
    expect(resources.stdout).to.match(/^pods\s+metrics\.k8s\.io\/v1beta1\s+true\s+PodMetrics/m);
  });

  it('kubectl top pod and kubectl top node show the extension\'s figures; it sees the front-proxy certificate and the user', async () => {
    const pods = await server.kubectl(['top', 'pod', '--no-headers']);
    expect(pods.code, pods.stderr).to.equal(0);
    expect(pods.stdout).to.match(/^busy\s+120m\s+64Mi\s*$/m);
    const nodes = await server.kubectl(['top', 'node', '--no-headers']);
    expect(nodes.code, nodes.stderr).to.equal(0);
    expect(nodes.stdout).to.match(/^worker\s+250m\s+6%\s+512Mi\s+6%\s*$/m);
    const seen = metricsRequests().find((l) => l.includes('GET /apis/metrics.k8s.io/v1beta1/namespaces/default/pods'));
    expect(seen).to.match(/^request front-proxy-client user=system:admin groups=system:masters,system:authenticated GET /);
  });

  it('merges the extension\'s OpenAPI: its definitions in /openapi/v2 (JSON and Protobuf), its group-version in /openapi/v3; kubectl explain reads it', async () => {
    const v2 = await until('the aggregated definitions in /openapi/v2', async () => {
      const answer = await server.request('GET', '/openapi/v2', { headers: { Accept: 'application/json' } });
      const document = answer.json<Obj>();
      return document.definitions?.['io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics'] === undefined ? undefined : document;
    }, 30_000);
    expect(v2.paths).to.have.property('/apis/metrics.k8s.io/v1beta1/nodes');
    expect(v2.definitions).to.have.property('io.k8s.api.core.v1.Pod');
    const protobuf = await server.request('GET', '/openapi/v2', { headers: { Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    expect(protobuf.status).to.equal(200);
    expect(protobuf.body.includes(Buffer.from('io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics'))).to.equal(true);
    const index = (await server.request('GET', '/openapi/v3')).json<Obj>();
    expect(index.paths['apis/metrics.k8s.io/v1beta1'].serverRelativeURL).to.match(/^\/openapi\/v3\/apis\/metrics\.k8s\.io\/v1beta1\?hash=[0-9A-F]+$/);
    expect(index.paths).to.have.property('apis/apps/v1');
    const v3 = (await server.request('GET', index.paths['apis/metrics.k8s.io/v1beta1'].serverRelativeURL)).json<Obj>();
    expect(v3.components.schemas).to.have.property('io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics');
    const explained = await server.kubectl(['explain', 'podmetrics.containers', '--api-version', 'metrics.k8s.io/v1beta1']);
    expect(explained.code, explained.stderr).to.equal(0);
    expect(explained.stdout).to.include('Metrics for all containers are collected within the same time window.');
  });

  it('kubectl top works through HAProxy too', async () => {
    const [lbPort] = await distinctFreePorts(1);
    writeFileSync(join(dir, 'haproxy.cfg'), haproxyConfig(lbPort, [server.port]));
    const haproxy = spawn('haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: 'ignore' });
    try {
      const kubeconfig = join(dir, 'via-haproxy.kubeconfig');
      writeFileSync(kubeconfig, readFileSync(server.kubeconfig, 'utf8').replace(`127.0.0.1:${server.port}`, `127.0.0.1:${lbPort}`));
      await until('HAProxy to pass requests', async () => (await server.kubectl(['--kubeconfig', kubeconfig, 'get', '--raw', '/readyz'])).stdout === 'ok', 15_000);
      const pods = await server.kubectl(['--kubeconfig', kubeconfig, 'top', 'pod', '--no-headers']);
      expect(pods.stdout, pods.stderr).to.match(/^busy\s+120m\s+64Mi\s*$/m);
      const nodes = await server.kubectl(['--kubeconfig', kubeconfig, 'top', 'node', '--no-headers']);
      expect(nodes.stdout, nodes.stderr).to.match(/^worker\s+250m\s+6%\s+512Mi\s+6%\s*$/m);
    } finally {
      haproxy.kill('SIGKILL');
    }
  });

  it('RBAC on the aggregated resources is enforced by Carina before the request leaves', async () => {
    await server.kubectl(['create', 'serviceaccount', 'nobody']);
    const token = (await server.kubectl(['create', 'token', 'nobody'])).stdout.trim();
    const before = metricsRequests().length;
    const denied = await server.request('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', { anonymous: true, headers: { Authorization: `Bearer ${token}` } });
    expect(denied.status).to.equal(403);
    expect(denied.json()).to.deep.include({ message: 'pods.metrics.k8s.io is forbidden: User "system:serviceaccount:default:nobody" cannot list resource "pods" in API group "metrics.k8s.io" in the namespace "default"' });
    expect(metricsRequests().length).to.equal(before);
  });

  it('FailedDiscoveryCheck once the extension stops, then 503; MissingEndpoints and ServiceNotFound as its Service goes', async () => {
    metrics.stop();
    await until('FailedDiscoveryCheck', async () => (await condition())?.reason === 'FailedDiscoveryCheck', 30_000);
    expect(await condition()).to.deep.include({ status: 'False' });
    expect((await condition())?.message).to.match(/^failing or missing response from https:\/\/[\d.]+:4443\/apis\/metrics\.k8s\.io\/v1beta1: /);
    const refused = await server.request('GET', '/apis/metrics.k8s.io/v1beta1/nodes');
    expect(refused.status).to.equal(503);
    expect(refused.text).to.equal('service unavailable\n');
    expect((await server.request('DELETE', '/api/v1/namespaces/kube-system/endpoints/metrics-server')).status).to.equal(200);
    await until('MissingEndpoints', async () => (await condition())?.reason === 'MissingEndpoints', 30_000);
    expect((await condition())?.message).to.equal('endpoints for service/metrics-server in "kube-system" have no addresses with port name "https"');
    expect((await server.request('DELETE', '/api/v1/namespaces/kube-system/services/metrics-server')).status).to.equal(200);
    await until('ServiceNotFound', async () => (await condition())?.reason === 'ServiceNotFound', 30_000);
    expect((await condition())?.message).to.equal('service/metrics-server in "kube-system" is not present');
  });
});
