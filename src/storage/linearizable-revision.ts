/**
 * The store's current revision for consistent reads from the watch cache (KEP-2340): each reader
 * needs a revision at least as new as every write acknowledged before its request arrived, which
 * one linearizable read (the store's ReadIndex) gives. Concurrent readers share reads: a read
 * already in flight may have begun before a newcomer arrived, so it cannot answer for it (a write
 * acknowledged in between would be missed); the newcomer waits for the next read, which starts as
 * soon as the one in flight ends and answers everyone who arrived meanwhile. So at most two reads
 * are outstanding at once, whatever the number of readers, as etcd batches its ReadIndex requests.
 */
export class LinearizableRevision {
  private inFlight?: Promise<number>;
  private next?: Promise<number>;
  /** Reads started (for tests and metrics). */
  reads = 0;

  constructor(private readonly read: () => Promise<number>) {}

  /** A revision at least as new as any write acknowledged before this call. */
  current(): Promise<number> {
    const running = this.inFlight;
    if (running === undefined) return this.start();
    this.next ??= running.then(settled, settled).then(() => {
      this.next = undefined;
      return this.start();
    });
    return this.next;
  }

  private start(): Promise<number> {
    this.reads++;
    const reading = this.read();
    this.inFlight = reading;
    const clear = () => {
      if (this.inFlight === reading) this.inFlight = undefined;
    };
    reading.then(clear, clear);
    return reading;
  }
}

function settled(): void {}
