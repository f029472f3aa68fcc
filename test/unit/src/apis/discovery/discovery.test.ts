import { expect } from 'chai';
import { Catalogue } from '../../../../../src/apis/catalogue';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from '../../../../../src/apis/discovery';

// Expected bodies are compared as JSON text so that key order (Go struct order) is checked too.
describe('discovery documents', () => {
  const catalogue = Catalogue.load();

  it('answers /api with the legacy versions and the server address for every client', () => {
    // k8s.io/apiserver pkg/endpoints/discovery/legacy.go; APIVersions carries no apiVersion.
    expect(JSON.stringify(apiVersions('10.0.0.1:6443'))).to.equal(
      '{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"10.0.0.1:6443"}]}',
    );
  });

  it('answers /apis with every served group in priority order', () => {
    const list = apiGroupList(catalogue);
    expect(list.kind).to.equal('APIGroupList');
    expect(list.groups).to.have.length(19);
    const text = JSON.stringify(list);
    expect(
      text.startsWith(
        '{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"apiregistration.k8s.io","versions":[{"groupVersion":"apiregistration.k8s.io/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apiregistration.k8s.io/v1","version":"v1"}},{"name":"apps",',
      ),
    ).to.equal(true);
    expect(list.groups.map((group) => group.name)).to.deep.equal(catalogue.groups().map((group) => group.name));
  });

  it('answers /apis/autoscaling with v2 preferred', () => {
    // cmd/kube-apiserver/app/aggregator.go: autoscaling v2 priority 30, v1 15, v2beta2 1.
    expect(JSON.stringify(apiGroup(catalogue, 'autoscaling'))).to.equal(
      '{"kind":"APIGroup","apiVersion":"v1","name":"autoscaling","versions":[{"groupVersion":"autoscaling/v2","version":"v2"},{"groupVersion":"autoscaling/v1","version":"v1"},{"groupVersion":"autoscaling/v2beta2","version":"v2beta2"}],"preferredVersion":{"groupVersion":"autoscaling/v2","version":"v2"}}',
    );
    expect(apiGroup(catalogue, 'extensions')).to.equal(undefined);
    expect(apiGroup(catalogue, '')).to.equal(undefined);
  });

  it('answers /apis/apps/v1 as kube-apiserver v1.25 does', () => {
    // kube-apiserver v1.25 `kubectl get --raw /apis/apps/v1`: singularName is "" before v1.27.
    const list = apiResourceList(catalogue, 'apps', 'v1');
    expect(list?.resources.map((resource) => resource.name)).to.deep.equal([
      'controllerrevisions', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status',
      'replicasets', 'replicasets/scale', 'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status',
    ]);
    const text = JSON.stringify(list);
    expect(text.startsWith('{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apps/v1","resources":[')).to.equal(true);
    expect(text).to.include(
      '{"name":"deployments","singularName":"","namespaced":true,"kind":"Deployment","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["deploy"],"categories":["all"],"storageVersionHash":"8aSe+NMegvE="},' +
        '{"name":"deployments/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":["get","patch","update"]},' +
        '{"name":"deployments/status","singularName":"","namespaced":true,"kind":"Deployment","verbs":["get","patch","update"]}',
    );
  });

  it('answers /api/v1 without apiVersion, with subresources after their resource', () => {
    const list = apiResourceList(catalogue, '', 'v1');
    const text = JSON.stringify(list);
    expect(text.startsWith('{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"bindings","singularName":"","namespaced":true,"kind":"Binding","verbs":["create"]},')).to.equal(true);
    expect(text).to.include('{"name":"pods/eviction","singularName":"","namespaced":true,"group":"policy","version":"v1","kind":"Eviction","verbs":["create"]}');
    expect(text).to.include('{"name":"services","singularName":"","namespaced":true,"kind":"Service","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["svc"],"categories":["all"],"storageVersionHash":"0/CO1lhkEBI="}');
    expect(text).to.include('{"name":"componentstatuses","singularName":"","namespaced":false,"kind":"ComponentStatus","verbs":["get","list"],"shortNames":["cs"]}');
    const names = list?.resources.map((resource) => resource.name) ?? [];
    expect(names.indexOf('pods/attach')).to.equal(names.indexOf('pods') + 1);
    expect(names.indexOf('pods/binding')).to.equal(names.indexOf('pods') + 2);
    expect(names.indexOf('podtemplates')).to.equal(names.indexOf('pods/status') + 1);
    // The connect subresources, with v1.25's verbs (issue 31); ephemeral containers are not served yet.
    const verbsOf = (name: string) => list?.resources.find((resource) => resource.name === name)?.verbs;
    expect(verbsOf('pods/log')).to.deep.equal(['get']);
    for (const upgrade of ['pods/exec', 'pods/attach', 'pods/portforward']) expect(verbsOf(upgrade), upgrade).to.deep.equal(['create', 'get']);
    for (const proxy of ['pods/proxy', 'nodes/proxy', 'services/proxy']) expect(verbsOf(proxy), proxy).to.deep.equal(['create', 'delete', 'get', 'patch', 'update']);
    expect(text).to.include('{"name":"pods/exec","singularName":"","namespaced":true,"kind":"PodExecOptions","verbs":["create","get"]}');
    expect(names).not.to.include('pods/ephemeralcontainers');
  });

  it('answers /apis/authentication.k8s.io/v1 with the create-only tokenreviews and no hash', () => {
    expect(JSON.stringify(apiResourceList(catalogue, 'authentication.k8s.io', 'v1'))).to.equal(
      '{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"authentication.k8s.io/v1","resources":[{"name":"tokenreviews","singularName":"","namespaced":false,"kind":"TokenReview","verbs":["create"]}]}',
    );
  });

  it('gives served versions of one storage the same hash', () => {
    const hashOf = (version: string) =>
      apiResourceList(catalogue, 'autoscaling', version)?.resources.find((resource) => resource.name === 'horizontalpodautoscalers')?.storageVersionHash;
    expect(hashOf('v1')).to.equal(hashOf('v2'));
    expect(hashOf('v2beta2')).to.equal(hashOf('v2'));
  });

  it('returns nothing for a group-version that is not served', () => {
    expect(apiResourceList(catalogue, 'networking.k8s.io', 'v1alpha1')).to.equal(undefined);
    const enabled = Catalogue.load({ runtimeConfig: new Map([['networking.k8s.io/v1alpha1', true]]) });
    expect(apiResourceList(enabled, 'networking.k8s.io', 'v1alpha1')?.resources.map((resource) => resource.name)).to.deep.equal(['clustercidrs']);
  });

  it('answers /version with the v1.25.16 release build, in Go field order', () => {
    expect(JSON.stringify(versionInfo())).to.equal(
      '{"major":"1","minor":"25","gitVersion":"v1.25.16","gitCommit":"c5f43560a4f98f2af3743a59299fb79f07924373","gitTreeState":"clean","buildDate":"2023-11-15T22:39:12Z","goVersion":"go1.20.10","compiler":"gc","platform":"linux/amd64"}',
    );
  });

  it('lets the caller override gitVersion, keeping major and minor consistent', () => {
    const info = versionInfo({ gitVersion: 'v1.25.16-carina.2' });
    expect(info.gitVersion).to.equal('v1.25.16-carina.2');
    expect(info.major).to.equal('1');
    expect(info.minor).to.equal('25');
  });
});
