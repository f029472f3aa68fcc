/**
 * The admission stage of a write (spec 02 §4.5, apiserver pkg/admission/chain.go and
 * reinvocation.go): every mutating plugin in order, then every validating plugin in order; the
 * first refusal (a thrown ApiError) is the request's answer. The registry calls `mutate` before
 * the strategy's validation and `validate` after it, on create, update (subresources included)
 * and delete.
 *
 * - Reinvocation: a plugin that changed the object in a way earlier plugins should see again
 *   (a webhook with reinvocationPolicy IfNeeded) sets `reinvocation.shouldReinvoke`; the chain
 *   then runs every mutating plugin once more with `reinvocation.isReinvoke` set, never a third
 *   time. Built-in plugins are idempotent, so running them again is harmless.
 * - Dry run (spec 01 §4.8.3): a dry run must not reach a plugin that may have side effects and
 *   did not declare dry-run safety (sideEffects Some/Unknown); such a request fails with the 400
 *   that kube-apiserver's webhook dispatcher returns (NewDryRunUnsupportedErr). Built-in plugins
 *   with side effects (ResourceQuota, NamespaceAutoProvision) declare NoneOnDryRun and skip
 *   their side effect when `dryRun` is set.
 * - Built-in mutating plugins change `attributes.object` in place and return it.
 */
import { errors } from '../util';
import { inStage, type TraceContext } from '../observability/spans';
import type { UserInfo } from '../authn';
import type { JsonObject } from '../apis/object';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/**
 * Where admission writes what the client and the audit log should see: `Warning` headers
 * (webhooks' warnings, PodSecurity's) and audit annotations (spec 02 §6.1). Absent for the
 * server's own writes.
 */
export interface AdmissionRecorder {
  warn(text: string): void;
  annotate(key: string, value: string): void;
}

/**
 * What the plugins of one request's mutating phase share (apiserver admission
 * ReinvocationContext). When a plugin changed the object in a way that others registered for
 * reinvocation should see (a mutating webhook's patch), it sets `shouldReinvoke`; the chain then
 * runs the mutating plugins once more with `isReinvoke` true, and each plugin decides from its
 * own policy whether to act again (built-in plugins do; webhooks only with `IfNeeded`). There is
 * never a third round. `values` holds each plugin's own state across the two rounds, by name.
 */
export class ReinvocationContext {
  isReinvoke = false;
  shouldReinvoke = false;
  readonly values = new Map<string, unknown>();
}

/** How long one admission phase took, for apiserver_admission_step_admission_duration_seconds. */
export type AdmissionStepObserver = (step: 'admit' | 'validate', operation: AdmissionOperation, rejected: boolean, seconds: number) => void;

/** admissionregistration.k8s.io/v1 sideEffects: only `None` and `NoneOnDryRun` may see dry runs. */
export type SideEffects = 'None' | 'NoneOnDryRun' | 'Some' | 'Unknown';

export interface AdmissionAttributes {
  readonly operation: AdmissionOperation;
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly subresource: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** The object as it would be stored (absent for DELETE). */
  readonly object?: JsonObject;
  /** The stored object (UPDATE and DELETE). */
  readonly oldObject?: JsonObject;
  readonly dryRun: boolean;
  /** Who asks; absent for the server's own writes (controllers, bootstrap). */
  readonly userInfo?: UserInfo;
  /** The request's options object (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions), as webhooks receive it. */
  readonly options?: JsonObject;
  readonly recorder?: AdmissionRecorder;
  /**
   * The request's trace context when it is traced; a plugin is handed its own span's, so that
   * what it calls (a webhook) is that span's child (src/observability/spans.ts).
   */
  readonly trace?: TraceContext;
  /** Set by the chain during mutate: the request's reinvocation state (absent in validate). */
  readonly reinvocation?: ReinvocationContext;
}

export interface AdmissionPlugin {
  readonly name: string;
  readonly sideEffects: SideEffects;
  /** Whether this request is one the plugin is registered for (its rules and selectors). */
  handles(attributes: AdmissionAttributes): boolean;
  /** A mutating plugin returns the object to continue with, or undefined to leave it. */
  mutate?(attributes: AdmissionAttributes): Promise<JsonObject | undefined>;
  /** A validating plugin throws an ApiError to refuse. */
  validate?(attributes: AdmissionAttributes): Promise<void>;
  /**
   * Whether the plugin has work for this request worth a stage event on the request's span when
   * it is traced (the webhook plugins with no webhook configured: no). Absent: always.
   */
  spanWorthy?(attributes: AdmissionAttributes): boolean;
  /** Releases what the plugin holds (cache subscriptions, timers) when the server stops. */
  stop?(): void;
}

function allowsDryRun(sideEffects: SideEffects): boolean {
  return sideEffects === 'None' || sideEffects === 'NoneOnDryRun';
}

export class AdmissionChain {
  constructor(
    private readonly plugins: readonly AdmissionPlugin[] = [],
    private readonly observeStep?: AdmissionStepObserver,
  ) {}

  get isEmpty(): boolean {
    return this.plugins.length === 0;
  }

  /** The plugins' names, in the order they run. */
  get pluginNames(): string[] {
    return this.plugins.map((p) => p.name);
  }

  /**
   * Runs the mutating plugins in order; returns the object the write continues with. When a
   * plugin asked for it (ReinvocationContext), the mutating plugins run a second time, as
   * kube-apiserver's reinvocation handler does.
   */
  async mutate(attributes: AdmissionAttributes): Promise<JsonObject | undefined> {
    const started = process.hrtime.bigint();
    let rejected = true;
    try {
      const reinvocation = attributes.reinvocation ?? new ReinvocationContext();
      let object = await this.mutateOnce({ ...attributes, reinvocation }, attributes.object);
      if (reinvocation.shouldReinvoke && !reinvocation.isReinvoke) {
        reinvocation.isReinvoke = true;
        object = await this.mutateOnce({ ...attributes, reinvocation }, object);
      }
      rejected = false;
      return object;
    } finally {
      this.observe('admit', attributes.operation, rejected, started);
    }
  }

  private async mutateOnce(attributes: AdmissionAttributes, start: JsonObject | undefined): Promise<JsonObject | undefined> {
    let object = start;
    // A traced request records each plugin as a stage, an event on its span (src/observability/spans.ts);
    // a webhook plugin's calls are spans of their own, children of the request's.
    const traced = attributes.trace !== undefined;
    for (const plugin of this.plugins) {
      const mutate = plugin.mutate;
      if (mutate === undefined) continue;
      const current = { ...attributes, object };
      if (!plugin.handles(current)) continue;
      this.refuseUnsafeDryRun(plugin, current);
      const mutated = traced && plugin.spanWorthy?.(current) !== false ? await inStage(`admission.mutate ${plugin.name}`, attributes.trace, async () => mutate.call(plugin, current), pluginStage(plugin.name, 'admit')) : await mutate.call(plugin, current);
      object = mutated ?? object;
    }
    return object;
  }

  /** Stops every plugin (server shutdown). */
  stop(): void {
    for (const plugin of this.plugins) plugin.stop?.();
  }

  /** Runs the validating plugins; the first refusal is the request's answer. */
  async validate(attributes: AdmissionAttributes): Promise<void> {
    const started = process.hrtime.bigint();
    let rejected = true;
    try {
      const traced = attributes.trace !== undefined;
      for (const plugin of this.plugins) {
        const validate = plugin.validate;
        if (validate === undefined || !plugin.handles(attributes)) continue;
        this.refuseUnsafeDryRun(plugin, attributes);
        if (traced && plugin.spanWorthy?.(attributes) !== false) await inStage(`admission.validate ${plugin.name}`, attributes.trace, async () => validate.call(plugin, attributes), pluginStage(plugin.name, 'validate'));
        else await validate.call(plugin, attributes);
      }
      rejected = false;
    } finally {
      this.observe('validate', attributes.operation, rejected, started);
    }
  }

  private observe(step: 'admit' | 'validate', operation: AdmissionOperation, rejected: boolean, started: bigint): void {
    if (this.observeStep === undefined) return;
    this.observeStep(step, operation, rejected, Number(process.hrtime.bigint() - started) / 1e9);
  }

  private refuseUnsafeDryRun(plugin: AdmissionPlugin, attributes: AdmissionAttributes): void {
    if (attributes.dryRun && !allowsDryRun(plugin.sideEffects)) throw errors.badRequest(`admission webhook "${plugin.name}" does not support dry run`);
  }
}

function pluginStage(name: string, step: 'admit' | 'validate') {
  return { 'carina.admission.plugin': name, 'carina.admission.step': step };
}
