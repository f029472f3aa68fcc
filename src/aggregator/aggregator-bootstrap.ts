/**
 * What kube-apiserver v1.25 writes for the aggregation layer at start:
 * - a local APIService (no service) for every built-in group-version it serves, with the
 *   group and version priorities of its table (pkg/controlplane/aggregator.go
 *   apiVersionPriorities), kept `onstart` by the autoregister controller (auto-registration.ts),
 *   so that `kubectl get apiservices` lists them Available / Local as on a real cluster;
 * - the `extension-apiserver-authentication` ConfigMap in kube-system (the
 *   ClusterAuthenticationTrust controller): the client CA and the request-header settings that
 *   extension API servers read to trust the front proxy's X-Remote-* headers, combined with
 *   what it already holds, so that the CAs of every replica are in it.
 */
import { X509Certificate } from 'node:crypto';
import { isApiError } from '../util';
import type { GenericRegistry, ServedResource } from '../registry';
import type { JsonObject } from '../apis/object';

/** kube-apiserver v1.25's apiVersionPriorities: [groupPriorityMinimum, versionPriority]. */
const PRIORITIES: Record<string, [number, number]> = {
  'v1': [18000, 1],
  'apiregistration.k8s.io/v1': [18000, 15],
  'apps/v1': [17800, 15],
  'events.k8s.io/v1': [17750, 15],
  'events.k8s.io/v1beta1': [17750, 5],
  'authentication.k8s.io/v1': [17700, 15],
  'authorization.k8s.io/v1': [17600, 15],
  'autoscaling/v1': [17500, 15],
  'autoscaling/v2': [17500, 30],
  'autoscaling/v2beta1': [17500, 9],
  'autoscaling/v2beta2': [17500, 1],
  'batch/v1': [17400, 15],
  'batch/v1beta1': [17400, 9],
  'certificates.k8s.io/v1': [17300, 15],
  'networking.k8s.io/v1': [17200, 15],
  'networking.k8s.io/v1alpha1': [17200, 1],
  'policy/v1': [17100, 15],
  'policy/v1beta1': [17100, 9],
  'rbac.authorization.k8s.io/v1': [17000, 15],
  'storage.k8s.io/v1': [16800, 15],
  'storage.k8s.io/v1beta1': [16800, 9],
  'storage.k8s.io/v1alpha1': [16800, 1],
  'apiextensions.k8s.io/v1': [16700, 15],
  'admissionregistration.k8s.io/v1': [16700, 15],
  'admissionregistration.k8s.io/v1alpha1': [16700, 9],
  'scheduling.k8s.io/v1': [16600, 15],
  'coordination.k8s.io/v1': [16500, 15],
  'node.k8s.io/v1': [16300, 15],
  'node.k8s.io/v1alpha1': [16300, 1],
  'node.k8s.io/v1beta1': [16300, 9],
  'discovery.k8s.io/v1': [16200, 15],
  'discovery.k8s.io/v1beta1': [16200, 12],
  'flowcontrol.apiserver.k8s.io/v1beta2': [16100, 15],
  'flowcontrol.apiserver.k8s.io/v1beta1': [16100, 12],
  'flowcontrol.apiserver.k8s.io/v1alpha1': [16100, 9],
  'internal.apiserver.k8s.io/v1alpha1': [16000, 9],
  'resource.k8s.io/v1alpha1': [15900, 9],
};

/** The local APIService of a built-in group-version (name `<version>.<group>`, `v1.` for the core group). */
export function localApiService(group: string, version: string): JsonObject | undefined {
  const priorities = PRIORITIES[group === '' ? version : `${group}/${version}`];
  if (priorities === undefined) return undefined;
  return {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: `${version}.${group}`, labels: { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' } },
    spec: { group, version, groupPriorityMinimum: priorities[0], versionPriority: priorities[1] },
  };
}

export interface RequestHeaderSettings {
  clientCaPem: string;
  allowedNames: readonly string[];
  usernameHeaders: readonly string[];
  groupHeaders: readonly string[];
  extraHeaderPrefixes: readonly string[];
}

/** The ConfigMap's data, with kube's keys and JSON-encoded lists. */
export function authenticationConfigMapData(clientCaPem: string, requestHeader: RequestHeaderSettings): Record<string, string> {
  return {
    'client-ca-file': clientCaPem,
    'requestheader-allowed-names': JSON.stringify(requestHeader.allowedNames),
    'requestheader-client-ca-file': requestHeader.clientCaPem,
    'requestheader-extra-headers-prefix': JSON.stringify(requestHeader.extraHeaderPrefixes),
    'requestheader-group-headers': JSON.stringify(requestHeader.groupHeaders),
    'requestheader-username-headers': JSON.stringify(requestHeader.usernameHeaders),
  };
}

const CA_BUNDLE_KEYS = ['client-ca-file', 'requestheader-client-ca-file'];
const LIST_KEYS = ['requestheader-allowed-names', 'requestheader-extra-headers-prefix', 'requestheader-group-headers', 'requestheader-username-headers'];
/** A certificate this close past its end is still kept (kube's five minutes of slack). */
const EXPIRY_SLACK_MS = 5 * 60_000;

function jsonList(text: string | undefined, key: string): string[] {
  if (text === undefined || text === '') return [];
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed) || parsed.some((v) => typeof v !== 'string')) throw new Error(`extension-apiserver-authentication: ${key} is not a JSON list of strings`);
  return parsed as string[];
}

function certificatesOf(bundle: string | undefined, key: string): X509Certificate[] {
  if (bundle === undefined || bundle === '') return [];
  const blocks = bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error(`extension-apiserver-authentication: ${key} holds no certificate`);
  return blocks.map((block) => new X509Certificate(block));
}

/** PEM as Go's pem.Encode writes it: 64 columns, \n line ends. */
function goPem(certificate: X509Certificate): string {
  const lines = certificate.raw.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

/** combineCertLists: both bundles' unexpired certificates, each once, the existing ones first. */
function combinedBundle(existing: string | undefined, required: string | undefined, key: string, now: Date): string {
  const seen = new Set<string>();
  let out = '';
  for (const certificate of [...certificatesOf(existing, key), ...certificatesOf(required, key)]) {
    if (Date.parse(certificate.validTo) <= now.getTime() - EXPIRY_SLACK_MS) continue;
    const der = certificate.raw.toString('base64');
    if (seen.has(der)) continue;
    seen.add(der);
    out += goPem(certificate);
  }
  return out;
}

/**
 * What kube's ClusterAuthenticationTrust controller writes: the existing ConfigMap's data
 * combined with this server's (every CA of both bundles, unexpired, once; every list entry
 * once, the existing ones first), so that replicas with different CAs are all trusted. The
 * request-header keys are written only with a request-header CA.
 */
export function combinedAuthenticationData(existing: Record<string, string> | undefined, required: Record<string, string>, now: Date = new Date()): Record<string, string> {
  const data: Record<string, string> = {};
  const [clientCa, requestHeaderCa] = CA_BUNDLE_KEYS.map((key) => combinedBundle(existing?.[key], required[key], key, now));
  if (clientCa !== '') data['client-ca-file'] = clientCa;
  if (requestHeaderCa === '') return data;
  data['requestheader-client-ca-file'] = requestHeaderCa;
  for (const key of LIST_KEYS) data[key] = JSON.stringify([...new Set([...jsonList(existing?.[key], key), ...jsonList(required[key], key)])]);
  return data;
}

/** Writes kube-system/extension-apiserver-authentication: created, or combined with what it holds when that differs. */
export async function ensureAuthenticationConfigMap(registry: GenericRegistry, configMaps: ServedResource, required: Record<string, string>): Promise<void> {
  const name = 'extension-apiserver-authentication';
  let current: JsonObject | undefined;
  try {
    current = await registry.get(configMaps, 'kube-system', name, null);
  } catch (err) {
    if (!(isApiError(err) && err.code === 404)) throw err;
  }
  const data = combinedAuthenticationData(current?.data as Record<string, string> | undefined, required);
  if (current === undefined) {
    await registry.create(configMaps, 'kube-system', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'kube-system' }, data }, { dryRun: false, subresource: '' });
    return;
  }
  const held = (current.data ?? {}) as Record<string, string>;
  const same = Object.keys(held).length === Object.keys(data).length && Object.entries(data).every(([key, value]) => held[key] === value);
  if (same) return;
  await registry.update(configMaps, 'kube-system', name, { ...current, data }, { dryRun: false, subresource: '' });
}
