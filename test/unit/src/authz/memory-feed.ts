/**
 * A tiny in-memory ObjectFeed for the authz tests: objects by key, a revision counter, and
 * subscribers told of every put and delete, as the watch cache tells them.
 */
import type { FeedEvent, ObjectFeed } from '../../../../src/authz/object-feed';
import type { JsonObject } from '../../../../src/apis/object';

interface Sub {
  prefix: string;
  listener: (event: FeedEvent) => void;
  onReset: () => void;
}

export class MemoryFeed implements ObjectFeed {
  readonly objects = new Map<string, JsonObject>();
  revision = 0;
  isReady = true;
  private readonly subs = new Set<Sub>();
  listCalls = 0;

  list(prefix: string): { items: JsonObject[]; revision: number } {
    if (!this.isReady) throw new Error('not ready');
    this.listCalls++;
    const items = [...this.objects.entries()].filter(([k]) => k.startsWith(prefix)).sort(([a], [b]) => (a < b ? -1 : 1)).map(([, o]) => o);
    return { items, revision: this.revision };
  }

  subscribe(prefix: string, _after: number, listener: (event: FeedEvent) => void, onReset: () => void): { cancel(): void } {
    const sub = { prefix, listener, onReset };
    this.subs.add(sub);
    return { cancel: () => this.subs.delete(sub) };
  }

  get subscriberCount(): number {
    return this.subs.size;
  }

  put(key: string, object: JsonObject): void {
    const previous = this.objects.get(key);
    this.revision++;
    const stored = { ...object, metadata: { ...(object.metadata as object), resourceVersion: String(this.revision) } };
    this.objects.set(key, stored);
    this.emit({ type: previous ? 'MODIFIED' : 'ADDED', key, object: stored, previous, revision: this.revision });
  }

  delete(key: string): void {
    const previous = this.objects.get(key);
    if (previous === undefined) return;
    this.revision++;
    this.objects.delete(key);
    this.emit({ type: 'DELETED', key, object: previous, revision: this.revision });
  }

  /** Drops every subscriber as the watch cache does when it refills. */
  reset(): void {
    const subs = [...this.subs];
    this.subs.clear();
    for (const sub of subs) sub.onReset();
  }

  private emit(event: FeedEvent): void {
    for (const sub of [...this.subs]) if (event.key.startsWith(sub.prefix)) sub.listener(event);
  }
}

/** Attributes of a resource request with defaults. */
export function resourceAttributes(over: Partial<import('../../../../src/authz/authorizer').AuthorizationAttributes> & { user: import('../../../../src/authn/user-info').UserInfo }): import('../../../../src/authz/authorizer').AuthorizationAttributes {
  return { verb: 'get', isResourceRequest: true, path: '', apiGroup: '', apiVersion: 'v1', resource: 'pods', subresource: '', namespace: '', name: '', ...over };
}

export function nonResourceAttributes(user: import('../../../../src/authn/user-info').UserInfo, verb: string, path: string): import('../../../../src/authz/authorizer').AuthorizationAttributes {
  return { user, verb, isResourceRequest: false, path, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' };
}

export function user(name: string, groups: string[] = []): import('../../../../src/authn/user-info').UserInfo {
  return { name, uid: '', groups, extra: {} };
}

export const role = (ns: string, name: string, rules: unknown[]): JsonObject => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace: ns }, rules });
export const clusterRole = (name: string, rules: unknown[], labels?: Record<string, string>): JsonObject => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, ...(labels ? { labels } : {}) }, rules });
export const roleBinding = (ns: string, name: string, roleKind: string, roleName: string, subjects: unknown[]): JsonObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name, namespace: ns }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName }, subjects,
});
export const clusterRoleBinding = (name: string, roleName: string, subjects: unknown[]): JsonObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName }, subjects,
});
