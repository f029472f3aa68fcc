import { expect } from 'chai';
import { ApplyConflictError, FieldSet, apply, pathToString, topologyFromSchema, updateManagedFields, type TopologyNode } from '../../../../src/apply';
import { convertVersion } from '../../../../src/apis/conversion';
import type { JsonObject } from '../../../../src/apis/object';

const NOW = '2022-01-01T00:00:00Z';

/** A custom kind whose `spec.labels` map is granular or atomic, as a CRD's schema may change between updates. */
function widgetTopology(labels: 'granular' | 'atomic'): (apiVersion: string, kind: string) => TopologyNode {
  const node = topologyFromSchema({
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: {
        type: 'object',
        properties: {
          labels: { type: 'object', additionalProperties: { type: 'string' }, 'x-kubernetes-map-type': labels } as never,
          size: { type: 'integer' },
        },
      },
    },
  });
  return () => node;
}

function widget(spec: JsonObject): JsonObject {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec };
}

function owners(object: JsonObject): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const entry of ((object.metadata as JsonObject).managedFields ?? []) as Array<{ manager: string; fieldsV1: unknown }>) {
    out[entry.manager] = FieldSet.fromFieldsV1(entry.fieldsV1).paths().map(pathToString);
  }
  return out;
}

function conflictsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApplyConflictError) return err.conflicts.map((c) => `${c.manager} ${c.field}`);
    throw err;
  }
  expect.fail('expected an apply conflict');
}

describe('apply: schema topology changes (spec 01 §4.9.5)', () => {
  it('a map that became atomic is owned whole by whoever owned its keys, so others now conflict', () => {
    const granular = widgetTopology('granular');
    const atomic = widgetTopology('atomic');
    const byAlice = apply(undefined, widget({ labels: { a: '1', b: '2' } }), 'alice', { force: false, now: NOW, topologyOf: granular });
    expect(owners(byAlice).alice).to.deep.equal(['.spec.labels.a', '.spec.labels.b']);

    // While the map is granular, another key is bob's alone.
    const granularBob = apply(byAlice, widget({ labels: { c: '3' } }), 'bob', { force: false, now: NOW, topologyOf: granular });
    expect(owners(granularBob).bob).to.deep.equal(['.spec.labels.c']);

    // Once atomic, any change to the map is a change to the field alice owns.
    expect(conflictsOf(() => apply(byAlice, widget({ labels: { a: '1', b: '2', c: '3' } }), 'bob', { force: false, now: NOW, topologyOf: atomic }))).to.deep.equal(['alice .spec.labels']);

    // An unrelated write rewrites alice's entry in the new shape.
    const resized = updateManagedFields(byAlice, widget({ labels: { a: '1', b: '2' }, size: 3 }), 'carol', { now: NOW, topologyOf: atomic });
    expect(owners(resized)).to.deep.equal({ alice: ['.spec.labels'], carol: ['.spec.size'] });
  });

  it('a map that became granular cannot say who owns which key, so a new key does not conflict', () => {
    const atomic = widgetTopology('atomic');
    const granular = widgetTopology('granular');
    const byAlice = apply(undefined, widget({ labels: { a: '1' } }), 'alice', { force: false, now: NOW, topologyOf: atomic });
    expect(owners(byAlice).alice).to.deep.equal(['.spec.labels']);
    // Under the old schema the same write is a conflict...
    expect(conflictsOf(() => apply(byAlice, widget({ labels: { c: '3' } }), 'bob', { force: false, now: NOW, topologyOf: atomic }))).to.deep.equal(['alice .spec.labels']);
    // ...under the new one it is not, and both keep what they have.
    const byBob = apply(byAlice, widget({ labels: { c: '3' } }), 'bob', { force: false, now: NOW, topologyOf: granular });
    expect((byBob.spec as JsonObject).labels).to.deep.equal({ a: '1', c: '3' });
    expect(owners(byBob)).to.deep.equal({ alice: ['.spec.labels'], bob: ['.spec.labels.c'] });
  });
});

describe('apply: managers of other versions', () => {
  const hpaV2 = (averageUtilization: number): JsonObject => ({
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 1,
      maxReplicas: 5,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization } } }],
    },
  });
  const cpuTargetV1 = (percent: number): JsonObject => ({
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web', namespace: 'default' },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5, targetCPUUtilizationPercentage: percent },
  });
  const asV1 = (object: JsonObject): JsonObject => convertVersion(object, 'autoscaling/v1') as JsonObject;

  it('compares each manager in the version it wrote in: a v1 change of the CPU target conflicts with the v2 owner of metrics', () => {
    const byAlice = apply(undefined, hpaV2(80), 'alice', { force: false, now: NOW, convert: convertVersion });
    const conflicts = conflictsOf(() => apply(asV1(byAlice), cpuTargetV1(50), 'bob', { force: false, now: NOW, convert: convertVersion }));
    expect(conflicts).to.include('alice .spec.metrics');
    // Read in v1's shape only, alice's v2 paths never meet bob's field: the conflict would be missed.
    expect(() => apply(asV1(byAlice), cpuTargetV1(50), 'bob', { force: false, now: NOW })).not.to.throw();
  });

  it('a forced apply in another version takes the field from its owner in that owner\'s version', () => {
    const byAlice = apply(undefined, hpaV2(80), 'alice', { force: false, now: NOW, convert: convertVersion });
    const forced = apply(asV1(byAlice), cpuTargetV1(50), 'bob', { force: true, now: NOW, convert: convertVersion });
    expect(owners(forced).alice).not.to.include('.spec.metrics');
    expect(owners(forced).bob).to.include('.spec.targetCPUUtilizationPercentage');
  });

  it('drops managers whose version is no longer served, as Kubernetes does', () => {
    const live: JsonObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cm',
        namespace: 'default',
        managedFields: [{ manager: 'old-tool', operation: 'Update', apiVersion: 'v0', time: NOW, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }],
      },
      data: { a: '1' },
    };
    const onlyV1 = (object: JsonObject, apiVersion: string): JsonObject | undefined => (apiVersion === 'v1' ? object : undefined);
    const updated = updateManagedFields(live, { ...live, data: { a: '1', b: '2' } }, 'bob', { now: NOW, convert: onlyV1 });
    expect(owners(updated)).to.deep.equal({ bob: ['.data.b'] });
  });
});
