/**
 * The V8 heap in use by another Node process after a full garbage collection, through the
 * inspector protocol (HeapProfiler.collectGarbage, then Runtime.getHeapUsage), and CPU
 * profiles of it around one phase of a benchmark. The heap a
 * process reports on its own (/metrics) depends on when V8 last collected, which on an idle
 * server may be minutes after the objects it measures were freed: figures per object then
 * swing by several KiB between runs.
 *
 * The process must run with `--inspect=127.0.0.1:<port>`; a benchmark only, on loopback.
 */
import { WebSocket } from 'undici';

interface SampledNode {
  selfSize: number;
  children: SampledNode[];
}

export class HeapProbe {
  private constructor(private readonly socket: WebSocket) {}

  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (result: unknown) => void; reject: (err: Error) => void }>();

  static async connect(inspectorPort: number, timeoutMs = 30_000): Promise<HeapProbe> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
        const socket = new WebSocket(targets[0].webSocketDebuggerUrl);
        await new Promise<void>((resolve, reject) => {
          socket.addEventListener('open', () => resolve(), { once: true });
          socket.addEventListener('error', () => reject(new Error('inspector connection failed')), { once: true });
        });
        const probe = new HeapProbe(socket);
        socket.addEventListener('message', (event) => probe.answered(String(event.data)));
        return probe;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /** Heap bytes in use after a full collection. */
  async heapUsedAfterGc(): Promise<number> {
    await this.call('HeapProfiler.collectGarbage');
    // A second pass frees what the first one's finalizers released.
    await this.call('HeapProfiler.collectGarbage');
    const usage = (await this.call('Runtime.getHeapUsage')) as { usedSize: number };
    return usage.usedSize;
  }

  /**
   * Starts V8's sampling heap profiler: from now on about one allocation per `intervalBytes` is
   * recorded with its stack, and forgotten when it is collected.
   */
  async startHeapSampling(intervalBytes = 1024): Promise<void> {
    await this.call('HeapProfiler.startSampling', { samplingInterval: intervalBytes });
  }

  /**
   * The bytes allocated since startHeapSampling that are still alive after two full collections
   * (V8's estimate from its samples). Unlike the heap's size, it is not moved by what older
   * objects were freed meanwhile, nor by V8's accounting of the young generation's pages.
   */
  async sampledLiveBytes(): Promise<number> {
    await this.call('HeapProfiler.collectGarbage');
    await this.call('HeapProfiler.collectGarbage');
    const { profile } = (await this.call('HeapProfiler.getSamplingProfile')) as { profile: { head: SampledNode } };
    let bytes = 0;
    const visit = (node: SampledNode) => {
      bytes += node.selfSize;
      for (const child of node.children) visit(child);
    };
    visit(profile.head);
    return bytes;
  }

  async stopHeapSampling(): Promise<void> {
    await this.call('HeapProfiler.stopSampling');
  }

  /** Starts V8's sampling profiler in the process (1 ms interval). */
  async startProfile(): Promise<void> {
    await this.call('Profiler.enable');
    await this.call('Profiler.setSamplingInterval', { interval: 1000 });
    await this.call('Profiler.start');
  }

  /** Stops the profiler; the profile, in the .cpuprofile format (Chrome DevTools, speedscope). */
  async stopProfile(): Promise<unknown> {
    return ((await this.call('Profiler.stop')) as { profile: unknown }).profile;
  }

  close(): void {
    this.socket.close();
  }

  private call(method: string, params?: object): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  private answered(text: string): void {
    const message = JSON.parse(text) as { id?: number; result?: unknown; error?: { message: string } };
    if (message.id === undefined) return;
    const waiter = this.waiting.get(message.id);
    this.waiting.delete(message.id);
    if (message.error !== undefined) waiter?.reject(new Error(`inspector: ${message.error.message}`));
    else waiter?.resolve(message.result);
  }
}
