/**
 * Defaulting of flowcontrol.apiserver.k8s.io v1beta1 and v1beta2 (both served by v1.25) as
 * kube-apiserver v1.25 does it (k8s.io/kubernetes pkg/apis/flowcontrol/v1beta2/defaults.go; v1beta1
 * has the same values). The zero values are the "unset" markers: these fields are not pointers.
 */
import { childObject, ensureObject, fillIfZero } from './json-value';
import type { JsonObject } from '../object';

const DEFAULT_MATCHING_PRECEDENCE = 1000;
const DEFAULT_ASSURED_CONCURRENCY_SHARES = 30;
const DEFAULT_HAND_SIZE = 8;
const DEFAULT_QUEUES = 64;
const DEFAULT_QUEUE_LENGTH_LIMIT = 50;

function defaultFlowSchema(flowSchema: JsonObject): void {
  fillIfZero(ensureObject(flowSchema, 'spec'), 'matchingPrecedence', DEFAULT_MATCHING_PRECEDENCE);
}

function defaultPriorityLevelConfiguration(configuration: JsonObject): void {
  const spec = childObject(configuration, 'spec');
  const limited = spec === undefined ? undefined : childObject(spec, 'limited');
  if (limited === undefined) return;
  fillIfZero(limited, 'assuredConcurrencyShares', DEFAULT_ASSURED_CONCURRENCY_SHARES);
  const limitResponse = childObject(limited, 'limitResponse');
  const queuing = limitResponse === undefined ? undefined : childObject(limitResponse, 'queuing');
  if (queuing === undefined) return;
  fillIfZero(queuing, 'handSize', DEFAULT_HAND_SIZE);
  fillIfZero(queuing, 'queues', DEFAULT_QUEUES);
  fillIfZero(queuing, 'queueLengthLimit', DEFAULT_QUEUE_LENGTH_LIMIT);
}

export const flowcontrolDefaulters: Readonly<Record<string, (object: JsonObject) => void>> = {
  FlowSchema: defaultFlowSchema,
  PriorityLevelConfiguration: defaultPriorityLevelConfiguration,
};
