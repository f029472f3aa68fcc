/**
 * OwnerReferencesPermissionEnforcement (off by default; kubernetes plugin/pkg/admission/gc):
 * changing an object's metadata.ownerReferences needs `delete` on the object (creating it does
 * not: its creator could have not created it), and adding blockOwnerDeletion=true needs
 * `update` on the owner's `finalizers` subresource, since it can hold up the owner's deletion.
 * pods/status writes are exempt (kubelets).
 */
import type { AdmissionAttributes } from '../admission-chain';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, arrayField, stringField } from '../plugin-support';
import { type JsonObject, metadataOf } from '../../apis/object';

function ownerReferences(object: JsonObject | undefined): JsonObject[] {
  return arrayField(metadataOf(object), 'ownerReferences');
}

function isChangingOwnerReferences(a: AdmissionAttributes): boolean {
  const now = ownerReferences(a.object);
  if (a.oldObject === undefined) return now.length > 0;
  return JSON.stringify(now) !== JSON.stringify(ownerReferences(a.oldObject));
}

/** References with blockOwnerDeletion=true that the old object did not have so (matched by uid). */
function newBlockingReferences(a: AdmissionAttributes): JsonObject[] {
  const blocking = ownerReferences(a.object).filter((ref) => ref.blockOwnerDeletion === true);
  if (a.oldObject === undefined) return blocking;
  const before = new Set(ownerReferences(a.oldObject).filter((ref) => ref.blockOwnerDeletion === true).map((ref) => stringField(ref, 'uid')));
  return blocking.filter((ref) => !before.has(stringField(ref, 'uid')));
}

export const ownerReferencesPermissionEnforcementPlugin: AdmissionPluginFactory = (_config, deps) => ({
  name: 'OwnerReferencesPermissionEnforcement',
  sideEffects: 'None',
  handles: (a) => (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.object !== undefined && a.userInfo !== undefined &&
    !(a.group === '' && a.resource === 'pods' && a.subresource === 'status'),
  async validate(a) {
    if (!isChangingOwnerReferences(a)) return;
    const user = a.userInfo as NonNullable<AdmissionAttributes['userInfo']>;
    if (a.operation !== 'CREATE') {
      const result = await deps.authorizer.authorize({ user, verb: 'delete', isResourceRequest: true, path: '', apiGroup: a.group, apiVersion: a.version, resource: a.resource, subresource: a.subresource, namespace: a.namespace, name: a.name });
      if (result.decision !== 'allow') throw admissionForbidden(a, `cannot set an ownerRef on a resource you can't delete: ${result.reason}, <nil>`);
    }
    for (const ref of newBlockingReferences(a)) {
      const apiVersion = stringField(ref, 'apiVersion');
      const kind = stringField(ref, 'kind');
      const mapping = deps.mapKind(apiVersion, kind);
      if (mapping === undefined) {
        throw admissionForbidden(a, `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${apiVersion} Kind ${kind}: no matches for kind "${kind}" in version "${apiVersion}"`);
      }
      const result = await deps.authorizer.authorize({ user, verb: 'update', isResourceRequest: true, path: '', apiGroup: mapping.group, apiVersion: mapping.version, resource: mapping.resource, subresource: 'finalizers', namespace: a.namespace, name: stringField(ref, 'name') });
      if (result.decision !== 'allow') throw admissionForbidden(a, `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: ${result.reason}, <nil>`);
    }
  },
});
