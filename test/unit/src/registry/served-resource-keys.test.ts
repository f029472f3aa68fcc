/**
 * Where each resource's objects are stored: kube-apiserver v1.25's etcd layout
 * (k8s.io/kubernetes pkg/kubeapiserver/default_storage_factory_builder.go for its own resources;
 * /registry/<group>/<plural> for the apiextensions and aggregator servers' and custom resources).
 */
import { expect } from 'chai';
import { resourceKeyPrefix } from '../../../../src/apis/catalogue';

describe('resourceKeyPrefix', () => {
  it('keeps kube-apiserver\'s own resources at /registry/<resource>, whatever their group', () => {
    expect(resourceKeyPrefix({ group: 'apps', resource: 'deployments' })).to.equal('/registry/deployments/');
    expect(resourceKeyPrefix({ group: 'autoscaling', resource: 'horizontalpodautoscalers' })).to.equal('/registry/horizontalpodautoscalers/');
    expect(resourceKeyPrefix({ group: '', resource: 'configmaps' })).to.equal('/registry/configmaps/');
    expect(resourceKeyPrefix({ group: 'rbac.authorization.k8s.io', resource: 'clusterroles' })).to.equal('/registry/clusterroles/');
  });

  it('uses the storage factory\'s special prefixes', () => {
    expect(resourceKeyPrefix({ group: '', resource: 'services' })).to.equal('/registry/services/specs/');
    expect(resourceKeyPrefix({ group: '', resource: 'endpoints' })).to.equal('/registry/services/endpoints/');
    expect(resourceKeyPrefix({ group: '', resource: 'replicationcontrollers' })).to.equal('/registry/controllers/');
    expect(resourceKeyPrefix({ group: '', resource: 'nodes' })).to.equal('/registry/minions/');
    expect(resourceKeyPrefix({ group: 'networking.k8s.io', resource: 'ingresses' })).to.equal('/registry/ingress/');
  });

  it('keys CRDs and APIServices with their group, as their own servers do', () => {
    expect(resourceKeyPrefix({ group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' })).to.equal('/registry/apiextensions.k8s.io/customresourcedefinitions/');
    expect(resourceKeyPrefix({ group: 'apiregistration.k8s.io', resource: 'apiservices' })).to.equal('/registry/apiregistration.k8s.io/apiservices/');
  });

  it('keys custom resources with their group, so two groups sharing a plural never share a key', () => {
    const certManager = resourceKeyPrefix({ group: 'cert-manager.io', resource: 'certificates' });
    const knative = resourceKeyPrefix({ group: 'networking.internal.knative.dev', resource: 'certificates' });
    expect(certManager).to.equal('/registry/cert-manager.io/certificates/');
    expect(knative).to.equal('/registry/networking.internal.knative.dev/certificates/');
    expect(certManager.startsWith(knative) || knative.startsWith(certManager)).to.equal(false);
  });

  it('never puts a custom resource named like a core one under the core prefix', () => {
    expect(resourceKeyPrefix({ group: 'serving.knative.dev', resource: 'services' })).to.equal('/registry/serving.knative.dev/services/');
    expect(resourceKeyPrefix({ group: 'example.com', resource: 'nodes' })).to.equal('/registry/example.com/nodes/');
    expect(resourceKeyPrefix({ group: 'example.com', resource: 'endpoints' })).to.equal('/registry/example.com/endpoints/');
  });

  it('follows a resource\'s storage location (events.k8s.io events are core events)', () => {
    expect(resourceKeyPrefix({ group: 'events.k8s.io', resource: 'events', storage: { group: '', resource: 'events' } })).to.equal('/registry/events/');
  });
});
