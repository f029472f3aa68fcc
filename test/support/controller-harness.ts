/**
 * A registry and a watch cache over the in-memory store (memory-kv.ts), for controller tests:
 * real strategies, validation and storage semantics, in process, without admission. Besides,
 * `Gate` holds a controller's writes at a chosen point, to stop its leader in the middle of its
 * work, `electors` runs two leader electors (two replicas) over the same registry, and
 * `leaderWithWriteHeld` brings the two to the moment a hand-over is tested from.
 */
import { Catalogue } from '../../src/apis/catalogue';
import { LeaderElector } from '../../src/controllers/leader-election';
import { GenericRegistry, type ServedResource } from '../../src/registry';
import { ObjectStore, WatchCache } from '../../src/storage';
import { memoryKv } from './memory-kv';
import { until } from './until';
import type { JsonObject } from '../../src/apis/object';

export class ControllerHarness {
  private constructor(
    readonly registry: GenericRegistry,
    readonly cache: WatchCache,
    private readonly store: ObjectStore,
    private readonly catalogue: Catalogue,
  ) {}

  static async start(): Promise<ControllerHarness> {
    const store = new ObjectStore(memoryKv());
    const cache = new WatchCache(store, { log: () => undefined });
    cache.start();
    await until('the watch cache to fill', async () => cache.isReady, 5000);
    const registry = new GenericRegistry({ store, cache });
    return new ControllerHarness(registry, cache, store, Catalogue.load());
  }

  resource(group: string, resource: string): ServedResource {
    const found = this.catalogue.lookup(group, 'v1', resource);
    if (found === undefined) throw new Error(`no ${group}/${resource}`);
    return found;
  }

  get csrs(): ServedResource {
    return this.resource('certificates.k8s.io', 'certificatesigningrequests');
  }

  get secrets(): ServedResource {
    return this.resource('', 'secrets');
  }

  get configMaps(): ServedResource {
    return this.resource('', 'configmaps');
  }

  get leases(): ServedResource {
    return this.resource('coordination.k8s.io', 'leases');
  }

  /** The object as the store holds it now; undefined when absent. */
  async read(resource: ServedResource, namespace: string, name: string): Promise<JsonObject | undefined> {
    try {
      return await this.registry.get(resource, namespace, name, null);
    } catch {
      return undefined;
    }
  }

  /** Waits until the cache has caught up with everything written so far. */
  async synced(): Promise<void> {
    await this.cache.waitForRevision(await this.store.currentRevision(), 5000);
  }

  stop(): void {
    this.cache.stop();
  }
}

/**
 * Holds writes from the `after`-th on (1-based) until `release()`; `held` resolves when one is
 * being held. Writes before it pass.
 */
export class Gate {
  private count = 0;
  private opened = false;
  private releaseHeld: () => void = () => undefined;
  private readonly heldPromise: Promise<void>;
  private markHeld: () => void = () => undefined;
  private readonly opening: Promise<void>;

  constructor(private readonly after: number) {
    this.heldPromise = new Promise((resolve) => {
      this.markHeld = resolve;
    });
    this.opening = new Promise((resolve) => {
      this.releaseHeld = resolve;
    });
  }

  get held(): Promise<void> {
    return this.heldPromise;
  }

  get passed(): number {
    return this.count;
  }

  private inflight = 0;
  private idleWaiters: Array<() => void> = [];

  /** Runs `work` after passing the gate, counting it as in flight until it settles. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    this.inflight++;
    try {
      await this.pass();
      return await work();
    } finally {
      this.inflight--;
      if (this.inflight === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /** Resolves once no gated call is in flight (after release, the held one has finished). */
  settled(): Promise<void> {
    if (this.inflight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async pass(): Promise<void> {
    this.count++;
    if (this.opened || this.count < this.after) return;
    this.markHeld();
    await this.opening;
  }

  release(): void {
    this.opened = true;
    this.releaseHeld();
  }
}

/** A registry whose guaranteedUpdate and delete go through `gate` first. */
export function gatedRegistry(registry: GenericRegistry, gate: Gate): GenericRegistry {
  return {
    guaranteedUpdate: (...args: Parameters<GenericRegistry['guaranteedUpdate']>) => gate.run(() => registry.guaranteedUpdate(...args)),
    delete: (...args: Parameters<GenericRegistry['delete']>) => gate.run(() => registry.delete(...args)),
    create: (...args: Parameters<GenericRegistry['create']>) => registry.create(...args),
  } as unknown as GenericRegistry;
}

/** Two replicas' electors for one lease, each starting and stopping its own controller. */
export function electors(harness: ControllerHarness, start: Record<'a' | 'b', () => { stop(): void }>): { a: LeaderElector; b: LeaderElector } {
  const make = (identity: 'a' | 'b') => {
    let running: { stop(): void } | undefined;
    return new LeaderElector({
      registry: harness.registry,
      leases: harness.leases,
      namespace: 'kube-system',
      name: 'carina-controller-manager',
      identity,
      leaseDurationSeconds: 2,
      retryPeriodMs: 25,
      onStartedLeading: () => {
        running = start[identity]();
      },
      onStoppedLeading: () => {
        running?.stop();
        running = undefined;
      },
    });
  };
  return { a: make('a'), b: make('b') };
}

/**
 * The start of the hand-over the controllers' tests play: replica a runs its controller on a
 * registry whose writes pass `gate`, replica b on the plain one (`controller()`). a leads, b
 * stands by, and this resolves once the gate holds one of a's writes: the test then stops a and
 * watches b take over while that write is pending (until gate.release()).
 */
export async function leaderWithWriteHeld(
  harness: ControllerHarness,
  gate: Gate,
  controller: (registry?: GenericRegistry) => { start(): void; stop(): void },
): Promise<{ a: LeaderElector; b: LeaderElector }> {
  const started = (registry?: GenericRegistry) => {
    const c = controller(registry);
    c.start();
    return c;
  };
  const pair = electors(harness, { a: () => started(gatedRegistry(harness.registry, gate)), b: () => started() });
  pair.a.start();
  await until('a to lead', async () => pair.a.isLeader);
  pair.b.start();
  await gate.held;
  return pair;
}
