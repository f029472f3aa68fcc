/**
 * batch/v1 Job and CronJob (pkg/apis/batch/validation, v1.25), and the selector a Job gets when it
 * does not manage its own (the registry strategy's generateSelector).
 */
import { FieldPath } from './field-path';
import { FieldError, GoValue, duplicate, goStringMap, invalid, notSupported, required } from './field-error';
import { byteLength, defaultedString, optionalNumberAt, semanticEqual, stringAt, stringMapAt, stringsAt } from './json-value';
import { goLabelSelector, selectorMatches, validateLabelSelector } from './label-selector';
import { cronScheduleError } from './cron-schedule';
import { fieldImmutableErrorMsg, isDNS1123Label, isNegativeErrorMsg, nameIsDNSSubdomain } from './name-validation';
import { validateObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { validatePodTemplateSpec } from './pod-validation';
import { asJsonObject, type JsonObject, metadataOf } from '../object';

const metadata = FieldPath.root('metadata');
const maxParallelismForIndexedJob = 100000;
/** Job pods get `<cronjob>-<11-character timestamp suffix>`, and must stay within 63. */
const cronJobNameMaxLength = 52;

function specOf(object: JsonObject): JsonObject {
  return asJsonObject(object['spec']) ?? {};
}

function nonNegative(value: number | undefined, path: FieldPath): FieldError[] {
  return value !== undefined && value < 0 ? [invalid(path, value, isNegativeErrorMsg)] : [];
}

function templateLabels(spec: JsonObject): Record<string, string> | undefined {
  return stringMapAt(metadataOf(asJsonObject(spec['template']) ?? {})['labels']);
}

/** validateJobSpec: everything but the selector, shared by Jobs and CronJob job templates. */
function validateJobSpecBody(spec: JsonObject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished']) {
    errs.push(...nonNegative(optionalNumberAt(spec[key]), path.child(key)));
  }
  const completionMode = spec['completionMode'];
  if (typeof completionMode === 'string') {
    if (completionMode !== 'NonIndexed' && completionMode !== 'Indexed') {
      errs.push(notSupported(path.child('completionMode'), completionMode, ['NonIndexed', 'Indexed']));
    }
    if (completionMode === 'Indexed') {
      if (optionalNumberAt(spec['completions']) === undefined) errs.push(required(path.child('completions'), 'when completion mode is Indexed'));
      const parallelism = optionalNumberAt(spec['parallelism']);
      if (parallelism !== undefined && parallelism > maxParallelismForIndexedJob) {
        errs.push(invalid(path.child('parallelism'), parallelism, `must be less than or equal to ${maxParallelismForIndexedJob} when completion mode is Indexed`));
      }
    }
  }
  const templatePath = path.child('template');
  const template = asJsonObject(spec['template']) ?? {};
  errs.push(...validatePodTemplateSpec(template, templatePath));
  // An absent restartPolicy would have defaulted to Always, which Jobs cannot use.
  const restartPolicy = stringAt(asJsonObject(template['spec'])?.['restartPolicy']);
  if (restartPolicy === 'Always' || restartPolicy === '') {
    errs.push(required(templatePath.child('spec', 'restartPolicy'), 'valid values: "OnFailure", "Never"'));
  } else if (restartPolicy !== 'OnFailure' && restartPolicy !== 'Never') {
    errs.push(notSupported(templatePath.child('spec', 'restartPolicy'), restartPolicy, ['OnFailure', 'Never']));
  }
  return errs;
}

function validateJobSpec(spec: JsonObject, path: FieldPath): FieldError[] {
  const errs = validateJobSpecBody(spec, path);
  const selector = asJsonObject(spec['selector']);
  if (selector === undefined) errs.push(required(path.child('selector')));
  else errs.push(...validateLabelSelector(selector, path.child('selector')));
  if (!selectorMatches(selector, templateLabels(spec))) {
    errs.push(invalid(path.child('template', 'metadata', 'labels'), new GoValue(goStringMap(templateLabels(spec))), '`selector` does not match template `labels`'));
  }
  return errs;
}

/** Unless spec.manualSelector, the selector must be the generated controller-uid one. */
function validateGeneratedSelector(job: JsonObject): FieldError[] {
  const spec = specOf(job);
  const meta = metadataOf(job);
  if (spec['manualSelector'] === true) return [];
  const selector = asJsonObject(spec['selector']);
  if (selector === undefined) return [];
  const errs: FieldError[] = [];
  const uid = stringAt(meta['uid']);
  const name = stringAt(meta['name']);
  if (uid === '') errs.push(required(metadata.child('uid')));
  const labels = templateLabels(spec);
  const labelsPath = FieldPath.root('spec', 'template', 'metadata', 'labels');
  for (const [key, expected] of [['controller-uid', uid], ['job-name', name]] as const) {
    if (labels === undefined || !Object.prototype.hasOwnProperty.call(labels, key)) {
      errs.push(required(labelsPath.key(key), `must be '${expected}'`));
    } else if (labels[key] !== expected) {
      errs.push(invalid(labelsPath.key(key), new GoValue(goStringMap(labels)), `must be '${expected}'`));
    }
  }
  if (!selectorMatches(selector, { 'controller-uid': uid, 'job-name': name })) {
    errs.push(invalid(FieldPath.root('spec', 'selector'), goLabelSelector(selector), '`selector` not auto-generated'));
  }
  return errs;
}

/**
 * What the Job strategy's PrepareForCreate does before validation when the selector is not manual:
 * select on controller-uid and label the template with controller-uid and job-name. Returns a copy.
 */
export function withGeneratedJobSelector(job: JsonObject): JsonObject {
  const spec = specOf(job);
  if (spec['manualSelector'] === true) return job;
  const meta = metadataOf(job);
  const uid = stringAt(meta['uid']);
  const template = asJsonObject(spec['template']) ?? {};
  const templateMeta = metadataOf(template);
  const labels = { ...(stringMapAt(templateMeta['labels']) ?? {}), 'controller-uid': uid, 'job-name': stringAt(meta['name']) };
  return {
    ...job,
    spec: {
      ...spec,
      selector: { matchLabels: { 'controller-uid': uid } },
      template: { ...template, metadata: { ...templateMeta, labels } },
    },
  };
}

export function validateJob(job: JsonObject, namespaced: boolean): FieldError[] {
  const meta = metadataOf(job);
  const spec = specOf(job);
  const errs = validateObjectMeta(meta, namespaced, nameIsDNSSubdomain, metadata);
  errs.push(...validateGeneratedSelector(job));
  errs.push(...validateJobSpec(spec, FieldPath.root('spec')));
  const completions = optionalNumberAt(spec['completions']);
  if (spec['completionMode'] === 'Indexed' && completions !== undefined && completions > 0) {
    // Indexed pods are named <job>-<index>, which must stay a DNS label.
    const name = stringAt(meta['name']);
    const longestHostname = `${name}-${completions - 1}`;
    if (isDNS1123Label(longestHostname).length > 0) {
      errs.push(invalid(metadata.child('name'), name, `will not able to create pod with invalid DNS label: ${longestHostname}`));
    }
  }
  return errs;
}

/**
 * Scheduling directives of a suspended, never-started Job may still change (JobMutableNodeSchedulingDirectives,
 * beta and on in v1.25): node affinity, node selector, tolerations, and the template's labels and annotations.
 */
function comparableTemplate(oldTemplate: JsonObject, mutableFrom: JsonObject | undefined): JsonObject {
  if (mutableFrom === undefined) return oldTemplate;
  const meta = metadataOf(oldTemplate);
  const fromMeta = metadataOf(mutableFrom);
  const podSpec = asJsonObject(oldTemplate['spec']) ?? {};
  const fromSpec = asJsonObject(mutableFrom['spec']) ?? {};
  const oldAffinity = asJsonObject(podSpec['affinity']);
  const newAffinity = asJsonObject(fromSpec['affinity']);
  let affinity: JsonObject | undefined;
  if (newAffinity === undefined) {
    // Clearing affinity is allowed when only node affinity was set.
    const rest = { ...(oldAffinity ?? {}) };
    delete rest['nodeAffinity'];
    affinity = Object.keys(rest).length === 0 ? undefined : rest;
  } else {
    affinity = { ...(oldAffinity ?? {}), nodeAffinity: newAffinity['nodeAffinity'] };
  }
  return {
    ...oldTemplate,
    metadata: { ...meta, labels: fromMeta['labels'], annotations: fromMeta['annotations'] },
    spec: { ...podSpec, nodeSelector: fromSpec['nodeSelector'], tolerations: fromSpec['tolerations'], affinity },
  };
}

export function validateJobUpdate(job: JsonObject, old: JsonObject): FieldError[] {
  const errs = validateObjectMetaUpdate(metadataOf(job), metadataOf(old), metadata);
  const spec = specOf(job);
  const oldSpec = specOf(old);
  const specPath = FieldPath.root('spec');
  errs.push(...validateJobSpec(spec, specPath));
  if (!semanticEqual(spec['completions'], oldSpec['completions'])) {
    errs.push(invalid(specPath.child('completions'), optionalNumberAt(spec['completions']) ?? null, fieldImmutableErrorMsg));
  }
  if (!semanticEqual(spec['selector'], oldSpec['selector'])) {
    errs.push(invalid(specPath.child('selector'), goLabelSelector(asJsonObject(spec['selector'])), fieldImmutableErrorMsg));
  }
  const template = asJsonObject(spec['template']) ?? {};
  const oldStatus = asJsonObject(old['status']) ?? {};
  const schedulingMutable = oldSpec['suspend'] === true && (oldStatus['startTime'] === undefined || oldStatus['startTime'] === null);
  const oldTemplate = comparableTemplate(asJsonObject(oldSpec['template']) ?? {}, schedulingMutable ? template : undefined);
  if (!semanticEqual(template, oldTemplate)) {
    errs.push(invalid(specPath.child('template'), new GoValue(JSON.stringify(template)), fieldImmutableErrorMsg));
  }
  if (!semanticEqual(spec['completionMode'] ?? 'NonIndexed', oldSpec['completionMode'] ?? 'NonIndexed')) {
    errs.push(invalid(specPath.child('completionMode'), stringAt(spec['completionMode']), fieldImmutableErrorMsg));
  }
  return errs;
}

export function validateJobStatus(job: JsonObject): FieldError[] {
  const status = asJsonObject(job['status']) ?? {};
  const statusPath = FieldPath.root('status');
  const errs: FieldError[] = [];
  for (const key of ['active', 'succeeded', 'failed', 'ready']) errs.push(...nonNegative(optionalNumberAt(status[key]), statusPath.child(key)));
  const uncounted = asJsonObject(status['uncountedTerminatedPods']);
  if (uncounted !== undefined) {
    const seen = new Set<string>();
    for (const key of ['succeeded', 'failed']) {
      stringsAt(uncounted[key]).forEach((uid, i) => {
        const uidPath = statusPath.child('uncountedTerminatedPods', key).index(i);
        if (uid === '') errs.push(invalid(uidPath, uid, 'must not be empty'));
        else if (seen.has(uid)) errs.push(duplicate(uidPath, uid));
        else seen.add(uid);
      });
    }
  }
  return errs;
}

// ---------------------------------------------------------------- CronJob

function validateTimeZone(timeZone: unknown, path: FieldPath): FieldError[] {
  if (typeof timeZone !== 'string') return [];
  if (timeZone === '') return [invalid(path, timeZone, 'timeZone must be nil or non-empty string')];
  if (timeZone.toLowerCase() === 'local') {
    // Go's time.LoadLocation accepts "Local" itself, so only this message appears for it.
    return timeZone === 'Local'
      ? [invalid(path, timeZone, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones')]
      : [
          invalid(path, timeZone, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'),
          invalid(path, timeZone, `unknown time zone ${timeZone}`),
        ];
  }
  return isKnownTimeZone(timeZone) ? [] : [invalid(path, timeZone, `unknown time zone ${timeZone}`)];
}

/** time.LoadLocation's verdict, from the IANA database Node carries. */
function isKnownTimeZone(name: string): boolean {
  if (name === 'UTC') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function validateCronJobSpec(spec: JsonObject, oldSpec: JsonObject | undefined): FieldError[] {
  const specPath = FieldPath.root('spec');
  const errs: FieldError[] = [];
  const schedule = stringAt(spec['schedule']);
  if (schedule === '') {
    errs.push(required(specPath.child('schedule')));
  } else {
    const problem = cronScheduleError(schedule);
    if (problem !== undefined) errs.push(invalid(specPath.child('schedule'), schedule, problem));
    if (schedule.includes('TZ') && typeof spec['timeZone'] === 'string') {
      errs.push(invalid(specPath.child('schedule'), schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
    }
  }
  errs.push(...nonNegative(optionalNumberAt(spec['startingDeadlineSeconds']), specPath.child('startingDeadlineSeconds')));
  if (oldSpec === undefined || oldSpec['timeZone'] !== spec['timeZone']) errs.push(...validateTimeZone(spec['timeZone'], specPath.child('timeZone')));
  const concurrencyPolicy = defaultedString(spec['concurrencyPolicy'], 'Allow');
  const policies = ['Allow', 'Forbid', 'Replace'];
  if (!policies.includes(concurrencyPolicy)) errs.push(notSupported(specPath.child('concurrencyPolicy'), concurrencyPolicy, policies));

  const jobSpecPath = specPath.child('jobTemplate', 'spec');
  const jobSpec = asJsonObject(asJsonObject(spec['jobTemplate'])?.['spec']) ?? {};
  errs.push(...validateJobSpecBody(jobSpec, jobSpecPath));
  if (asJsonObject(jobSpec['selector']) !== undefined) {
    errs.push(invalid(jobSpecPath.child('selector'), goLabelSelector(asJsonObject(jobSpec['selector'])), '`selector` will be auto-generated'));
  }
  if (jobSpec['manualSelector'] === true) errs.push(notSupported(jobSpecPath.child('manualSelector'), true, ['nil', 'false']));
  for (const key of ['successfulJobsHistoryLimit', 'failedJobsHistoryLimit']) {
    errs.push(...nonNegative(optionalNumberAt(spec[key]), specPath.child(key)));
  }
  return errs;
}

export function validateCronJob(cronJob: JsonObject, namespaced: boolean): FieldError[] {
  const meta = metadataOf(cronJob);
  const errs = validateObjectMeta(meta, namespaced, nameIsDNSSubdomain, metadata);
  errs.push(...validateCronJobSpec(specOf(cronJob), undefined));
  const name = stringAt(meta['name']);
  if (byteLength(name) > cronJobNameMaxLength) {
    errs.push(invalid(metadata.child('name'), name, `must be no more than ${cronJobNameMaxLength} characters`));
  }
  return errs;
}

/** The 52-character name limit is not re-checked, so older long-named CronJobs stay updatable. */
export function validateCronJobUpdate(cronJob: JsonObject, old: JsonObject): FieldError[] {
  const errs = validateObjectMetaUpdate(metadataOf(cronJob), metadataOf(old), metadata);
  errs.push(...validateCronJobSpec(specOf(cronJob), specOf(old)));
  return errs;
}
