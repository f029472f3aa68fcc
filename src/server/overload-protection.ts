/**
 * The overload protection of a replica (kube-apiserver v1.25's --enable-priority-and-fairness,
 * --max-requests-inflight, --max-mutating-requests-inflight): with APF on, a FlowController fed
 * the stored FlowSchemas and PriorityLevelConfigurations from the watch cache, the stored object
 * counts (for list work estimates, refreshed every 10 s from the store), its filter, its metrics
 * and the /debug/api_priority_and_fairness/dump_* documents; with APF off, the in-flight limiter
 * and its filter. Each replica (each API worker) limits its own requests only: a write is
 * counted where it arrived, never again where the store commits it.
 */
import { prefixEnd, type KvClient } from '../../raft';
import { CacheInformer } from '../controllers/cache-informer';
import { FlowController, MaxInFlightLimiter, dumpPriorityLevels, dumpQueues, dumpRequests, type FlowSchema, type PriorityLevelConfiguration } from '../flowcontrol';
import { maxInFlightFilter, priorityAndFairnessFilter, type Filter } from '../http';
import type { ExtraDocument } from '../http';
import type { ApiMetrics } from '../observability/api-metrics';
import type { WatchCache } from '../storage';
import { resourceKeyPrefix } from '../apis/catalogue';

export interface FlowControlOptions {
  /** --enable-priority-and-fairness (v1.25: true). */
  enabled: boolean;
  /** --max-requests-inflight (400). */
  maxRequestsInFlight: number;
  /** --max-mutating-requests-inflight (200). */
  maxMutatingRequestsInFlight: number;
}

export const DEFAULT_FLOW_CONTROL: FlowControlOptions = { enabled: true, maxRequestsInFlight: 400, maxMutatingRequestsInFlight: 200 };

/** v1.25: the request timeout (60 s) over 4. */
const REQUEST_WAIT_LIMIT_SECONDS = 15;
const OBJECT_COUNT_PERIOD_MS = 10_000;
const DEBUG_PREFIX = '/debug/api_priority_and_fairness/';

export interface FlowControlParts {
  /** The stage between impersonation and authorization. */
  filter: Filter;
  documents: Map<string, ExtraDocument>;
  controller?: FlowController;
  stop(): void;
}

export interface FlowControlWiring {
  cache: WatchCache;
  kv: KvClient;
  metrics: ApiMetrics;
  /** Every served resource's group, resource and key prefix (for the object counts). */
  resourcePrefixes: () => ReadonlyArray<{ group: string; resource: string; prefix: string }>;
  log: (line: string) => void;
}

/** The filters in order with `stage` put before authorization (v1.25's DefaultBuildHandlerChain). */
export function withOverloadStage(filters: readonly Filter[], stage: Filter): Filter[] {
  const at = filters.findIndex((filter) => filter.name === 'authorization');
  return at < 0 ? [...filters, stage] : [...filters.slice(0, at), stage, ...filters.slice(at)];
}

export function buildFlowControl(options: FlowControlOptions, wiring: FlowControlWiring): FlowControlParts {
  const { metrics } = wiring;
  const watermarks = { readOnly: 0, mutating: 0 };
  if (!options.enabled) {
    const limiter = new MaxInFlightLimiter({ readOnly: options.maxRequestsInFlight, mutating: options.maxMutatingRequestsInFlight });
    const timer = setInterval(() => Object.assign(watermarks, limiter.takeWatermarks()), 1000);
    timer.unref();
    metrics.inflightRequests(() => watermarks);
    return { filter: maxInFlightFilter(limiter), documents: new Map(), stop: () => clearInterval(timer) };
  }
  const objectCounts = new Map<string, number>();
  let controller: FlowController | undefined;
  const observer = metrics.priorityAndFairness(() => controller?.levelStats() ?? []);
  controller = new FlowController({
    serverConcurrencyLimit: options.maxRequestsInFlight + options.maxMutatingRequestsInFlight,
    requestWaitLimitSeconds: REQUEST_WAIT_LIMIT_SECONDS,
    objectCount: (group, resource) => objectCounts.get(`${resource}.${group}`),
    observer,
  });
  const flowControl = controller;
  const flowSchemas = new CacheInformer({
    cache: wiring.cache,
    prefix: resourceKeyPrefix({ group: 'flowcontrol.apiserver.k8s.io', resource: 'flowschemas' }),
    onObject: (type, object) => {
      if (type === 'DELETED') flowControl.removeFlowSchema(String((object.metadata as { name?: unknown }).name));
      else flowControl.upsertFlowSchema(object as unknown as FlowSchema);
    },
  });
  const priorityLevels = new CacheInformer({
    cache: wiring.cache,
    prefix: resourceKeyPrefix({ group: 'flowcontrol.apiserver.k8s.io', resource: 'prioritylevelconfigurations' }),
    onObject: (type, object) => {
      if (type === 'DELETED') flowControl.removePriorityLevel(String((object.metadata as { name?: unknown }).name));
      else flowControl.upsertPriorityLevel(object as unknown as PriorityLevelConfiguration);
    },
  });
  priorityLevels.start();
  flowSchemas.start();
  // Like kube's storage object counter: a count-only read per resource, now and then.
  let counting = false;
  const countObjects = async () => {
    if (counting) return;
    counting = true;
    try {
      for (const { group, resource, prefix } of wiring.resourcePrefixes()) {
        const key = Buffer.from(prefix);
        const response = await wiring.kv.range({ key, rangeEnd: prefixEnd(key), countOnly: true, serializable: true });
        objectCounts.set(`${resource}.${group}`, response.count);
      }
    } catch (err) {
      wiring.log(`counting stored objects for priority and fairness: ${(err as Error).message}`);
    } finally {
      counting = false;
    }
  };
  void countObjects();
  const countTimer = setInterval(() => void countObjects(), OBJECT_COUNT_PERIOD_MS);
  countTimer.unref();
  const inFlight = new MaxInFlightLimiter({ readOnly: Infinity, mutating: Infinity });
  const watermarkTimer = setInterval(() => Object.assign(watermarks, inFlight.takeWatermarks()), 1000);
  watermarkTimer.unref();
  metrics.inflightRequests(() => watermarks);
  const text = (body: () => string): ExtraDocument => () => ({ body: body(), contentType: 'text/plain; charset=utf-8', cacheControl: 'no-cache, private' });
  const documents = new Map<string, ExtraDocument>([
    [`${DEBUG_PREFIX}dump_priority_levels`, text(() => dumpPriorityLevels(flowControl))],
    [`${DEBUG_PREFIX}dump_queues`, text(() => dumpQueues(flowControl))],
    [`${DEBUG_PREFIX}dump_requests`, text(() => dumpRequests(flowControl, false, performance.now() / 1000))],
  ]);
  return {
    filter: priorityAndFairnessFilter({ controller: flowControl, inFlight }),
    documents,
    controller: flowControl,
    stop: () => {
      clearInterval(countTimer);
      clearInterval(watermarkTimer);
      flowSchemas.stop();
      priorityLevels.stop();
    },
  };
}
