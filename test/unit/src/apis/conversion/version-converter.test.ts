import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { Catalogue } from '../../../../../src/apis/catalogue';
import { convertVersion, needsConversion } from '../../../../../src/apis/conversion';
import { packagePath } from '../../../../../src/util';
import type { JsonObject } from '../../../../../src/apis/object';

function fixture(name: string): JsonObject {
  return JSON.parse(readFileSync(packagePath('test', 'fixtures', 'k8s-testdata-v1.25', `${name}.json`), 'utf8')) as JsonObject;
}

function mustConvert(object: JsonObject, apiVersion: string): JsonObject {
  const converted = convertVersion(object, apiVersion);
  if (converted === undefined) throw new Error(`no conversion of ${String(object.apiVersion)} ${String(object.kind)} to ${apiVersion}`);
  return converted;
}

function roundTrip(object: JsonObject, through: string): JsonObject {
  return mustConvert(mustConvert(object, through), object.apiVersion as string);
}

function apiVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

describe('convertVersion', () => {
  describe('round trips of every served version through its storage version lose nothing', () => {
    // Storage versions from the catalogue (kube-apiserver v1.25 pkg/kubeapiserver/default_storage_factory_builder.go).
    const cases: Array<[fixtureName: string, storageApiVersion: string]> = [
      ['events.k8s.io.v1.Event', 'v1'],
      ['core.v1.Event', 'events.k8s.io/v1'],
      ['autoscaling.v2beta2.HorizontalPodAutoscaler', 'autoscaling/v2'],
      ['flowcontrol.apiserver.k8s.io.v1beta1.FlowSchema', 'flowcontrol.apiserver.k8s.io/v1beta2'],
      ['flowcontrol.apiserver.k8s.io.v1beta1.PriorityLevelConfiguration', 'flowcontrol.apiserver.k8s.io/v1beta2'],
      ['storage.k8s.io.v1beta1.CSIStorageCapacity', 'storage.k8s.io/v1'],
      ['storage.k8s.io.v1.CSIStorageCapacity', 'storage.k8s.io/v1beta1'],
    ];
    for (const [name, through] of cases) {
      it(`${name} through ${through}`, () => {
        const original = fixture(name);
        const converted = mustConvert(original, through);
        expect(converted.apiVersion).to.equal(through);
        expect(roundTrip(original, through)).to.deep.equal(original);
      });
    }

    it('keeps the Go field order of the version it returns to', () => {
      const original = fixture('events.k8s.io.v1.Event');
      expect(Object.keys(roundTrip(original, 'v1'))).to.deep.equal(Object.keys(original));
      const core = fixture('core.v1.Event');
      expect(Object.keys(roundTrip(core, 'events.k8s.io/v1'))).to.deep.equal(Object.keys(core));
    });

    it('gives shape-identical versions the same object under the other apiVersion', () => {
      // The v1.25 OpenAPI schemas of flowcontrol v1beta1/v1beta2 and storage v1beta1/v1 CSIStorageCapacity match field for field.
      for (const [name, target] of [
        ['flowcontrol.apiserver.k8s.io.v1beta1.FlowSchema', 'flowcontrol.apiserver.k8s.io/v1beta2'],
        ['storage.k8s.io.v1beta1.CSIStorageCapacity', 'storage.k8s.io/v1'],
        ['autoscaling.v2beta2.HorizontalPodAutoscaler', 'autoscaling/v2'],
      ] as const) {
        const original = fixture(name);
        expect(mustConvert(original, target)).to.deep.equal({ ...original, apiVersion: target });
      }
    });
  });

  describe('events', () => {
    const eventsEvent: JsonObject = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'web-0.17a1', namespace: 'default' },
      eventTime: '2024-05-01T10:00:00.000000Z',
      reportingController: 'example.com/operator',
      reportingInstance: 'operator-7d9',
      action: 'Reconcile',
      reason: 'Scaled',
      regarding: { kind: 'Pod', namespace: 'default', name: 'web-0', uid: 'u-1', apiVersion: 'v1' },
      note: 'scaled to 3 replicas',
      type: 'Normal',
      series: { count: 4, lastObservedTime: '2024-05-01T10:05:00.000000Z' },
      deprecatedSource: { component: 'operator' },
      deprecatedFirstTimestamp: '2024-05-01T10:00:00Z',
      deprecatedLastTimestamp: '2024-05-01T10:05:00Z',
      deprecatedCount: 4,
    };

    it('stores an events.k8s.io Event as a core Event with the renamed fields', () => {
      // k8s.io/kubernetes pkg/apis/events/v1/conversion.go: regarding <-> involvedObject, note <-> message,
      // deprecatedSource/FirstTimestamp/LastTimestamp/Count <-> source/firstTimestamp/lastTimestamp/count,
      // reportingController <-> reportingComponent.
      expect(mustConvert(eventsEvent, 'v1')).to.deep.equal({
        kind: 'Event',
        apiVersion: 'v1',
        metadata: { name: 'web-0.17a1', namespace: 'default' },
        involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-0', uid: 'u-1', apiVersion: 'v1' },
        reason: 'Scaled',
        message: 'scaled to 3 replicas',
        source: { component: 'operator' },
        firstTimestamp: '2024-05-01T10:00:00Z',
        lastTimestamp: '2024-05-01T10:05:00Z',
        count: 4,
        type: 'Normal',
        eventTime: '2024-05-01T10:00:00.000000Z',
        series: { count: 4, lastObservedTime: '2024-05-01T10:05:00.000000Z' },
        action: 'Reconcile',
        reportingComponent: 'example.com/operator',
        reportingInstance: 'operator-7d9',
      });
    });

    it('shows a core Event written by kubelet in the events.k8s.io shape, leaving unset fields unset', () => {
      const core: JsonObject = {
        kind: 'Event',
        apiVersion: 'v1',
        metadata: { name: 'web-0.1', namespace: 'default' },
        involvedObject: { kind: 'Pod', name: 'web-0', namespace: 'default' },
        reason: 'Pulled',
        message: 'Container image "nginx" already present on machine',
        source: { component: 'kubelet', host: 'node-1' },
        count: 1,
        type: 'Normal',
      };
      expect(mustConvert(core, 'events.k8s.io/v1')).to.deep.equal({
        kind: 'Event',
        apiVersion: 'events.k8s.io/v1',
        metadata: { name: 'web-0.1', namespace: 'default' },
        reason: 'Pulled',
        regarding: { kind: 'Pod', name: 'web-0', namespace: 'default' },
        note: 'Container image "nginx" already present on machine',
        type: 'Normal',
        deprecatedSource: { component: 'kubelet', host: 'node-1' },
        deprecatedCount: 1,
      });
    });
  });

  describe('what it does not convert', () => {
    it('copies an object already in the target version', () => {
      const original = fixture('autoscaling.v2.HorizontalPodAutoscaler');
      const copy = mustConvert(original, 'autoscaling/v2');
      expect(copy).to.deep.equal(original);
      expect(copy).to.not.equal(original);
      (copy.metadata as JsonObject).name = 'changed';
      expect((original.metadata as JsonObject).name).to.equal('nameValue');
    });

    it('returns undefined for pairs v1.25 does not serve as one resource', () => {
      // apps/v1beta2 is not served by v1.25, and kinds do not change between these versions.
      expect(convertVersion(fixture('apps.v1.Deployment'), 'apps/v1beta2')).to.equal(undefined);
      expect(convertVersion(fixture('core.v1.Event'), 'autoscaling/v2')).to.equal(undefined);
      expect(convertVersion({ ...fixture('core.v1.Pod'), apiVersion: 'v1' }, 'events.k8s.io/v1')).to.equal(undefined);
      // events.k8s.io/v1beta1 and autoscaling/v2beta1 are no longer served in v1.25.
      expect(convertVersion(fixture('events.k8s.io.v1beta1.Event'), 'v1')).to.equal(undefined);
      expect(convertVersion(fixture('autoscaling.v2beta1.HorizontalPodAutoscaler'), 'autoscaling/v2')).to.equal(undefined);
    });

    it('returns undefined without apiVersion or kind', () => {
      expect(convertVersion({ kind: 'Event' }, 'v1')).to.equal(undefined);
      expect(convertVersion({ apiVersion: 'events.k8s.io/v1' }, 'v1')).to.equal(undefined);
    });
  });
});

describe('needsConversion', () => {
  it('is true exactly for the catalogue resources stored in another version', () => {
    const catalogue = Catalogue.load();
    const multiVersion: string[] = [];
    for (const { group, version } of catalogue.groupVersions()) {
      for (const info of catalogue.resources(group, version)) {
        const apiVersion = apiVersionOf(group, version);
        const storageApiVersion = apiVersionOf(info.storage.group, info.storage.version);
        const expected = apiVersion !== storageApiVersion;
        expect(needsConversion(apiVersion, info.kind, storageApiVersion), `${apiVersion} ${info.kind}`).to.equal(expected);
        if (expected) multiVersion.push(`${apiVersion} ${info.kind} -> ${storageApiVersion}`);
      }
    }
    expect(multiVersion.sort()).to.deep.equal([
      'autoscaling/v1 HorizontalPodAutoscaler -> autoscaling/v2',
      'autoscaling/v2beta2 HorizontalPodAutoscaler -> autoscaling/v2',
      'events.k8s.io/v1 Event -> v1',
      'flowcontrol.apiserver.k8s.io/v1beta1 FlowSchema -> flowcontrol.apiserver.k8s.io/v1beta2',
      'flowcontrol.apiserver.k8s.io/v1beta1 PriorityLevelConfiguration -> flowcontrol.apiserver.k8s.io/v1beta2',
      'storage.k8s.io/v1beta1 CSIStorageCapacity -> storage.k8s.io/v1',
    ]);
  });

  it('is false for the storage version itself and for unknown pairs', () => {
    expect(needsConversion('autoscaling/v2', 'HorizontalPodAutoscaler', 'autoscaling/v2')).to.equal(false);
    expect(needsConversion('apps/v1beta2', 'Deployment', 'apps/v1')).to.equal(false);
    expect(needsConversion('autoscaling/v1', 'Scale', 'autoscaling/v2')).to.equal(false);
  });

  it('converts every catalogue pair it reports', () => {
    const objects: Record<string, JsonObject> = {
      'events.k8s.io/v1 Event': fixture('events.k8s.io.v1.Event'),
      'autoscaling/v1 HorizontalPodAutoscaler': fixture('autoscaling.v1.HorizontalPodAutoscaler'),
      'autoscaling/v2beta2 HorizontalPodAutoscaler': fixture('autoscaling.v2beta2.HorizontalPodAutoscaler'),
      'flowcontrol.apiserver.k8s.io/v1beta1 FlowSchema': fixture('flowcontrol.apiserver.k8s.io.v1beta1.FlowSchema'),
      'flowcontrol.apiserver.k8s.io/v1beta1 PriorityLevelConfiguration': fixture('flowcontrol.apiserver.k8s.io.v1beta1.PriorityLevelConfiguration'),
      'storage.k8s.io/v1beta1 CSIStorageCapacity': fixture('storage.k8s.io.v1beta1.CSIStorageCapacity'),
    };
    const catalogue = Catalogue.load();
    for (const { group, version } of catalogue.groupVersions()) {
      for (const info of catalogue.resources(group, version)) {
        const apiVersion = apiVersionOf(group, version);
        const storageApiVersion = apiVersionOf(info.storage.group, info.storage.version);
        if (!needsConversion(apiVersion, info.kind, storageApiVersion)) continue;
        const object = objects[`${apiVersion} ${info.kind}`];
        expect(object, `${apiVersion} ${info.kind}`).to.not.equal(undefined);
        const stored = convertVersion(object as JsonObject, storageApiVersion);
        expect(stored?.apiVersion).to.equal(storageApiVersion);
        expect(stored?.kind).to.equal(info.kind);
      }
    }
  });
});
