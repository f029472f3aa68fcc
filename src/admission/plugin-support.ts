/**
 * Small pieces the built-in plugins share: the store keys of the objects they read (the layout
 * of src/registry/served-resource.ts, repeated here because the registry imports admission, not
 * the reverse; a test keeps the two in step), kube's admission.NewForbidden, and typed reads of
 * JSON objects.
 */
import { ApiError, errors } from '../util';
import type { AdmissionAttributes, AdmissionOperation } from './admission-chain';
import type { JsonObject } from '../apis/object';
import { resourceKeyPrefix } from '../apis/catalogue';

/** Key prefixes (with the trailing '/') of the resources plugins read. */
export const KEY_PREFIX = {
  namespaces: resourceKeyPrefix({ group: '', resource: 'namespaces' }),
  serviceaccounts: resourceKeyPrefix({ group: '', resource: 'serviceaccounts' }),
  secrets: resourceKeyPrefix({ group: '', resource: 'secrets' }),
  configmaps: resourceKeyPrefix({ group: '', resource: 'configmaps' }),
  pods: resourceKeyPrefix({ group: '', resource: 'pods' }),
  nodes: resourceKeyPrefix({ group: '', resource: 'nodes' }),
  limitranges: resourceKeyPrefix({ group: '', resource: 'limitranges' }),
  resourcequotas: resourceKeyPrefix({ group: '', resource: 'resourcequotas' }),
  priorityclasses: resourceKeyPrefix({ group: 'scheduling.k8s.io', resource: 'priorityclasses' }),
  runtimeclasses: resourceKeyPrefix({ group: 'node.k8s.io', resource: 'runtimeclasses' }),
  storageclasses: resourceKeyPrefix({ group: 'storage.k8s.io', resource: 'storageclasses' }),
  ingressclasses: resourceKeyPrefix({ group: 'networking.k8s.io', resource: 'ingressclasses' }),
  mutatingwebhookconfigurations: resourceKeyPrefix({ group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations' }),
  validatingwebhookconfigurations: resourceKeyPrefix({ group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations' }),
} as const;

/** The prefixes the server indexes for plugins (see cached-objects.ts): what they list per request. */
export const INDEXED_PREFIXES: readonly string[] = [
  KEY_PREFIX.limitranges,
  KEY_PREFIX.resourcequotas,
  KEY_PREFIX.priorityclasses,
  KEY_PREFIX.storageclasses,
  KEY_PREFIX.ingressclasses,
  KEY_PREFIX.mutatingwebhookconfigurations,
  KEY_PREFIX.validatingwebhookconfigurations,
];

export function namespaceKey(name: string): string {
  return KEY_PREFIX.namespaces + name;
}

export function namespacedKey(prefix: string, namespace: string, name: string): string {
  return `${prefix}${namespace}/${name}`;
}

/** True when the request is about `group`/`resource` itself (not a subresource unless asked). */
export function isResource(a: AdmissionAttributes, group: string, resource: string, subresource = ''): boolean {
  return a.group === group && a.resource === resource && a.subresource === subresource;
}

export function isOperation(a: AdmissionAttributes, ...operations: AdmissionOperation[]): boolean {
  return operations.includes(a.operation);
}

/**
 * admission.NewForbidden: `<resource> "<name>" is forbidden: <why>`, the name being the
 * request's, else the object's name, else its generateName, else "Unknown". An error that is
 * already a Forbidden is returned as it is.
 */
export function admissionForbidden(a: AdmissionAttributes, why: string | ApiError): ApiError {
  if (why instanceof ApiError) {
    if (why.code === 403) return why;
    why = why.message;
  }
  let name = a.name;
  if (name === '') {
    const metadata = (a.object?.metadata ?? {}) as { name?: unknown; generateName?: unknown };
    name = typeof metadata.name === 'string' && metadata.name !== '' ? metadata.name : typeof metadata.generateName === 'string' && metadata.generateName !== '' ? metadata.generateName : 'Unknown';
  }
  return errors.forbidden({ group: a.group, resource: a.resource }, name, why);
}

/** An error kube-apiserver answers as a plain 500 (a plugin returned an error that is no Status). */
export function internalFailure(message: string): ApiError {
  return new ApiError(500, 'InternalError', message);
}

export function objectField(parent: unknown, key: string): JsonObject | undefined {
  if (parent === null || typeof parent !== 'object' || Array.isArray(parent)) return undefined;
  const value = (parent as JsonObject)[key];
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

export function arrayField(parent: unknown, key: string): JsonObject[] {
  if (parent === null || typeof parent !== 'object' || Array.isArray(parent)) return [];
  const value = (parent as JsonObject)[key];
  return Array.isArray(value) ? value.filter((item): item is JsonObject => item !== null && typeof item === 'object' && !Array.isArray(item)) : [];
}

export function stringField(parent: unknown, key: string): string {
  if (parent === null || typeof parent !== 'object' || Array.isArray(parent)) return '';
  const value = (parent as JsonObject)[key];
  return typeof value === 'string' ? value : '';
}

export function stringMap(parent: unknown, key: string): Record<string, string> {
  const value = objectField(parent, key);
  const out: Record<string, string> = {};
  if (value === undefined) return out;
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** The object's spec, created when absent. */
export function ensureSpec(object: JsonObject): JsonObject {
  let spec = objectField(object, 'spec');
  if (spec === undefined) {
    spec = {};
    object.spec = spec;
  }
  return spec;
}

/** Go's %q of a string (JSON quoting matches it for the names and values plugins quote). */
export function goQuote(text: string): string {
  return JSON.stringify(text);
}
