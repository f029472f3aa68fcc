/**
 * Jobs (pkg/registry/batch/job/strategy.go): v1.25's tracking-with-finalizers annotation, the
 * generated selector on controller-uid, and the alpha podFailurePolicy dropped.
 */
import { childObject, defaultJob, ensureObject, isUnset } from '../../apis/defaulting';
import { ensureAnnotations, dropEmptyAnnotations } from './object-fields';
import { emptyStatus, workload, type KindRules } from './kind-rules';
import type { JsonObject } from '../../apis/object';

const JOB_TRACKING_ANNOTATION = 'batch.kubernetes.io/job-tracking';

/** Job controllers match their pods by controller-uid; needs metadata.name and metadata.uid set. */
function generateJobSelector(job: JsonObject): void {
  const metadata = ensureObject(job, 'metadata');
  const spec = ensureObject(job, 'spec');
  if (spec.manualSelector === true || typeof metadata.uid !== 'string') return;
  const templateLabels = ensureObject(ensureObject(ensureObject(spec, 'template'), 'metadata'), 'labels');
  if (!('job-name' in templateLabels)) templateLabels['job-name'] = metadata.name;
  if (!('controller-uid' in templateLabels)) templateLabels['controller-uid'] = metadata.uid;
  const matchLabels = ensureObject(ensureObject(spec, 'selector'), 'matchLabels');
  if (!('controller-uid' in matchLabels)) matchLabels['controller-uid'] = metadata.uid;
}

export const jobRules: KindRules = workload(emptyStatus, {
  prepareForCreate: (job) => {
    // JobTrackingWithFinalizers is beta and on in v1.25; the annotation marks jobs tracked that way.
    ensureAnnotations(job)[JOB_TRACKING_ANNOTATION] = '';
    // JobPodFailurePolicy is alpha (off) in v1.25, so the field is dropped.
    delete ensureObject(job, 'spec').podFailurePolicy;
    generateJobSelector(job);
    // Read-back decodes again, so job labels default from the now-labelled template.
    defaultJob(job);
  },
  prepareForUpdate: (job, old) => {
    const oldAnnotations = childObject(ensureObject(old, 'metadata'), 'annotations');
    if (oldAnnotations === undefined || !(JOB_TRACKING_ANNOTATION in oldAnnotations)) {
      delete ensureAnnotations(job)[JOB_TRACKING_ANNOTATION];
      dropEmptyAnnotations(job);
    }
    const oldSpec = childObject(old, 'spec');
    if (oldSpec === undefined || isUnset(oldSpec.podFailurePolicy)) delete ensureObject(job, 'spec').podFailurePolicy;
  },
});
