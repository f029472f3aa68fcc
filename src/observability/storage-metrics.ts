/**
 * The API server's storage metrics under kube-apiserver v1.25's names, types, labels and buckets
 * (k8s.io/apiserver storage/etcd3/metrics and storage/cacher/metrics):
 * - etcd_request_duration_seconds{operation,type}: each call the object store makes to its
 *   key-value store (the embedded replica or an etcd), timed by a wrapper around the KvClient
 *   (measuredKvClient). kube's `type` is the Go type of the object (`*core.Pod`); Carina names the
 *   resource its key is stored under (`pods`, `customresourcedefinitions.apiextensions.k8s.io`);
 *   its `operation` is read from the call: a single-key range is `get`, a ranged one `list`, a
 *   transaction guarded on a create revision of 0 `create`, one that deletes `delete`, any other
 *   write `update`;
 * - apiserver_storage_list_total, _fetched_objects_total, _evaluated_objects_total and
 *   _returned_objects_total{resource}: ranged reads of the store (a LIST not served by the watch
 *   cache, and the cache's own fill). The store filters nothing, so the three counts are equal;
 * - apiserver_storage_objects{resource}: objects per resource in the watch cache (which holds
 *   every stored object), counted at most every 10 s;
 * - apiserver_init_events_total{resource}: objects the watch cache loaded when it filled;
 * - apiserver_cache_list_total, _fetched_objects_total{resource_prefix,index} and
 *   _returned_objects_total{resource_prefix}: LISTs the watch cache answered (index is always
 *   empty: the cache keeps no secondary index).
 * kube's `resource` label is resource.group for grouped resources; keys of built-in grouped
 * resources that kube stores without their group (/registry/deployments/...) are named as stored.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Bytes, KvClient, TxnRequest } from '../../raft';

/** etcd_request_duration_seconds' buckets in v1.25 (those of apiserver_request_duration_seconds). */
const ETCD_REQUEST_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
const OBJECT_COUNT_INTERVAL_MS = 10_000;

/** The resource a storage key belongs to, as kube's GroupResource.String() names it. */
export function resourceOfKey(key: string): string {
  const parts = key.split('/');
  // ['', 'registry', <resource or group>, <resource or namespace/name>, ...]
  if (parts.length < 3 || parts[1] !== 'registry') return '';
  const first = parts[2];
  return first.includes('.') && parts.length > 3 ? `${parts[3]}.${first}` : first;
}

function text(bytes: Bytes | undefined): string {
  return bytes === undefined ? '' : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

function txnOperation(txn: TxnRequest): string {
  if (txn.success.some((op) => 'requestDeleteRange' in op)) return 'delete';
  if (txn.compare.some((c) => c.target === 'CREATE' && c.createRevision === 0 && c.result === 'EQUAL')) return 'create';
  return 'update';
}

/** A watch cache as these metrics see it: its keys, and its list. */
export interface CacheView {
  readonly isReady: boolean;
  cachedKeys(): Iterable<string>;
}

export class StorageMetrics {
  private readonly requestDurations: Histogram;
  private readonly storageLists: Counter;
  private readonly storageFetched: Counter;
  private readonly storageEvaluated: Counter;
  private readonly storageReturned: Counter;
  private readonly cacheLists: Counter;
  private readonly cacheFetched: Counter;
  private readonly cacheReturned: Counter;
  private objectCounts = { at: 0, counts: new Map<string, number>() };
  private initEventsCounted = false;

  constructor(registry: Registry, private readonly cache: CacheView) {
    this.requestDurations = new Histogram({
      name: 'etcd_request_duration_seconds',
      help: 'Etcd request latency in seconds for each operation and object type.',
      labelNames: ['operation', 'type'],
      buckets: ETCD_REQUEST_BUCKETS,
      registers: [registry],
    });
    const resourceCounter = (name: string, help: string) => new Counter({ name, help, labelNames: ['resource'], registers: [registry] });
    this.storageLists = resourceCounter('apiserver_storage_list_total', 'Number of LIST requests served from storage');
    this.storageFetched = resourceCounter('apiserver_storage_list_fetched_objects_total', 'Number of objects read from storage in the course of serving a LIST request');
    this.storageEvaluated = resourceCounter('apiserver_storage_list_evaluated_objects_total', 'Number of objects tested in the course of serving a LIST request from storage');
    this.storageReturned = resourceCounter('apiserver_storage_list_returned_objects_total', 'Number of objects returned for a LIST request from storage');
    this.cacheLists = new Counter({ name: 'apiserver_cache_list_total', help: 'Number of LIST requests served from watch cache', labelNames: ['resource_prefix', 'index'], registers: [registry] });
    this.cacheFetched = new Counter({ name: 'apiserver_cache_list_fetched_objects_total', help: 'Number of objects read from watch cache in the course of serving a LIST request', labelNames: ['resource_prefix', 'index'], registers: [registry] });
    this.cacheReturned = new Counter({ name: 'apiserver_cache_list_returned_objects_total', help: 'Number of objects returned for a LIST request from watch cache', labelNames: ['resource_prefix'], registers: [registry] });
    const metrics = this;
    new Gauge({
      name: 'apiserver_storage_objects',
      help: 'Number of stored objects at the time of last check split by kind.',
      labelNames: ['resource'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [resource, count] of metrics.countObjects()) this.set({ resource }, count);
      },
    });
    // Counted at the first scrape after the cache filled: every object it then holds was an init event.
    new Counter({
      name: 'apiserver_init_events_total',
      help: 'Counter of init events processed in watchcache broken by resource type.',
      labelNames: ['resource'],
      registers: [registry],
      collect() {
        if (metrics.initEventsCounted || !cache.isReady) return;
        metrics.initEventsCounted = true;
        for (const [resource, count] of metrics.countObjects(true)) this.inc({ resource }, count);
      },
    });
  }

  private countObjects(fresh = false): Map<string, number> {
    const now = Date.now();
    if (!this.cache.isReady) return new Map();
    if (!fresh && now - this.objectCounts.at < OBJECT_COUNT_INTERVAL_MS) return this.objectCounts.counts;
    const counts = new Map<string, number>();
    for (const key of this.cache.cachedKeys()) {
      const resource = resourceOfKey(key);
      if (resource !== '') counts.set(resource, (counts.get(resource) ?? 0) + 1);
    }
    this.objectCounts = { at: now, counts };
    return counts;
  }

  /** One LIST the watch cache answered: `fetched` objects read under the prefix, `returned` kept. */
  cacheListServed(prefix: string, fetched: number, returned: number): void {
    this.cacheLists.inc({ resource_prefix: prefix, index: '' });
    this.cacheFetched.inc({ resource_prefix: prefix, index: '' }, fetched);
    this.cacheReturned.inc({ resource_prefix: prefix }, returned);
  }

  /** The KvClient with each object-store call timed (see the module header). */
  measuredKvClient(kv: KvClient): KvClient {
    const metrics = this;
    const timed = <T>(operation: string, key: Bytes | undefined, call: () => Promise<T>, onDone?: (result: T, type: string) => void): Promise<T> => {
      const started = performance.now();
      const type = resourceOfKey(text(key));
      const done = (result?: T) => {
        metrics.requestDurations.observe({ operation, type }, (performance.now() - started) / 1000);
        if (result !== undefined) onDone?.(result, type);
      };
      return call().then((result) => {
        done(result);
        return result;
      }, (err: unknown) => {
        done();
        throw err;
      });
    };
    const measured: Partial<KvClient> = {
      range: (request, options) => {
        const ranged = request.rangeEnd !== undefined && request.rangeEnd.length > 0;
        return timed(ranged ? 'list' : 'get', request.key, () => kv.range(request, options), ranged && request.countOnly !== true ? (response, type) => {
          const fetched = response.kvs.length;
          metrics.storageLists.inc({ resource: type });
          metrics.storageFetched.inc({ resource: type }, fetched);
          metrics.storageEvaluated.inc({ resource: type }, fetched);
          metrics.storageReturned.inc({ resource: type }, fetched);
        } : undefined);
      },
      put: (request, options) => timed('update', request.key, () => kv.put(request, options)),
      deleteRange: (request, options) => timed('delete', request.key, () => kv.deleteRange(request, options)),
      txn: (request, options) => timed(txnOperation(request), request.compare[0]?.key ?? firstOpKey(request), () => kv.txn(request, options)),
    };
    return new Proxy(kv, {
      get(target, property) {
        const own = (measured as Record<PropertyKey, unknown>)[property];
        if (own !== undefined) return own;
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }
}

function firstOpKey(txn: TxnRequest): Bytes | undefined {
  const op = txn.success[0];
  if (op === undefined) return undefined;
  if ('requestRange' in op) return op.requestRange.key;
  if ('requestPut' in op) return op.requestPut.key;
  if ('requestDeleteRange' in op) return op.requestDeleteRange.key;
  return undefined;
}
