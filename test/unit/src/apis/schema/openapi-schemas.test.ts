import { expect } from 'chai';
import { OpenApiSchemas, goTypeName, goStructName, namedFieldType } from '../../../../../src/apis/schema';

describe('src/apis/schema OpenApiSchemas', () => {
  const schemas = OpenApiSchemas.shared();

  it('finds a kind by its x-kubernetes-group-version-kind', () => {
    expect(schemas.kind('apps/v1', 'Deployment')?.name).to.equal('io.k8s.api.apps.v1.Deployment');
    expect(schemas.kind('v1', 'Pod')?.name).to.equal('io.k8s.api.core.v1.Pod');
    expect(schemas.kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition')?.name)
      .to.equal('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition');
  });

  it('knows nothing of custom resources, malformed apiVersions or shared multi-kind types', () => {
    expect(schemas.kind('example.com/v1', 'Widget')).to.equal(undefined);
    expect(schemas.kind('a/b/c', 'Deployment')).to.equal(undefined);
    expect(schemas.kind('v1', 'DeleteOptions')).to.equal(undefined);
  });

  it('reads each document once and shares it', () => {
    expect(schemas.schemasFor('apps', 'v1')).to.equal(schemas.schemasFor('apps', 'v1'));
    expect(schemas.kind('apps/v1', 'Deployment')?.schemas).to.equal(schemas.schemasFor('apps', 'v1'));
  });
});

describe('src/apis/schema go-type-names', () => {
  it('derives Go type names from schema names', () => {
    expect(goTypeName('io.k8s.api.apps.v1.DeploymentSpec')).to.equal('v1.DeploymentSpec');
    expect(goTypeName('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta')).to.equal('v1.ObjectMeta');
    expect(goTypeName('io.k8s.apimachinery.pkg.api.resource.Quantity')).to.equal('resource.Quantity');
    expect(goStructName('io.k8s.api.apps.v1.DeploymentSpec')).to.equal('DeploymentSpec');
  });

  it('knows named non-struct field types the documents do not record', () => {
    expect(namedFieldType('io.k8s.api.core.v1.Container', 'imagePullPolicy')).to.equal('v1.PullPolicy');
    expect(namedFieldType('io.k8s.api.core.v1.ResourceRequirements', 'limits')).to.equal('v1.ResourceList');
    expect(namedFieldType('io.k8s.api.core.v1.Container', 'image')).to.equal(undefined);
  });
});
