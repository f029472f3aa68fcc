/**
 * An in-memory RbacClient for tests: keeps objects with a resourceVersion, answers 409
 * AlreadyExists and 409 Conflict as the registry does, and can hold every call until released
 * so two reconcilers interleave.
 */
import { ApiError, errors } from '../../../../../src/util/api-error';
import type { RbacClient, RbacKind, RbacObject } from '../../../../../src/authz/rbac/rbac-client';

const RESOURCE: Record<RbacKind, string> = { ClusterRole: 'clusterroles', ClusterRoleBinding: 'clusterrolebindings', Role: 'roles', RoleBinding: 'rolebindings' };

export class FakeRbacClient implements RbacClient {
  readonly store = new Map<string, RbacObject>();
  revision = 0;
  creates = 0;
  updates = 0;
  conflicts = 0;
  alreadyExists = 0;
  readonly namespaces = new Set<string>();
  /** Called before every write; may await to interleave callers. */
  beforeWrite: () => Promise<void> = async () => undefined;

  private key(kind: RbacKind, namespace: string, name: string): string {
    return `${kind}/${namespace}/${name}`;
  }

  async get(kind: RbacKind, namespace: string, name: string): Promise<RbacObject | undefined> {
    await Promise.resolve();
    const o = this.store.get(this.key(kind, namespace, name));
    return o === undefined ? undefined : structuredClone(o);
  }

  async create(kind: RbacKind, object: RbacObject): Promise<RbacObject> {
    await this.beforeWrite();
    const key = this.key(kind, object.metadata.namespace ?? '', object.metadata.name);
    if (this.store.has(key)) {
      this.alreadyExists++;
      throw errors.alreadyExists({ group: 'rbac.authorization.k8s.io', resource: RESOURCE[kind] }, object.metadata.name);
    }
    this.creates++;
    const stored = structuredClone(object);
    stored.metadata.resourceVersion = String(++this.revision);
    this.store.set(key, stored);
    return structuredClone(stored);
  }

  async update(kind: RbacKind, object: RbacObject): Promise<RbacObject> {
    await this.beforeWrite();
    const key = this.key(kind, object.metadata.namespace ?? '', object.metadata.name);
    const current = this.store.get(key);
    const gr = { group: 'rbac.authorization.k8s.io', resource: RESOURCE[kind] };
    if (current === undefined) throw errors.notFound(gr, object.metadata.name);
    if (object.metadata.resourceVersion !== undefined && object.metadata.resourceVersion !== current.metadata.resourceVersion) {
      this.conflicts++;
      throw errors.staleResourceVersion(gr, object.metadata.name);
    }
    this.updates++;
    const stored = structuredClone(object);
    stored.metadata.resourceVersion = String(++this.revision);
    this.store.set(key, stored);
    return structuredClone(stored);
  }

  async delete(kind: RbacKind, namespace: string, name: string): Promise<void> {
    if (!this.store.delete(this.key(kind, namespace, name))) throw new ApiError(404, 'NotFound', 'gone');
  }

  async ensureNamespace(name: string): Promise<void> {
    this.namespaces.add(name);
  }

  object(kind: RbacKind, namespace: string, name: string): RbacObject | undefined {
    return this.store.get(this.key(kind, namespace, name));
  }
}
