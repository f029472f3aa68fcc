/**
 * Mutating webhooks (spec 02 §4.4 points 4 and 6, §6.1, §6.2; apiserver
 * admission/plugin/webhook/mutating/dispatcher.go): called one after the other in the order of
 * the source, each seeing the object as the ones before it left it.
 *
 * - A JSONPatch answer is applied to the object in the version the webhook was called with; the
 *   result is decoded against the kind's schema again (a wrong type fails the request with 500,
 *   unknown fields are dropped) and defaulted. A patch for an operation without an object
 *   (DELETE) fails the request.
 * - What names the object: a patch that changes apiVersion or kind fails the request here (500);
 *   the namespace is checked by the registry once admission is over, as v1.25's
 *   rest.BeforeCreate / BeforeUpdate do (400 "the namespace of the provided object does not
 *   match the namespace sent on the request"); a name changed on create is the name the object
 *   is stored under, as in kube; on update metadata.name, namespace and uid are immutable (422).
 * - Reinvocation (reinvocationPolicy IfNeeded): a webhook that changed the object makes the
 *   chain run its mutating plugins a second time (ReinvocationContext). In that round only the
 *   IfNeeded webhooks called before the change are called again, and only if something changed
 *   the object after them; a webhook skipped in the first round is never called in the second.
 * - Audit annotations, per call (index = the webhook's position in the source, round 0 or 1):
 *   `mutation.webhook.admission.k8s.io/round_R_index_I` = {"configuration","webhook","mutated"};
 *   after a patch, `patch.webhook.admission.k8s.io/round_R_index_I` = {"configuration",
 *   "webhook","patch","patchType"} (kept at audit level Request and above); a failure ignored
 *   under failurePolicy Ignore adds `failed-open.mutation.webhook.admission.k8s.io/round_R_index_I`
 *   = the webhook's name; the webhook's own auditAnnotations as `<webhook name>/<key>`.
 * - Metrics: one duration and request count per call; a refusal is counted once, by error type.
 */
import { ApiError, errors } from '../../util';
import type { AdmissionAttributes } from '../admission-chain';
import { deepEqual, isPatchError, applyJsonPatch } from '../../patch';
import { rejectionStatus, type AdmissionResponse } from './admission-review';
import { CallingWebhookError, WebhookRejectionError, errorText, isCallingWebhookError, isWebhookRejectionError } from './errors';
import { callWebhook, type DispatcherDeps } from './webhook-call';
import { apiVersionOf, invocationFor, requestViewOf, VersionedObjects, type RequestView, type WebhookInvocation } from './webhook-invocation';
import type { WebhookAccessor } from './webhook-accessor';
import { deepCopy, type JsonObject, type JsonValue } from '../../apis/object';

export const PATCH_AUDIT_ANNOTATION_PREFIX = 'patch.webhook.admission.k8s.io/';
export const MUTATION_AUDIT_ANNOTATION_PREFIX = 'mutation.webhook.admission.k8s.io/';
export const MUTATION_FAILED_OPEN_ANNOTATION_PREFIX = 'failed-open.mutation.webhook.admission.k8s.io/';

/** Where this dispatcher keeps its state between the two rounds of one request. */
const REINVOCATION_KEY = 'MutatingAdmissionWebhook';

interface ReinvocationState {
  /** The object as the webhooks left it at the end of the last round. */
  lastOutput?: JsonObject;
  /** IfNeeded webhooks called since the last change. */
  previouslyInvoked: Set<string>;
  /** Webhooks to call in the second round. */
  reinvoke: Set<string>;
}

function requireReinvokingPrevious(state: ReinvocationState): void {
  for (const uid of state.previouslyInvoked) state.reinvoke.add(uid);
  state.previouslyInvoked = new Set();
}

export class MutatingDispatcher {
  constructor(private readonly deps: DispatcherDeps) {}

  /** Calls the matching webhooks; returns the object to continue with (undefined: unchanged). */
  async dispatch(attributes: AdmissionAttributes, hooks: readonly WebhookAccessor[]): Promise<JsonObject | undefined> {
    const reinvocation = attributes.reinvocation;
    let state = reinvocation?.values.get(REINVOCATION_KEY) as ReinvocationState | undefined;
    if (state === undefined) {
      state = { previouslyInvoked: new Set(), reinvoke: new Set() };
      reinvocation?.values.set(REINVOCATION_KEY, state);
    }
    const isReinvoke = reinvocation?.isReinvoke === true;
    // Built-in plugins rerun in the second round may have changed the object: every eligible webhook then runs again.
    if (isReinvoke && !deepEqual(state.lastOutput as JsonValue, attributes.object as JsonValue)) requireReinvokingPrevious(state);
    const view = requestViewOf(attributes);
    const versioned = new VersionedObjects(apiVersionOf(view.kind), attributes.object, attributes.oldObject, this.deps.catalog);
    const round = isReinvoke ? 1 : 0;
    let result: JsonObject | undefined;
    try {
      for (let index = 0; index < hooks.length; index++) {
        const hook = hooks[index];
        const invocation = await invocationFor(hook, view, versioned.object, versioned.oldObject, this.deps.catalog, this.deps.namespaces);
        if (invocation === undefined) continue;
        if (isReinvoke && !state.reinvoke.has(hook.uid)) continue;
        versioned.convertTo(invocation.kind);
        const changed = await this.callOne(invocation, view, versioned, round, index);
        if (changed) {
          requireReinvokingPrevious(state);
          if (reinvocation !== undefined) reinvocation.shouldReinvoke = true;
        }
        if (hook.reinvocationPolicy === 'IfNeeded') state.previouslyInvoked.add(hook.uid);
      }
      result = versioned.finalObject();
      return result;
    } finally {
      // Only a second round reads it, and only a change (ours, since webhooks run last) makes one: copy
      // the object then. Without a copy, a later change reads as a change and reinvokes, as allowed.
      const output = result ?? attributes.object;
      state.lastOutput = reinvocation?.shouldReinvoke === true && output !== undefined ? deepCopy(output) : undefined;
    }
  }

  /** One call with its annotations and metrics; true when it changed the object. Throws what fails the request. */
  private async callOne(invocation: WebhookInvocation, view: RequestView, versioned: VersionedObjects, round: number, index: number): Promise<boolean> {
    const { hook } = invocation;
    const { attributes } = view;
    const recorder = attributes.recorder;
    const started = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9;
    const annotationSuffix = `round_${round}_index_${index}`;
    let changed = false;
    try {
      const response = await callWebhook(this.deps, invocation, view, versioned, true);
      for (const [key, value] of Object.entries(response.auditAnnotations)) recorder?.annotate(`${hook.name}/${key}`, value);
      for (const warning of response.warnings) recorder?.warn(warning);
      if (!response.allowed) throw new WebhookRejectionError(rejectionStatus(hook.name, response.result));
      changed = this.applyPatch(invocation, response, versioned, annotationSuffix, attributes);
      this.deps.metrics.observeWebhook(hook.name, 'admit', attributes.operation, false, 200, elapsed());
      return changed;
    } catch (err) {
      this.fail(err, invocation, attributes, elapsed(), annotationSuffix);
      return false;
    } finally {
      recorder?.annotate(`${MUTATION_AUDIT_ANNOTATION_PREFIX}${annotationSuffix}`, JSON.stringify({ configuration: hook.configurationName, webhook: hook.name, mutated: changed }));
    }
  }

  /** Applies a JSONPatch answer; true when the object changed. */
  private applyPatch(invocation: WebhookInvocation, response: AdmissionResponse, versioned: VersionedObjects, annotationSuffix: string, attributes: AdmissionAttributes): boolean {
    const { hook } = invocation;
    if (response.patch.length === 0) return false;
    let operations: unknown;
    try {
      operations = JSON.parse(response.patch.toString('utf8'));
      if (!Array.isArray(operations)) throw new Error(`json: cannot unmarshal ${operations === null ? 'null' : typeof operations} into Go value of type jsonpatch.Patch`);
    } catch (err) {
      throw new CallingWebhookError(hook.name, `received undecodable patch in webhook response: ${errorText(err)}`, 503);
    }
    if (operations.length === 0) return false;
    const before = versioned.object;
    if (before === undefined) throw errors.internal(new Error(`admission webhook "${hook.name}" attempted to modify the object, which is not supported for this operation`));
    if (response.patchType !== 'JSONPatch') throw new CallingWebhookError(hook.name, `unsupported patch type "${response.patchType}"`, rejectionStatus(hook.name, response.result).code);
    let patched: JsonObject;
    try {
      const result = applyJsonPatch(before as JsonValue, operations, { fieldValidation: 'Ignore' });
      if (result === null || typeof result !== 'object' || Array.isArray(result)) throw new Error('the patched object is not a JSON object');
      patched = result as JsonObject;
    } catch (err) {
      // kube reports the patch library's own words (evanphx/json-patch) for a patch that does not apply.
      throw errors.internal(new Error(isPatchError(err) ? err.detail : errorText(err)));
    }
    if (patched.apiVersion !== before.apiVersion || patched.kind !== before.kind) {
      throw errors.internal(new Error(`admission webhook "${hook.name}" changed the object's apiVersion or kind, which is not supported`));
    }
    try {
      patched = this.deps.catalog.normalize?.(invocation.resource, patched) ?? patched;
    } catch (err) {
      throw errors.internal(new Error(errorText(err)));
    }
    const changed = !deepEqual(before as JsonValue, patched as JsonValue);
    attributes.recorder?.annotate(`${PATCH_AUDIT_ANNOTATION_PREFIX}${annotationSuffix}`, JSON.stringify({ configuration: hook.configurationName, webhook: hook.name, patch: operations, patchType: 'JSONPatch' }));
    versioned.replaceObject(patched);
    return changed;
  }

  /** Records a failed call and throws what fails the request, or returns when failurePolicy Ignore lets it go on. */
  private fail(err: unknown, invocation: WebhookInvocation, attributes: AdmissionAttributes, seconds: number, annotationSuffix: string): void {
    const { hook } = invocation;
    const metrics = this.deps.metrics;
    const operation = attributes.operation;
    if (isCallingWebhookError(err)) {
      const ignore = hook.failurePolicy === 'Ignore';
      if (!ignore) metrics.observeRejection(hook.name, 'admit', operation, 'calling_webhook_error', err.statusCode);
      metrics.observeWebhook(hook.name, 'admit', operation, !ignore, err.statusCode, seconds);
      if (ignore) {
        this.deps.log(`Failed calling webhook, failing open ${hook.name}: ${err.message}`, attributes.trace);
        metrics.observeFailOpen(hook.name, 'admit');
        attributes.recorder?.annotate(`${MUTATION_FAILED_OPEN_ANNOTATION_PREFIX}${annotationSuffix}`, hook.name);
        return;
      }
      this.deps.log(`Failed calling webhook, failing closed ${hook.name}: ${err.message}`, attributes.trace);
      throw errors.internal(err);
    }
    if (isWebhookRejectionError(err)) {
      metrics.observeRejection(hook.name, 'admit', operation, 'no_error', err.status.code);
      metrics.observeWebhook(hook.name, 'admit', operation, true, err.status.code, seconds);
      throw err.status;
    }
    metrics.observeRejection(hook.name, 'admit', operation, 'apiserver_internal_error', 0);
    metrics.observeWebhook(hook.name, 'admit', operation, true, 0, seconds);
    throw err instanceof ApiError ? err : errors.internal(err);
  }
}
