/**
 * The CRD corpus (test/fixtures/crd-corpus): CRDs that together use every schema construct
 * kube-apiserver v1.25 supports, in the shapes popular operators' CRDs have, installed with
 * kubectl 1.32; objects of each are created, read, listed, printed, explained, patched (merge and
 * JSON patch), applied (client-side and server-side), scaled and given a status, and bad ones are
 * refused with nothing stored.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CarinaApiProcess, type CommandResult } from '../support/carina-api-process';

type Obj = Record<string, any>;

const CORPUS = resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'crd-corpus');
const corpusText = (name: string) => readFileSync(resolve(CORPUS, name), 'utf8');

describe('CRD corpus: every v1.25 schema construct, installed and used with kubectl', function () {
  this.timeout(240_000);
  let server: CarinaApiProcess;

  const run = (args: string[], input?: string): Promise<CommandResult> => server.kubectl(args, { input });
  const kubectl = async (args: string[], input?: string): Promise<string> => {
    const result = await run(args, input);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}):\n${result.stderr}\n${result.stdout}`);
    return result.stdout;
  };
  const getJson = async (...args: string[]): Promise<Obj> => JSON.parse(await kubectl(['get', ...args, '-o', 'json'])) as Obj;
  const apply = (object: Obj, ...flags: string[]) => kubectl(['apply', ...flags, '-f', '-'], JSON.stringify(object));
  // kubectl create sends nulls as written (client-side apply drops them), and its manager is an Update one that server-side apply merges with.
  const create = (object: Obj) => kubectl(['create', '-f', '-'], JSON.stringify(object));
  /** The rows of a printed table: header words, then each row's cells (split on two or more spaces). */
  const table = (text: string): string[][] => text.trim().split('\n').map((line) => line.trim().split(/\s{2,}/));

  before(async () => {
    server = await CarinaApiProcess.start();
    for (const file of ['scalars.yaml', 'collections.yaml', 'versions.yaml']) {
      const crds = parseAllDocuments(corpusText(file)).map((d) => d.toJS() as Obj);
      expect(crds.length).to.be.greaterThan(0);
      await kubectl(['apply', '-f', '-'], corpusText(file));
    }
    await kubectl(['wait', '--for', 'condition=Established', '--timeout', '60s', 'crd', 'scalars.corpus.example.com', 'collections.corpus.example.com', 'releases.corpus.example.com', 'clusterapps.corpus.example.com']);
  });

  after(async () => {
    await server?.stop();
  });

  describe('scalars: types, formats, RE2 patterns, nullable, defaults, int-or-string', () => {
    const scalar = (name: string, spec: Obj): Obj => ({ apiVersion: 'corpus.example.com/v1', kind: 'Scalar', metadata: { name, namespace: 'default' }, spec });

    it('creates an object using every scalar field, defaults what is missing at every level and keeps null where nullable', async () => {
      await create(scalar('full', {
        text: 'alpha', strategy: 'WARN', label: 'Label_1', letters: 'Ünïcødé', big: -999999999999, ratio: 0.75,
        port: 'https', created: '2020-01-01T00:00:00Z', day: '2024-02-29', id: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
        address: '192.0.2.10', network: '10.0.0.0/8', host: 'example.com', blob: Buffer.from('corpus').toString('base64'), note: null,
      }));
      const stored = await getJson('scalar', 'full');
      expect(stored.spec).to.include({ mode: 'Fast', count: 3, enabled: true, port: 'https', strategy: 'WARN' });
      expect(stored.spec.resources).to.deep.equal({ cpu: '100m', memory: '64Mi' });
      expect(stored.spec).to.have.property('note', null);
      await apply(scalar('numbered', { text: 'beta', port: 8443, count: 0, enabled: false }));
      const numbered = await getJson('scalar', 'numbered');
      expect(numbered.spec).to.include({ port: 8443, count: 0, enabled: false });
    });

    it('prints a column of every type: string, integer, number, boolean, date as a duration, priority columns with -o wide', async () => {
      const rows = table(await kubectl(['get', 'scalars', 'full', 'numbered']));
      expect(rows[0]).to.deep.equal(['NAME', 'TEXT', 'COUNT', 'RATIO', 'ENABLED', 'CREATED', 'AGE']);
      const full = rows.find((row) => row[0] === 'full') as string[];
      expect(full.slice(0, 5)).to.deep.equal(['full', 'alpha', '3', '0.75', 'true']);
      expect(full[5]).to.match(/^\d+y(\d+d)?$/);
      expect(full[6]).to.match(/^\d+s$/);
      // A column whose path finds nothing is a null cell, as v1.25's table convertor gives it (kubectl prints it blank).
      const served = (await server.request('GET', '/apis/corpus.example.com/v1/namespaces/default/scalars/numbered', { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json<Obj>();
      expect(served.rows[0].cells.slice(0, 6)).to.deep.equal(['numbered', 'beta', 0, null, false, null]);
      const wide = table(await kubectl(['get', 'scalars', 'full', '-o', 'wide']));
      expect(wide[0]).to.deep.equal(['NAME', 'TEXT', 'COUNT', 'RATIO', 'ENABLED', 'CREATED', 'PORT', 'AGE']);
      expect(wide[1][6]).to.equal('https');
    });

    it('refuses values outside their type, format, pattern, enum and bounds with 422, storing nothing', async () => {
      const bad: Array<[string, Obj]> = [
        ['pattern', { text: 'Not_A_Label' }],
        ['re2 case-insensitive pattern', { text: 'x', strategy: 'retry' }],
        ['re2 \\z anchor', { text: 'x', label: 'trailing\n' }],
        ['enum', { text: 'x', mode: 'Medium' }],
        ['maximum', { text: 'x', count: 11 }],
        ['multipleOf', { text: 'x', ratio: 0.3 }],
        ['type', { text: 'x', enabled: 'yes' }],
        ['int-or-string', { text: 'x', port: true }],
        ['uuid format', { text: 'x', id: 'not-a-uuid' }],
        ['ipv4 format', { text: 'x', address: '999.1.1.1' }],
        ['date format', { text: 'x', day: '2024-13-01' }],
      ];
      for (const [what, spec] of bad) {
        const result = await run(['create', '-f', '-'], JSON.stringify(scalar(`bad-${what.replace(/[^a-z0-9]+/g, '-')}`, spec)));
        expect(result.code, `${what}: ${result.stdout}`).to.not.equal(0);
        expect(result.stderr, what).to.match(/is invalid/);
      }
      const names = (await getJson('scalars')).items.map((item: Obj) => item.metadata.name);
      expect(names).to.have.members(['full', 'numbered']);
      // A null where the schema does not say nullable (and gives no default) is dropped, not refused (v1.25's PruneNonNullableNullsWithoutDefaults).
      await create(scalar('pruned-null', { text: 'x', created: null }));
      expect((await getJson('scalar', 'pruned-null')).spec).to.not.have.property('created');
      await kubectl(['delete', 'scalar', 'pruned-null']);
    });

    it('kubectl explain shows the schema\'s fields and descriptions, in OpenAPI v3 and v2', async () => {
      const explained = await kubectl(['explain', 'scalars.spec.text']);
      expect(explained).to.contain('KIND:       Scalar');
      expect(explained).to.contain('A DNS label.');
      const v2 = await kubectl(['explain', 'scalars.spec', '--output=plaintext-openapiv2']);
      expect(v2).to.contain('text');
      expect(v2).to.contain('port');
      // The v2 document carries the int-or-string field too; other types still explain.
      expect(await kubectl(['explain', 'pods.spec.containers.ports', '--output=plaintext-openapiv2'])).to.contain('containerPort');
    });

    it('merge and JSON patches, client-side and server-side apply change what they say and validate the result', async () => {
      await kubectl(['patch', 'scalar', 'numbered', '--type', 'merge', '-p', JSON.stringify({ spec: { ratio: 0.5 } })]);
      await kubectl(['patch', 'scalar', 'numbered', '--type', 'json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/count', value: 7 }])]);
      const badPatch = await run(['patch', 'scalar', 'numbered', '--type', 'merge', '-p', JSON.stringify({ spec: { count: 99 } })]);
      expect(badPatch.code).to.not.equal(0);
      await apply(scalar('numbered', { text: 'gamma', port: 8443, count: 7, enabled: false, ratio: 0.5 }));
      await kubectl(['apply', '--server-side', '--field-manager', 'corpus', '-f', '-'], JSON.stringify(scalar('applied', { text: 'delta', count: 2 })));
      const applied = await getJson('scalar', 'applied', '--show-managed-fields');
      expect(applied.spec).to.include({ text: 'delta', count: 2, mode: 'Fast' });
      expect(applied.metadata.managedFields.map((entry: Obj) => entry.manager)).to.include('corpus');
      const numbered = await getJson('scalar', 'numbered');
      expect(numbered.spec).to.include({ text: 'gamma', count: 7, ratio: 0.5 });
    });
  });

  describe('collections: list types, maps, embedded resources, CEL, status and scale', () => {
    const collection = (name: string, spec: Obj): Obj => ({ apiVersion: 'corpus.example.com/v1', kind: 'Collection', metadata: { name, namespace: 'default' }, spec });
    const gateway = (): Obj => ({
      immutableId: 'id-1',
      replicas: 2,
      tags: ['a', 'b'],
      args: ['--verbose'],
      ports: [{ name: 'http', port: 80 }, { name: 'dns', protocol: 'UDP', port: 53 }],
      labels: { team: 'corpus' },
      selector: { matchLabels: { app: 'corpus' } },
      config: { level: 'info', verbose: false },
      template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'embedded', labels: { a: 'b' } }, data: { k: 'v' } },
      extra: { anything: { goes: [1, 'two', { three: 3 }] } },
      listeners: [
        { name: 'http', protocol: 'HTTP', port: 80 },
        { name: 'https', protocol: 'HTTPS', port: 443, hostname: 'example.com', tls: { certificateRefs: [{ name: 'cert' }] } },
      ],
      matches: [{ path: { type: 'Exact', value: '/healthz' } }, {}],
      timeouts: { request: '10s', backendRequest: '5s' },
    });

    it('creates an object of the Gateway API\'s shapes: defaults inside list items and maps, CEL rules pass', async () => {
      await create(collection('gateway', gateway()));
      const stored = await getJson('collection', 'gateway');
      expect(stored.spec.ports).to.deep.equal([{ name: 'http', protocol: 'TCP', port: 80 }, { name: 'dns', protocol: 'UDP', port: 53 }]);
      expect(stored.spec.listeners[1].tls).to.deep.equal({ mode: 'Terminate', certificateRefs: [{ group: '', kind: 'Secret', name: 'cert' }] });
      expect(stored.spec.listeners[0].hostname).to.equal('*');
      expect(stored.spec.matches[1]).to.deep.equal({ path: { type: 'PathPrefix', value: '/' } });
      expect(stored.spec.template).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'embedded', labels: { a: 'b' } }, data: { k: 'v' } });
      expect(stored.spec.extra).to.deep.equal({ anything: { goes: [1, 'two', { three: 3 }] } });
    });

    it('refuses what the CEL rules, list types and map bounds forbid, with the rules\' messages', async () => {
      const cases: Array<[string, Obj, string]> = [
        ['tls on HTTP', { ...gateway(), listeners: [{ name: 'a', protocol: 'HTTP', port: 80, tls: { certificateRefs: [{ name: 'c' }] } }] }, "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']"],
        ['duplicate port and hostname', { ...gateway(), listeners: [{ name: 'a', protocol: 'HTTP', port: 80 }, { name: 'b', protocol: 'TCP', port: 80 }] }, 'Combination of port and hostname must be unique for each listener'],
        ['Terminate without certificates', { ...gateway(), listeners: [{ name: 'a', protocol: 'HTTPS', port: 443, tls: { certificateRefs: [] } }] }, 'certificateRefs must be specified when TLSModeType is Terminate'],
        ['relative path', { ...gateway(), matches: [{ path: { type: 'Exact', value: 'healthz' } }] }, "value must be an absolute path and start with '/'"],
        ['timeouts', { ...gateway(), timeouts: { request: '1s', backendRequest: '2s' } }, 'backendRequest timeout cannot be longer than request timeout'],
        ['duplicate set item', { ...gateway(), tags: ['a', 'a'] }, 'Duplicate value: "a"'],
        ['duplicate map key', { ...gateway(), ports: [{ name: 'x', port: 1 }, { name: 'x', port: 2 }] }, 'Duplicate value'],
        ['too many properties', { ...gateway(), labels: { a: '1', b: '2', c: '3', d: '4', e: '5' } }, 'must have at most 4 items'],
      ];
      for (const [what, spec, message] of cases) {
        const result = await run(['create', '-f', '-'], JSON.stringify(collection(`bad-${what.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`, spec)));
        expect(result.code, what).to.not.equal(0);
        expect(result.stderr, what).to.contain(message);
      }
      expect((await getJson('collections')).items.map((item: Obj) => item.metadata.name)).to.deep.equal(['gateway']);
    });

    it('a transition rule compares with the old object on update only', async () => {
      const changed = await run(['patch', 'collection', 'gateway', '--type', 'merge', '-p', JSON.stringify({ spec: { immutableId: 'id-2' } })]);
      expect(changed.code).to.not.equal(0);
      expect(changed.stderr).to.contain('immutableId is immutable');
      await kubectl(['patch', 'collection', 'gateway', '--type', 'merge', '-p', JSON.stringify({ spec: { tags: ['a', 'b', 'c'] } })]);
      expect((await getJson('collection', 'gateway')).spec.tags).to.deep.equal(['a', 'b', 'c']);
    });

    it('server-side apply merges lists by their list type: map items by key, set items by value, atomic lists whole', async () => {
      // New items of a map list and of a set are the second manager's own; the other items stay.
      await kubectl(['apply', '--server-side', '--field-manager', 'second', '-f', '-'], JSON.stringify(collection('gateway', { ports: [{ name: 'metrics', port: 9090 }], tags: ['z'] })));
      const stored = await getJson('collection', 'gateway');
      expect(stored.spec.ports.map((port: Obj) => port.name)).to.have.members(['http', 'dns', 'metrics']);
      expect(stored.spec.tags).to.have.members(['a', 'b', 'c', 'z']);
      // An atomic list is one field, owned by the create that set it.
      const conflict = await run(['apply', '--server-side', '--field-manager', 'second', '-f', '-'], JSON.stringify(collection('gateway', { args: ['--other'] })));
      expect(conflict.code).to.not.equal(0);
      expect(conflict.stderr).to.contain('conflict with "kubectl-create"');
      expect(conflict.stderr).to.contain('.spec.args');
    });

    it('the status subresource and its filter column; the scale subresource through kubectl scale', async () => {
      const status = { status: { replicas: 2, selector: 'app=corpus', conditions: [{ type: 'Ready', status: 'True', reason: 'Listening', lastTransitionTime: '2026-01-01T00:00:00Z' }, { type: 'Programmed', status: 'False', reason: 'Pending' }] } };
      await kubectl(['patch', 'collection', 'gateway', '--subresource', 'status', '--type', 'merge', '-p', JSON.stringify(status)]);
      const rows = table(await kubectl(['get', 'collections', 'gateway', '-o', 'wide']));
      expect(rows[0]).to.deep.equal(['NAME', 'READY', 'REASON', 'REPLICAS', 'AGE']);
      expect(rows[1].slice(0, 4)).to.deep.equal(['gateway', 'True', 'Listening', '2']);
      await kubectl(['scale', 'collection', 'gateway', '--replicas', '5']);
      expect((await getJson('collection', 'gateway')).spec.replicas).to.equal(5);
      const scale = (await server.request('GET', '/apis/corpus.example.com/v1/namespaces/default/collections/gateway/scale')).json<Obj>();
      expect(scale.spec).to.deep.equal({ replicas: 5 });
      expect(scale.status).to.deep.equal({ replicas: 2, selector: 'app=corpus' });
    });

    it('kubectl explain reaches fields of list items and embedded objects', async () => {
      expect(await kubectl(['explain', 'collections.spec.listeners.tls.certificateRefs'])).to.contain('name');
      expect(await kubectl(['explain', 'collections.spec.ports'])).to.contain('protocol');
    });
  });

  describe('versions and scopes: deprecated versions, conversion None, a cluster-scoped CRD with a qualified finalizer', () => {
    it('serves an object through every version, warns on the deprecated ones and stores the newest', async () => {
      const created = await run(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'corpus.example.com/v1alpha1', kind: 'Release', metadata: { name: 'r1', namespace: 'default' }, spec: { chart: 'web', version: '1.0.0' } }));
      expect(created.code).to.equal(0);
      expect(created.stderr).to.contain('Warning: corpus.example.com/v1alpha1 Release is going away; use corpus.example.com/v1');
      const beta = await run(['get', 'releases.v1beta1.corpus.example.com', 'r1', '-o', 'json']);
      expect(beta.stderr).to.contain('Warning: corpus.example.com/v1beta1 Release is deprecated');
      expect(JSON.parse(beta.stdout).apiVersion).to.equal('corpus.example.com/v1beta1');
      const v1 = await getJson('releases.v1.corpus.example.com', 'r1');
      expect(v1.apiVersion).to.equal('corpus.example.com/v1');
      expect(v1.spec).to.deep.equal({ chart: 'web', version: '1.0.0' });
      const rows = table(await kubectl(['get', 'releases', 'r1']));
      expect(rows[0]).to.deep.equal(['NAME', 'CHART', 'VERSION', 'AGE']);
      expect(rows[1].slice(0, 3)).to.deep.equal(['r1', 'web', '1.0.0']);
      const crd = await getJson('crd', 'releases.corpus.example.com');
      expect(crd.status.storedVersions).to.deep.equal(['v1']);
    });

    it('a cluster-scoped object takes a domain-qualified finalizer, prints columns with spaces in their names and waits for its finalizer on delete', async () => {
      await apply({ apiVersion: 'corpus.example.com/v1', kind: 'ClusterApp', metadata: { name: 'guestbook', finalizers: ['resources-finalizer.argocd.argoproj.io'] }, spec: { project: 'default' } });
      await kubectl(['patch', 'clusterapp', 'guestbook', '--subresource', 'status', '--type', 'merge', '-p', JSON.stringify({ status: { sync: { status: 'Synced', revision: 'abc123' }, health: { status: 'Healthy' } } })]);
      const rows = (await kubectl(['get', 'capp', 'guestbook', '-o', 'wide'])).trim().split('\n');
      expect(rows[0].split(/\s{2,}/)).to.deep.equal(['NAME', 'SYNC STATUS', 'HEALTH STATUS', 'REVISION']);
      expect(rows[1].split(/\s+/)).to.deep.equal(['guestbook', 'Synced', 'Healthy', 'abc123']);
      await kubectl(['delete', 'clusterapp', 'guestbook', '--wait=false']);
      const deleting = await getJson('clusterapp', 'guestbook');
      expect(deleting.metadata.deletionTimestamp).to.be.a('string');
      await kubectl(['patch', 'clusterapp', 'guestbook', '--type', 'json', '-p', JSON.stringify([{ op: 'remove', path: '/metadata/finalizers' }])]);
      const gone = await run(['get', 'clusterapp', 'guestbook']);
      expect(gone.stderr).to.contain('NotFound');
      const namespaced = await run(['get', 'clusterapps', '--field-selector', 'metadata.namespace=default']);
      expect(namespaced.code).to.not.equal(0);
    });

    it('kubectl explain reads each version\'s own schema', async () => {
      expect(await kubectl(['explain', 'releases.spec.chart'])).to.contain('The chart to install.');
      expect(await kubectl(['explain', 'releases.spec', '--api-version', 'corpus.example.com/v1alpha1'])).to.contain('chart');
    });

    it('refuses a CRD whose rule would cost more than v1.25\'s budget, naming the factor', async () => {
      const expensive = {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'expensives.corpus.example.com' },
        spec: {
          group: 'corpus.example.com',
          scope: 'Namespaced',
          names: { plural: 'expensives', singular: 'expensive', kind: 'Expensive' },
          versions: [{
            name: 'v1', served: true, storage: true,
            schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { names: { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x == y))' }] } } } } } },
          }],
        },
      };
      const refused = await run(['apply', '-f', '-'], JSON.stringify(expensive));
      expect(refused.code).to.not.equal(0);
      expect(refused.stderr).to.match(/estimated rule cost exceeds budget by factor of (more than 100x|[0-9.]+x)/);
      expect((await run(['get', 'crd', 'expensives.corpus.example.com'])).code).to.not.equal(0);
    });

    it('lists every corpus kind through its category', async () => {
      const listed = await kubectl(['get', 'corpus', '-A', '-o', 'name']);
      expect(listed).to.contain('scalar.corpus.example.com/full');
      expect(listed).to.contain('collection.corpus.example.com/gateway');
    });
  });
});
