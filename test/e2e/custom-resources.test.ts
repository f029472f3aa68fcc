/**
 * Issue 17 end to end: CustomResourceDefinitions with kubectl 1.32 and curl-style requests against
 * a running `carina server`: a CRD with a large schema (200+ properties, nested lists of maps,
 * int-or-string, embedded resources) applied and waited for, its objects created, read, listed in
 * chunks, watched with bookmarks, patched, applied server-side, scaled and deleted; printer
 * columns and kubectl explain; schema, CEL and pruning errors with kube's field paths (and
 * nothing stored); defaulting; bad CRDs refused; names that clash; and a CRD whose deletion
 * removes every object first.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CarinaApiProcess } from '../support/carina-api-process';
import { until } from '../support/until';

type Obj = Record<string, any>;

/** A schema with `count` scalar fields beside the structured ones the tests use. */
function bigSchema(count: number): Obj {
  const many: Obj = {};
  for (let i = 0; i < count; i++) many[`field${String(i).padStart(3, '0')}`] = i % 2 === 0 ? { type: 'string', maxLength: 64, description: `string field ${i}` } : { type: 'integer', minimum: 0 };
  return {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['image'],
        'x-kubernetes-validations': [
          { rule: 'self.minReplicas <= self.replicas', message: 'replicas must not be below minReplicas' },
          { rule: "!has(self.mode) || self.mode != 'frozen' || self.replicas == 0" },
        ],
        properties: {
          image: { type: 'string', maxLength: 128, description: 'The image to run.' },
          replicas: { type: 'integer', minimum: 0, maximum: 100, default: 1 },
          minReplicas: { type: 'integer', minimum: 0, default: 0 },
          mode: { type: 'string', enum: ['normal', 'frozen'] },
          port: { 'x-kubernetes-int-or-string': true },
          selector: { type: 'string' },
          template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
          routes: {
            type: 'array',
            maxItems: 16,
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: {
              type: 'object',
              required: ['name'],
              properties: {
                name: { type: 'string', maxLength: 32 },
                weight: { type: 'integer', default: 1 },
                backends: { type: 'array', maxItems: 8, items: { type: 'object', properties: { host: { type: 'string', maxLength: 64 }, port: { 'x-kubernetes-int-or-string': true } } } },
              },
            },
          },
          settings: { type: 'object', properties: many },
        },
      },
      status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } },
    },
  };
}

function widgetCrd(): Obj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.e2e.example.com' },
    spec: {
      group: 'e2e.example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wdg'], categories: ['all'] },
      versions: [{
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: bigSchema(210) },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
        additionalPrinterColumns: [
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'Image', type: 'string', jsonPath: '.spec.image' },
          { name: 'Mode', type: 'string', jsonPath: '.spec.mode', priority: 1 },
        ],
      }],
    },
  };
}

function countProperties(schema: Obj): number {
  let n = 0;
  for (const child of Object.values((schema.properties ?? {}) as Obj)) n += 1 + countProperties(child as Obj);
  if (schema.items !== undefined) n += countProperties(schema.items as Obj);
  return n;
}

describe('custom resources: kubectl and HTTP against carina server', function () {
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
    writeFileSync(path, typeof content === 'string' ? content : stringify(content));
    return path;
  };
  const widget = (name: string, spec: Obj) => ({ apiVersion: 'e2e.example.com/v1', kind: 'Widget', metadata: { name }, spec });
  const get = async (path: string) => server.request('GET', path);

  before(async () => {
    server = await CarinaApiProcess.start();
    dir = mkdtempSync(join(tmpdir(), 'carina-crd-e2e-'));
  });

  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('kubectl apply of a CRD with a large schema, then kubectl wait --for condition=established', async () => {
    const crd = widgetCrd();
    expect(countProperties(crd.spec.versions[0].schema.openAPIV3Schema)).to.be.greaterThan(200);
    expect(await kubectl('apply', '-f', file('crd.yaml', crd))).to.contain('customresourcedefinition.apiextensions.k8s.io/widgets.e2e.example.com created');
    expect(await kubectl('wait', '--for', 'condition=established', '--timeout=30s', 'crd/widgets.e2e.example.com')).to.contain('condition met');
    const stored = JSON.parse(await kubectl('get', 'crd', 'widgets.e2e.example.com', '-o', 'json')) as Obj;
    expect(stored.status.acceptedNames).to.include({ plural: 'widgets', kind: 'Widget', listKind: 'WidgetList', singular: 'widget' });
    expect(stored.status.storedVersions).to.deep.equal(['v1']);
    const conditions = Object.fromEntries((stored.status.conditions as Obj[]).map((c) => [c.type, c]));
    expect(conditions.NamesAccepted).to.include({ status: 'True', reason: 'NoConflicts' });
    expect(conditions.Established).to.include({ status: 'True', reason: 'InitialNamesAccepted' });
    expect(await kubectl('api-resources', '--api-group=e2e.example.com', '--no-headers')).to.match(/^widgets\s+wdg\s+e2e\.example\.com\/v1\s+true\s+Widget$/m);
  });

  it('create defaults, prunes unknown fields with a warning, and shows printer columns', async () => {
    const body = widget('alpha', { image: 'nginx', port: 'http', unknownField: 1, routes: [{ name: 'a', backends: [{ host: 'h', port: 8080 }] }], template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [] } }, settings: { field000: 'x', field001: 7 } });
    const created = await server.request('POST', '/apis/e2e.example.com/v1/namespaces/default/widgets', { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    expect(created.status, created.text).to.equal(201);
    expect(String(created.headers.warning)).to.contain('unknown field \\"spec.unknownField\\"');
    const object = created.json<Obj>();
    expect(object.spec).to.not.have.property('unknownField');
    expect(object.spec.replicas).to.equal(1);
    expect(object.spec.routes[0].weight).to.equal(1);
    expect(object.spec.template.spec).to.deep.equal({ containers: [] });
    expect(object.metadata.generation).to.equal(1);
    await kubectl('apply', '-f', file('beta.yaml', widget('beta', { image: 'redis', replicas: 3, mode: 'normal' })));
    const table = await kubectl('get', 'widgets');
    expect(table).to.match(/^NAME\s+REPLICAS\s+IMAGE$/m);
    expect(table).to.match(/^alpha\s+1\s+nginx$/m);
    expect(table).to.match(/^beta\s+3\s+redis$/m);
    expect(await kubectl('get', 'wdg', '-o', 'wide')).to.match(/^beta\s+3\s+redis\s+normal$/m);
    expect(await kubectl('get', 'all', '-o', 'name')).to.contain('widget.e2e.example.com/alpha');
  });

  it('kubectl explain reads the custom fields', async () => {
    const out = await kubectl('explain', 'widget.spec.image');
    expect(out).to.contain('KIND:       Widget');
    expect(out).to.contain('The image to run.');
    expect(await kubectl('explain', 'widgets.spec.routes')).to.contain('backends');
  });

  it('schema and CEL errors carry kube\'s field paths, and nothing is stored', async () => {
    const bad = await server.kubectl(['create', '-f', file('bad.yaml', widget('bad', { image: 'x', replicas: 'many', mode: 'warp' }))]);
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.contain('spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"');
    expect(bad.stderr).to.contain('spec.mode: Unsupported value: "warp": supported values: "normal", "frozen"');
    const cel = await server.kubectl(['create', '-f', file('cel.yaml', widget('cel', { image: 'x', replicas: 1, minReplicas: 2 }))]);
    expect(cel.stderr).to.contain('The Widget "cel" is invalid: spec: Invalid value: "object": replicas must not be below minReplicas');
    const frozen = await server.kubectl(['create', '-f', file('frozen.yaml', widget('frozen', { image: 'x', replicas: 2, mode: 'frozen' }))]);
    expect(frozen.stderr).to.contain("spec: Invalid value: \"object\": failed rule: !has(self.mode) || self.mode != 'frozen' || self.replicas == 0");
    const strict = await server.kubectl(['create', '-f', file('strict.yaml', widget('strict', { image: 'x', nope: true }))]);
    expect(strict.stderr).to.contain('Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.nope"');
    for (const name of ['bad', 'cel', 'frozen', 'strict']) {
      expect((await get(`/apis/e2e.example.com/v1/namespaces/default/widgets/${name}`)).status).to.equal(404);
    }
  });

  it('patch (merge, JSON), strategic merge refused with 415, server-side apply, status and scale', async () => {
    await kubectl('patch', 'widget', 'beta', '--type=merge', '-p', '{"spec":{"image":"redis:7"}}');
    await kubectl('patch', 'widget', 'beta', '--type=json', '-p', '[{"op":"replace","path":"/spec/replicas","value":4}]');
    const beta = JSON.parse(await kubectl('get', 'widget', 'beta', '-o', 'json')) as Obj;
    expect(beta.spec).to.include({ image: 'redis:7', replicas: 4 });
    expect(beta.metadata.generation).to.equal(3);
    const smp = await server.request('PATCH', '/apis/e2e.example.com/v1/namespaces/default/widgets/beta', { body: '{"spec":{"image":"x"}}', headers: { 'content-type': 'application/strategic-merge-patch+json' } });
    expect(smp.status).to.equal(415);
    const applied = await server.kubectl(['apply', '--server-side', '--field-manager=e2e', '-f', '-'], { input: stringify(widget('gamma', { image: 'busybox', replicas: 2, routes: [{ name: 'r1' }] })) });
    expect(applied.code, applied.stderr).to.equal(0);
    const gamma = JSON.parse(await kubectl('get', 'widget', 'gamma', '-o', 'json', '--show-managed-fields')) as Obj;
    expect(gamma.metadata.managedFields.map((m: Obj) => m.manager)).to.include('e2e');
    expect(JSON.stringify(gamma.metadata.managedFields)).to.contain('k:{\\"name\\":\\"r1\\"}');
    // Status goes through /status only.
    const status = await server.request('PUT', '/apis/e2e.example.com/v1/namespaces/default/widgets/gamma/status', { body: JSON.stringify({ ...gamma, status: { replicas: 2, selector: 'app=gamma' }, spec: { ...gamma.spec, image: 'ignored' } }), headers: { 'content-type': 'application/json' } });
    expect(status.status, status.text).to.equal(200);
    expect(status.json<Obj>().spec.image).to.equal('busybox');
    expect(status.json<Obj>().status).to.deep.equal({ replicas: 2, selector: 'app=gamma' });
    const main = await server.request('PUT', '/apis/e2e.example.com/v1/namespaces/default/widgets/gamma', { body: JSON.stringify({ ...status.json<Obj>(), status: { replicas: 99 } }), headers: { 'content-type': 'application/json' } });
    expect(main.json<Obj>().status.replicas).to.equal(2);
    await kubectl('scale', 'widget', 'gamma', '--replicas=5');
    const scale = JSON.parse(await kubectl('get', '--raw', '/apis/e2e.example.com/v1/namespaces/default/widgets/gamma/scale')) as Obj;
    expect(scale).to.deep.include({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 5 }, status: { replicas: 2, selector: 'app=gamma' } });
  });

  it('lists in chunks, selects by label and metadata.name, watches, answers JSON or YAML only', async () => {
    for (let i = 0; i < 7; i++) await kubectl('create', '-f', file(`c${i}.yaml`, { ...widget(`chunk-${i}`, { image: 'x' }), metadata: { name: `chunk-${i}`, labels: { batch: 'c' } } }));
    const first = (await get('/apis/e2e.example.com/v1/namespaces/default/widgets?labelSelector=batch%3Dc&limit=3')).json<Obj>();
    expect(first.kind).to.equal('WidgetList');
    expect(first.items).to.have.length(3);
    const second = (await get(`/apis/e2e.example.com/v1/namespaces/default/widgets?labelSelector=batch%3Dc&limit=3&continue=${encodeURIComponent(first.metadata.continue)}`)).json<Obj>();
    expect(second.metadata.resourceVersion).to.equal(first.metadata.resourceVersion);
    expect(second.items.map((i: Obj) => i.metadata.name)).to.deep.equal(['chunk-3', 'chunk-4', 'chunk-5']);
    const byName = (await get('/apis/e2e.example.com/v1/widgets?fieldSelector=metadata.name%3Dchunk-6')).json<Obj>();
    expect(byName.items.map((i: Obj) => i.metadata.name)).to.deep.equal(['chunk-6']);
    const badField = await get('/apis/e2e.example.com/v1/widgets?fieldSelector=spec.image%3Dx');
    expect(badField.status).to.equal(400);
    expect(badField.json<Obj>()).to.deep.include({ reason: 'BadRequest', message: 'field label not supported: spec.image' });
    const protobufOnly = await server.request('GET', '/apis/e2e.example.com/v1/namespaces/default/widgets/beta', { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expect(protobufOnly.status).to.equal(406);
    const yaml = await server.request('GET', '/apis/e2e.example.com/v1/namespaces/default/widgets/beta', { headers: { accept: 'application/yaml' } });
    expect(yaml.text).to.contain('kind: Widget');
    const rv = first.metadata.resourceVersion as string;
    const watchPromise = server.watch(`/apis/e2e.example.com/v1/namespaces/default/widgets?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`, (events) => events.some((e) => e.type === 'DELETED'));
    await kubectl('delete', 'widget', 'chunk-0');
    const watched = await watchPromise;
    expect(watched.events.find((e) => e.type === 'DELETED')?.object).to.deep.include({ kind: 'Widget', apiVersion: 'e2e.example.com/v1' });
  });

  it('defaults on read: a default added to the CRD shows on objects stored before it', async () => {
    const before = JSON.parse(await kubectl('get', 'widget', 'beta', '-o', 'json')) as Obj;
    expect(before.spec).to.not.have.property('selector');
    const crd = widgetCrd();
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.selector.default = 'app=default';
    await kubectl('apply', '-f', file('crd-default.yaml', crd));
    const after = await until('the new default on read', async () => {
      const object = (await get('/apis/e2e.example.com/v1/namespaces/default/widgets/beta')).json<Obj>();
      return object.spec.selector === 'app=default' ? object : undefined;
    });
    expect(after.metadata.resourceVersion).to.equal(before.metadata.resourceVersion);
  });

  it('garbage collection runs to and from custom resources; a namespace takes its custom resources with it', async () => {
    const owner = JSON.parse(await kubectl('get', 'widget', 'beta', '-o', 'json')) as Obj;
    await kubectl('create', '-f', file('dependent.yaml', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owned-by-widget', ownerReferences: [{ apiVersion: 'e2e.example.com/v1', kind: 'Widget', name: 'beta', uid: owner.metadata.uid }] } }));
    const cm = JSON.parse(await kubectl('get', 'cm', 'owned-by-widget', '-o', 'json')) as Obj;
    await kubectl('create', '-f', file('owned-widget.yaml', { ...widget('owned-by-cm', { image: 'x' }), metadata: { name: 'owned-by-cm', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owned-by-widget', uid: cm.metadata.uid }] } }));
    await kubectl('delete', 'widget', 'beta');
    await until('the ConfigMap owned by the Widget collected', async () => (await get('/api/v1/namespaces/default/configmaps/owned-by-widget')).status === 404, 30_000);
    await until('the Widget owned by the ConfigMap collected', async () => (await get('/apis/e2e.example.com/v1/namespaces/default/widgets/owned-by-cm')).status === 404, 30_000);
    await kubectl('create', 'namespace', 'crd-ns');
    await kubectl('create', '-n', 'crd-ns', '-f', file('in-ns.yaml', widget('in-ns', { image: 'x' })));
    await kubectl('delete', 'namespace', 'crd-ns', '--timeout=60s');
    expect((await get('/apis/e2e.example.com/v1/namespaces/crd-ns/widgets/in-ns')).status).to.equal(404);
  });

  it('takes no Protobuf bodies (415)', async () => {
    const response = await server.request('POST', '/apis/e2e.example.com/v1/namespaces/default/widgets', { body: Buffer.from([0x6b, 0x38, 0x73, 0x00]), headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } });
    expect(response.status).to.equal(415);
  });

  it('refuses non-structural schemas, CEL that does not compile or costs too much, with kube\'s messages', async () => {
    const base = widgetCrd();
    const nonStructural = structuredClone(base);
    nonStructural.metadata.name = 'bads.e2e.example.com';
    nonStructural.spec.names = { plural: 'bads', kind: 'Bad' };
    nonStructural.spec.versions[0].schema.openAPIV3Schema = { type: 'object', properties: { spec: { properties: { a: { type: 'string' } } } } };
    const ns = await server.kubectl(['create', '-f', file('ns.yaml', nonStructural)]);
    expect(ns.stderr).to.contain('spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields');
    const celBad = structuredClone(nonStructural);
    celBad.spec.versions[0].schema.openAPIV3Schema = { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.a ==' }, { rule: 'self.missing > 0' }], properties: { a: { type: 'string' }, list: { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x.matches(y)))' }] } } } } };
    const cel = await server.kubectl(['create', '-f', file('celbad.yaml', celBad)]);
    expect(cel.stderr).to.contain('spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.a ==", Message:""}: compilation failed: ERROR: <input>:');
    expect(cel.stderr).to.contain("undefined field 'missing'");
    expect(cel.stderr).to.contain('spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[list].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of');
    expect((await get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/bads.e2e.example.com')).status).to.equal(404);
  });

  it('a CRD whose names clash is not established; it is once the other goes', async () => {
    const clash = widgetCrd();
    clash.metadata.name = 'gizmos.e2e.example.com';
    clash.spec.names = { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo', shortNames: ['wdg'] };
    await kubectl('create', '-f', file('clash.yaml', clash));
    const conditions = await until('NamesAccepted on gizmos', async () => {
      const crd = (await get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.e2e.example.com')).json<Obj>();
      return (crd.status?.conditions as Obj[] | undefined)?.find((c) => c.type === 'NamesAccepted');
    });
    expect(conditions).to.include({ status: 'False', reason: 'ShortNamesConflict', message: '"wdg" is already in use' });
    expect((await get('/apis/e2e.example.com/v1/gizmos')).status).to.equal(404);
  });

  it('deleting a CRD removes every object first, then the CRD; the clashing CRD is then established', async () => {
    const before = (await get('/apis/e2e.example.com/v1/widgets')).json<Obj>();
    expect(before.items.length).to.be.greaterThan(5);
    expect(await kubectl('delete', 'crd', 'widgets.e2e.example.com', '--timeout=60s')).to.contain('deleted');
    expect((await get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.e2e.example.com')).status).to.equal(404);
    expect((await get('/apis/e2e.example.com/v1/widgets')).status).to.equal(404);
    await kubectl('wait', '--for', 'condition=established', '--timeout=30s', 'crd/gizmos.e2e.example.com');
    // Re-created, the CRD serves an empty collection: nothing of the old objects is left in the store.
    await kubectl('apply', '-f', file('crd-again.yaml', { ...widgetCrd(), spec: { ...widgetCrd().spec, names: { plural: 'widgets', singular: 'widget', kind: 'Widget' } } }));
    await kubectl('wait', '--for', 'condition=established', '--timeout=30s', 'crd/widgets.e2e.example.com');
    const after = await until('widgets served again', async () => {
      const list = await get('/apis/e2e.example.com/v1/widgets');
      return list.status === 200 ? list.json<Obj>() : undefined;
    });
    expect(after.items).to.deep.equal([]);
  });
});
