import { expect } from 'chai';
import { topologyForKind, topologyFromSchema, type TopologyNode } from '../../../../src/apply';

function walk(node: TopologyNode, ...names: string[]): TopologyNode {
  return names.reduce((current, name) => (name === '[]' ? current.items() : current.child(name).node), node);
}

// Facts from the v1.25 OpenAPI v3 documents in src/apis/data/openapi-v3 (generated from the Go
// struct tags of k8s.io/api), read as kube-openapi pkg/schemaconv does.
describe('apply/schema-topology', () => {
  const deployment = topologyForKind('apps/v1', 'Deployment');
  const podSpec = walk(deployment, 'spec', 'template', 'spec');

  it('reads containers (patch strategy merge, merge key name) as a map list keyed by name', () => {
    const containers = walk(podSpec, 'containers');
    expect(containers.kind).to.equal('list');
    expect(containers.listType).to.equal('map');
    expect(containers.listMapKeys).to.deep.equal(['name']);
  });

  it('prefers x-kubernetes-list-type map and its keys, with key defaults from the item schema', () => {
    const ports = walk(podSpec, 'containers', '[]', 'ports');
    expect(ports.listType).to.equal('map');
    expect(ports.listMapKeys).to.deep.equal(['containerPort', 'protocol']);
    // core/v1 ContainerPort.protocol defaults to "TCP".
    expect(ports.keyDefault('protocol')).to.equal('TCP');
    expect(ports.keyDefault('containerPort')).to.equal(0);
  });

  it('reads a merge strategy without a merge key as a set (finalizers)', () => {
    const finalizers = walk(deployment, 'metadata', 'finalizers');
    expect(finalizers.listType).to.equal('set');
  });

  it('reads lists without markers as atomic (container args)', () => {
    const args = walk(podSpec, 'containers', '[]', 'args');
    expect(args.kind).to.equal('list');
    expect(args.atomic).to.equal(true);
  });

  it('reads x-kubernetes-map-type atomic on maps and structs', () => {
    expect(walk(podSpec, 'nodeSelector').kind).to.equal('map');
    expect(walk(podSpec, 'nodeSelector').atomic).to.equal(true);
    // metav1.LabelSelector is +structType=atomic.
    expect(walk(deployment, 'spec', 'selector').kind).to.equal('struct');
    expect(walk(deployment, 'spec', 'selector').atomic).to.equal(true);
    expect(walk(deployment, 'metadata', 'labels').kind).to.equal('map');
    expect(walk(deployment, 'metadata', 'labels').atomic).to.equal(false);
  });

  it('tells declared struct fields from map keys', () => {
    expect(deployment.child('spec').declared).to.equal(true);
    expect(walk(deployment, 'metadata', 'labels').child('app').declared).to.equal(false);
  });

  it('builds the zero object Go would serialise for a new Deployment', () => {
    // Non-pointer structs are {} (default: {} in the documents); required lists and pointers null;
    // a zero metav1.Time is null.
    const zero = deployment.zeroValue() as Record<string, unknown>;
    expect(zero.spec).to.deep.include({ selector: null, strategy: {} });
    expect((zero.spec as Record<string, unknown>).template).to.deep.equal({ metadata: { creationTimestamp: null }, spec: { containers: null } });
    expect(zero.status).to.deep.equal({});
  });

  it('deduces unknown kinds: objects are granular maps, lists atomic', () => {
    const unknown = topologyForKind('example.com/v1', 'Widget');
    expect(unknown.kind).to.equal('untyped');
    const asMap = unknown.resolve({ a: 1 });
    expect(asMap.kind).to.equal('map');
    expect(asMap.atomic).to.equal(false);
    expect(asMap.child('a').declared).to.equal(false);
    expect(unknown.resolve([1]).atomic).to.equal(true);
    expect(unknown.resolve('x').kind).to.equal('scalar');
  });

  it('builds topologies from standalone schemas (custom resources)', () => {
    const node = topologyFromSchema({
      type: 'object',
      properties: { items: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' } as never },
    });
    expect(node.kind).to.equal('struct');
    expect(node.child('items').node.listType).to.equal('set');
  });
});
