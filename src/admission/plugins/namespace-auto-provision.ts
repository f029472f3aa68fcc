/**
 * NamespaceAutoProvision (off by default; kubernetes plugin/pkg/admission/namespace/autoprovision):
 * a create into a namespace that does not exist first creates the namespace (as the server, so
 * the namespace passes admission itself). Its side effect is skipped for dry runs, as v1.25
 * skips it, so a dry run into a missing namespace is then refused by NamespaceLifecycle.
 */
import { ApiError } from '../../util';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, namespaceKey } from '../plugin-support';

export const namespaceAutoProvisionPlugin: AdmissionPluginFactory = (_config, deps) => ({
  name: 'NamespaceAutoProvision',
  sideEffects: 'NoneOnDryRun',
  handles: (a) => a.operation === 'CREATE' && !a.dryRun && a.namespace !== '' && !(a.group === '' && a.kind === 'Namespace'),
  async mutate(a) {
    if (deps.objects.get(namespaceKey(a.namespace)) !== undefined) return undefined;
    try {
      await deps.client.create({ group: '', version: 'v1', resource: 'namespaces' }, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: a.namespace } });
    } catch (err) {
      if (err instanceof ApiError && err.code === 409) return undefined;
      throw admissionForbidden(a, err instanceof ApiError ? err : (err as Error).message);
    }
    return undefined;
  },
});
