/**
 * The API server's Prometheus metrics (served at /metrics), under kube-apiserver v1.25's names,
 * types, labels and buckets so that existing dashboards and alerts work (the table of those
 * definitions, and the test that scrapes a replica against it: test/fixtures/metrics/):
 * - the request families of kube's endpoints/metrics (apiserver_request_total, _duration_seconds,
 *   _slo_duration_seconds, apiserver_response_sizes, apiserver_longrunning_requests,
 *   apiserver_request_terminations_total, apiserver_tls_handshake_errors_total, the watch
 *   families), observed by the HTTP listener for resource requests;
 * - authentication_attempts and authentication_duration_seconds (kube's endpoints/filters);
 * - the storage families (etcd_request_duration_seconds, apiserver_storage_*, the watch cache's)
 *   are defined in storage-metrics.ts, the store replica's etcd families in store-metrics.ts;
 * - process_* and nodejs_* from prom-client's default collectors.
 * Where Carina's meaning differs from kube's it is said at the family.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { exponentialBuckets, type HistogramSnapshot, type MetricFamily } from '../../raft';
import { renderMetricFamilies } from './store-metrics';
import { RequestWindow } from './request-window';

/** The labels kube-apiserver v1.25 gives a request in its per-request families (no dry_run, no code). */
const REQUEST_LABELS = ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'];
/** apiserver_request_slo_duration_seconds' buckets in v1.25. */
const SLO_BUCKETS = [0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** apiserver_response_sizes: 1 kB to 1 GB. */
const RESPONSE_SIZE_BUCKETS = exponentialBuckets(1000, 10, 7);
/** apiserver_watch_events_sizes: 1 KiB to 128 KiB. */
const WATCH_EVENT_SIZE_BUCKETS = exponentialBuckets(1024, 2, 8);
/** authentication_duration_seconds: 1 ms to 16.384 s. */
const AUTHENTICATION_BUCKETS = exponentialBuckets(0.001, 2, 15);

/** The group, version and kind of the objects a watch sends (apiserver_watch_events_*'s labels). */
export interface WatchedKind {
  group: string;
  version: string;
  kind: string;
}

export interface RequestLabels {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  code: number;
}

export class ApiMetrics {
  readonly registry = new Registry();
  /** The last two minutes of requests per verb, for the status page. */
  readonly requestWindow = new RequestWindow();
  private readonly requests: Counter;
  private readonly durations: Histogram;
  private readonly deprecated: Gauge;
  private readonly sloDurations: Histogram;
  private readonly responseSizes: Histogram;
  private readonly longRunning: Gauge;
  /**
   * apiserver_watch_events_total and apiserver_watch_events_sizes, per watched kind: plain sums
   * rendered at scrape time, not prom-client's, whose inc and observe hash their labels on every
   * call. They count every event to every watcher (100,000 a second in the fan-out bench), where
   * prom-client cost about 1 µs of the server's CPU per delivered event.
   */
  private readonly watchEventTallies = new Map<string, WatchEventTally>();
  private readonly registeredWatchers: Gauge;
  private readonly tlsHandshakeErrors: Counter;
  private readonly terminations: Counter;
  private readonly authenticationAttempts: Counter;
  private readonly authenticationDurations: Histogram;
  /** Families kept outside prom-client (the store replica's), rendered after its own. */
  private readonly externalFamilies: Array<() => readonly MetricFamily[]> = [];

  constructor() {
    this.requests = new Counter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      labelNames: ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'],
      registers: [this.registry],
    });
    this.durations = new Histogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      labelNames: ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
      // kube-apiserver v1.25's buckets.
      buckets: [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
      registers: [this.registry],
    });
    this.deprecated = new Gauge({
      name: 'apiserver_requested_deprecated_apis',
      help: 'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
      labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'],
      registers: [this.registry],
    });
    // Carina counts the whole request here, admission webhooks included (kube leaves them out).
    this.sloDurations = this.requestHistogram(
      'apiserver_request_slo_duration_seconds',
      'Response latency distribution (not counting webhook duration) in seconds for each verb, group, version, resource, subresource, scope and component.',
      SLO_BUCKETS,
    );
    this.responseSizes = this.requestHistogram(
      'apiserver_response_sizes',
      'Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.',
      RESPONSE_SIZE_BUCKETS,
    );
    this.longRunning = new Gauge({
      name: 'apiserver_longrunning_requests',
      help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
      labelNames: REQUEST_LABELS,
      registers: [this.registry],
    });
    this.addFamilies(() => this.watchEventFamilies());
    this.registeredWatchers = new Gauge({
      name: 'apiserver_registered_watchers',
      help: 'Number of currently registered watchers for a given resources',
      labelNames: ['group', 'version', 'kind'],
      registers: [this.registry],
    });
    this.tlsHandshakeErrors = new Counter({
      name: 'apiserver_tls_handshake_errors_total',
      help: "Number of requests dropped with 'TLS handshake error from' error",
      registers: [this.registry],
    });
    this.terminations = new Counter({
      name: 'apiserver_request_terminations_total',
      help: 'Number of requests which apiserver terminated in self-defense.',
      labelNames: [...REQUEST_LABELS, 'code'],
      registers: [this.registry],
    });
    this.authenticationAttempts = new Counter({
      name: 'authentication_attempts',
      help: 'Counter of authenticated attempts.',
      labelNames: ['result'],
      registers: [this.registry],
    });
    this.authenticationDurations = new Histogram({
      name: 'authentication_duration_seconds',
      help: 'Authentication duration in seconds broken out by result.',
      labelNames: ['result'],
      buckets: AUTHENTICATION_BUCKETS,
      registers: [this.registry],
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** A histogram of one of kube's per-request families: the request's labels (REQUEST_LABELS), no code. */
  private requestHistogram(name: string, help: string, buckets: number[]): Histogram {
    return new Histogram({ name, help, labelNames: REQUEST_LABELS, buckets, registers: [this.registry] });
  }

  /**
   * One authentication (kube's recordAuthMetrics): `success` when someone (anonymous included)
   * was authenticated, `failure` when a credential was refused, `error` when an authenticator failed.
   */
  authenticated(result: 'success' | 'failure' | 'error', seconds: number): void {
    this.authenticationAttempts.inc({ result });
    this.authenticationDurations.observe({ result }, seconds);
  }

  tlsHandshakeFailed(): void {
    this.tlsHandshakeErrors.inc();
  }

  /**
   * A request the server refused or cut to protect itself, as kube's RecordRequestTermination
   * counts them: a 429 from API Priority and Fairness or the in-flight limits, a 504 at the
   * request's deadline. It is counted in apiserver_request_total too.
   */
  requestTerminated(labels: RequestLabels): void {
    this.terminations.inc({ ...requestLabels(labels), code: String(labels.code) });
  }

  /** A long-running request (a watch) started; the returned function ends it. */
  longRunningStarted(labels: RequestLabels, watched: WatchedKind | undefined): () => void {
    const common = requestLabels(labels);
    this.longRunning.inc(common);
    if (watched !== undefined) this.registeredWatchers.inc({ ...watched });
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.longRunning.dec(common);
      if (watched !== undefined) this.registeredWatchers.dec({ ...watched });
    };
  }

  /** What counts one watch's events (apiserver_watch_events_total and _sizes): taken once per watch, called per event. */
  watchEventRecorder(watched: WatchedKind): (bytes: number) => void {
    const key = `${watched.group}/${watched.version}/${watched.kind}`;
    let tally = this.watchEventTallies.get(key);
    if (tally === undefined) {
      tally = new WatchEventTally({ group: watched.group, version: watched.version, kind: watched.kind });
      this.watchEventTallies.set(key, tally);
    }
    const counted = tally;
    return (bytes) => counted.record(bytes);
  }

  private watchEventFamilies(): MetricFamily[] {
    if (this.watchEventTallies.size === 0) return [];
    const tallies = [...this.watchEventTallies.values()];
    return [
      { name: 'apiserver_watch_events_total', help: 'Number of events sent in watch clients', type: 'counter', values: tallies.map((t) => ({ labels: t.labels, value: t.count })) },
      { name: 'apiserver_watch_events_sizes', help: 'Watch event size distribution in bytes', type: 'histogram', histograms: tallies.map((t) => ({ labels: t.labels, histogram: t.snapshot() })) },
    ];
  }

  deprecatedApiRequested(labels: { group: string; version: string; resource: string; subresource: string; removedRelease: string }): void {
    this.deprecated.set({ group: labels.group, version: labels.version, resource: labels.resource, subresource: labels.subresource, removed_release: labels.removedRelease }, 1);
  }

  /** A gauge with labels, its values read at scrape time. */
  labelledGauge(name: string, help: string, labelNames: string[], read: () => Array<{ labels: Record<string, string>; value: number }>): void {
    new Gauge({ name, help, labelNames, registers: [this.registry], collect() {
      this.reset();
      for (const sample of read()) this.set(sample.labels, sample.value);
    } });
  }

  /** A counter without labels; returns the function that increments it. */
  counter(name: string, help: string): () => void {
    const counter = new Counter({ name, help, registers: [this.registry] });
    return () => counter.inc();
  }

  /** A counter kept elsewhere (a monotonic number), read at scrape time. */
  counterFrom(name: string, help: string, read: () => number): void {
    new Counter({ name, help, registers: [this.registry], collect() {
      this.reset();
      this.inc(read());
    } });
  }

  /** A gauge read at scrape time. */
  gauge(name: string, help: string, read: () => number): void {
    new Gauge({ name, help, registers: [this.registry], collect() {
      this.set(read());
    } });
  }

  /**
   * API Priority and Fairness' metrics under v1.25's names (apiserver pkg/util/flowcontrol/metrics):
   * the counters and the wait histogram are fed through the returned observer; the gauges read
   * `levels` at scrape time.
   */
  priorityAndFairness(levels: () => ReadonlyArray<{ name: string; concurrencyLimit: number; exempt: boolean; executing: ReadonlyMap<string, number>; waiting: ReadonlyMap<string, number> }>): {
    dispatched(priorityLevel: string, flowSchema: string): void;
    rejected(priorityLevel: string, flowSchema: string, reason: string): void;
    waited(priorityLevel: string, flowSchema: string, executed: boolean, seconds: number): void;
  } {
    const registers = [this.registry];
    const rejected = new Counter({ name: 'apiserver_flowcontrol_rejected_requests_total', help: 'Number of requests rejected by API Priority and Fairness subsystem', labelNames: ['flow_schema', 'priority_level', 'reason'], registers });
    const dispatched = new Counter({ name: 'apiserver_flowcontrol_dispatched_requests_total', help: 'Number of requests executed by API Priority and Fairness subsystem', labelNames: ['flow_schema', 'priority_level'], registers });
    const waits = new Histogram({
      name: 'apiserver_flowcontrol_request_wait_duration_seconds',
      help: 'Length of time a request spent waiting in its queue',
      labelNames: ['execute', 'flow_schema', 'priority_level'],
      buckets: [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30],
      registers,
    });
    const perSchema = (pick: (level: { executing: ReadonlyMap<string, number>; waiting: ReadonlyMap<string, number> }) => ReadonlyMap<string, number>) => () =>
      levels().flatMap((level) => [...pick(level)].map(([flowSchema, value]) => ({ labels: { flow_schema: flowSchema, priority_level: level.name }, value })));
    this.labelledGauge('apiserver_flowcontrol_current_inqueue_requests', 'Number of requests currently pending in queues of the API Priority and Fairness subsystem', ['flow_schema', 'priority_level'], perSchema((level) => level.waiting));
    this.labelledGauge('apiserver_flowcontrol_current_executing_requests', 'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem', ['flow_schema', 'priority_level'], perSchema((level) => level.executing));
    this.labelledGauge('apiserver_flowcontrol_request_concurrency_limit', 'Shared concurrency limit in the API Priority and Fairness subsystem', ['priority_level'], () =>
      levels().filter((level) => !level.exempt).map((level) => ({ labels: { priority_level: level.name }, value: level.concurrencyLimit })));
    return {
      dispatched: (priorityLevel, flowSchema) => dispatched.inc({ flow_schema: flowSchema, priority_level: priorityLevel }),
      rejected: (priorityLevel, flowSchema, reason) => rejected.inc({ flow_schema: flowSchema, priority_level: priorityLevel, reason }),
      waited: (priorityLevel, flowSchema, executed, seconds) => waits.observe({ execute: String(executed), flow_schema: flowSchema, priority_level: priorityLevel }, seconds),
    };
  }

  /** apiserver_current_inflight_requests: the most requests of each kind in flight at once over the last second. */
  inflightRequests(read: () => { readOnly: number; mutating: number }): void {
    this.labelledGauge('apiserver_current_inflight_requests', 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.', ['request_kind'], () => {
      const counts = read();
      return [{ labels: { request_kind: 'readOnly' }, value: counts.readOnly }, { labels: { request_kind: 'mutating' }, value: counts.mutating }];
    });
  }

  /**
   * One finished request. `responseBytes`: the body of a one-shot response (kube observes
   * apiserver_response_sizes for GET and LIST only).
   */
  observe(labels: RequestLabels, dryRun: boolean, seconds: number, responseBytes = 0): void {
    const perRequest = requestLabels(labels);
    // dry_run second, where kube's label list has it (the order they are exposed in).
    const { verb, ...rest } = perRequest;
    const common = { verb, dry_run: dryRun ? 'All' : '', ...rest };
    this.requests.inc({ ...common, code: String(labels.code) });
    this.durations.observe(common, seconds);
    // A watch's duration is its life, which says nothing of latency: Carina leaves watches out of the SLO family (see the definitions table).
    if (perRequest.verb !== 'WATCH' && perRequest.verb !== 'CONNECT') {
      this.sloDurations.observe(perRequest, seconds);
      this.requestWindow.record(perRequest.verb, seconds);
    }
    if (perRequest.verb === 'GET' || perRequest.verb === 'LIST') this.responseSizes.observe(perRequest, responseBytes);
  }

  /** Serves the families `read` returns at each scrape (the store replica's, etcd's names). */
  addFamilies(read: () => readonly MetricFamily[]): void {
    this.externalFamilies.push(read);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    let body = await this.registry.metrics();
    for (const read of this.externalFamilies) {
      const families = read();
      if (families.length > 0) body += `\n${renderMetricFamilies(families)}\n`;
    }
    return { contentType: this.registry.contentType, body };
  }
}

/** One watched kind's events: how many, and their sizes in apiserver_watch_events_sizes' buckets. */
class WatchEventTally {
  count = 0;
  private sum = 0;
  /** counts[i]: events of (WATCH_EVENT_SIZE_BUCKETS[i-1], WATCH_EVENT_SIZE_BUCKETS[i]] bytes; the last, larger. */
  private readonly counts = new Array<number>(WATCH_EVENT_SIZE_BUCKETS.length + 1).fill(0);

  constructor(readonly labels: Record<string, string>) {}

  record(bytes: number): void {
    let i = 0;
    while (i < WATCH_EVENT_SIZE_BUCKETS.length && bytes > WATCH_EVENT_SIZE_BUCKETS[i]) i++;
    this.counts[i]++;
    this.sum += bytes;
    this.count++;
  }

  snapshot(): HistogramSnapshot {
    return { buckets: [...WATCH_EVENT_SIZE_BUCKETS], counts: [...this.counts], sum: this.sum, count: this.count };
  }
}

function requestLabels(labels: RequestLabels): Record<string, string> {
  return {
    verb: labels.verb.toUpperCase(),
    group: labels.group,
    version: labels.version,
    resource: labels.resource,
    subresource: labels.subresource,
    scope: labels.scope,
    component: 'apiserver',
  };
}
