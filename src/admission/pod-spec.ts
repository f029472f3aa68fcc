/**
 * Pod-spec helpers the pod plugins share: visiting containers in kube's order (init containers,
 * containers, ephemeral containers: pkg/api/pod VisitContainers), tolerations as
 * pkg/util/tolerations merges and checks them, and the pod's QoS class.
 */
import { podQosClass } from '../apis/defaulting';
import { arrayField, objectField, stringField } from './plugin-support';
import type { JsonObject } from '../apis/object';

export type ContainerKind = 'initContainers' | 'containers' | 'ephemeralContainers';

/** Calls `visit` for every container of `spec` (initContainers, containers, ephemeralContainers). */
export function visitContainers(spec: JsonObject | undefined, visit: (container: JsonObject, kind: ContainerKind, index: number) => void): void {
  for (const kind of ['initContainers', 'containers', 'ephemeralContainers'] as const) {
    arrayField(spec, kind).forEach((container, index) => visit(container, kind, index));
  }
}

export function podSpecOf(pod: JsonObject | undefined): JsonObject | undefined {
  return objectField(pod, 'spec');
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export function tolerationsOf(spec: JsonObject | undefined): Toleration[] {
  return arrayField(spec, 'tolerations') as Toleration[];
}

function sameToleration(a: Toleration, b: Toleration): boolean {
  return (a.key ?? '') === (b.key ?? '') && (a.operator ?? '') === (b.operator ?? '') && (a.value ?? '') === (b.value ?? '') &&
    (a.effect ?? '') === (b.effect ?? '') && a.tolerationSeconds === b.tolerationSeconds;
}

/** Whether `ss` tolerates everything `t` tolerates (tolerations.isSuperset). */
export function toleratesSuperset(ss: Toleration, t: Toleration): boolean {
  if (sameToleration(ss, t)) return true;
  const ssKey = ss.key ?? '';
  if ((t.key ?? '') !== ssKey && (ssKey !== '' || ss.operator !== 'Exists')) return false;
  if ((t.effect ?? '') !== (ss.effect ?? '') && (ss.effect ?? '') !== '') return false;
  if (ss.effect === 'NoExecute' && ss.tolerationSeconds !== undefined) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds > ss.tolerationSeconds) return false;
  }
  switch (ss.operator ?? '') {
    case 'Equal':
    case '':
      return t.operator === 'Equal' && (t.value ?? '') === (ss.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/** tolerations.MergeTolerations: both lists, without the ones another one covers (the first of equals kept). */
export function mergeTolerations(first: Toleration[], second: Toleration[]): Toleration[] {
  const all = [...first, ...second];
  const merged: Toleration[] = [];
  next: for (let i = 0; i < all.length; i++) {
    const t = all[i];
    for (const kept of merged) if (toleratesSuperset(kept, t)) continue next;
    for (const later of all.slice(i + 1)) {
      if (!sameToleration(t, later) && toleratesSuperset(later, t)) continue next;
    }
    merged.push(t);
  }
  return merged;
}

/** tolerations.VerifyAgainstWhitelist: every toleration is covered by one of the whitelist. */
export function tolerationsAllowed(tolerations: Toleration[], whitelist: Toleration[]): boolean {
  if (whitelist.length === 0 || tolerations.length === 0) return true;
  return tolerations.every((t) => whitelist.some((w) => toleratesSuperset(w, t)));
}

export function isBestEffort(pod: JsonObject): boolean {
  return podQosClass(pod) === 'BestEffort';
}

/** The names of secrets a pod refers to (podutil.VisitPodSecretNames): volumes, env, envFrom, imagePullSecrets. */
export function podSecretNames(spec: JsonObject | undefined): string[] {
  const names: string[] = [];
  for (const ref of arrayField(spec, 'imagePullSecrets')) names.push(stringField(ref, 'name'));
  visitContainers(spec, (container) => {
    for (const envFrom of arrayField(container, 'envFrom')) {
      const ref = objectField(envFrom, 'secretRef');
      if (ref !== undefined) names.push(stringField(ref, 'name'));
    }
    for (const env of arrayField(container, 'env')) {
      const ref = objectField(objectField(env, 'valueFrom'), 'secretKeyRef');
      if (ref !== undefined) names.push(stringField(ref, 'name'));
    }
  });
  for (const volume of arrayField(spec, 'volumes')) {
    const secret = objectField(volume, 'secret');
    if (secret !== undefined) names.push(stringField(secret, 'secretName'));
    for (const source of arrayField(objectField(volume, 'projected'), 'sources')) {
      const projected = objectField(source, 'secret');
      if (projected !== undefined) names.push(stringField(projected, 'name'));
    }
    for (const key of ['azureFile', 'cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos', 'csi']) {
      const source = objectField(volume, key);
      if (source === undefined) continue;
      const ref = objectField(source, 'secretRef') ?? objectField(source, 'nodePublishSecretRef');
      if (ref !== undefined) names.push(stringField(ref, 'name'));
      if (key === 'azureFile' && stringField(source, 'secretName') !== '') names.push(stringField(source, 'secretName'));
    }
  }
  return names.filter((name) => name !== '');
}

/** The names of config maps a pod refers to (podutil.VisitPodConfigmapNames). */
export function podConfigMapNames(spec: JsonObject | undefined): string[] {
  const names: string[] = [];
  visitContainers(spec, (container) => {
    for (const envFrom of arrayField(container, 'envFrom')) {
      const ref = objectField(envFrom, 'configMapRef');
      if (ref !== undefined) names.push(stringField(ref, 'name'));
    }
    for (const env of arrayField(container, 'env')) {
      const ref = objectField(objectField(env, 'valueFrom'), 'configMapKeyRef');
      if (ref !== undefined) names.push(stringField(ref, 'name'));
    }
  });
  for (const volume of arrayField(spec, 'volumes')) {
    const configMap = objectField(volume, 'configMap');
    if (configMap !== undefined) names.push(stringField(configMap, 'name'));
    for (const source of arrayField(objectField(volume, 'projected'), 'sources')) {
      const projected = objectField(source, 'configMap');
      if (projected !== undefined) names.push(stringField(projected, 'name'));
    }
  }
  return names.filter((name) => name !== '');
}
