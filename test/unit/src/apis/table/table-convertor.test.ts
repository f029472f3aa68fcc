import { expect } from 'chai';
import { hasCustomColumns, toTable } from '../../../../../src/apis/table';
import { NOW, ago } from './table-test-support';
import type { JsonObject } from '../../../../../src/apis/object';

// metav1.ObjectMeta{}.SwaggerDoc() in k8s.io/apimachinery v1.25 (also the v1.25 OpenAPI ObjectMeta descriptions).
const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names';
const CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

function configMap(name: string): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '42', creationTimestamp: ago(90), labels: { app: 'x' } },
    data: { a: '1', b: '2' },
  };
}

function widget(name: string, created?: string): JsonObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name, ...(created === undefined ? {} : { creationTimestamp: created }) },
    spec: { size: 3 },
  };
}

describe('toTable', () => {
  describe('the Table envelope', () => {
    it('is a meta.k8s.io/v1 Table with the list metadata copied', () => {
      const table = toTable([configMap('one')], { resourceVersion: '77', continue: 'token', remainingItemCount: 5 }, { includeObject: 'None', now: NOW });
      expect(table['kind']).to.equal('Table');
      expect(table['apiVersion']).to.equal('meta.k8s.io/v1');
      expect(table['metadata']).to.deep.equal({ resourceVersion: '77', continue: 'token', remainingItemCount: 5 });
      // Go serializes the fields in struct order: TypeMeta, ListMeta, columnDefinitions, rows.
      expect(Object.keys(table)).to.deep.equal(['kind', 'apiVersion', 'metadata', 'columnDefinitions', 'rows']);
    });

    it('leaves out list metadata the list did not carry (ListMeta fields are omitempty)', () => {
      const table = toTable([configMap('one')], { resourceVersion: '', selfLink: '/api/v1/configmaps' }, { includeObject: 'None', now: NOW });
      expect(table['metadata']).to.deep.equal({});
    });

    it('answers in meta.k8s.io/v1beta1 when that is the negotiated version, rows objects included', () => {
      const table = toTable([configMap('one')], {}, { includeObject: 'Metadata', now: NOW, tableApiVersion: 'meta.k8s.io/v1beta1' });
      expect(table['apiVersion']).to.equal('meta.k8s.io/v1beta1');
      const rows = table['rows'] as JsonObject[];
      expect((rows[0]?.['object'] as JsonObject)['apiVersion']).to.equal('meta.k8s.io/v1beta1');
    });

    it('drops the column definitions for noHeaders (the field is not omitempty, so it is null)', () => {
      const table = toTable([configMap('one')], {}, { includeObject: 'None', now: NOW, noHeaders: true });
      expect(table['columnDefinitions']).to.equal(null);
      expect((table['rows'] as JsonObject[])[0]?.['cells']).to.deep.equal(['one', 2, '90s']);
    });

    it('prints one row per list item in order', () => {
      const table = toTable([configMap('b'), configMap('a')], {}, { includeObject: 'None', now: NOW });
      expect((table['rows'] as JsonObject[]).map((row) => (row['cells'] as unknown[])[0])).to.deep.equal(['b', 'a']);
    });

    it('gives an empty list of a printed kind its columns and rows: [] when told the kind', () => {
      const table = toTable([], { resourceVersion: '9' }, { includeObject: 'None', now: NOW, objectKind: { apiVersion: 'v1', kind: 'Pod' } });
      expect((table['columnDefinitions'] as JsonObject[]).map((c) => c['name'])).to.deep.equal([
        'Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node', 'Nominated Node', 'Readiness Gates',
      ]);
      expect(table['rows']).to.deep.equal([]);
    });
  });

  describe('row objects per includeObject (apiserver endpoints/handlers/response.go asTable)', () => {
    it('Metadata: a PartialObjectMetadata in the Table group version with the whole metadata', () => {
      const object = configMap('one');
      const row = (toTable([object], {}, { includeObject: 'Metadata', now: NOW })['rows'] as JsonObject[])[0] ?? {};
      expect(row['object']).to.deep.equal({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object['metadata'] });
      expect(Object.keys(row)).to.deep.equal(['cells', 'object']);
    });

    it('Object: the object itself', () => {
      const object = configMap('one');
      const row = (toTable([object], {}, { includeObject: 'Object', now: NOW })['rows'] as JsonObject[])[0] ?? {};
      expect(row['object']).to.deep.equal(object);
    });

    it('None: null, since an empty RawExtension marshals as null', () => {
      const row = (toTable([configMap('one')], {}, { includeObject: 'None', now: NOW })['rows'] as JsonObject[])[0] ?? {};
      expect(row).to.have.property('object', null);
    });
  });

  describe('the default table for kinds without a printer (apiserver pkg/registry/rest/table.go)', () => {
    it('has the Name and Created At columns with ObjectMeta descriptions', () => {
      const table = toTable([widget('w1', '2022-12-31T23:59:59Z')], {}, { includeObject: 'None', now: NOW });
      expect(table['columnDefinitions']).to.deep.equal([
        { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
        { name: 'Created At', type: 'date', format: '', description: CREATION_TIMESTAMP_DESCRIPTION, priority: 0 },
      ]);
      expect((table['rows'] as JsonObject[])[0]?.['cells']).to.deep.equal(['w1', '2022-12-31T23:59:59Z']);
    });

    it('prints the creation time in UTC at second precision, and Go zero time when it is missing', () => {
      const table = toTable([widget('w1', '2023-01-01T05:00:00.123+02:00'), widget('w2')], {}, { includeObject: 'None', now: NOW });
      expect((table['rows'] as JsonObject[]).map((row) => row['cells'])).to.deep.equal([
        ['w1', '2023-01-01T03:00:00Z'],
        ['w2', '0001-01-01T00:00:00Z'],
      ]);
    });

    it('answers an empty list with rows: null (the convertor appends to a nil slice)', () => {
      const table = toTable([], {}, { includeObject: 'None', now: NOW, objectKind: { apiVersion: 'example.com/v1', kind: 'Widget' } });
      expect(table['rows']).to.equal(null);
    });

    it('covers built-in kinds kube has no printer for, such as Roles', () => {
      const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'reader', creationTimestamp: ago(60) }, rules: [] };
      const table = toTable([role], {}, { includeObject: 'None', now: NOW });
      expect((table['columnDefinitions'] as JsonObject[]).map((c) => c['name'])).to.deep.equal(['Name', 'Created At']);
    });
  });
});

describe('hasCustomColumns', () => {
  it('is true for kinds with a v1.25 printer, in any version of their group', () => {
    expect(hasCustomColumns('v1', 'Pod')).to.equal(true);
    expect(hasCustomColumns('apps/v1', 'Deployment')).to.equal(true);
    expect(hasCustomColumns('batch/v1', 'CronJob')).to.equal(true);
    expect(hasCustomColumns('events.k8s.io/v1', 'Event')).to.equal(true);
    expect(hasCustomColumns('v1', 'PodList')).to.equal(true);
  });

  it('is false for kinds printed with the default table, and for a kind of the same name in another group', () => {
    expect(hasCustomColumns('rbac.authorization.k8s.io/v1', 'ClusterRole')).to.equal(false);
    expect(hasCustomColumns('example.com/v1', 'Widget')).to.equal(false);
    expect(hasCustomColumns('example.com/v1', 'Pod')).to.equal(false);
  });
});
