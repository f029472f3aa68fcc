/**
 * The admission stage of a write: mutating plugins, then validating ones, between the
 * strategy's validation and persistence, as kube-apiserver runs its admission chain. The chain
 * is empty until admission plugins and webhooks arrive; what this file settles now is the rule
 * of spec 01 §4.8.3: a dry run must not reach a plugin that may have side effects and did not
 * declare dry-run safety. Such a request fails before any plugin runs, with the 400 that
 * kube-apiserver's webhook dispatcher returns (admission/plugin/webhook/errors
 * NewDryRunUnsupportedErr).
 */
import { errors } from '../util';
import type { UserInfo } from '../authn/user-info';
import type { JsonObject } from '../storage';

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
}

function allowsDryRun(sideEffects: SideEffects): boolean {
  return sideEffects === 'None' || sideEffects === 'NoneOnDryRun';
}

export class AdmissionChain {
  constructor(private readonly plugins: readonly AdmissionPlugin[] = []) {}

  get isEmpty(): boolean {
    return this.plugins.length === 0;
  }

  /** Runs the mutating plugins in order; returns the object the write continues with. */
  async mutate(attributes: AdmissionAttributes): Promise<JsonObject | undefined> {
    let object = attributes.object;
    for (const plugin of this.plugins) {
      if (plugin.mutate === undefined) continue;
      const current = { ...attributes, object };
      if (!plugin.handles(current)) continue;
      this.refuseUnsafeDryRun(plugin, current);
      object = (await plugin.mutate(current)) ?? object;
    }
    return object;
  }

  /** Runs the validating plugins; the first refusal is the request's answer. */
  async validate(attributes: AdmissionAttributes): Promise<void> {
    for (const plugin of this.plugins) {
      if (plugin.validate === undefined || !plugin.handles(attributes)) continue;
      this.refuseUnsafeDryRun(plugin, attributes);
      await plugin.validate(attributes);
    }
  }

  private refuseUnsafeDryRun(plugin: AdmissionPlugin, attributes: AdmissionAttributes): void {
    if (attributes.dryRun && !allowsDryRun(plugin.sideEffects)) throw errors.badRequest(`admission webhook "${plugin.name}" does not support dry run`);
  }
}
