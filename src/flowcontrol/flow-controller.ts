/**
 * API Priority and Fairness on one replica (v1.25's apf_controller.go and apf_filter.go): it
 * digests the FlowSchemas and PriorityLevelConfigurations it is given into a classifier and one
 * state per priority level, and admits each request: classify, estimate its seats, then execute
 * at once (an `Exempt` level), queue, or refuse.
 *
 * Configuration (digest): every PriorityLevelConfiguration makes a level; `exempt` and
 * `catch-all` (and their FlowSchemas) are imagined from the bootstrap objects while the store has
 * none, so they are always in effect. A FlowSchema whose level does not exist is dangling and not
 * used. Each limited level gets ceil(serverConcurrencyLimit x shares / sum of all limited levels'
 * shares) seats, where serverConcurrencyLimit is --max-requests-inflight +
 * --max-mutating-requests-inflight. A level that disappears while it holds requests keeps serving
 * them (quiescing) and takes no new ones.
 *
 * Accounting: every admitted request is counted executing until its `finish` is called (once),
 * waiting while queued; the counts per (priority level, flow schema) feed the metrics and the
 * debug dumps. Single-threaded: methods run to completion.
 */
import { assert } from '../util';
import { Classifier, flowDistinguisher } from './classifier';
import { mandatoryFlowSchemas, mandatoryPriorityLevels } from './bootstrap-configuration';
import { QueueSet, SYSTEM_CLOCK, type Clock, type Decision, type QueueDump, type SeatRequest } from './queue-set';
import { hashFlowId } from './shuffle-sharding';
import { estimateWork, type WorkEstimatorSources } from './work-estimator';
import { maxSeats, type FlowSchema, type PriorityLevelConfiguration, type RejectReason, type RequestDigest, type WorkEstimate } from './types';

export interface FlowControlObserver {
  dispatched(priorityLevel: string, flowSchema: string): void;
  rejected(priorityLevel: string, flowSchema: string, reason: RejectReason): void;
  /** Time from arrival to dispatch (`executed`) or refusal. */
  waited(priorityLevel: string, flowSchema: string, executed: boolean, seconds: number): void;
}

export interface FlowControllerOptions {
  /** --max-requests-inflight + --max-mutating-requests-inflight (v1.25: 600). */
  serverConcurrencyLimit: number;
  /** v1.25: a quarter of the request timeout (15 s). */
  requestWaitLimitSeconds: number;
  /** The stored object counts (the watches are the controller's own, from registerWatch). */
  objectCount?: WorkEstimatorSources['objectCount'];
  observer?: FlowControlObserver;
  clock?: Clock;
}

export interface Classification {
  readonly flowSchema: FlowSchema;
  readonly priorityLevel: PriorityLevelConfiguration;
  readonly distinguisher: string;
}

/** The outcome of `admit`: run (then call `finish` once), or refused. */
export type Admission =
  | { readonly kind: 'execute'; readonly classification: Classification; readonly finish: () => void }
  | { readonly kind: 'reject'; readonly classification: Classification; readonly reason: RejectReason };

/**
 * A request waiting in a queue: settled when it is dispatched or refused. `cancel` (its client
 * went away) takes it out of its queue at once, refused with reason `cancelled`, as v1.25 does
 * when the request's context ends; after dispatch it does nothing.
 */
export type QueuedAdmission = Promise<Admission> & { cancel(): void };

interface PriorityLevelState {
  config: PriorityLevelConfiguration;
  /** Undefined for an Exempt level. */
  queues?: QueueSet;
  quiescing: boolean;
  /** Executing and waiting requests by flow schema (the metrics' gauges). */
  readonly executing: Map<string, number>;
  readonly waiting: Map<string, number>;
  exemptExecuting: number;
}

function increment(map: Map<string, number>, key: string, delta: number): void {
  const next = (map.get(key) ?? 0) + delta;
  assert(next >= 0, `count for ${key} went negative`);
  if (next === 0) map.delete(key);
  else map.set(key, next);
}

export class FlowController {
  private classifier = new Classifier([]);
  private readonly levels = new Map<string, PriorityLevelState>();
  private readonly flowSchemaObjects = new Map<string, FlowSchema>();
  private readonly priorityLevelObjects = new Map<string, PriorityLevelConfiguration>();
  private readonly clock: Clock;
  private readonly flowHashes = new Map<string, bigint>();
  /** Open watches by group/resource/namespace/name ('' for all), as v1.25's watch tracker counts them. */
  private readonly watches = new Map<string, number>();
  private readonly sources: WorkEstimatorSources;

  constructor(private readonly options: FlowControllerOptions) {
    assert(options.serverConcurrencyLimit > 0, 'the server concurrency limit must be positive');
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.sources = { objectCount: options.objectCount ?? (() => undefined), interestedWatchCount: (digest) => this.interestedWatchCount(digest) };
    this.digest();
  }

  /** Counts an open watch until the returned function is called (once). */
  registerWatch(digest: RequestDigest): () => void {
    const key = `${digest.group}/${digest.resource}/${digest.namespace}/${digest.name}`;
    increment(this.watches, key, 1);
    let forgotten = false;
    return () => {
      if (forgotten) return;
      forgotten = true;
      increment(this.watches, key, -1);
    };
  }

  /** The watches a write to this object notifies: those on the resource, its namespace, or the object. */
  interestedWatchCount(digest: RequestDigest): number {
    const base = `${digest.group}/${digest.resource}/`;
    let count = this.watches.get(`${base}/`) ?? 0;
    if (digest.namespace !== '') count += this.watches.get(`${base}${digest.namespace}/`) ?? 0;
    if (digest.name !== '') count += this.watches.get(`${base}${digest.namespace}/${digest.name}`) ?? 0;
    return count;
  }

  // ------------------------------------------------------------------ configuration

  /** Replaces the whole configuration (an informer's list). */
  replaceAll(flowSchemas: readonly FlowSchema[], priorityLevels: readonly PriorityLevelConfiguration[]): void {
    this.flowSchemaObjects.clear();
    this.priorityLevelObjects.clear();
    for (const fs of flowSchemas) this.flowSchemaObjects.set(fs.metadata.name, fs);
    for (const pl of priorityLevels) this.priorityLevelObjects.set(pl.metadata.name, pl);
    this.digest();
  }

  upsertFlowSchema(flowSchema: FlowSchema): void {
    this.flowSchemaObjects.set(flowSchema.metadata.name, flowSchema);
    this.digest();
  }

  removeFlowSchema(name: string): void {
    if (this.flowSchemaObjects.delete(name)) this.digest();
  }

  upsertPriorityLevel(priorityLevel: PriorityLevelConfiguration): void {
    this.priorityLevelObjects.set(priorityLevel.metadata.name, priorityLevel);
    this.digest();
  }

  removePriorityLevel(name: string): void {
    if (this.priorityLevelObjects.delete(name)) this.digest();
  }

  /** The schemas in effect, in matching order (dangling ones left out; mandatory ones imagined if missing). */
  get flowSchemas(): readonly FlowSchema[] {
    return this.classifier.flowSchemas;
  }

  /** Whether a stored schema's level exists (the Dangling condition's answer). */
  isDangling(flowSchema: FlowSchema): boolean {
    return !this.priorityLevelObjects.has(flowSchema.spec.priorityLevelConfiguration.name) && !this.isImaginedLevel(flowSchema.spec.priorityLevelConfiguration.name);
  }

  private isImaginedLevel(name: string): boolean {
    return mandatoryPriorityLevels().some((pl) => pl.metadata.name === name);
  }

  private digest(): void {
    const levels = new Map(this.priorityLevelObjects);
    for (const mandatory of mandatoryPriorityLevels()) if (!levels.has(mandatory.metadata.name)) levels.set(mandatory.metadata.name, mandatory);
    const schemas = new Map<string, FlowSchema>();
    for (const [name, fs] of this.flowSchemaObjects) if (levels.has(fs.spec.priorityLevelConfiguration.name)) schemas.set(name, fs);
    for (const mandatory of mandatoryFlowSchemas()) if (!schemas.has(mandatory.metadata.name)) schemas.set(mandatory.metadata.name, mandatory);

    let shareSum = 0;
    for (const pl of levels.values()) if (pl.spec.type === 'Limited') shareSum += pl.spec.limited?.assuredConcurrencyShares ?? 0;
    for (const [name, pl] of levels) {
      const existing = this.levels.get(name);
      const queuing = pl.spec.limited?.limitResponse.type === 'Queue' ? pl.spec.limited.limitResponse.queuing : undefined;
      const config = pl.spec.type === 'Exempt' ? undefined : {
        concurrencyLimit: Math.ceil((this.options.serverConcurrencyLimit * (pl.spec.limited?.assuredConcurrencyShares ?? 0)) / shareSum),
        queuing,
        requestWaitLimitSeconds: this.options.requestWaitLimitSeconds,
      };
      if (existing === undefined) {
        this.levels.set(name, { config: pl, queues: config === undefined ? undefined : new QueueSet(config, this.clock), quiescing: false, executing: new Map(), waiting: new Map(), exemptExecuting: 0 });
        continue;
      }
      existing.config = pl;
      existing.quiescing = false;
      if (config === undefined) existing.queues = undefined;
      else if (existing.queues === undefined) existing.queues = new QueueSet(config, this.clock);
      else existing.queues.reconfigure(config);
    }
    for (const [name, state] of this.levels) {
      if (levels.has(name)) continue;
      if (this.isLevelIdle(state)) this.levels.delete(name);
      else state.quiescing = true;
    }
    this.classifier = new Classifier([...schemas.values()]);
  }

  private isLevelIdle(state: PriorityLevelState): boolean {
    return state.exemptExecuting === 0 && (state.queues?.isIdle ?? true);
  }

  // ------------------------------------------------------------------ requests

  classify(digest: RequestDigest): Classification {
    const flowSchema = this.classifier.classify(digest);
    // catch-all matches every user, and is always installed.
    assert(flowSchema !== undefined, 'no FlowSchema matched, not even catch-all');
    const state = this.levels.get(flowSchema.spec.priorityLevelConfiguration.name);
    assert(state !== undefined, `FlowSchema ${flowSchema.metadata.name} names a level that is not digested`);
    return { flowSchema, priorityLevel: state.config, distinguisher: flowDistinguisher(flowSchema, digest) };
  }

  estimate(digest: RequestDigest): WorkEstimate {
    return estimateWork(digest, this.sources);
  }

  /**
   * Admits a classified request: synchronously when it executes at once or is refused, through a
   * promise when it waits in a queue (settled when it is dispatched, times out or is cancelled).
   */
  admit(classification: Classification, estimate: WorkEstimate, describe?: () => Record<string, string>): Admission | QueuedAdmission {
    const plName = classification.priorityLevel.metadata.name;
    const fsName = classification.flowSchema.metadata.name;
    const state = this.levels.get(plName);
    assert(state !== undefined, `level ${plName} is not digested`);
    const observer = this.options.observer;
    if (state.queues === undefined) {
      state.exemptExecuting++;
      increment(state.executing, fsName, 1);
      observer?.dispatched(plName, fsName);
      observer?.waited(plName, fsName, true, 0);
      let finished = false;
      return {
        kind: 'execute',
        classification,
        finish: () => {
          if (finished) return;
          finished = true;
          state.exemptExecuting--;
          increment(state.executing, fsName, -1);
          this.maybeForget(plName, state);
        },
      };
    }
    const queues = state.queues;
    const arrivedAt = this.clock.now();
    const toAdmission = (decision: Decision): Admission => {
      observer?.waited(plName, fsName, decision.kind === 'execute', this.clock.now() - arrivedAt);
      if (decision.kind === 'reject') {
        observer?.rejected(plName, fsName, decision.reason);
        this.maybeForget(plName, state);
        return { kind: 'reject', classification, reason: decision.reason };
      }
      observer?.dispatched(plName, fsName);
      increment(state.executing, fsName, 1);
      let finished = false;
      return {
        kind: 'execute',
        classification,
        finish: () => {
          if (finished) return;
          finished = true;
          increment(state.executing, fsName, -1);
          decision.finish();
          this.maybeForget(plName, state);
        },
      };
    };
    let decidedNow: Decision | undefined;
    let decideLater: ((decision: Decision) => void) | undefined;
    let queued = false;
    let decided = false;
    const request: SeatRequest = {
      flowHash: this.flowHash(fsName, classification.distinguisher),
      seats: maxSeats(estimate),
      additionalWork: estimate.finalSeats * estimate.additionalLatencySeconds,
      additionalLatencySeconds: estimate.additionalLatencySeconds,
      flowSchema: fsName,
      distinguisher: classification.distinguisher,
      describe,
      decide: (decision) => {
        decided = true;
        if (queued) increment(state.waiting, fsName, -1);
        if (decideLater !== undefined) decideLater(decision);
        else decidedNow = decision;
      },
    };
    if (state.quiescing) return toAdmission({ kind: 'reject', reason: 'concurrency-limit' });
    const started = queues.start(request);
    if (started.kind !== 'queued') return toAdmission(started);
    if (decidedNow !== undefined) return toAdmission(decidedNow);
    queued = true;
    increment(state.waiting, fsName, 1);
    const waiting = new Promise<Admission>((resolve) => {
      decideLater = (decision) => resolve(toAdmission(decision));
    });
    // Once decided the request is in no queue: a cancel then needs no search of the queues.
    return Object.assign(waiting, { cancel: () => void (decided || queues.cancel(request)) });
  }

  /** Classifies, estimates and admits (what the filter calls). */
  handle(digest: RequestDigest, describe?: () => Record<string, string>): Admission | QueuedAdmission {
    const classification = this.classify(digest);
    const estimate = classification.priorityLevel.spec.type === 'Exempt' ? { initialSeats: 1, finalSeats: 0, additionalLatencySeconds: 0 } : this.estimate(digest);
    return this.admit(classification, estimate, describe);
  }

  private maybeForget(name: string, state: PriorityLevelState): void {
    if (state.quiescing && this.isLevelIdle(state)) this.levels.delete(name);
  }

  /** The flow's hash, remembered for the flows seen lately (SHA-256 is the classifier's largest cost). */
  private flowHash(flowSchema: string, distinguisher: string): bigint {
    const key = `${flowSchema}\0${distinguisher}`;
    let hash = this.flowHashes.get(key);
    if (hash === undefined) {
      if (this.flowHashes.size >= 10_000) this.flowHashes.clear();
      hash = hashFlowId(flowSchema, distinguisher);
      this.flowHashes.set(key, hash);
    }
    return hash;
  }

  // ------------------------------------------------------------------ reading

  /** Per level: its limit and the requests executing and waiting per flow schema (metrics). */
  levelStats(): Array<{ name: string; concurrencyLimit: number; exempt: boolean; quiescing: boolean; executing: ReadonlyMap<string, number>; waiting: ReadonlyMap<string, number>; requestsExecuting: number; requestsWaiting: number; seatsInUse: number }> {
    return [...this.levels].map(([name, state]) => ({
      name,
      concurrencyLimit: state.queues?.concurrencyLimit ?? 0,
      exempt: state.queues === undefined,
      quiescing: state.quiescing,
      executing: state.executing,
      waiting: state.waiting,
      requestsExecuting: state.queues?.requestsExecuting ?? state.exemptExecuting,
      requestsWaiting: state.queues?.requestsWaiting ?? 0,
      seatsInUse: state.queues?.seatsInUse ?? 0,
    }));
  }

  /** Each level's queues (undefined for an Exempt level), for the debug dumps. */
  queueDumps(): Array<{ name: string; quiescing: boolean; isIdle: boolean; queues: QueueDump[] | undefined; executing: number; waiting: number }> {
    return [...this.levels].map(([name, state]) => ({
      name,
      quiescing: state.quiescing,
      isIdle: this.isLevelIdle(state),
      queues: state.queues?.dump(),
      executing: state.queues?.requestsExecuting ?? state.exemptExecuting,
      waiting: state.queues?.requestsWaiting ?? 0,
    }));
  }
}
