/**
 * Custom resources from real operators' CRD shapes, with kubectl 1.32 and HTTP against a running
 * `carina server`, as kube-apiserver v1.25 serves them: a monitoring operator's RE2 patterns, a
 * certificate CRD's printer columns (a JSONPath filter, a date shown as an age, a priority-1
 * column) and its int-or-string field in /openapi/v2 (Protobuf, kubectl explain from v2), a
 * cluster-scoped CRD's field selectors, and an Argo CD-like finalizer that keeps a terminating
 * CRD while a create is refused with v1.25's 405. Our own small CRDs, shaped like the real ones.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CarinaApiProcess } from '../support/carina-api-process';
import { until } from '../support/until';

type Obj = Record<string, any>;

function crd(group: string, plural: string, kind: string, scope: 'Namespaced' | 'Cluster', version: Obj): Obj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: { group, scope, names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` }, versions: [{ served: true, storage: true, ...version }] },
  };
}

/** prometheus-operator's PrometheusRule, reduced: its partial_response_strategy pattern is RE2-only. */
const prometheusRules = crd('monitoring.e2e.example.com', 'prometheusrules', 'PrometheusRule', 'Namespaced', {
  name: 'v1',
  schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { groups: { type: 'array', items: { type: 'object', required: ['name'], properties: {
    name: { type: 'string', minLength: 1 },
    partial_response_strategy: { type: 'string', pattern: '^(?i)(abort|warn)?$' },
    interval: { type: 'string', pattern: '^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$' },
  } } } } } } } },
});

/** cert-manager's Certificate, reduced: filter and date printer columns, an int-or-string field with controller-gen's anyOf, a nullable field. */
const certificates = crd('cert.e2e.example.com', 'certificates', 'Certificate', 'Namespaced', {
  name: 'v1',
  subresources: { status: {} },
  additionalPrinterColumns: [
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Secret', type: 'string', jsonPath: '.spec.secretName' },
    { name: 'Issuer', type: 'string', jsonPath: '.spec.issuerRef.name', priority: 1 },
    { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.' },
  ],
  schema: { openAPIV3Schema: { type: 'object', properties: {
    spec: { type: 'object', required: ['secretName'], properties: {
      secretName: { type: 'string', description: 'SecretName is the name of the secret resource that will be automatically created and managed by this Certificate resource.' },
      issuerRef: { type: 'object', properties: { name: { type: 'string' }, kind: { type: 'string' } } },
      keySize: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
      renewBefore: { type: 'string', nullable: true },
    } },
    status: { type: 'object', properties: { conditions: { type: 'array', items: { type: 'object', required: ['type', 'status'], properties: { type: { type: 'string' }, status: { type: 'string' }, message: { type: 'string' } } } } } },
  } } },
});

/** cert-manager's ClusterIssuer, reduced: a cluster-scoped kind. */
const clusterIssuers = crd('cert.e2e.example.com', 'clusterissuers', 'ClusterIssuer', 'Cluster', {
  name: 'v1',
  schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { acme: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } } } },
});

/** Argo CD's Application, reduced: its controller holds objects with a domain-qualified finalizer without '/'. */
const applications = crd('argo.e2e.example.com', 'applications', 'Application', 'Namespaced', {
  name: 'v1alpha1',
  schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
});

describe('custom resources as v1.25 serves them: real operators\' CRD shapes with kubectl and HTTP', function () {
  this.timeout(180_000);
  let server: CarinaApiProcess;
  let dir: string;

  const kubectl = async (...args: string[]) => {
    const result = await server.kubectl(args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}):\n${result.stderr}\n${result.stdout}`);
    return result.stdout;
  };
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, stringify(content));
    return path;
  };
  const install = async (definition: Obj) => {
    await kubectl('apply', '-f', file(`${definition.metadata.name}.yaml`, definition));
    await kubectl('wait', '--for', 'condition=established', '--timeout=30s', `crd/${definition.metadata.name}`);
  };

  before(async () => {
    server = await CarinaApiProcess.start();
    dir = mkdtempSync(join(tmpdir(), 'carina-crd-v125-'));
  });

  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('accepts a monitoring operator\'s CRD with Go (RE2) patterns, and matches them as Go does', async () => {
    await install(prometheusRules);
    const rule = (name: string, strategy: string) => ({ apiVersion: 'monitoring.e2e.example.com/v1', kind: 'PrometheusRule', metadata: { name }, spec: { groups: [{ name: 'g', partial_response_strategy: strategy, interval: '1m30s' }] } });
    expect(await kubectl('apply', '-f', file('abort.yaml', rule('abort', 'ABORT')))).to.contain('prometheusrule.monitoring.e2e.example.com/abort created');
    const refused = await server.kubectl(['apply', '-f', file('skip.yaml', rule('skip', 'skip'))]);
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.contain("spec.groups[0].partial_response_strategy: Invalid value: \"skip\": spec.groups[0].partial_response_strategy in body should match '^(?i)(abort|warn)?$'");
  });

  it('kubectl get shows a JSONPath filter column and the date column as an age; -o wide adds the priority-1 columns', async () => {
    await install(certificates);
    await kubectl('apply', '-f', file('web.yaml', { apiVersion: 'cert.e2e.example.com/v1', kind: 'Certificate', metadata: { name: 'web' }, spec: { secretName: 'web-tls', issuerRef: { name: 'letsencrypt' }, keySize: 2048 } }));
    const current = JSON.parse(await kubectl('get', 'certificate', 'web', '-o', 'json')) as Obj;
    const status = { conditions: [{ type: 'Issuing', status: 'False' }, { type: 'Ready', status: 'True', message: 'Certificate is up to date' }] };
    const updated = await server.request('PUT', '/apis/cert.e2e.example.com/v1/namespaces/default/certificates/web/status', { body: JSON.stringify({ ...current, status }) });
    expect(updated.status, updated.text).to.equal(200);
    const table = await kubectl('get', 'certificates');
    expect(table).to.match(/^NAME\s+READY\s+SECRET\s+AGE$/m);
    // The age is HumanDuration of a just-created object: seconds.
    expect(table).to.match(/^web\s+True\s+web-tls\s+\d+s$/m);
    expect(await kubectl('get', 'certificates', '-o', 'wide')).to.match(/^web\s+True\s+web-tls\s+letsencrypt\s+Certificate is up to date\s+\d+s$/m);
  });

  it('serves /openapi/v2 in Protobuf with that CRD\'s int-or-string field, and kubectl explain reads v2 for built-in and custom kinds', async () => {
    const protobuf = await server.request('GET', '/openapi/v2', { headers: { Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    expect(protobuf.status, protobuf.text.slice(0, 200)).to.equal(200);
    expect(protobuf.headers['content-type']).to.equal('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const v2 = (await server.request('GET', '/openapi/v2')).json<Obj>();
    expect(v2.definitions['com.example.e2e.cert.v1.Certificate'].properties.spec.properties.keySize).to.deep.equal({ 'x-kubernetes-int-or-string': true });
    const pods = await kubectl('explain', 'pods.spec.containers', '--output=plaintext-openapiv2');
    expect(pods).to.contain('KIND:     Pod');
    expect(pods).to.contain('RESOURCE: containers');
    expect(await kubectl('explain', 'certificates.spec', '--output=plaintext-openapiv2')).to.contain('SecretName is the name of the secret resource');
  });

  it('field selectors of custom resources: the v1.25 message, and no metadata.namespace on a cluster-scoped kind', async () => {
    await install(clusterIssuers);
    await kubectl('apply', '-f', file('issuer.yaml', { apiVersion: 'cert.e2e.example.com/v1', kind: 'ClusterIssuer', metadata: { name: 'letsencrypt' }, spec: { acme: { server: 'https://acme.example.com' } } }));
    const byNamespace = await server.request('GET', '/apis/cert.e2e.example.com/v1/clusterissuers?fieldSelector=metadata.namespace%3Ddefault');
    expect(byNamespace.status).to.equal(400);
    expect(byNamespace.json<Obj>()).to.deep.include({ reason: 'BadRequest', message: 'field label not supported: metadata.namespace' });
    const bySpec = await server.kubectl(['get', 'certificates', '--field-selector', 'spec.secretName=web-tls']);
    expect(bySpec.code).to.not.equal(0);
    expect(bySpec.stderr).to.contain('field label not supported: spec.secretName');
    expect(await kubectl('get', 'clusterissuers', '--field-selector', 'metadata.name=letsencrypt', '-o', 'name')).to.equal('clusterissuer.cert.e2e.example.com/letsencrypt\n');
  });

  it('keeps an Argo CD-style finalizer; while its CRD terminates a create answers 405, updates still pass, then the CRD goes', async () => {
    await install(applications);
    const app = (name: string) => ({ apiVersion: 'argo.e2e.example.com/v1alpha1', kind: 'Application', metadata: { name, finalizers: ['resources-finalizer.argocd.argoproj.io'] }, spec: { project: 'default' } });
    const base = '/apis/argo.e2e.example.com/v1alpha1/namespaces/default/applications';
    const created = await server.request('POST', base, { body: JSON.stringify(app('guestbook')) });
    expect(created.status, created.text).to.equal(201);
    expect(created.json<Obj>().metadata.finalizers).to.deep.equal(['resources-finalizer.argocd.argoproj.io']);

    await kubectl('delete', 'crd', 'applications.argo.e2e.example.com', '--wait=false');
    const refused = await until('a create refused while the CRD terminates', async () => {
      const response = await server.request('POST', base, { body: JSON.stringify(app('late')) });
      return response.status === 405 ? response : undefined;
    });
    expect(refused.json<Obj>()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'create not allowed while custom resource definition is terminating',
      reason: 'MethodNotAllowed', details: { group: 'argo.e2e.example.com', kind: 'applications' }, code: 405,
    });
    const discovery = (await server.request('GET', '/apis/argo.e2e.example.com/v1alpha1')).json<Obj>();
    expect(discovery.resources.find((r: Obj) => r.name === 'applications').verbs).to.deep.equal(['delete', 'deletecollection', 'get', 'list', 'watch']);

    // The operator removes its finalizer through an update, which a terminating CRD still takes.
    const released = await server.request('PATCH', `${base}/guestbook`, { body: JSON.stringify({ metadata: { finalizers: null } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(released.status, released.text).to.equal(200);
    await until('the CRD removed once its last object is gone', async () => (await server.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/applications.argo.e2e.example.com')).status === 404, 30_000);
  });
});
