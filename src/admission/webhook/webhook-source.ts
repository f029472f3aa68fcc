/**
 * The webhooks of every stored Mutating- or ValidatingWebhookConfiguration, followed from the
 * watch cache (apiserver admission/configuration mutating_webhook_manager.go): a configuration
 * written through any replica is in this replica's list as soon as its cache applies the event,
 * well within the "few seconds" spec 02 §4.4 point 9 allows, with no store read per request.
 *
 * Order, as v1.25 calls them: configurations sorted by name, then each configuration's webhooks
 * in their order. The list is rebuilt once per change and shared by every request until the next
 * one (callers must not change it).
 */
import { FeedMirror, type ObjectFeed } from '../../authz';
import { webhooksOf, type WebhookAccessor, type WebhookType } from './webhook-accessor';
import type { JsonObject } from '../../apis/object';
import { resourceKeyPrefix } from '../../apis/catalogue';

export const MUTATING_CONFIGURATIONS_PREFIX = resourceKeyPrefix({ group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations' });
export const VALIDATING_CONFIGURATIONS_PREFIX = resourceKeyPrefix({ group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations' });

/** Where a dispatcher reads the webhooks it may call. */
export interface WebhookSource {
  readonly hasSynced: boolean;
  /** The current webhooks in call order; the array is shared and must not be changed. */
  webhooks(): readonly WebhookAccessor[];
  /** Resolves true once synced, false if `timeoutMs` passes first. */
  waitForSync(timeoutMs: number): Promise<boolean>;
}

export class CachedWebhookSource implements WebhookSource {
  private readonly mirror: FeedMirror<{ name: string; hooks: WebhookAccessor[] }>;
  private ordered: readonly WebhookAccessor[] | undefined;

  constructor(feed: ObjectFeed, readonly type: WebhookType, log?: (line: string) => void) {
    const prefix = type === 'mutating' ? MUTATING_CONFIGURATIONS_PREFIX : VALIDATING_CONFIGURATIONS_PREFIX;
    this.mirror = new FeedMirror(feed, prefix, {
      convert: (object) => ({ name: String(((object.metadata ?? {}) as JsonObject).name ?? ''), hooks: webhooksOf(object as JsonObject, type) }),
      onChange: () => {
        this.ordered = undefined;
      },
      log,
    });
  }

  start(): void {
    this.mirror.start();
  }

  stop(): void {
    this.mirror.stop();
  }

  get hasSynced(): boolean {
    return this.mirror.isSynced;
  }

  webhooks(): readonly WebhookAccessor[] {
    if (this.ordered === undefined) {
      const configurations = [...this.mirror.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      this.ordered = configurations.flatMap((c) => c.hooks);
    }
    return this.ordered;
  }

  async waitForSync(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.mirror.isSynced) {
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return true;
  }
}

/** A fixed list of webhooks, for tests and for configurations that are not stored. */
export class StaticWebhookSource implements WebhookSource {
  readonly hasSynced = true;
  constructor(private hooks: readonly WebhookAccessor[]) {}

  webhooks(): readonly WebhookAccessor[] {
    return this.hooks;
  }

  replace(hooks: readonly WebhookAccessor[]): void {
    this.hooks = hooks;
  }

  async waitForSync(): Promise<boolean> {
    return true;
  }
}
