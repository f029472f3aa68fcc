import { expect } from 'chai';
import { customResourceTypeMetaInvalid, typeMetaChangeRefusal } from '../../../../src/patch';

const registered = (group: string, version: string, kind: string) =>
  (group === '' && version === 'v1' && ['ConfigMap', 'Secret', 'ConfigMapList'].includes(kind)) || (group === 'autoscaling' && ['v1', 'v2'].includes(version) && kind === 'HorizontalPodAutoscaler');

describe('patched apiVersion or kind', () => {
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap' };

  it('answers the decoder\'s conversion error for another registered kind', () => {
    expect(typeMetaChangeRefusal(configMap, { apiVersion: 'v1', kind: 'Secret' }, registered)).to.equal('converting (v1.Secret) to (core.ConfigMap): unknown conversion');
    expect(typeMetaChangeRefusal(configMap, { apiVersion: 'v1', kind: 'Status' }, registered)).to.equal('converting (v1.Status) to (core.ConfigMap): unknown conversion');
  });

  it('answers the scheme\'s error for a kind or version it does not register', () => {
    expect(typeMetaChangeRefusal(configMap, { apiVersion: 'v1', kind: 'Widget' }, registered)).to.equal('no kind "Widget" is registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"');
    expect(typeMetaChangeRefusal(configMap, { apiVersion: 'v2', kind: 'ConfigMap' }, registered)).to.equal('no kind "ConfigMap" is registered for version "v2" in scheme "pkg/api/legacyscheme/scheme.go:30"');
  });

  it('lets through what v1.25 decodes: no change, or another version of the same kind', () => {
    expect(typeMetaChangeRefusal(configMap, configMap, registered)).to.equal(undefined);
    expect(typeMetaChangeRefusal({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler' }, { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler' }, registered)).to.equal(undefined);
  });

  it('refuses a custom resource of another kind as its validator does, under the kind it now says', () => {
    const refusal = customResourceTypeMetaInvalid({ apiVersion: 'stable.example.com/v1', kind: 'Widget' }, { apiVersion: 'stable.example.com/v1', kind: 'Gadget' }, 'w1');
    expect(refusal?.code).to.equal(422);
    expect(refusal?.toStatus()).to.deep.include({
      message: 'Gadget.stable.example.com "w1" is invalid: kind: Invalid value: "Gadget": must be Widget',
      details: { name: 'w1', group: 'stable.example.com', kind: 'Gadget', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: "Gadget": must be Widget', field: 'kind' }] },
    });
    expect(customResourceTypeMetaInvalid({ apiVersion: 'stable.example.com/v1', kind: 'Widget' }, { apiVersion: 'stable.example.com/v1', kind: 'Widget' }, 'w1')).to.equal(undefined);
  });
});
