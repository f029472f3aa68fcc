/**
 * One call of one webhook, shared by both dispatchers (apiserver mutating/dispatcher.go
 * callAttrMutatingHook and validating/dispatcher.go callHook, up to the answer):
 *
 * 1. a dry run reaches only webhooks whose sideEffects is None or NoneOnDryRun (400 otherwise;
 *    an unset sideEffects is a calling error);
 * 2. the AdmissionReview version is the first of admissionReviewVersions this server knows;
 * 3. an open circuit (circuit-breaker.ts) short-circuits the call as a calling error that names
 *    the breaker, counted and not made;
 * 4. the POST (webhook-client.ts), then the answer checked (admission-review.ts).
 *
 * What the answer means for the request, the metrics and the annotations is the dispatchers'.
 */
import { randomUUID } from 'node:crypto';
import { errors } from '../../util';
import type { UserInfo } from '../../authn';
import { admissionReviewRequest, chooseReviewVersion, InvalidResponseError, verifyAdmissionResponse, type AdmissionResponse } from './admission-review';
import type { WebhookMetricsSink, WebhookStepType } from './admission-metrics';
import type { CircuitBreaker } from './circuit-breaker';
import { CallingWebhookError, isCallingWebhookError } from './errors';
import type { WebhookCaller } from './webhook-client';
import type { LogLine } from '../../observability/logger';
import type { NamespaceLookup, RequestView, ResourceCatalog, VersionedObjects, WebhookInvocation } from './webhook-invocation';

export interface DispatcherDeps {
  readonly caller: WebhookCaller;
  readonly catalog: ResourceCatalog;
  readonly namespaces: NamespaceLookup;
  readonly breaker: CircuitBreaker;
  readonly metrics: WebhookMetricsSink;
  readonly log: LogLine;
  /** Who the server's own writes (controllers, bootstrap) are, for userInfo: kube's loopback user. */
  readonly serverUser: UserInfo;
  readonly newUid?: () => string;
}

export function stepTypeOf(mutating: boolean): WebhookStepType {
  return mutating ? 'admit' : 'validating';
}

/** The breaker's key of a webhook: type and uid, so that a mutating and a validating webhook never share one. */
export function breakerKey(invocation: WebhookInvocation): string {
  return `${invocation.hook.type}/${invocation.hook.uid}`;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10}s`;
}

export async function callWebhook(deps: DispatcherDeps, invocation: WebhookInvocation, view: RequestView, versioned: VersionedObjects, mutating: boolean): Promise<AdmissionResponse> {
  const { hook } = invocation;
  const { attributes } = view;
  if (attributes.dryRun) {
    if (hook.sideEffects === '') throw new CallingWebhookError(hook.name, 'Webhook SideEffects is nil', 400);
    if (hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') throw errors.badRequest(`admission webhook "${hook.name}" does not support dry run`);
  }
  const version = chooseReviewVersion(hook.admissionReviewVersions);
  if (version === undefined) throw new CallingWebhookError(hook.name, 'could not create admission objects: webhook does not accept known AdmissionReview versions', 400);
  const key = breakerKey(invocation);
  const decision = deps.breaker.admit(key);
  if (!decision.allowed) {
    deps.metrics.observeShortCircuit(hook.name, stepTypeOf(mutating));
    throw new CallingWebhookError(hook.name, `circuit breaker open after ${decision.failures} failed calls within ${seconds(deps.breaker.options.windowMs)}; not calling it for another ${seconds(decision.retryInMs)}`, 503);
  }
  const uid = (deps.newUid ?? randomUUID)();
  const body = admissionReviewRequest(version, {
    uid,
    kind: invocation.kind,
    resource: invocation.resource,
    subResource: invocation.subresource,
    requestKind: view.kind,
    requestResource: view.resource,
    requestSubResource: attributes.subresource,
    name: attributes.name,
    namespace: view.namespace,
    operation: attributes.operation,
    userInfo: attributes.userInfo ?? deps.serverUser,
    object: versioned.object,
    oldObject: versioned.oldObject,
    dryRun: attributes.dryRun,
    options: attributes.operation === 'CONNECT' ? undefined : attributes.options,
  });
  try {
    const answer = await deps.caller.call(hook, body, attributes.trace);
    const response = verifyAdmissionResponse(version, uid, mutating, answer.body);
    deps.breaker.success(key);
    return response;
  } catch (err) {
    const failure = err instanceof InvalidResponseError
      ? new CallingWebhookError(hook.name, `received invalid webhook response: ${err.message}`, 503, { cause: err })
      : err;
    // Anything but a calling error means the webhook was reached (or the server failed): not the webhook's failure.
    if (!isCallingWebhookError(failure)) deps.breaker.success(key);
    else if (deps.breaker.failure(key)) {
      deps.metrics.observeCircuitOpened(hook.name, stepTypeOf(mutating));
      const policy = hook.failurePolicy === 'Ignore' ? 'skipping it (failurePolicy Ignore)' : 'refusing the requests it matches (failurePolicy Fail)';
      deps.log(`admission webhook "${hook.name}" (configuration "${hook.configurationName}"): circuit breaker opened after repeated failures (last: ${failure.reason}); ${policy} for ${seconds(deps.breaker.options.cooldownMs)}`, attributes.trace);
    }
    throw failure;
  }
}

export type { NamespaceLookup, ResourceCatalog };
