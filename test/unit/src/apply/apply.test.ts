import { expect } from 'chai';
import {
  ApplyConflictError, FieldSet, apply, fieldElement, type FieldPath, applyConflictMessage, managerFromUserAgent, pathToString, updateManagedFields,
} from '../../../../src/apply';
import { ApiError } from '../../../../src/util';
import type { JsonObject } from '../../../../src/apis/object';

const T0 = '2022-01-01T00:00:00Z';
const T1 = '2022-01-01T00:01:00Z';
const T2 = '2022-01-01T00:02:00Z';
const T3 = '2022-01-01T00:03:00Z';

type Object = JsonObject;

/** A ConfigMap; `data` undefined leaves the field out (an empty map would be owned as a value). */
function configMap(data: Record<string, string> | undefined, metadata: JsonObject = {}): Object {
  const object: Object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default', ...metadata } };
  if (data !== undefined) object.data = data;
  return object;
}

function deployment(spec: JsonObject): Object {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' }, spec };
}

interface Entry { manager: string; operation: string; apiVersion: string; time?: string; fieldsV1: unknown; subresource?: string }

function entries(object: Object): Entry[] {
  return ((object.metadata as JsonObject).managedFields ?? []) as Entry[];
}

/** manager -> the paths it owns, as conflict messages print them. */
function owners(object: Object): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const entry of entries(object)) out[entry.manager] = FieldSet.fromFieldsV1(entry.fieldsV1).paths().map(pathToString);
  return out;
}

function conflictOf(fn: () => unknown): ApplyConflictError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ApplyConflictError);
    return err as ApplyConflictError;
  }
  throw new Error('expected an ApplyConflictError');
}

const applyAs = (live: Object | undefined, config: Object, manager: string, now: string, force = false): Object => apply(live, config, manager, { force, now });

describe('apply/apply', () => {
  describe('field ownership under apply (spec §3.2)', () => {
    // A owns .data.a (and .data.keep) after its apply.
    const ownedByA = applyAs(undefined, configMap({ a: '1', keep: 'k' }), 'a', T0);

    it('creates the object with the applier owning what it applied', () => {
      expect(ownedByA.data).to.deep.equal({ a: '1', keep: 'k' });
      expect(entries(ownedByA)).to.deep.equal([{
        manager: 'a', operation: 'Apply', apiVersion: 'v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {}, 'f:keep': {} } },
      }]);
    });

    it('owned by A, B applies a different value without force: conflict, nothing changes', () => {
      const error = conflictOf(() => applyAs(ownedByA, configMap({ a: '2' }), 'b', T1));
      expect(error.conflicts).to.deep.equal([{ manager: 'a', operation: 'Apply', apiVersion: 'v1', subresource: '', field: '.data.a' }]);
      // Appliers are printed without apiVersion (k8s.io/apiserver fieldmanager/internal/conflict.go printManager).
      expect(error.message).to.equal('Apply failed with 1 conflict: conflict with "a": .data.a');
      expect(ownedByA.data).to.deep.equal({ a: '1', keep: 'k' });
    });

    it('owned by A, B applies a different value with force: B sole owner, value changes', () => {
      const forced = applyAs(ownedByA, configMap({ a: '2' }), 'b', T1, true);
      expect(forced.data).to.deep.equal({ a: '2', keep: 'k' });
      expect(owners(forced)).to.deep.equal({ a: ['.data.keep'], b: ['.data.a'] });
    });

    it('owned by A, B applies the same value: shared, unchanged, no conflict', () => {
      const shared = applyAs(ownedByA, configMap({ a: '1' }), 'b', T1);
      expect(shared.data).to.deep.equal({ a: '1', keep: 'k' });
      expect(owners(shared)).to.deep.equal({ a: ['.data.a', '.data.keep'], b: ['.data.a'] });
    });

    it('shared field changed by one of its owners without force: conflict with the other', () => {
      const shared = applyAs(ownedByA, configMap({ a: '1' }), 'b', T1);
      const error = conflictOf(() => applyAs(shared, configMap({ a: '3', keep: 'k' }), 'a', T2));
      expect(error.message).to.equal('Apply failed with 1 conflict: conflict with "b": .data.a');
    });

    it('owned by A alone, A applies without it: the field is deleted', () => {
      const dropped = applyAs(ownedByA, configMap({ keep: 'k' }), 'a', T1);
      expect(dropped.data).to.deep.equal({ keep: 'k' });
      expect(owners(dropped)).to.deep.equal({ a: ['.data.keep'] });
    });

    it('owned by A and B, A applies without it: the value stays, owned by B', () => {
      const shared = applyAs(ownedByA, configMap({ a: '1' }), 'b', T1);
      const dropped = applyAs(shared, configMap({ keep: 'k' }), 'a', T2);
      expect(dropped.data).to.deep.equal({ a: '1', keep: 'k' });
      expect(owners(dropped)).to.deep.equal({ a: ['.data.keep'], b: ['.data.a'] });
    });

    it('owned by A, a non-apply write by C: C owns it as Update, never a conflict', () => {
      const edited = updateManagedFields(ownedByA, configMap({ a: '9', keep: 'k' }, { managedFields: (ownedByA.metadata as JsonObject).managedFields }), 'c', { now: T1 });
      expect(edited.data).to.deep.equal({ a: '9', keep: 'k' });
      expect(entries(edited).map((e) => [e.manager, e.operation, e.time])).to.deep.equal([['a', 'Apply', T0], ['c', 'Update', T1]]);
      expect(owners(edited)).to.deep.equal({ a: ['.data.keep'], c: ['.data.a'] });
      // A later apply by A of its old value now conflicts with the updater, printed with its apiVersion.
      const error = conflictOf(() => applyAs(edited, configMap({ a: '1', keep: 'k' }), 'a', T2));
      expect(error.message).to.equal('Apply failed with 1 conflict: conflict with "c" using v1: .data.a');
    });
  });

  describe('three managers', () => {
    const a = applyAs(undefined, configMap({ x: '1', y: '1' }), 'a', T0);
    const ab = applyAs(a, configMap({ x: '1' }), 'b', T1);
    const abc = updateManagedFields(ab, configMap({ x: '1', y: '2' }), 'c', { now: T2 });

    it('reports every conflicting owner, grouped by manager (Apply failed with N conflicts)', () => {
      const error = conflictOf(() => applyAs(abc, configMap({ x: '5', y: '5' }), 'd', T3));
      expect(error.conflicts.map((c) => `${c.manager}:${c.field}`)).to.deep.equal(['a:.data.x', 'b:.data.x', 'c:.data.y']);
      expect(error.message).to.equal('Apply failed with 3 conflicts: conflicts with "a":\n- .data.x\nconflicts with "b":\n- .data.x\n'
        + 'conflicts with "c" using v1:\n- .data.y');
      const status = error.toApiError();
      expect(status).to.be.instanceOf(ApiError);
      expect(status.toStatus()).to.deep.equal({
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: error.message, reason: 'Conflict',
        details: { causes: [
          { reason: 'FieldManagerConflict', message: 'conflict with "a"', field: '.data.x' },
          { reason: 'FieldManagerConflict', message: 'conflict with "b"', field: '.data.x' },
          { reason: 'FieldManagerConflict', message: 'conflict with "c" using v1', field: '.data.y' },
        ] },
        code: 409,
      });
    });

    it('force takes the fields from all of them and drops managers left empty', () => {
      const forced = applyAs(abc, configMap({ x: '5', y: '5' }), 'd', T3, true);
      expect(forced.data).to.deep.equal({ x: '5', y: '5' });
      expect(owners(forced)).to.deep.equal({ d: ['.data.x', '.data.y'] });
    });

    it('a field two others own survives the applier dropping it', () => {
      const dropped = applyAs(abc, configMap(undefined), 'a', T3);
      expect(dropped.data).to.deep.equal({ x: '1', y: '2' });
      expect(owners(dropped)).to.deep.equal({ b: ['.data.x'], c: ['.data.y'] });
    });
  });

  describe('lists and maps by topology', () => {
    const container = (name: string, extra: JsonObject = {}): JsonObject => ({ name, image: `${name}:1`, ...extra });
    const podTemplate = (containers: JsonObject[], extra: JsonObject = {}): JsonObject => ({
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers, ...extra } },
    });

    it('map lists: items keyed by name, each owned by its applier; dropping an item removes only that item', () => {
      const first = applyAs(undefined, deployment(podTemplate([container('app')])), 'a', T0);
      const both = applyAs(first, deployment({ template: { spec: { containers: [container('sidecar')] } } }), 'b', T1);
      const containers = (): unknown => ((both.spec as JsonObject).template as JsonObject);
      expect(((containers() as JsonObject).spec as JsonObject).containers).to.deep.equal([container('app'), container('sidecar')]);
      expect(owners(both).b).to.deep.equal([
        '.spec.template.spec.containers[name="sidecar"]', '.spec.template.spec.containers[name="sidecar"].image', '.spec.template.spec.containers[name="sidecar"].name',
      ]);
      const fieldsV1 = entries(both).find((e) => e.manager === 'b')?.fieldsV1;
      expect(fieldsV1).to.deep.equal({ 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"sidecar"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } } } });
      const withoutSidecar = applyAs(both, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' } }, 'b', T2);
      expect((((withoutSidecar.spec as JsonObject).template as JsonObject).spec as JsonObject).containers).to.deep.equal([container('app')]);
      expect(owners(withoutSidecar).b).to.equal(undefined);
    });

    it('orders merged map list items as structured-merge-diff does: the config order, live-only items kept in place', () => {
      const first = applyAs(undefined, deployment(podTemplate([container('a'), container('b'), container('c')])), 'one', T0);
      const reordered = applyAs(first, deployment({ template: { spec: { containers: [{ name: 'c' }, container('d'), { name: 'a' }] } } }), 'two', T1);
      const names = ((((reordered.spec as JsonObject).template as JsonObject).spec as JsonObject).containers as JsonObject[]).map((c) => c.name);
      // typed/merge.go visitListItems: b (live only) stays ahead of the shared items, which follow the config.
      expect(names).to.deep.equal(['b', 'c', 'd', 'a']);
      // A pure reordering is no change for structured merge (items compare by key): the live object stays.
      const onlyReordered = applyAs(first, deployment({ template: { spec: { containers: [{ name: 'c' }, { name: 'a' }] } } }), 'two', T1);
      expect((((onlyReordered.spec as JsonObject).template as JsonObject).spec as JsonObject).containers).to.deep.equal([container('a'), container('b'), container('c')]);
    });

    it('map lists with two keys and a defaulted key: ports by containerPort and protocol', () => {
      const withPorts = applyAs(undefined, deployment(podTemplate([container('app', { ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }] })])), 'a', T0);
      const paths = owners(withPorts).a ?? [];
      // protocol defaults to "TCP" in the key (core/v1 ContainerPort, structured-merge-diff key defaults).
      expect(paths).to.include('.spec.template.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"]');
      expect(paths).to.include('.spec.template.spec.containers[name="app"].ports[containerPort=53,protocol="UDP"].protocol');
    });

    it('atomic lists: replaced whole, owned by one manager', () => {
      const first = applyAs(undefined, deployment(podTemplate([container('app', { args: ['a', 'b'] })])), 'a', T0);
      const config = deployment({ template: { spec: { containers: [{ name: 'app', args: ['c'] }] } } });
      const error = conflictOf(() => applyAs(first, config, 'b', T1));
      expect(error.message).to.equal('Apply failed with 1 conflict: conflict with "a": .spec.template.spec.containers[name="app"].args');
      const forced = applyAs(first, config, 'b', T1, true);
      const app = ((((forced.spec as JsonObject).template as JsonObject).spec as JsonObject).containers as JsonObject[])[0] as JsonObject;
      expect(app.args).to.deep.equal(['c']);
      expect(owners(forced).b).to.include('.spec.template.spec.containers[name="app"].args');
      expect(owners(forced).a).to.not.include('.spec.template.spec.containers[name="app"].args');
    });

    it('atomic maps: another applier\'s different key is a conflict on the whole map', () => {
      const first = applyAs(undefined, deployment(podTemplate([container('app')], { nodeSelector: { zone: 'a' } })), 'a', T0);
      const error = conflictOf(() => applyAs(first, deployment({ template: { spec: { nodeSelector: { disk: 'ssd' } } } }), 'b', T1));
      expect(error.conflicts.map((c) => c.field)).to.deep.equal(['.spec.template.spec.nodeSelector']);
    });

    it('atomic structs: the label selector is one field', () => {
      const first = applyAs(undefined, deployment(podTemplate([container('app')])), 'a', T0);
      expect(owners(first).a).to.include('.spec.selector');
      expect(owners(first).a).to.not.include('.spec.selector.matchLabels.app');
    });

    it('granular maps: different keys are owned separately', () => {
      const first = applyAs(undefined, configMap(undefined, { labels: { x: '1' } }), 'a', T0);
      const second = applyAs(first, configMap(undefined, { labels: { y: '2' } }), 'b', T1);
      expect((second.metadata as JsonObject).labels).to.deep.equal({ x: '1', y: '2' });
      expect(owners(second)).to.deep.equal({ a: ['.metadata.labels.x'], b: ['.metadata.labels.y'] });
    });

    it('set lists: items owned by value', () => {
      const first = applyAs(undefined, configMap(undefined, { finalizers: ['example.com/a'] }), 'a', T0);
      const second = applyAs(first, configMap(undefined, { finalizers: ['example.com/b'] }), 'b', T1);
      expect((second.metadata as JsonObject).finalizers).to.deep.equal(['example.com/a', 'example.com/b']);
      expect(entries(second).find((e) => e.manager === 'b')?.fieldsV1).to.deep.equal({ 'f:metadata': { 'f:finalizers': { 'v:"example.com/b"': {} } } });
      const removed = applyAs(second, configMap(undefined), 'a', T2);
      expect((removed.metadata as JsonObject).finalizers).to.deep.equal(['example.com/b']);
    });

    it('refuses map list items that are not objects', () => {
      expect(() => applyAs(undefined, deployment({ template: { spec: { containers: ['x'] } } }), 'a', T0))
        .to.throw('.spec.template.spec.containers: element 0: associative list with keys may not have non-map elements');
    });

    it('takes a missing key field from its schema default (structured-merge-diff key defaults)', () => {
      // core/v1 Container.name has default "" in the v1.25 OpenAPI v3 document.
      const created = applyAs(undefined, deployment({ template: { spec: { containers: [{ image: 'x' }] } } }), 'a', T0);
      expect(owners(created).a).to.include('.spec.template.spec.containers[name=""].image');
    });

    it('unknown kinds: every key owned on its own, lists atomic', () => {
      const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1, tags: ['a'] } };
      const created = applyAs(undefined, widget, 'a', T0);
      expect(entries(created)[0]?.fieldsV1).to.deep.equal({ 'f:spec': { '.': {}, 'f:size': {}, 'f:tags': {} } });
    });
  });

  describe('managers and times', () => {
    it('an apply that changes nothing keeps the applier\'s time', () => {
      const first = applyAs(undefined, configMap({ a: '1' }), 'a', T0);
      const again = applyAs(first, configMap({ a: '1' }), 'a', T1);
      expect(entries(again)[0]?.time).to.equal(T0);
    });

    it('a new applier whose apply changes nothing gets an entry without time (managedFieldsUpdater.Apply)', () => {
      const first = applyAs(undefined, configMap({ a: '1' }), 'a', T0);
      const shared = applyAs(first, configMap({ a: '1' }), 'b', T1);
      expect(entries(shared).find((e) => e.manager === 'b')).to.not.have.property('time');
    });

    it('an applier applying only identity fields gets no entry', () => {
      const first = applyAs(undefined, configMap({ a: '1' }), 'a', T0);
      const none = applyAs(first, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' } }, 'b', T1);
      expect(entries(none).map((e) => e.manager)).to.deep.equal(['a']);
    });

    it('refuses managedFields in an apply body (structuredmerge.go)', () => {
      try {
        apply(undefined, configMap(undefined, { managedFields: [] }), 'a', { force: false, now: T0 });
        expect.fail('expected an error');
      } catch (err) {
        expect(err).to.be.instanceOf(ApiError);
        expect((err as ApiError).code).to.equal(400);
        expect((err as ApiError).message).to.equal('metadata.managedFields must be nil');
      }
    });

    it('gives the fields of an object without managedFields to "before-first-apply"', () => {
      const untracked = configMap({ a: '1' });
      const error = conflictOf(() => applyAs(untracked, configMap({ a: '2' }), 'a', T1));
      expect(error.message).to.equal('Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a');
    });

    it('records subresource writers separately', () => {
      const first = applyAs(undefined, configMap({ a: '1' }), 'a', T0);
      const status = apply(first, configMap({ a: '2' }), 'ctl', { force: true, now: T1, subresource: 'status' });
      const ctl = entries(status).find((e) => e.manager === 'ctl');
      expect(ctl?.subresource).to.equal('status');
      const error = conflictOf(() => applyAs(status, configMap({ a: '3' }), 'a', T2));
      expect(error.message).to.equal('Apply failed with 1 conflict: conflict with "ctl" with subresource "status": .data.a');
    });

    it('caps Update entries at ten, folding the oldest into "ancient-changes" (capmanagers.go)', () => {
      let object = updateManagedFields(undefined, configMap({ k0: 'v' }), 'm0', { now: '2022-01-01T00:00:00Z' });
      for (let i = 1; i <= 10; i++) {
        const data = { ...(object.data as Record<string, string>), [`k${i}`]: 'v' };
        object = updateManagedFields(object, { ...configMap(data), metadata: object.metadata }, `m${i}`, { now: `2022-01-01T00:${String(i).padStart(2, '0')}:00Z` });
      }
      const managers = entries(object).map((e) => e.manager);
      expect(managers).to.have.length(10);
      expect(managers).to.not.include('m0');
      expect(managers).to.not.include('m1');
      // m0 created .data itself, so it owned the map as well as its key.
      expect(owners(object)['ancient-changes']).to.deep.equal(['.data', '.data.k0', '.data.k1']);
    });
  });

  describe('ignored (reset) fields', () => {
    // The apps/v1 Deployment strategy resets status on the main resource (pkg/registry/apps/deployment
    // strategy.go GetResetFields); the field manager neither records nor conflicts on it.
    const status: FieldPath[] = [[fieldElement('status')]];

    it('an apply does not own ignored fields', () => {
      const config = { ...deployment({ replicas: 1 }), status: { replicas: 1 } };
      const created = apply(undefined, config, 'a', { force: false, now: T0, ignoredFields: status });
      expect(owners(created).a).to.deep.equal(['.spec.replicas']);
    });

    it('an update does not take ignored fields from their owner', () => {
      const first = applyAs(undefined, { ...deployment({ replicas: 1 }), status: { replicas: 1 } }, 'a', T0);
      const updated = updateManagedFields(first, { ...deployment({ replicas: 1 }), status: { replicas: 2 }, metadata: first.metadata }, 'c', { now: T1, ignoredFields: status });
      expect(owners(updated)).to.deep.equal({ a: ['.spec.replicas', '.status.replicas'] });
    });
  });

  describe('non-apply writes', () => {
    it('records what a create sets as kubectl-create does for a Deployment', () => {
      const created = updateManagedFields(undefined, deployment({ replicas: 1, template: { metadata: { labels: { app: 'web' } } }, strategy: { type: 'RollingUpdate' } }), 'kubectl-create', { now: T0 });
      // spec, spec.template and spec.strategy exist in Go's zero Deployment, so they are not members;
      // labels are new, so they are (".").
      expect(entries(created)[0]?.fieldsV1).to.deep.equal({
        'f:spec': { 'f:replicas': {}, 'f:strategy': { 'f:type': {} }, 'f:template': { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } } },
      });
    });

    it('a write that changes nothing keeps entries and times', () => {
      const created = updateManagedFields(undefined, configMap({ a: '1' }), 'c', { now: T0 });
      const same = updateManagedFields(created, configMap({ a: '1' }), 'c', { now: T1 });
      expect(entries(same)).to.deep.equal(entries(created));
    });

    it('removing a field takes it from every manager', () => {
      const applied = applyAs(undefined, configMap({ a: '1', b: '2' }), 'a', T0);
      const edited = updateManagedFields(applied, configMap({ b: '2' }), 'edit', { now: T1 });
      expect(owners(edited)).to.deep.equal({ a: ['.data.b'] });
    });

    it('resets managedFields with [{}], then owns what the same write changed (spec §4.2)', () => {
      const applied = applyAs(undefined, configMap({ a: '1' }), 'a', T0);
      const reset = updateManagedFields(applied, configMap({ a: '1', b: '2' }, { managedFields: [{}] }), 'edit', { now: T1 });
      expect(owners(reset)).to.deep.equal({ edit: ['.data.b'] });
      const onlyReset = updateManagedFields(applied, configMap({ a: '1' }, { managedFields: [{}] }), 'edit', { now: T1 });
      expect((onlyReset.metadata as JsonObject).managedFields).to.equal(undefined);
    });

    it('keeps the live entries when the write sends [] or none', () => {
      const applied = applyAs(undefined, configMap({ a: '1' }), 'a', T0);
      const kept = updateManagedFields(applied, configMap({ a: '1', b: '2' }, { managedFields: [] }), 'edit', { now: T1 });
      expect(owners(kept)).to.deep.equal({ a: ['.data.a'], edit: ['.data.b'] });
    });

    it('leaves objects that were never tracked untracked', () => {
      const untracked = updateManagedFields(configMap({ a: '1' }), configMap({ a: '2' }), 'edit', { now: T1 });
      expect((untracked.metadata as JsonObject).managedFields).to.equal(undefined);
    });
  });

  describe('kubectl client-side to server-side apply (spec §4.9.8)', () => {
    const lastApplied = (replicas: number): string => `${JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { annotations: {}, name: 'web', namespace: 'default' }, spec: { replicas } })}\n`;
    function clientSideApplied(replicas: number, liveReplicas = replicas): Object {
      const object = deployment({ replicas: liveReplicas });
      (object.metadata as JsonObject).annotations = { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied(replicas) };
      return updateManagedFields(undefined, object, 'kubectl-client-side-apply', { now: T0 });
    }

    it('lets the manager "kubectl" take fields its last-applied annotation still describes', () => {
      const live = clientSideApplied(1);
      const config = deployment({ replicas: 3 });
      const upgraded = applyAs(live, config, 'kubectl', T1);
      expect((upgraded.spec as JsonObject).replicas).to.equal(3);
      expect(owners(upgraded).kubectl).to.deep.equal(['.spec.replicas']);
      expect(owners(upgraded)['kubectl-client-side-apply']).to.not.include('.spec.replicas');
      // The annotation follows the server-side config so a downgrade keeps working (lastappliedupdater.go).
      const annotation = ((upgraded.metadata as JsonObject).annotations as JsonObject)['kubectl.kubernetes.io/last-applied-configuration'];
      expect(annotation).to.equal('{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":3}}\n');
    });

    it('still conflicts on fields that drifted from the annotation', () => {
      const live = clientSideApplied(1, 5);
      const error = conflictOf(() => applyAs(live, deployment({ replicas: 3 }), 'kubectl', T1));
      expect(error.message).to.equal('Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas');
    });

    it('still conflicts for any other manager name', () => {
      const live = clientSideApplied(1);
      const error = conflictOf(() => applyAs(live, deployment({ replicas: 3 }), 'my-tool', T1));
      expect(error.conflicts.map((c) => c.field)).to.deep.equal(['.spec.replicas']);
    });
  });

  describe('managerFromUserAgent', () => {
    it('takes the User-Agent up to the first "/" (handlers/rest.go prefixFromUserAgent)', () => {
      expect(managerFromUserAgent('kubectl/v1.25.0 (linux/amd64) kubernetes/a866cbe')).to.equal('kubectl');
      expect(managerFromUserAgent('Go-http-client/1.1')).to.equal('Go-http-client');
      expect(managerFromUserAgent(undefined)).to.equal('');
    });

    it('drops unprintable characters and cuts to 128 bytes', () => {
      expect(managerFromUserAgent('my\u0000tool\t/1')).to.equal('mytool');
      expect(managerFromUserAgent('x'.repeat(200))).to.have.length(128);
    });
  });

  it('formats a single conflict message as kube-apiserver does', () => {
    expect(applyConflictMessage([{ manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion: 'apps/v1', subresource: '', field: '.spec.replicas' }]))
      .to.equal('Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas');
  });
});
