/** OwnerReferencesPermissionEnforcement, PodNodeSelector, PodTolerationRestriction. */
import { expect } from 'chai';
import { ownerReferencesPermissionEnforcementPlugin } from '../../../../../src/admission/plugins/owner-references-permission-enforcement';
import { podNodeSelectorPlugin } from '../../../../../src/admission/plugins/pod-node-selector';
import { podTolerationRestrictionPlugin } from '../../../../../src/admission/plugins/pod-toleration-restriction';
import { admit, attributes, makePlugin, namespace, pod, refusal, testDeps } from '../plugin-harness';
import type { JsonObject } from '../../../../../src/apis/object';

const configMap = (ownerReferences: JsonObject[]): JsonObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns', ownerReferences } });
const owner = (block?: boolean): JsonObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u1', ...(block === undefined ? {} : { blockOwnerDeletion: block }) });
const configMaps = { resource: 'configmaps', kind: 'ConfigMap' };

describe('OwnerReferencesPermissionEnforcement', () => {
  it('needs delete on the object to change its owner references, but not to create it with them', async () => {
    const deps = testDeps();
    const plugin = await makePlugin(ownerReferencesPermissionEnforcementPlugin, deps);
    await admit(plugin, attributes({ ...configMaps, object: configMap([owner()]) }));
    const err = await refusal(admit(plugin, attributes({ ...configMaps, operation: 'UPDATE', object: configMap([owner()]), oldObject: configMap([]) })));
    expect(err.message).to.equal('configmaps "cm" is forbidden: cannot set an ownerRef on a resource you can\'t delete: , <nil>');
    expect(deps.authorizations.map((a) => [a.verb, a.resource, a.name])).to.deep.equal([['delete', 'configmaps', 'cm']]);
  });

  it('needs update on the owner\'s finalizers to set blockOwnerDeletion', async () => {
    const deps = testDeps({ allow: (a) => a.verb === 'update' && a.subresource === 'finalizers' && a.resource === 'deployments' && a.name === 'web' });
    const plugin = await makePlugin(ownerReferencesPermissionEnforcementPlugin, deps);
    await admit(plugin, attributes({ ...configMaps, object: configMap([owner(true)]) }));
    const denied = await makePlugin(ownerReferencesPermissionEnforcementPlugin, testDeps());
    expect((await refusal(admit(denied, attributes({ ...configMaps, object: configMap([owner(true)]) })))).message).to.equal('configmaps "cm" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can\'t set finalizers on: , <nil>');
    const unknown = configMap([{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: 'u2', blockOwnerDeletion: true }]);
    expect((await refusal(admit(denied, attributes({ ...configMaps, object: unknown })))).message).to.match(/cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion example\.com\/v1 Kind Widget/);
  });
});

describe('PodNodeSelector', () => {
  const config = 'podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n  restricted: env=prod,zone=a\n';

  it('merges the namespace\'s selector (annotation, else the cluster default) into the pod\'s', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/namespaces/ns', namespace('ns'));
    deps.objects.put('/registry/namespaces/team', { ...namespace('team'), metadata: { name: 'team', annotations: { 'scheduler.alpha.kubernetes.io/node-selector': 'team=blue' } } });
    const plugin = await makePlugin(podNodeSelectorPlugin, deps, config);
    expect(((await admit(plugin, attributes({ object: pod('p', { nodeSelector: { disk: 'ssd' } }) })))?.spec as JsonObject).nodeSelector).to.deep.equal({ env: 'prod', disk: 'ssd' });
    expect(((await admit(plugin, attributes({ namespace: 'team', object: pod('p') })))?.spec as JsonObject).nodeSelector).to.deep.equal({ team: 'blue' });
  });

  it('refuses a pod whose selector conflicts with the namespace\'s or leaves its whitelist', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/namespaces/ns', namespace('ns'));
    deps.objects.put('/registry/namespaces/restricted', namespace('restricted'));
    const plugin = await makePlugin(podNodeSelectorPlugin, deps, config);
    expect((await refusal(admit(plugin, attributes({ object: pod('p', { nodeSelector: { env: 'dev' } }) })))).message).to.equal('pods "p" is forbidden: pod node label selector conflicts with its namespace node label selector');
    expect((await refusal(admit(plugin, attributes({ namespace: 'restricted', object: pod('p', { nodeSelector: { disk: 'ssd' } }) })))).message).to.equal('pods "p" is forbidden: pod node label selector labels conflict with its namespace whitelist');
  });
});

describe('PodTolerationRestriction', () => {
  const config = 'apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\nkind: Configuration\ndefault: [{key: team, operator: Exists, effect: NoSchedule}]\nwhitelist: [{operator: Exists, effect: NoSchedule}]\n';

  it('merges the namespace\'s (else the configuration\'s) default tolerations, and memory-pressure for pods that are not BestEffort', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/namespaces/ns', namespace('ns'));
    deps.objects.put('/registry/namespaces/own', { ...namespace('own'), metadata: { name: 'own', annotations: { 'scheduler.alpha.kubernetes.io/defaultTolerations': '[{"key":"gpu","operator":"Exists","effect":"NoSchedule"}]' } } });
    const plugin = await makePlugin(podTolerationRestrictionPlugin, deps, config);
    expect(((await admit(plugin, attributes({ object: pod('p') })))?.spec as JsonObject).tolerations).to.deep.equal([{ key: 'team', operator: 'Exists', effect: 'NoSchedule' }]);
    const burstable = pod('q', { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] });
    expect(((await admit(plugin, attributes({ namespace: 'own', object: burstable })))?.spec as JsonObject).tolerations).to.deep.equal([
      { key: 'gpu', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    ]);
  });

  it('refuses tolerations outside the whitelist (a 500, as v1.25 returns a plain error)', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/namespaces/ns', namespace('ns'));
    const plugin = await makePlugin(podTolerationRestrictionPlugin, deps, config);
    const err = await refusal(admit(plugin, attributes({ object: pod('p', { tolerations: [{ key: 'x', operator: 'Exists', effect: 'NoExecute' }] }) })));
    expect(err.code).to.equal(500);
    expect(err.message).to.equal('pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist');
  });
});
