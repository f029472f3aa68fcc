/**
 * YAML request bodies decoded on a worker thread, so that no body holds the event loop that the
 * API server and the store replica share. The `yaml` package needs 3-6 s and up to 1.5 GB per
 * MiB of tiny nodes (a JSON body of the same size: 20-70 ms), and its cost cannot be sliced: on
 * the main thread one body froze a replica for 15 s and cost it the controller lease.
 *
 * What the main thread still does per body: hand the text over (a copy) and JSON.parse the
 * answer, which is what a JSON body of that value costs. The bounds of yaml-codec.ts hold in
 * the worker (depth, alias ratio, expansion); the worker's heap is limited, and a body that
 * exhausts it ends only the worker: its callers get TooLarge, the next body starts a new one.
 *
 * One worker, bodies in arrival order: a hostile body delays the YAML bodies behind it (by a
 * few seconds at 3 MiB), never the JSON and Protobuf ones, the watches or the store. The worker
 * is started on the first body and holds the process open only while bodies are in flight.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { YamlCodecError, type DecodedYaml, type YamlCodecErrorReason } from './yaml-codec';

/** One body for the worker (internal to this module and yaml-worker.ts). */
export interface YamlWorkerRequest {
  id: number;
  text: string;
  withDuplicateKeys: boolean;
}

/** The worker's answer to one YamlWorkerRequest. */
export type YamlWorkerReply =
  | { id: number; decoded: DecodedYaml }
  | { id: number; failure: { reason: YamlCodecErrorReason | 'Internal'; message: string } };

export interface YamlBodyDecoderOptions {
  /** The worker's old-generation heap; a body that needs more is refused as TooLarge. */
  heapMb?: number;
}

/** 3 MiB of the densest YAML (a flow sequence of one-digit numbers) peaks at 1.5 GB in the `yaml` package. */
const DEFAULT_HEAP_MB = 2048;

interface Waiter {
  resolve(decoded: DecodedYaml): void;
  reject(error: Error): void;
}

/** A running worker and the bodies it owes an answer. */
interface RunningWorker {
  worker: Worker;
  waiters: Map<number, Waiter>;
}

export class YamlBodyDecoder {
  private running?: RunningWorker;
  private nextId = 1;
  private readonly heapMb: number;

  constructor(options: YamlBodyDecoderOptions = {}) {
    this.heapMb = options.heapMb ?? DEFAULT_HEAP_MB;
  }

  /**
   * The JSON text of a YAML body (and its duplicate keys when asked), decoded off this thread.
   *
   * @throws YamlCodecError as decodeYaml does; TooLarge when the body exhausted the worker's heap.
   * @example const { json } = await decoder.decode('kind: ConfigMap\n', false); // '{"kind":"ConfigMap"}'
   */
  decode(text: string, withDuplicateKeys: boolean): Promise<DecodedYaml> {
    const { worker, waiters } = this.running ?? this.startWorker();
    const id = this.nextId++;
    return new Promise<DecodedYaml>((resolve, reject) => {
      waiters.set(id, { resolve, reject });
      if (waiters.size === 1) worker.ref();
      worker.postMessage({ id, text, withDuplicateKeys } satisfies YamlWorkerRequest);
    });
  }

  /** Ends the worker; bodies still in flight fail. */
  async close(): Promise<void> {
    const running = this.running;
    this.running = undefined;
    if (running !== undefined) await running.worker.terminate();
  }

  private startWorker(): RunningWorker {
    // The `yaml` package composes recursively, about 1 KB of stack per level: 1,000 levels (the
    // deepest body accepted) need more than the main thread's 1 MB, well within this 8 MB.
    const worker = new Worker(join(__dirname, 'yaml-worker.js'), { resourceLimits: { maxOldGenerationSizeMb: this.heapMb, stackSizeMb: 8 } });
    const running: RunningWorker = { worker, waiters: new Map() };
    const { waiters } = running;
    worker.unref();
    worker.on('message', (reply: YamlWorkerReply) => {
      const waiter = waiters.get(reply.id);
      if (waiter === undefined) return;
      waiters.delete(reply.id);
      if (waiters.size === 0) worker.unref();
      if ('decoded' in reply) waiter.resolve(reply.decoded);
      else if (reply.failure.reason === 'Internal') waiter.reject(new Error(`decode YAML: ${reply.failure.message}`));
      else waiter.reject(new YamlCodecError(reply.failure.reason, reply.failure.message));
    });
    // A worker that failed is never reused: the next body starts a new one.
    const failAll = (error: Error): void => {
      if (this.running === running) this.running = undefined;
      const owed = [...waiters.values()];
      waiters.clear();
      for (const waiter of owed) waiter.reject(error);
    };
    worker.on('error', (error: Error & { code?: string }) => {
      failAll(error.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? new YamlCodecError('TooLarge', `decode YAML: the document needs more than ${this.heapMb} MB to decode`, { cause: error })
        : error);
    });
    worker.on('exit', (code) => failAll(new Error(`decode YAML: the decoder thread ended (exit code ${code})`)));
    this.running = running;
    return running;
  }
}
