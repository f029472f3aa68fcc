/**
 * Defaulting of admissionregistration.k8s.io/v1 as kube-apiserver v1.25 does it (k8s.io/kubernetes
 * pkg/apis/admissionregistration/v1/defaults.go). sideEffects and admissionReviewVersions have no
 * default in v1: they are required.
 */
import { childObject, fillIfUnset, objectItems } from './json-value';
import type { JsonObject } from '../object';

const DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 10;
const DEFAULT_SERVICE_PORT = 443;

function defaultWebhook(webhook: JsonObject, mutating: boolean): void {
  fillIfUnset(webhook, 'failurePolicy', 'Fail');
  fillIfUnset(webhook, 'matchPolicy', 'Equivalent');
  fillIfUnset(webhook, 'namespaceSelector', {});
  fillIfUnset(webhook, 'objectSelector', {});
  fillIfUnset(webhook, 'timeoutSeconds', DEFAULT_WEBHOOK_TIMEOUT_SECONDS);
  if (mutating) fillIfUnset(webhook, 'reinvocationPolicy', 'Never');
  for (const rule of objectItems(webhook, 'rules')) fillIfUnset(rule, 'scope', '*');
  const clientConfig = childObject(webhook, 'clientConfig');
  const service = clientConfig === undefined ? undefined : childObject(clientConfig, 'service');
  if (service !== undefined) fillIfUnset(service, 'port', DEFAULT_SERVICE_PORT);
}

export const admissionregistrationV1Defaulters: Readonly<Record<string, (object: JsonObject) => void>> = {
  ValidatingWebhookConfiguration: (configuration) => {
    for (const webhook of objectItems(configuration, 'webhooks')) defaultWebhook(webhook, false);
  },
  MutatingWebhookConfiguration: (configuration) => {
    for (const webhook of objectItems(configuration, 'webhooks')) defaultWebhook(webhook, true);
  },
};
