/**
 * How src/authz's RBAC meets the registry: the client the default-policy reconciler and the
 * aggregation controller write through (as the server itself, so no escalation check applies,
 * as v1.25's loopback client is system:masters), and the escalation check every write of a Role,
 * ClusterRole, RoleBinding or ClusterRoleBinding by a user passes (v1.25's policy-based RBAC
 * storage, which always checks, whatever the authorization mode).
 */
import type { AdmissionAttributes, AdmissionPlugin } from '../admission';
import { checkBindingEscalation, checkRoleEscalation, type Authorizer, type RbacAuthorizer, type RbacClient, type RbacKind, type RbacObject, type RoleRef } from '../authz';
import { ApiError } from '../util';
import type { GenericRegistry, ServedResource } from '../registry';
import { deepCopy, type JsonObject } from '../apis/object';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const RESOURCE_OF: Record<RbacKind, string> = { ClusterRole: 'clusterroles', ClusterRoleBinding: 'clusterrolebindings', Role: 'roles', RoleBinding: 'rolebindings' };

/** The RBAC client over the registry, writing as the server (no admission user, so no escalation check). */
export function registryRbacClient(registry: GenericRegistry, lookup: (group: string, version: string, resource: string) => ServedResource | undefined, namespaces: ServedResource): RbacClient {
  const resourceOf = (kind: RbacKind): ServedResource => {
    const resource = lookup(RBAC_GROUP, 'v1', RESOURCE_OF[kind]);
    if (resource === undefined) throw new Error(`the catalogue has no ${RESOURCE_OF[kind]}`);
    return resource;
  };
  const namespaceOf = (object: RbacObject) => String((object.metadata as { namespace?: string }).namespace ?? '');
  const nameOf = (object: RbacObject) => String((object.metadata as { name?: string }).name ?? '');
  return {
    async get(kind, namespace, name) {
      try {
        return (await registry.get(resourceOf(kind), namespace, name, null)) as unknown as RbacObject;
      } catch (err) {
        if (err instanceof ApiError && err.code === 404) return undefined;
        throw err;
      }
    },
    async create(kind, object) {
      return (await registry.create(resourceOf(kind), namespaceOf(object), deepCopy(object) as unknown as JsonObject, { dryRun: false, subresource: '' })) as unknown as RbacObject;
    },
    async update(kind, object) {
      const result = await registry.update(resourceOf(kind), namespaceOf(object), nameOf(object), deepCopy(object) as unknown as JsonObject, { dryRun: false, subresource: '' });
      return result.object as unknown as RbacObject;
    },
    async delete(kind, namespace, name) {
      await registry.delete(resourceOf(kind), namespace, name, { dryRun: false });
    },
    async ensureNamespace(name) {
      try {
        await registry.create(namespaces, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { dryRun: false, subresource: '' });
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 409)) throw err;
      }
    },
  };
}

/** Fields the garbage collector changes; an update of only these is not checked (IsOnlyMutatingGCFields). */
function withoutGcFields(object: JsonObject | undefined): string {
  if (object === undefined) return '';
  const { ownerReferences: _o, finalizers: _f, resourceVersion: _r, managedFields: _m, ...metadata } = (object.metadata ?? {}) as JsonObject;
  return JSON.stringify({ ...object, metadata });
}

/**
 * The escalation check as an always-on validating step of the registry's admission chain. Writes
 * without a user (the server's own) are not checked.
 */
export function rbacEscalationCheck(rbac: RbacAuthorizer, authorizer: Authorizer): AdmissionPlugin {
  const handles = (attributes: AdmissionAttributes) =>
    attributes.group === RBAC_GROUP && attributes.subresource === '' && (attributes.operation === 'CREATE' || attributes.operation === 'UPDATE') && attributes.userInfo !== undefined;
  return {
    name: 'rbac-escalation',
    sideEffects: 'None',
    handles,
    async validate(attributes) {
      const user = attributes.userInfo;
      const object = attributes.object;
      if (user === undefined || object === undefined) return;
      if (attributes.operation === 'UPDATE' && withoutGcFields(object) === withoutGcFields(attributes.oldObject)) return;
      const context = {
        user,
        rulesFor: (u: typeof user, namespace: string) => rbac.policyRulesFor(u, namespace),
        authorize: async (a: Parameters<Authorizer['authorize']>[0]) => (await authorizer.authorize(a)).decision === 'allow',
      };
      const metadata = object as unknown as { metadata: { name: string }; rules?: unknown; roleRef: RoleRef };
      let failure: ApiError | undefined;
      if (attributes.resource === 'roles' || attributes.resource === 'clusterroles') {
        failure = await checkRoleEscalation(context, attributes.resource, attributes.namespace, attributes.operation === 'CREATE' ? '' : attributes.name, metadata);
      } else if (attributes.resource === 'rolebindings' || attributes.resource === 'clusterrolebindings') {
        failure = await checkBindingEscalation(context, attributes.resource, attributes.namespace, metadata, (ref, namespace) => rbac.getRoleReferenceRules(ref, namespace));
      }
      if (failure !== undefined) throw failure;
    },
  };
}
