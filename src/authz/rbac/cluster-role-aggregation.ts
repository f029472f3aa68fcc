/**
 * The ClusterRole aggregation controller of v1.25 (pkg/controller/clusterroleaggregation): for
 * every ClusterRole with an `aggregationRule`, its rules become those of every other ClusterRole
 * matched by any of its selectors, selectors in order, roles of one selector in name order, each
 * rule once (semantic equality), and they are written only when they differ from what is stored.
 *
 * It follows the feed: any ClusterRole change queues every aggregated role, and a pass runs on the
 * next turn of the event loop, so a newly labelled role is picked up as soon as the feed delivers
 * it. A failed write (409 Conflict when another replica wrote first) is retried after
 * `retryMs`; the new version arriving from the feed queues the role again anyway.
 */
import { labelSelectorFromObject } from '../../apis/selectors';
import { FeedMirror, type ObjectFeed } from '../object-feed';
import { CLUSTER_ROLES_PREFIX } from './rbac-authorizer';
import type { RbacClient } from './rbac-client';
import { semanticEqual } from './policy-reconciler';
import type { PolicyRule, RoleObject } from './types';
import { deepCopy, type JsonObject } from '../../apis/object';

export interface AggregationControllerOptions {
  log?: (line: string) => void;
  retryMs?: number;
}

/** The rules `role` should hold given all cluster roles (rules of the others only). */
export function aggregatedRules(role: RoleObject, all: Iterable<RoleObject>): PolicyRule[] {
  const rules: PolicyRule[] = [];
  const roles = [...all].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  for (const selectorJson of role.aggregationRule?.clusterRoleSelectors ?? []) {
    // An invalid selector stops this role's aggregation, as LabelSelectorAsSelector's error does.
    const selector = labelSelectorFromObject(selectorJson);
    for (const other of roles) {
      if (other.metadata.name === role.metadata.name || !selector.matches(other.metadata.labels ?? {})) continue;
      for (const rule of other.rules ?? []) {
        if (!rules.some((r) => semanticEqual(r, rule))) rules.push(rule);
      }
    }
  }
  return rules;
}

export class ClusterRoleAggregationController {
  private readonly roles: FeedMirror<RoleObject>;
  private readonly queue = new Set<string>();
  private scheduled = false;
  private running = false;
  private stopped = true;
  private retryTimer?: NodeJS.Timeout;
  private readonly log: (line: string) => void;

  constructor(feed: ObjectFeed, private readonly client: RbacClient, private readonly options: AggregationControllerOptions = {}) {
    this.log = options.log ?? (() => undefined);
    this.roles = new FeedMirror(feed, CLUSTER_ROLES_PREFIX, {
      convert: (object: JsonObject) => object as unknown as RoleObject,
      onChange: () => this.enqueueAggregated(),
      log: options.log,
    });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.roles.start();
  }

  stop(): void {
    this.stopped = true;
    this.roles.stop();
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  /** Resolves when nothing is queued or running (for tests and orderly shutdown). */
  get isIdle(): boolean {
    return this.queue.size === 0 && !this.running && !this.scheduled;
  }

  private enqueueAggregated(): void {
    for (const [name, role] of this.roles.entries()) if (role.aggregationRule) this.queue.add(name);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      while (this.queue.size > 0 && !this.stopped) {
        const name = this.queue.values().next().value as string;
        this.queue.delete(name);
        try {
          await this.sync(name);
        } catch (err) {
          this.log(`authz: aggregating clusterrole ${name} failed: ${(err as Error).message}; retrying`);
          this.retryLater(name);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private retryLater(name: string): void {
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.queue.add(name);
      this.schedule();
    }, this.options.retryMs ?? 1000);
    this.retryTimer.unref?.();
  }

  /** Brings one aggregated role's rules up to date; true when it wrote. */
  async sync(name: string): Promise<boolean> {
    const role = this.roles.get(name);
    if (role === undefined || !role.aggregationRule) return false;
    const rules = aggregatedRules(role, this.roles.values());
    if (semanticEqual(rules, role.rules ?? [])) return false;
    const updated: RoleObject = { ...deepCopy(role), rules: deepCopy(rules) };
    await this.client.update('ClusterRole', updated);
    return true;
  }
}
