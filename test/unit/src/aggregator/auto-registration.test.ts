/**
 * The APIServices kube-apiserver keeps for itself (auto-registration.ts): the autoregister
 * controller's table (onstart kept once, `true` kept always, unlabelled never touched) and the
 * CRD registration controller's APIService per served custom group-version, over a real
 * registry and watch cache.
 */
import { expect } from 'chai';
import { AUTO_REGISTER_MANAGED_LABEL, AutoRegisterController, CrdRegistrationController, localApiService } from '../../../../src/aggregator';
import { type ServedResource } from '../../../../src/registry';
import { resourceKeyPrefix } from '../../../../src/apis/catalogue';
import { ControllerHarness } from '../../../support/controller-harness';
import { until } from '../../../support/until';
import type { JsonObject } from '../../../../src/apis/object';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const write = { dryRun: false, subresource: '' as const };

function crd(group: string, plural: string, versions: Array<[string, boolean]>): JsonObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: plural.slice(0, -1), kind: 'Widget', listKind: 'WidgetList' },
      versions: versions.map(([name, served], i) => ({ name, served, storage: i === 0, schema: { openAPIV3Schema: { type: 'object' } } })),
    },
  };
}

describe('aggregator: the APIServices kube-apiserver keeps for itself', () => {
  let harness: ControllerHarness;
  let apiServices: ServedResource;
  let crds: ServedResource;
  let registration: AutoRegisterController;
  let crdRegistration: CrdRegistrationController | undefined;

  const names = async (): Promise<string[]> => {
    await harness.synced();
    return harness.cache.list(resourceKeyPrefix(apiServices)).items.map((a) => String((a.metadata as Obj).name)).sort();
  };
  const settled = async (): Promise<void> => {
    for (let pass = 0; pass < 3; pass++) {
      await harness.synced();
      await crdRegistration?.whenIdle();
      await registration.whenIdle();
    }
  };
  const startBoth = async (): Promise<void> => {
    crdRegistration = new CrdRegistrationController({
      cache: harness.cache,
      crdPrefix: resourceKeyPrefix(crds),
      isBuiltIn: (group, version) => localApiService(group, version) !== undefined,
      registration,
      log: () => undefined,
    });
    crdRegistration.start();
    await crdRegistration.whenIdle();
    registration.start();
    await settled();
  };

  beforeEach(async () => {
    harness = await ControllerHarness.start();
    apiServices = harness.resource('apiregistration.k8s.io', 'apiservices');
    crds = harness.resource('apiextensions.k8s.io', 'customresourcedefinitions');
    registration = new AutoRegisterController({ cache: harness.cache, registry: harness.registry, apiServices, log: () => undefined });
    crdRegistration = undefined;
  });

  afterEach(() => {
    crdRegistration?.stop();
    registration.stop();
    harness.stop();
  });

  it('creates the built-in group-versions\' local APIServices, the core group\'s `v1.` among them, Available as Local', async () => {
    for (const [group, version] of [['', 'v1'], ['apps', 'v1']]) registration.addApiServiceToSync(localApiService(group, version) as JsonObject, 'onstart');
    registration.start();
    await settled();
    expect(await names()).to.deep.equal(['v1.', 'v1.apps']);
    const core = await harness.read(apiServices, '', 'v1.');
    expect(core?.spec).to.deep.equal({ group: '', version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 });
    expect((core?.metadata as Obj).labels).to.deep.equal({ [AUTO_REGISTER_MANAGED_LABEL]: 'onstart' });
    expect((core?.status as Obj).conditions[0]).to.deep.include({ type: 'Available', status: 'True', reason: 'Local' });
  });

  it('onstart: present at start, put back or deleted once, then left to the user; an unlabelled one is never touched', async () => {
    const apps = localApiService('apps', 'v1') as Obj;
    await harness.registry.create(apiServices, '', { ...apps, spec: { ...apps.spec, versionPriority: 7 } }, write);
    await harness.registry.create(apiServices, '', localApiService('batch', 'v1') as JsonObject, write);
    await harness.registry.create(apiServices, '', { ...(localApiService('policy', 'v1') as Obj), metadata: { name: 'v1.policy' } }, write);
    await harness.synced();
    registration.addApiServiceToSync(apps, 'onstart');
    registration.start();
    await settled();
    // v1.apps had its spec put back; v1.batch is no longer desired and went; v1.policy has no label.
    expect(await names()).to.deep.equal(['v1.apps', 'v1.policy']);
    expect((await harness.read(apiServices, '', 'v1.apps'))?.spec).to.deep.include({ versionPriority: 15 });
    const current = await harness.read(apiServices, '', 'v1.apps') as Obj;
    await harness.registry.update(apiServices, '', 'v1.apps', { ...current, spec: { ...current.spec, versionPriority: 9 } }, write);
    await settled();
    expect((await harness.read(apiServices, '', 'v1.apps'))?.spec).to.deep.include({ versionPriority: 9 });
  });

  it('a CRD\'s served group-versions get APIServices kept as `true`, with priorities 1000 and 100; they follow its changes', async () => {
    await startBoth();
    await harness.registry.create(crds, '', crd('stable.example.com', 'widgets', [['v1', true], ['v2', false]]), write);
    await until('v1.stable.example.com', async () => (await names()).includes('v1.stable.example.com'), 5000);
    await settled();
    expect(await names()).to.deep.equal(['v1.stable.example.com']);
    const apiService = await harness.read(apiServices, '', 'v1.stable.example.com') as Obj;
    expect(apiService.spec).to.deep.equal({ group: 'stable.example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 100 });
    expect(apiService.metadata.labels).to.deep.equal({ [AUTO_REGISTER_MANAGED_LABEL]: 'true' });
    expect(apiService.status.conditions[0]).to.deep.include({ type: 'Available', status: 'True', reason: 'Local' });

    // Served later: added. Deleted by a user while its CRD serves it: made again.
    const stored = await harness.read(crds, '', 'widgets.stable.example.com') as Obj;
    await harness.registry.update(crds, '', 'widgets.stable.example.com', { ...stored, spec: { ...stored.spec, versions: [stored.spec.versions[0], { ...stored.spec.versions[1], served: true }] } }, write);
    await until('v2.stable.example.com', async () => (await names()).includes('v2.stable.example.com'), 5000);
    await harness.registry.delete(apiServices, '', 'v1.stable.example.com', { dryRun: false });
    await until('v1.stable.example.com again', async () => (await names()).includes('v1.stable.example.com'), 5000);

    // A version dropped from the CRD, then the CRD itself: their APIServices go.
    const again = await harness.read(crds, '', 'widgets.stable.example.com') as Obj;
    await harness.registry.update(crds, '', 'widgets.stable.example.com', { ...again, spec: { ...again.spec, versions: [again.spec.versions[0]] } }, write);
    await until('v2.stable.example.com to go', async () => !(await names()).includes('v2.stable.example.com'), 5000);
    await harness.registry.delete(crds, '', 'widgets.stable.example.com', { dryRun: false });
    await until('v1.stable.example.com to go', async () => (await names()).length === 0, 5000);
  });

  it('the CRDs present at start keep their APIServices; a CRD in a built-in group-version leaves its local APIService alone', async () => {
    await harness.registry.create(crds, '', crd('stable.example.com', 'widgets', [['v1', true]]), write);
    await harness.registry.create(apiServices, '', {
      apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1.stable.example.com', labels: { [AUTO_REGISTER_MANAGED_LABEL]: 'true' } },
      spec: { group: 'stable.example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 100 },
    }, write);
    await harness.registry.create(crds, '', crd('apps', 'gadgets', [['v1', true]]), write);
    await harness.synced();
    const before = (await harness.read(apiServices, '', 'v1.stable.example.com') as Obj).metadata.uid;
    registration.addApiServiceToSync(localApiService('apps', 'v1') as JsonObject, 'onstart');
    await startBoth();
    expect(await names()).to.deep.equal(['v1.apps', 'v1.stable.example.com']);
    expect((await harness.read(apiServices, '', 'v1.stable.example.com') as Obj).metadata.uid).to.equal(before);
    expect((await harness.read(apiServices, '', 'v1.apps') as Obj).spec).to.deep.include({ groupPriorityMinimum: 17800, versionPriority: 15 });
  });
});
