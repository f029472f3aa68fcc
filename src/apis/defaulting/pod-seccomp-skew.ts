/**
 * On Pod creation kube-apiserver v1.25 keeps the deprecated seccomp annotations and the
 * securityContext.seccompProfile fields in step, whichever of the two the client used
 * (k8s.io/kubernetes pkg/registry/core/pod/strategy.go applySeccompVersionSkew,
 * pkg/api/pod/util.go SeccompAnnotationForField / SeccompFieldForAnnotation).
 */
import { childObject, ensureObject, objectItems } from './json-value';
import { isJsonObject, type JsonObject } from '../object';

const POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const LOCALHOST_PREFIX = 'localhost/';

function annotationForProfile(profile: JsonObject): string | undefined {
  switch (profile.type) {
    case 'Unconfined':
      return 'unconfined';
    case 'RuntimeDefault':
      return 'runtime/default';
    case 'Localhost':
      return typeof profile.localhostProfile === 'string' ? LOCALHOST_PREFIX + profile.localhostProfile : undefined;
    default:
      return undefined;
  }
}

function profileForAnnotation(annotation: unknown): JsonObject | undefined {
  if (annotation === 'unconfined') return { type: 'Unconfined' };
  if (annotation === 'runtime/default' || annotation === 'docker/default') return { type: 'RuntimeDefault' };
  if (typeof annotation === 'string' && annotation.startsWith(LOCALHOST_PREFIX) && annotation.length > LOCALHOST_PREFIX.length) {
    return { type: 'Localhost', localhostProfile: annotation.slice(LOCALHOST_PREFIX.length) };
  }
  return undefined;
}

/** Syncs one annotation with one securityContext holder; whichever is present wins. */
function sync(pod: JsonObject, annotationKey: string, holder: JsonObject, securityContextKey: string): void {
  const annotations = childObject(ensureObject(pod, 'metadata'), 'annotations');
  const hasAnnotation = annotations !== undefined && annotationKey in annotations;
  const securityContext = childObject(holder, securityContextKey);
  const profile = securityContext === undefined ? undefined : securityContext.seccompProfile;
  if (isJsonObject(profile) && !hasAnnotation) {
    const annotation = annotationForProfile(profile);
    if (annotation !== undefined) ensureObject(ensureObject(pod, 'metadata'), 'annotations')[annotationKey] = annotation;
  } else if (hasAnnotation && !isJsonObject(profile)) {
    const field = profileForAnnotation(annotations[annotationKey]);
    if (field !== undefined) ensureObject(holder, securityContextKey).seccompProfile = field;
  }
}

export function applySeccompVersionSkew(pod: JsonObject): void {
  const spec = childObject(pod, 'spec');
  if (spec === undefined) return;
  sync(pod, POD_ANNOTATION, spec, 'securityContext');
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const container of objectItems(spec, key)) {
      if (typeof container.name === 'string') sync(pod, CONTAINER_ANNOTATION_PREFIX + container.name, container, 'securityContext');
    }
  }
}
