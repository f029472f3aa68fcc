import { expect } from 'chai';
import { authenticationConfigMapData, ensureLocalApiServices, localApiService } from '../../../../src/aggregator';
import { ControllerHarness } from '../../../support/controller-harness';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('aggregator: what kube-apiserver writes at start', () => {
  it('a local APIService per built-in group-version, with v1.25\'s priorities and no service', () => {
    expect(localApiService('apps', 'v1')).to.deep.equal({
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1.apps', labels: { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' } },
      spec: { group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 },
    });
    expect(localApiService('autoscaling', 'v2')?.spec).to.deep.include({ groupPriorityMinimum: 17500, versionPriority: 30 });
    expect(localApiService('example.com', 'v1')).to.equal(undefined);
  });

  it('extension-apiserver-authentication holds the CAs and the request-header settings as JSON lists', () => {
    expect(authenticationConfigMapData('CLIENT-CA', { clientCaPem: 'PROXY-CA', allowedNames: ['front-proxy-client'], usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'] })).to.deep.equal({
      'client-ca-file': 'CLIENT-CA',
      'requestheader-allowed-names': '["front-proxy-client"]',
      'requestheader-client-ca-file': 'PROXY-CA',
      'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
      'requestheader-group-headers': '["X-Remote-Group"]',
      'requestheader-username-headers': '["X-Remote-User"]',
    });
  });
});

describe('aggregator: the local APIServices written at start', () => {
  let harness: ControllerHarness;
  beforeEach(async () => {
    harness = await ControllerHarness.start();
  });
  afterEach(() => harness.stop());

  it('creates the core group\'s `v1.` beside the others, Available as Local, and leaves existing ones', async () => {
    const apiServices = harness.resource('apiregistration.k8s.io', 'apiservices');
    await ensureLocalApiServices(harness.registry, apiServices, [{ group: '', version: 'v1' }, { group: 'apps', version: 'v1' }]);
    await ensureLocalApiServices(harness.registry, apiServices, [{ group: '', version: 'v1' }, { group: 'apps', version: 'v1' }]);
    const core = await harness.read(apiServices, '', 'v1.');
    expect(core?.spec).to.deep.equal({ group: '', version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 });
    expect((core?.metadata as Obj).labels).to.deep.equal({ 'kube-aggregator.kubernetes.io/automanaged': 'onstart' });
    expect((core?.status as Obj).conditions[0]).to.deep.include({ type: 'Available', status: 'True', reason: 'Local' });
    expect(await harness.read(apiServices, '', 'v1.apps')).to.not.equal(undefined);
  });
});
