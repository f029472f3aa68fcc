/**
 * Validating webhooks (spec 02 §4.4 point 6; apiserver
 * admission/plugin/webhook/validating/dispatcher.go): which webhooks apply is decided in order,
 * then all of them are called at once and the request waits for every answer. Any refusal
 * fails the request; when several fail it, the first to finish is the answer (as v1.25, which
 * logs the others).
 *
 * A failure ignored under failurePolicy Ignore adds the audit annotation
 * `failed-open.validating.webhook.admission.k8s.io/round_0_index_I` = the webhook's name; the
 * webhook's own auditAnnotations are added as `<webhook name>/<key>`, its warnings as Warning
 * headers. Metrics as for mutating webhooks, with type `validating`.
 */
import { ApiError, errors } from '../../util';
import type { AdmissionAttributes } from '../admission-chain';
import { rejectionStatus } from './admission-review';
import { WebhookRejectionError, isCallingWebhookError, isWebhookRejectionError } from './errors';
import { callWebhook, type DispatcherDeps } from './webhook-call';
import { apiVersionOf, invocationFor, requestViewOf, VersionedObjects, type RequestView, type WebhookInvocation } from './webhook-invocation';
import type { WebhookAccessor } from './webhook-accessor';

export const VALIDATING_FAILED_OPEN_ANNOTATION_PREFIX = 'failed-open.validating.webhook.admission.k8s.io/';

export class ValidatingDispatcher {
  constructor(private readonly deps: DispatcherDeps) {}

  async dispatch(attributes: AdmissionAttributes, hooks: readonly WebhookAccessor[]): Promise<void> {
    const view = requestViewOf(attributes);
    const requestApiVersion = apiVersionOf(view.kind);
    const calls: Array<{ invocation: WebhookInvocation; versioned: VersionedObjects; index: number }> = [];
    // One conversion per version, shared by the webhooks registered for it.
    const byVersion = new Map<string, VersionedObjects>();
    for (let index = 0; index < hooks.length; index++) {
      const invocation = await invocationFor(hooks[index], view, attributes.object, attributes.oldObject, this.deps.catalog, this.deps.namespaces);
      if (invocation === undefined) continue;
      const apiVersion = apiVersionOf(invocation.kind);
      let versioned = byVersion.get(apiVersion);
      if (versioned === undefined) {
        versioned = new VersionedObjects(requestApiVersion, attributes.object, attributes.oldObject, this.deps.catalog);
        versioned.convertTo(invocation.kind);
        byVersion.set(apiVersion, versioned);
      }
      calls.push({ invocation, versioned, index });
    }
    if (calls.length === 0) return;
    const failures: unknown[] = [];
    await Promise.all(calls.map(async ({ invocation, versioned, index }) => {
      try {
        await this.callOne(invocation, view, versioned, index);
      } catch (err) {
        failures.push(err);
      }
    }));
    if (failures.length === 0) return;
    for (const other of failures.slice(1)) this.deps.log(`admission: another validating webhook also refused the request: ${(other as Error).message}`, view.attributes.trace);
    throw failures[0];
  }

  private async callOne(invocation: WebhookInvocation, view: RequestView, versioned: VersionedObjects, index: number): Promise<void> {
    const { hook } = invocation;
    const { attributes } = view;
    const recorder = attributes.recorder;
    const started = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9;
    try {
      const response = await callWebhook(this.deps, invocation, view, versioned, false);
      for (const [key, value] of Object.entries(response.auditAnnotations)) recorder?.annotate(`${hook.name}/${key}`, value);
      for (const warning of response.warnings) recorder?.warn(warning);
      if (!response.allowed) throw new WebhookRejectionError(rejectionStatus(hook.name, response.result));
      this.deps.metrics.observeWebhook(hook.name, 'validating', attributes.operation, false, 200, elapsed());
    } catch (err) {
      this.fail(err, invocation, attributes, elapsed(), index);
    }
  }

  private fail(err: unknown, invocation: WebhookInvocation, attributes: AdmissionAttributes, seconds: number, index: number): void {
    const { hook } = invocation;
    const metrics = this.deps.metrics;
    const operation = attributes.operation;
    if (isCallingWebhookError(err)) {
      const ignore = hook.failurePolicy === 'Ignore';
      if (!ignore) metrics.observeRejection(hook.name, 'validating', operation, 'calling_webhook_error', err.statusCode);
      metrics.observeWebhook(hook.name, 'validating', operation, !ignore, err.statusCode, seconds);
      if (ignore) {
        this.deps.log(`Failed calling webhook, failing open ${hook.name}: ${err.message}`, attributes.trace);
        metrics.observeFailOpen(hook.name, 'validating');
        attributes.recorder?.annotate(`${VALIDATING_FAILED_OPEN_ANNOTATION_PREFIX}round_0_index_${index}`, hook.name);
        return;
      }
      this.deps.log(`Failed calling webhook, failing closed ${hook.name}: ${err.message}`, attributes.trace);
      throw errors.internal(err);
    }
    if (isWebhookRejectionError(err)) {
      metrics.observeRejection(hook.name, 'validating', operation, 'no_error', err.status.code);
      metrics.observeWebhook(hook.name, 'validating', operation, true, err.status.code, seconds);
      throw err.status;
    }
    metrics.observeRejection(hook.name, 'validating', operation, 'apiserver_internal_error', 0);
    metrics.observeWebhook(hook.name, 'validating', operation, true, 0, seconds);
    throw err instanceof ApiError ? err : errors.internal(err);
  }
}
