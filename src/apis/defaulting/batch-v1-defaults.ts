/**
 * Defaulting of batch/v1 (and batch/v1beta1 CronJob, still served by v1.25) as kube-apiserver v1.25
 * does it (k8s.io/kubernetes pkg/apis/batch/v1/defaults.go). A CronJob's jobTemplate is not a Job:
 * only its pod template is defaulted, so backoffLimit and friends stay unset there.
 */
import { defaultEmbeddedMetadata, defaultPodTemplateSpec } from './core-v1-defaults';
import { childObject, ensureObject, fillIfUnset, fillIfZero, isEmptyCollection, isUnset } from './json-value';
import { deepCopy, type JsonObject } from '../object';

const DEFAULT_BACKOFF_LIMIT = 6;
const DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT = 3;
const DEFAULT_FAILED_JOBS_HISTORY_LIMIT = 1;

export function defaultJob(job: JsonObject): void {
  const spec = ensureObject(job, 'spec');
  // A non-parallel job may leave both unset; then both are 1. Completions alone never defaults.
  if (isUnset(spec.completions) && isUnset(spec.parallelism)) spec.completions = 1;
  fillIfUnset(spec, 'parallelism', 1);
  fillIfUnset(spec, 'backoffLimit', DEFAULT_BACKOFF_LIMIT);
  const template = ensureObject(spec, 'template');
  const templateLabels = childObject(ensureObject(template, 'metadata'), 'labels');
  const metadata = ensureObject(job, 'metadata');
  if (templateLabels !== undefined && isEmptyCollection(metadata.labels)) metadata.labels = deepCopy(templateLabels);
  fillIfUnset(spec, 'completionMode', 'NonIndexed');
  fillIfUnset(spec, 'suspend', false);
  defaultPodTemplateSpec(template);
}

function defaultCronJob(cronJob: JsonObject): void {
  const spec = ensureObject(cronJob, 'spec');
  fillIfZero(spec, 'concurrencyPolicy', 'Allow');
  fillIfUnset(spec, 'suspend', false);
  fillIfUnset(spec, 'successfulJobsHistoryLimit', DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT);
  fillIfUnset(spec, 'failedJobsHistoryLimit', DEFAULT_FAILED_JOBS_HISTORY_LIMIT);
  const jobTemplate = ensureObject(spec, 'jobTemplate');
  defaultEmbeddedMetadata(jobTemplate);
  defaultPodTemplateSpec(ensureObject(ensureObject(jobTemplate, 'spec'), 'template'));
}

export const batchV1Defaulters: Readonly<Record<string, (object: JsonObject) => void>> = {
  Job: defaultJob,
  CronJob: defaultCronJob,
};

export const batchV1beta1Defaulters: Readonly<Record<string, (object: JsonObject) => void>> = {
  CronJob: defaultCronJob,
};
