import { expect } from 'chai';
import { versionsOf, type CrdVersion } from '../../../../src/apiextensions/crd-model';
import { customResourceStrategy } from '../../../../src/apiextensions/custom-resource-strategy';

type Obj = Record<string, any>;

/** A Gateway-API-like CRD version: a scale subresource and a filter printer column. */
function version(): CrdVersion {
  const crd = {
    spec: {
      versions: [{
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
        additionalPrinterColumns: [{ name: 'Programmed', type: 'string', jsonPath: '.status.conditions[?(@.type=="Programmed")].status' }],
      }],
    },
  };
  return versionsOf(crd)[0] as CrdVersion;
}

function gateway(spec: Obj, status?: Obj, metadata: Obj = {}): Obj {
  return { apiVersion: 'gateway.example.com/v1', kind: 'Gateway', metadata: { name: 'gw', namespace: 'default', ...metadata }, spec, ...(status === undefined ? {} : { status }) };
}

const strategy = () => customResourceStrategy({ group: 'gateway.example.com', kind: 'Gateway', namespaced: true, version: version() });

describe('apiextensions custom resource strategy', () => {
  it('checks finalizers only as qualified names, as v1.25\'s custom resource strategy does', () => {
    const s = strategy();
    // Argo CD's finalizer has no '/': the built-in kinds' rule would refuse it.
    expect(s.validateCreate(gateway({}, undefined, { finalizers: ['resources-finalizer.argocd.argoproj.io', 'example.com/cleanup'] }), true)).to.equal(undefined);
    const bad = s.validateCreate(gateway({}, undefined, { finalizers: ['a/b/c', 'orphan', 'foregroundDeletion'] }), true);
    expect(bad?.causes.map((c) => [c.field, (c.message ?? '').slice(0, 61)])).to.deep.equal([
      ['metadata.finalizers', 'Invalid value: "a/b/c": a qualified name must consist of alph'],
      ['metadata.finalizers', 'Invalid value: []string{"a/b/c", "orphan", "foregroundDeletio'],
    ]);
  });

  it('reads scale paths as v1.25 does (split at dots) and words their errors as its validator', () => {
    const s = strategy();
    expect(s.validateCreate(gateway({ replicas: 3 }, { replicas: 1, selector: 'app=gw' }), true)).to.equal(undefined);
    expect(s.validateCreate(gateway({ replicas: -1 }), true)?.message).to.equal('Gateway.gateway.example.com "gw" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer');
    expect(s.validateCreate(gateway({ replicas: 2147483648 }), true)?.message).to.equal('Gateway.gateway.example.com "gw" is invalid: .spec.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647');
    expect(s.validateCreate(gateway({ replicas: 'three' }), true)?.message).to.equal('Gateway.gateway.example.com "gw" is invalid: .spec.replicas: Invalid value: 0: .spec.replicas accessor error: three is of the type string, expected int64');
    expect(s.validateCreate(gateway('flat' as never), true)?.message).to.equal('Gateway.gateway.example.com "gw" is invalid: .spec.replicas: Invalid value: 0: .spec.replicas accessor error: flat is of the type string, expected map[string]interface{}');
    expect(s.validateCreate(gateway({}, { replicas: 1.5, selector: 7 }), true)?.message).to.equal('Gateway.gateway.example.com "gw" is invalid: [.status.replicas: Invalid value: 0: .status.replicas accessor error: 1.5 is of the type float64, expected int64, .status.selector: Invalid value: "": .status.selector accessor error: 7 is of the type int64, expected string]');
  });

  it('checks only the status half of the scale paths on a status update', () => {
    const s = strategy();
    const old = gateway({ replicas: 1 }, {}, { resourceVersion: '4' });
    const bad = gateway({ replicas: -1 }, { replicas: -2 }, { resourceVersion: '4' });
    expect(s.validateUpdate(bad, old, true, 'status')?.message).to.equal('Gateway.gateway.example.com "gw" is invalid: .status.replicas: Invalid value: -2: should be a non-negative integer');
    expect(s.validateUpdate(bad, old, true, '')?.causes.map((c) => c.field)).to.deep.equal(['.spec.replicas', '.status.replicas']);
  });

  it('reports schema errors at the root of a custom resource as <nil>, as v1.25 does', () => {
    const crd = { spec: { versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } } } } } } }] } };
    const s = customResourceStrategy({ group: 'gateway.example.com', kind: 'Gateway', namespaced: true, version: versionsOf(crd)[0] as CrdVersion });
    expect(s.validateCreate(gateway({ port: true }), true)?.message).to.equal('Gateway.gateway.example.com "gw" is invalid: [spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean", <nil>: Invalid value: "": "spec.port" must validate at least one schema (anyOf), spec.port: Invalid value: "boolean": spec.port in body must be of type integer: "boolean"]');
  });

  it('names the field labels of a custom resource by its scope', () => {
    expect(() => strategy().fieldLabelConversion?.('metadata.namespace', 'default')).to.not.throw();
    const clusterScoped = customResourceStrategy({ group: 'gateway.example.com', kind: 'GatewayClass', namespaced: false, version: version() });
    expect(() => clusterScoped.fieldLabelConversion?.('metadata.namespace', 'default')).to.throw('field label not supported: metadata.namespace');
  });

  it('prints its Table through the version\'s printer columns', () => {
    const table = strategy().toTable([gateway({}, { conditions: [{ type: 'Accepted', status: 'True' }, { type: 'Programmed', status: 'False' }] })], {}, { tableApiVersion: 'meta.k8s.io/v1', includeObject: 'None', objectKind: { apiVersion: 'gateway.example.com/v1', kind: 'Gateway' } }) as Obj;
    expect(table.rows[0].cells).to.deep.equal(['gw', 'False']);
  });
});
