import { expect } from 'chai';
import { namespaceAutoProvisionPlugin } from '../../../../../src/admission/plugins/namespace-auto-provision';
import { namespaceExistsPlugin } from '../../../../../src/admission/plugins/namespace-exists';
import { admit, attributes, makePlugin, namespace, pod, refusal, testDeps } from '../plugin-harness';

describe('NamespaceExists', () => {
  it('refuses any request into a namespace that does not exist, after a quorum read', async () => {
    const deps = testDeps();
    const plugin = await makePlugin(namespaceExistsPlugin, deps);
    const err = await refusal(admit(plugin, attributes({ object: pod('p'), namespace: 'missing' })));
    expect(err.code).to.equal(404);
    expect(err.message).to.equal('namespaces "missing" not found');
    deps.objects.storeOnly.set('/registry/namespaces/late', namespace('late'));
    await admit(plugin, attributes({ object: pod('p'), namespace: 'late' }));
  });
});

describe('NamespaceAutoProvision', () => {
  it('creates a missing namespace before the object, but not for a dry run', async () => {
    const deps = testDeps();
    const plugin = await makePlugin(namespaceAutoProvisionPlugin, deps);
    await admit(plugin, attributes({ object: pod('p'), namespace: 'dry', dryRun: true }));
    expect(deps.created).to.deep.equal([]);
    await admit(plugin, attributes({ object: pod('p'), namespace: 'auto' }));
    expect(deps.created).to.deep.equal([{ resource: 'namespaces', namespace: '', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'auto' } } }]);
    deps.objects.put('/registry/namespaces/there', namespace('there'));
    await admit(plugin, attributes({ object: pod('p'), namespace: 'there' }));
    expect(deps.created).to.have.length(1);
    expect(plugin.sideEffects).to.equal('NoneOnDryRun');
  });

  it('passes the namespace\'s own refusal on as a 403', async () => {
    const deps = testDeps();
    deps.client.create = async () => {
      throw new (await import('../../../../../src/util')).ApiError(422, 'Invalid', 'Namespace "Bad" is invalid');
    };
    const err = await refusal(admit(await makePlugin(namespaceAutoProvisionPlugin, deps), attributes({ object: pod('p'), namespace: 'Bad' })));
    expect(err.code).to.equal(403);
    expect(err.message).to.equal('pods "p" is forbidden: Namespace "Bad" is invalid');
  });
});
