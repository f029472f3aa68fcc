/**
 * NamespaceExists (off by default; kubernetes plugin/pkg/admission/namespace/exists): refuses a
 * request into a namespace that does not exist with 404 `namespaces "x" not found`. The cache is
 * read first; a miss is confirmed by a quorum read, as the plugin's live lookup does.
 */
import { errors } from '../../util';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { namespaceKey } from '../plugin-support';

export const namespaceExistsPlugin: AdmissionPluginFactory = (_config, deps) => ({
  name: 'NamespaceExists',
  sideEffects: 'None',
  handles: (a) => (a.operation === 'CREATE' || a.operation === 'UPDATE' || a.operation === 'DELETE') && a.namespace !== '' && !(a.group === '' && a.kind === 'Namespace'),
  async validate(a) {
    const key = namespaceKey(a.namespace);
    if (deps.objects.get(key) !== undefined) return;
    if ((await deps.objects.getLive(key)) === undefined) throw errors.notFound({ group: '', resource: 'namespaces' }, a.namespace);
  },
});
