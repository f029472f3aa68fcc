/**
 * The shape the CSR and bootstrap-token controllers share: a FeedMirror of one key prefix whose
 * changes enqueue the key of every object the controller wants to look at, and a WorkQueue that
 * hands those keys to the controller one at a time (with WorkQueue's retries and backoff). A
 * subclass says which objects it wants and what handling a key means; starting, stopping and
 * idleness are the same for all of them, so they live here once.
 */
import { FeedMirror, type ObjectFeed } from '../authz';
import { WorkQueue, type WorkQueueOptions } from './work-queue';
import type { JsonObject } from '../apis/object';

export interface MirroredControllerSettings {
  readonly feed: ObjectFeed;
  /** The store key prefix mirrored (`/registry/certificatesigningrequests/`, ...). */
  readonly prefix: string;
  /** The queue's name, log, retry and quiet-error settings; handling is `handle` below. */
  readonly queue: Omit<WorkQueueOptions, 'handle'>;
}

export abstract class MirroredController {
  protected readonly mirror: FeedMirror<JsonObject>;
  protected readonly queue: WorkQueue;

  constructor(settings: MirroredControllerSettings) {
    this.queue = new WorkQueue({ ...settings.queue, handle: (key) => this.handle(key) });
    this.mirror = new FeedMirror(settings.feed, settings.prefix, {
      convert: (object) => object,
      onChange: (changes) => {
        for (const change of changes) if (change.current !== undefined && this.wants(change.current)) this.queue.add(change.key);
      },
      log: settings.queue.log,
    });
  }

  start(): void {
    this.mirror.start();
  }

  stop(): void {
    this.mirror.stop();
    this.queue.stop();
  }

  get isIdle(): boolean {
    return this.queue.isIdle;
  }

  /** Whether a created or changed object needs handling (called from the mirror's change step: keep it cheap). */
  protected abstract wants(object: JsonObject): boolean;

  /** Handles one mirrored key; a throw or `false` retries it later (WorkQueue's contract). */
  protected abstract handle(key: string): Promise<boolean | void>;
}
