import { expect } from 'chai';
import { NodeAuthorizer } from '../../../../../src/authz/node/node-authorizer';
import { MemoryFeed, nonResourceAttributes, resourceAttributes, user } from '../memory-feed';

const node1 = user('system:node:node1', ['system:nodes', 'system:authenticated']);

function pod(name: string, nodeName: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' },
    spec: {
      nodeName,
      serviceAccountName: 'default',
      imagePullSecrets: [{ name: 'pull' }],
      containers: [{ name: 'c', env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'k' } } }], envFrom: [{ configMapRef: { name: 'env-cm' } }] }],
      volumes: [
        { name: 'v1', secret: { secretName: 'vol-secret' } },
        { name: 'v2', configMap: { name: 'vol-cm' } },
        { name: 'v3', persistentVolumeClaim: { claimName: 'data' } },
        { name: 'v4', projected: { sources: [{ secret: { name: 'proj-secret' } }, { configMap: { name: 'proj-cm' } }] } },
      ],
      ...extra,
    },
  };
}

describe('authz/node NodeAuthorizer', () => {
  let feed: MemoryFeed;
  let authz: NodeAuthorizer;
  beforeEach(() => {
    feed = new MemoryFeed();
    authz = new NodeAuthorizer(feed);
    authz.start();
  });
  afterEach(() => authz.stop());

  const get = (resource: string, name: string, over: Record<string, unknown> = {}) =>
    authz.authorizeSync(resourceAttributes({ user: node1, verb: 'get', resource, namespace: 'ns', name, ...over }));

  it('lets a node read the secrets, configmaps and claims of a pod bound to it, and nothing else', () => {
    feed.put('/registry/pods/ns/web', pod('web', 'node1'));
    for (const s of ['pull', 'env-secret', 'vol-secret', 'proj-secret']) expect(get('secrets', s).decision, s).to.equal('allow');
    for (const c of ['env-cm', 'vol-cm', 'proj-cm']) expect(get('configmaps', c).decision, c).to.equal('allow');
    expect(get('persistentvolumeclaims', 'data').decision).to.equal('allow');
    expect(get('secrets', 'other')).to.deep.equal({ decision: 'no-opinion', reason: "no relationship found between node 'node1' and this object" });
    expect(get('secrets', 'pull', { verb: 'list' }).decision).to.equal('allow');
    expect(get('secrets', 'pull', { verb: 'update' })).to.deep.equal({ decision: 'no-opinion', reason: 'can only read resources of this type' });
    expect(get('secrets', '', { verb: 'list' })).to.deep.equal({ decision: 'no-opinion', reason: 'No Object name found' });
    expect(get('secrets', 'pull', { namespace: '' })).to.deep.equal({ decision: 'no-opinion', reason: 'can only read namespaced object of this type' });
    const node2 = user('system:node:node2', ['system:nodes']);
    expect(authz.authorizeSync(resourceAttributes({ user: node2, verb: 'get', resource: 'secrets', namespace: 'ns', name: 'pull' })).decision).to.equal('no-opinion');
  });

  it('follows a pod that moves, and forgets a deleted one', () => {
    feed.put('/registry/pods/ns/web', pod('web', ''));
    expect(get('secrets', 'pull').decision).to.equal('no-opinion');
    feed.put('/registry/pods/ns/web', pod('web', 'node1'));
    expect(get('secrets', 'pull').decision).to.equal('allow');
    feed.put('/registry/pods/ns/web', pod('web', 'node1', { imagePullSecrets: [{ name: 'new-pull' }] }));
    expect(get('secrets', 'pull').decision).to.equal('no-opinion');
    expect(get('secrets', 'new-pull').decision).to.equal('allow');
    feed.delete('/registry/pods/ns/web');
    expect(get('secrets', 'new-pull').decision).to.equal('no-opinion');
    expect(authz.graph.edgeCount).to.equal(0);
  });

  it('keeps a shared secret readable while another pod on the node still uses it', () => {
    feed.put('/registry/pods/ns/a', pod('a', 'node1'));
    feed.put('/registry/pods/ns/b', pod('b', 'node1'));
    feed.delete('/registry/pods/ns/a');
    expect(get('secrets', 'pull').decision).to.equal('allow');
  });

  it('reaches PVs through their claim, and the PV secrets kubelets may see', () => {
    feed.put('/registry/pods/ns/web', pod('web', 'node1'));
    feed.put('/registry/persistentvolumes/pv1', {
      metadata: { name: 'pv1' },
      spec: { claimRef: { namespace: 'ns', name: 'data' }, csi: { driver: 'd', volumeHandle: 'h', nodePublishSecretRef: { name: 'csi-pub', namespace: 'ns' }, controllerPublishSecretRef: { name: 'ctl', namespace: 'ns' } } },
    });
    expect(get('persistentvolumes', 'pv1', { namespace: '' }).decision).to.equal('allow');
    expect(get('secrets', 'csi-pub').decision).to.equal('allow');
    expect(get('secrets', 'ctl').decision).to.equal('no-opinion');
    expect(get('persistentvolumes', 'pv1', { namespace: '', verb: 'list' })).to.deep.equal({ decision: 'no-opinion', reason: 'can only get individual resources of this type' });
  });

  it('lets a node update the status of its claims, mint tokens for its pods\' service accounts, and use its lease and CSINode', () => {
    feed.put('/registry/pods/ns/web', pod('web', 'node1'));
    expect(get('persistentvolumeclaims', 'data', { verb: 'patch', subresource: 'status' }).decision).to.equal('allow');
    expect(get('persistentvolumeclaims', 'data', { verb: 'get', subresource: 'status' })).to.deep.equal({ decision: 'no-opinion', reason: 'can only get/update/patch this type' });
    expect(get('serviceaccounts', 'default', { verb: 'create', subresource: 'token' }).decision).to.equal('allow');
    expect(get('serviceaccounts', 'other', { verb: 'create', subresource: 'token' }).decision).to.equal('no-opinion');
    expect(get('serviceaccounts', 'default', { verb: 'get' })).to.deep.equal({ decision: 'no-opinion', reason: 'can only create tokens for individual service accounts' });
    const lease = (over: Record<string, unknown>) => authz.authorizeSync(resourceAttributes({ user: node1, apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease', ...over }));
    expect(lease({ verb: 'update', name: 'node1' }).decision).to.equal('allow');
    expect(lease({ verb: 'create', name: '' }).decision).to.equal('allow');
    expect(lease({ verb: 'update', name: 'node2' })).to.deep.equal({ decision: 'no-opinion', reason: 'can only access node lease with the same name as the requesting node' });
    expect(lease({ verb: 'get', name: 'node1', namespace: 'default' })).to.deep.equal({ decision: 'no-opinion', reason: 'can only access leases in the "kube-node-lease" system namespace' });
    const csi = authz.authorizeSync(resourceAttributes({ user: node1, verb: 'delete', apiGroup: 'storage.k8s.io', resource: 'csinodes', name: 'node1' }));
    expect(csi.decision).to.equal('allow');
    feed.put('/registry/volumeattachments/va1', { metadata: { name: 'va1' }, spec: { nodeName: 'node1' } });
    expect(authz.authorizeSync(resourceAttributes({ user: node1, verb: 'get', apiGroup: 'storage.k8s.io', resource: 'volumeattachments', name: 'va1' })).decision).to.equal('allow');
  });

  it('falls back to the system:node rules and ignores users that are not nodes', () => {
    expect(authz.authorizeSync(resourceAttributes({ user: node1, verb: 'list', resource: 'pods' })).decision).to.equal('allow');
    expect(authz.authorizeSync(resourceAttributes({ user: node1, verb: 'delete', resource: 'namespaces', name: 'x' })).decision).to.equal('no-opinion');
    expect(authz.authorizeSync(nonResourceAttributes(node1, 'get', '/healthz')).decision).to.equal('no-opinion');
    expect(authz.authorizeSync(resourceAttributes({ user: user('system:node:node1'), verb: 'list', resource: 'pods' })).decision).to.equal('no-opinion');
    expect(authz.authorizeSync(resourceAttributes({ user: user('system:node:', ['system:nodes']), verb: 'list', resource: 'pods' }))).to.deep.equal({ decision: 'no-opinion', reason: 'unknown node for user "system:node:"' });
  });

  it('says a node\'s rules cannot be listed', async () => {
    expect(await authz.rulesFor(node1)).to.deep.equal({ resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'node authorizer does not support user rule resolution' });
    expect((await authz.rulesFor(user('jane'))).incomplete).to.equal(false);
  });
});
