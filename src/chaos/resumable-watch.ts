/**
 * A watch on the chaos objects' collection that behaves like a careful client: it lists, then
 * watches from the list's resourceVersion; when the stream ends or breaks it resumes from the
 * last resourceVersion it saw (an event's or a bookmark's); on 410 Gone it relists and starts
 * over. What it saw is kept as segments (see WatchSegment) for the watch checker.
 */
import type { ChaosApiClient } from './chaos-api-client';
import type { ObservedEvent, WatchRecord, WatchSegment } from './chaos-history';
import type { SeededRandom } from './seeded-random';

export interface ResumableWatchOptions {
  watcherId: number;
  client: ChaosApiClient;
  collectionPath: string;
  /** Only objects whose name starts with this are recorded. */
  namePrefix: string;
  random: SeededRandom;
  log: (line: string) => void;
}

interface WatchObject {
  metadata?: { name?: string; resourceVersion?: string };
  data?: Record<string, string>;
  code?: number;
}

const RETRY_DELAY_MS = 250;

export class ResumableWatch {
  private readonly segments: WatchSegment[] = [];
  private current?: WatchSegment;
  private resumes = 0;
  private streams = 0;
  private relists = 0;
  private stopped = false;
  private abort?: () => void;
  private loop?: Promise<void>;

  constructor(private readonly options: ResumableWatchOptions) {}

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<WatchRecord> {
    this.stopped = true;
    this.abort?.();
    await this.loop;
    return this.record();
  }

  record(): WatchRecord {
    return { watcherId: this.options.watcherId, segments: this.segments.map((s) => ({ ...s, events: [...s.events] })), resumes: this.resumes, relists: this.relists };
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (this.current === undefined) {
        const listed = await this.list();
        if (listed === undefined) {
          await delay(RETRY_DELAY_MS);
          continue;
        }
        this.current = { from: listed, through: listed, events: [] };
        this.segments.push(this.current);
      }
      const outcome = await this.watchOnce(this.current);
      if (this.stopped) break;
      if (outcome === 'gone') {
        this.relists++;
        this.current = undefined;
      } else {
        if (outcome === 'ended') this.resumes++;
        await delay(outcome === 'ended' ? 0 : RETRY_DELAY_MS);
      }
    }
  }

  /** The collection's resourceVersion, or undefined when the list failed. */
  private async list(): Promise<number | undefined> {
    const answer = await this.options.client.request('GET', this.options.collectionPath);
    if (answer.kind !== 'response' || answer.status !== 200 || answer.body === undefined) return undefined;
    const metadata = answer.body.metadata as { resourceVersion?: string } | undefined;
    const rv = Number(metadata?.resourceVersion);
    return Number.isInteger(rv) && rv > 0 ? rv : undefined;
  }

  /**
   * One watch request from the segment's last revision. 'ended': the stream was served and then
   * closed (a disconnect to resume from); 'failed': it was refused or never connected; 'gone': 410.
   */
  private watchOnce(segment: WatchSegment): Promise<'ended' | 'failed' | 'gone'> {
    const timeoutSeconds = this.options.random.between(4, 12);
    const stream = ++this.streams;
    const path = `${this.options.collectionPath}?watch=true&allowWatchBookmarks=true&resourceVersion=${segment.through}&timeoutSeconds=${timeoutSeconds}`;
    return new Promise((resolve) => {
      let status = 0;
      let gone = false;
      this.abort = this.options.client.stream(path, (s) => (status = s), (line) => {
        let event: { type: string; object: WatchObject };
        try {
          event = JSON.parse(line) as { type: string; object: WatchObject };
        } catch {
          return;
        }
        if (event.type === 'ERROR') {
          if (event.object.code === 410) gone = true;
          this.abort?.();
          return;
        }
        const rv = Number(event.object.metadata?.resourceVersion);
        if (!Number.isInteger(rv)) return;
        if (event.type === 'BOOKMARK') {
          segment.through = Math.max(segment.through, rv);
          return;
        }
        const name = event.object.metadata?.name ?? '';
        if (name.startsWith(this.options.namePrefix) && (event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED')) {
          const observed: ObservedEvent = { type: event.type, name, value: event.object.data?.v ?? null, resourceVersion: rv, stream };
          segment.events.push(observed);
        }
        // Revisions of a resumed stream only grow; never move back even if a server misbehaves.
        segment.through = Math.max(segment.through, rv);
      }, () => {
        this.abort = undefined;
        if (gone || status === 410) resolve('gone');
        else resolve(status === 200 ? 'ended' : 'failed');
      });
    });
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
