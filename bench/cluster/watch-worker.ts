/**
 * One process of bench/cluster's watch load generator (forked by fan-out.ts): opens many JSON
 * watches multiplexed on a few HTTP/2 connections per replica, notes the monotonic time each
 * watcher receives each benchmark event, and on request turns those times into a latency
 * histogram against the writes' acknowledgement times. It parses only what it needs of an event
 * (its name), so its own CPU per event stays small and measurable.
 */
import https from 'node:https';
import { ApiClient, CLIENT_GO_WINDOWS, credentialsFromDataDir, type ApiCredentials } from '../support/api-client';
import { LatencyHistogram } from '../support/latency-histogram';
import { monotonicMs } from '../support/latency';
import type { WorkerReply, WorkerRequest } from './worker-protocol';

type StreamOpener = ApiClient['stream'];

/**
 * A watch on an HTTP/1.1 connection of its own (no ALPN, so the server answers in HTTP/1.1,
 * chunked), as kubectl or curl open one.
 */
function http1Stream(url: string, credentials: ApiCredentials): StreamOpener {
  const { hostname, port } = new URL(url);
  return (path, onData, onStatus = () => {}, onEnd = () => {}) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (credentials.token !== undefined) headers.authorization = `Bearer ${credentials.token}`;
    const request = https.request({ hostname, port, path, method: 'GET', headers, ca: credentials.ca, cert: credentials.cert, key: credentials.key, agent: false }, (response) => {
      onStatus(response.statusCode ?? 0);
      response.on('data', onData);
      response.on('end', onEnd);
      response.on('error', onEnd);
    });
    request.on('error', onEnd);
    request.end();
    return () => request.destroy();
  };
}

const NAME_MARK = Buffer.from('"name":"');
const RV_MARK = Buffer.from('"resourceVersion":"');
/** Attempts to open one watch before the run counts it as failed. */
const OPEN_ATTEMPTS = 5;
const NEWLINE = 0x0a;
const QUOTE = 0x22;
class WatchWorker {
  private readonly clients: ApiClient[] = [];
  private readonly closers: Array<() => void> = [];
  /** Per watcher, the benchmark events it received. */
  private counts = new Int32Array(0);
  /** Per watcher, the resourceVersion of the last benchmark event it received. */
  private lastRevisions = new Float64Array(0);
  /** Per watcher, the resourceVersion of the last event of any object it received (where it resumes). */
  private lastSeen = new Float64Array(0);
  private closing = false;
  private outOfOrder = 0;
  /** Per event name, the receipt time of each delivery. */
  private readonly receipts = new Map<string, number[]>();
  private received = 0;
  /** Events of objects outside the measured writes (the warm-up's). */
  private ignored = 0;
  private ended = 0;
  private cpuAtBegin = process.cpuUsage();
  private wallAtBegin = monotonicMs();

  constructor(private readonly send: (reply: WorkerReply) => void) {}

  async open(request: Extract<WorkerRequest, { kind: 'open' }>): Promise<void> {
    const began = monotonicMs();
    const credentials = credentialsFromDataDir(request.dataDir);
    const total = request.targets.reduce((sum, t) => sum + t.watchers, 0);
    this.counts = new Int32Array(total);
    this.lastRevisions = new Float64Array(total);
    this.lastSeen = new Float64Array(total);
    const opened: Array<Promise<boolean>> = [];
    let watcher = 0;
    const pattern = request.pattern ?? 'h2-shared';
    for (const target of request.targets) {
      if (pattern === 'h1-per-watch') {
        for (let i = 0; i < target.watchers; i++) opened.push(this.watchRetrying(http1Stream(target.url, credentials), request.path, request.eventPrefix, watcher++));
        continue;
      }
      // Flow-control windows as client-go's: a watcher must not be held back by its own client.
      const count = pattern === 'h2-per-watch' ? target.watchers : request.connectionsPerTarget;
      const sessions = Array.from({ length: count }, () => new ApiClient(target.url, credentials, { windowBytes: CLIENT_GO_WINDOWS }));
      this.clients.push(...sessions);
      for (let i = 0; i < target.watchers; i++) opened.push(this.watchRetrying((...args) => sessions[i % sessions.length].stream(...args), request.path, request.eventPrefix, watcher++));
    }
    const results = await Promise.all(opened);
    const established = results.filter((ok) => ok).length;
    this.send({ kind: 'opened', established, failed: total - established, ms: monotonicMs() - began });
  }

  /**
   * A watch opened as a client retries one (a loaded machine may time out a handshake or answer
   * 429): up to OPEN_ATTEMPTS times, a second more apart each time.
   */
  private async watchRetrying(stream: StreamOpener, path: string, eventPrefix: string, index: number): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      if (await this.watch(stream, path, eventPrefix, index)) return true;
      if (attempt === OPEN_ATTEMPTS) return false;
      await new Promise((r) => setTimeout(r, 1000 * attempt));
    }
  }

  /**
   * Resolves true once the server has answered 200 (it subscribes before answering). A watch the
   * server ends is opened again from the last resourceVersion it received, as client-go's
   * reflector resumes (the server closes a watcher that cannot keep up).
   */
  private watch(stream: StreamOpener, path: string, eventPrefix: string, index: number): Promise<boolean> {
    return new Promise((resolve) => {
      let leftover: Buffer | undefined;
      let answered = false;
      let over = false;
      const close = stream(path, (chunk) => {
        const at = monotonicMs();
        // Bytes, not text: an event is looked at only around its name and resourceVersion, so
        // the generator's CPU per event stays far below the server's.
        const data = leftover === undefined ? chunk : Buffer.concat([leftover, chunk]);
        let from = 0;
        let nl: number;
        while ((nl = data.indexOf(NEWLINE, from)) >= 0) {
          this.event(data, from, nl, eventPrefix, index, at);
          from = nl + 1;
        }
        leftover = from === data.length ? undefined : data.subarray(from);
      }, (status) => {
        answered = true;
        resolve(status === 200);
      }, () => {
        if (over) return;
        over = true;
        if (!answered) {
          resolve(false);
          return;
        }
        this.ended++;
        if (!this.closing && this.lastSeen[index] > 0) {
          void this.watch(stream, path.replace(/resourceVersion=\d+/, `resourceVersion=${this.lastSeen[index]}`), eventPrefix, index);
        }
      });
      this.closers.push(close);
    });
  }

  private event(data: Buffer, start: number, end: number, eventPrefix: string, index: number, at: number): void {
    const mark = data.indexOf(NAME_MARK, start);
    if (mark < 0 || mark > end) return;
    let revision = 0;
    const rvMark = data.indexOf(RV_MARK, start);
    if (rvMark >= 0 && rvMark < end) {
      const rvStart = rvMark + RV_MARK.length;
      revision = Number(data.toString('latin1', rvStart, data.indexOf(QUOTE, rvStart)));
      if (revision > this.lastSeen[index]) this.lastSeen[index] = revision;
    }
    const nameStart = mark + NAME_MARK.length;
    const name = data.toString('latin1', nameStart, data.indexOf(QUOTE, nameStart));
    if (!name.startsWith(eventPrefix)) {
      this.ignored++;
      return;
    }
    // Every event once and in order: each watcher's resourceVersions strictly increase.
    if (revision > 0) {
      if (!(revision > this.lastRevisions[index])) this.outOfOrder++;
      else this.lastRevisions[index] = revision;
    }
    this.counts[index]++;
    this.received++;
    const times = this.receipts.get(name);
    if (times === undefined) this.receipts.set(name, [at]);
    else times.push(at);
  }

  begin(): void {
    this.cpuAtBegin = process.cpuUsage();
    this.wallAtBegin = monotonicMs();
    this.send({ kind: 'begun' });
  }

  collect(acks: Array<[string, number, number]>, expectedPerWatcher: number): void {
    const cpu = process.cpuUsage(this.cpuAtBegin);
    const fromAck = new LatencyHistogram();
    const fromSend = new LatencyHistogram();
    let beforeAck = 0;
    let unmatched = 0;
    const writeOf = new Map(acks.map(([name, sent, ack]) => [name, { sent, ack }]));
    // The plots' latency over time: by the second of the run the write was sent in.
    const firstSent = Math.min(...acks.map(([, sent]) => sent));
    const bySecond: LatencyHistogram[] = [];
    for (const [name, times] of this.receipts) {
      const write = writeOf.get(name);
      if (write === undefined) {
        unmatched += times.length;
        continue;
      }
      for (const at of times) {
        if (at < write.ack) beforeAck++;
        fromAck.add(at - write.ack);
        fromSend.add(at - write.sent);
        const second = Math.floor((write.sent - firstSent) / 1000);
        (bySecond[second] ??= new LatencyHistogram()).add(at - write.ack);
      }
    }
    let complete = 0;
    for (const count of this.counts) if (count === expectedPerWatcher) complete++;
    this.send({
      kind: 'result',
      fromAck: fromAck.toPairs(),
      fromSend: fromSend.toPairs(),
      fromAckBySecond: Array.from(bySecond, (h) => h?.toPairs() ?? []),
      received: this.received,
      watchers: this.counts.length,
      completeWatchers: complete,
      beforeAck,
      outOfOrder: this.outOfOrder,
      unmatched,
      ended: this.ended,
      cpuMs: (cpu.user + cpu.system) / 1000,
      wallMs: monotonicMs() - this.wallAtBegin,
    });
  }

  progress(): void {
    this.send({ kind: 'progress', received: this.received, ignored: this.ignored });
  }

  close(): void {
    this.closing = true;
    for (const close of this.closers) close();
    for (const client of this.clients) client.destroy();
  }
}

function main(): void {
  const send = (reply: WorkerReply) => process.send?.(reply);
  const worker = new WatchWorker(send);
  process.on('message', (message: WorkerRequest) => {
    switch (message.kind) {
      case 'open':
        void worker.open(message);
        break;
      case 'begin':
        worker.begin();
        break;
      case 'progress':
        worker.progress();
        break;
      case 'collect':
        worker.collect(message.acks, message.expectedPerWatcher);
        break;
      case 'close':
        worker.close();
        process.exit(0);
    }
  });
  // The parent went away (finished or crashed): never linger.
  process.on('disconnect', () => process.exit(0));
}

main();
