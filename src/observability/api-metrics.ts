/**
 * The API server's Prometheus metrics (served at /metrics), under kube-apiserver's names so
 * existing dashboards work: apiserver_request_total and apiserver_request_duration_seconds with
 * the labels verb, group, version, resource, subresource, scope, component and code.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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
  private readonly requests: Counter;
  private readonly durations: Histogram;
  private readonly deprecated: Gauge;

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
    collectDefaultMetrics({ register: this.registry });
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

  observe(labels: RequestLabels, dryRun: boolean, seconds: number): void {
    const common = {
      verb: labels.verb.toUpperCase(),
      dry_run: dryRun ? 'All' : '',
      group: labels.group,
      version: labels.version,
      resource: labels.resource,
      subresource: labels.subresource,
      scope: labels.scope,
      component: 'apiserver',
    };
    this.requests.inc({ ...common, code: String(labels.code) });
    this.durations.observe(common, seconds);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
