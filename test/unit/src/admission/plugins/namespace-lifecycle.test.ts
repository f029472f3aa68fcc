import { expect } from 'chai';
import { namespaceLifecyclePlugin } from '../../../../../src/admission/plugins/namespace-lifecycle';
import { admit, attributes, makePlugin, namespace, pod, refusal, testDeps } from '../plugin-harness';

describe('NamespaceLifecycle', () => {
  it('answers 404 for a create into a namespace neither the cache nor the store holds', async () => {
    const deps = testDeps();
    const plugin = await makePlugin(namespaceLifecyclePlugin, deps);
    const err = await refusal(admit(plugin, attributes({ object: pod('p'), namespace: 'missing' })));
    expect(err.toStatus()).to.deep.include({ code: 404, reason: 'NotFound', message: 'namespaces "missing" not found', details: { name: 'missing', kind: 'namespaces' } });
  });

  it('admits a create into a namespace the store holds before the cache does', async () => {
    const deps = testDeps();
    deps.objects.storeOnly.set('/registry/namespaces/new', namespace('new'));
    await admit(await makePlugin(namespaceLifecyclePlugin, deps), attributes({ object: pod('p'), namespace: 'new' }));
  });

  it('refuses creates in a terminating namespace with 403 and the NamespaceTerminating cause, but not updates or deletes', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/namespaces/ns', namespace('ns', {}, { status: { phase: 'Terminating' } }));
    const plugin = await makePlugin(namespaceLifecyclePlugin, deps);
    const err = await refusal(admit(plugin, attributes({ object: pod('p') })));
    expect(err.toStatus()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'pods "p" is forbidden: unable to create new content in namespace ns because it is being terminated',
      reason: 'Forbidden',
      details: { name: 'p', kind: 'pods', causes: [{ reason: 'NamespaceTerminating', message: 'namespace ns is being terminated', field: 'metadata.namespace' }] },
      code: 403,
    });
    await admit(plugin, attributes({ operation: 'UPDATE', object: pod('p'), oldObject: pod('p') }));
    await admit(plugin, attributes({ operation: 'DELETE', oldObject: pod('p'), name: 'p' }));
  });

  it('protects default, kube-system and kube-public from deletion', async () => {
    const plugin = await makePlugin(namespaceLifecyclePlugin, testDeps());
    for (const name of ['default', 'kube-system', 'kube-public']) {
      const err = await refusal(admit(plugin, attributes({ operation: 'DELETE', resource: 'namespaces', kind: 'Namespace', namespace: '', name, oldObject: namespace(name) })));
      expect(err.code).to.equal(403);
      expect(err.message).to.equal(`namespaces "${name}" is forbidden: this namespace may not be deleted`);
    }
    await admit(plugin, attributes({ operation: 'DELETE', resource: 'namespaces', kind: 'Namespace', namespace: '', name: 'kube-node-lease', oldObject: namespace('kube-node-lease') }));
  });

  it('confirms a cached Active namespace with a quorum read after it was deleted through this replica', async () => {
    const deps = testDeps();
    const plugin = await makePlugin(namespaceLifecyclePlugin, deps);
    deps.objects.put('/registry/namespaces/gone', namespace('gone'));
    await admit(plugin, attributes({ operation: 'DELETE', resource: 'namespaces', kind: 'Namespace', namespace: '', name: 'gone', oldObject: namespace('gone') }));
    // The cache still says Active; the store already has it terminating.
    deps.objects.storeOnly.set('/registry/namespaces/gone', namespace('gone', {}, { status: { phase: 'Terminating' } }));
    const err = await refusal(admit(plugin, attributes({ object: pod('p'), namespace: 'gone' })));
    expect(err.message).to.match(/because it is being terminated$/);
    expect(deps.objects.liveReads).to.equal(1);
  });

  it('lets cluster-scoped objects and namespaces themselves through without a lookup', async () => {
    const deps = testDeps();
    const plugin = await makePlugin(namespaceLifecyclePlugin, deps);
    await admit(plugin, attributes({ resource: 'nodes', kind: 'Node', namespace: '', object: { metadata: { name: 'n1' } } }));
    await admit(plugin, attributes({ resource: 'namespaces', kind: 'Namespace', namespace: '', object: namespace('fresh') }));
    expect(deps.objects.liveReads + deps.objects.freshReads).to.equal(0);
  });
});
