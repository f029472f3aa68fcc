import { expect } from 'chai';
import { nodeRestrictionPlugin, forbiddenNodeLabels } from '../../../../../src/admission/plugins/node-restriction';
import type { UserInfo } from '../../../../../src/authn/user-info';
import { admit, attributes, makePlugin, pod, refusal, testDeps } from '../plugin-harness';
import type { JsonObject } from '../../../../../src/apis/object';

const kubelet: UserInfo = { name: 'system:node:n1', uid: '', groups: ['system:nodes', 'system:authenticated'], extra: {} };
const node = (name: string, extra: JsonObject = {}): JsonObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, uid: `uid-${name}`, ...((extra.metadata as JsonObject | undefined) ?? {}) }, spec: { ...((extra.spec as JsonObject | undefined) ?? {}) } });
const nodes = { resource: 'nodes', kind: 'Node', namespace: '', userInfo: kubelet };
const mirror = (extra: JsonObject = {}, owner: JsonObject = { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-n1', controller: true }) =>
  pod('static', { nodeName: 'n1', ...extra }, { annotations: { 'kubernetes.io/config.mirror': 'hash' }, ownerReferences: [owner] });

describe('NodeRestriction', () => {
  it('lets a kubelet create only mirror pods bound to and owned by its node, referring to nothing else', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/minions/n1', node('n1'));
    const plugin = await makePlugin(nodeRestrictionPlugin, deps);
    await admit(plugin, attributes({ object: mirror(), userInfo: kubelet }));
    expect((await refusal(admit(plugin, attributes({ object: pod('p', { nodeName: 'n1' }), userInfo: kubelet })))).message).to.equal('pods "p" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods');
    expect((await refusal(admit(plugin, attributes({ object: mirror({ nodeName: 'n2' }), userInfo: kubelet })))).message).to.equal('pods "static" is forbidden: node "n1" can only create pods with spec.nodeName set to itself');
    expect((await refusal(admit(plugin, attributes({ object: mirror({ volumes: [{ name: 's', secret: { secretName: 'x' } }] }), userInfo: kubelet })))).message).to.equal('pods "static" is forbidden: node "n1" can not create pods that reference secrets');
    expect((await refusal(admit(plugin, attributes({ object: mirror({}, { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'stale', controller: true }), userInfo: kubelet })))).message).to.equal('pods "static" is forbidden: node n1 UID mismatch: expected stale got uid-n1');
  });

  it('lets a kubelet update pod status and delete pods only on its own node', async () => {
    const plugin = await makePlugin(nodeRestrictionPlugin, testDeps());
    const mine = pod('p', { nodeName: 'n1' });
    const theirs = pod('q', { nodeName: 'n2' });
    await admit(plugin, attributes({ operation: 'UPDATE', subresource: 'status', object: mine, oldObject: mine, userInfo: kubelet }));
    expect((await refusal(admit(plugin, attributes({ operation: 'UPDATE', subresource: 'status', object: theirs, oldObject: theirs, userInfo: kubelet })))).message).to.equal('pods "q" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself');
    expect((await refusal(admit(plugin, attributes({ operation: 'DELETE', name: 'q', oldObject: theirs, userInfo: kubelet })))).message).to.equal('pods "q" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself');
    expect((await refusal(admit(plugin, attributes({ operation: 'UPDATE', object: mine, oldObject: mine, userInfo: kubelet })))).message).to.equal('pods "p" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods');
  });

  it('keeps a kubelet to its own Node, its taints and the labels it may set', async () => {
    const plugin = await makePlugin(nodeRestrictionPlugin, testDeps());
    expect((await refusal(admit(plugin, attributes({ ...nodes, operation: 'UPDATE', name: 'n2', object: node('n2'), oldObject: node('n2') })))).message).to.equal('nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
    const tainted = node('n1', { spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } });
    expect((await refusal(admit(plugin, attributes({ ...nodes, operation: 'UPDATE', name: 'n1', object: node('n1'), oldObject: tainted })))).message).to.equal('nodes "n1" is forbidden: node "n1" is not allowed to modify taints');
    const labelled = node('n1', { metadata: { labels: { 'node-restriction.kubernetes.io/secure': 'true', 'kubernetes.io/hostname': 'n1', 'example.com/x': 'y' } } });
    expect((await refusal(admit(plugin, attributes({ ...nodes, object: labelled })))).message).to.equal('nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-restriction.kubernetes.io/secure');
    expect(forbiddenNodeLabels(new Set(['kubernetes.io/role', 'node.kubernetes.io/instance-type', 'kubelet.kubernetes.io/x', 'foo.k8s.io/bar', 'topology.kubernetes.io/zone']))).to.deep.equal(['foo.k8s.io/bar', 'kubernetes.io/role']);
  });

  it('keeps a kubelet to its own lease in kube-node-lease, and leaves other users alone', async () => {
    const plugin = await makePlugin(nodeRestrictionPlugin, testDeps());
    const leases = { group: 'coordination.k8s.io', resource: 'leases', kind: 'Lease', userInfo: kubelet };
    await admit(plugin, attributes({ ...leases, namespace: 'kube-node-lease', object: { metadata: { name: 'n1' } } }));
    expect((await refusal(admit(plugin, attributes({ ...leases, namespace: 'default', object: { metadata: { name: 'n1' } } })))).message).to.equal('leases.coordination.k8s.io "n1" is forbidden: can only access leases in the "kube-node-lease" system namespace');
    expect((await refusal(admit(plugin, attributes({ ...leases, namespace: 'kube-node-lease', object: { metadata: { name: 'n2' } } })))).message).to.equal('leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node');
    expect(plugin.handles(attributes({ object: pod('p') }))).to.equal(false);
    const nameless: UserInfo = { ...kubelet, name: 'system:node:' };
    expect((await refusal(admit(plugin, attributes({ object: pod('p'), userInfo: nameless })))).message).to.equal('pods "p" is forbidden: could not determine node from user "system:node:"');
  });
});
