/**
 * DaemonSets (pkg/registry/apps/daemonset/strategy.go): the internal spec.templateGeneration
 * travels in apps/v1 as an annotation, counting template changes.
 */
import { childObject, semanticallyEqual } from '../../apis/defaulting';
import { ensureAnnotations } from './object-fields';
import { workload, type KindRules } from './kind-rules';
import type { JsonObject } from '../../apis/object';

const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

function templateGenerationOf(object: JsonObject): number {
  const metadata = childObject(object, 'metadata');
  const annotations = metadata === undefined ? undefined : childObject(metadata, 'annotations');
  const value = Number(annotations?.[TEMPLATE_GENERATION_ANNOTATION]);
  return Number.isInteger(value) ? value : 0;
}

export const daemonSetRules: KindRules = workload(() => ({ currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 }), {
  prepareForCreate: (daemonSet) => {
    ensureAnnotations(daemonSet)[TEMPLATE_GENERATION_ANNOTATION] = String(Math.max(1, templateGenerationOf(daemonSet)));
  },
  prepareForUpdate: (daemonSet, old) => {
    const templateChanged = !semanticallyEqual(childObject(daemonSet, 'spec')?.template, childObject(old, 'spec')?.template);
    ensureAnnotations(daemonSet)[TEMPLATE_GENERATION_ANNOTATION] = String(templateGenerationOf(old) + (templateChanged ? 1 : 0));
  },
  prepareForStatusUpdate: (daemonSet, old) => {
    ensureAnnotations(daemonSet)[TEMPLATE_GENERATION_ANNOTATION] = String(templateGenerationOf(old));
  },
});
