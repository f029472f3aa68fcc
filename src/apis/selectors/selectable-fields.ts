/**
 * Which field labels kube-apiserver v1.25 accepts per resource, and the field values objects
 * are matched against.
 *
 * Two separate Kubernetes tables meet here and do not fully agree:
 * - the field label conversions registered per served version (AddFieldLabelConversionFunc in
 *   pkg/apis/<group>/<version>/conversion.go) decide which labels a request may use; a
 *   version without one accepts only metadata.name and metadata.namespace
 *   (runtime.DefaultMetaV1FieldSelectorConversion);
 * - the registries' GetAttrs (pkg/registry/<group>/<resource>/strategy.go) decide the values.
 *   Some of those values can never be asked for (apps/v1 replicasets' status.replicas, the
 *   legacy "name" of namespaces and persistent volume(claim)s), and an accepted label the
 *   registry does not provide reads as "" and so matches only an empty value.
 */
import type { FieldLabelConversion, FieldSelector } from './field-selector';
import { goQuote } from './go-format';
import { SelectorParseError } from './selector-error';
import { isJsonObject } from '../object';

/**
 * The values the field selector of a list or watch is matched against, formatted as Go formats
 * them (booleans "true"/"false", counts in decimal, absent strings as ""). `object` is the
 * served JSON form; events in the events.k8s.io shape (`regarding`, `reportingController`) are
 * read as such and reported under the core names that converted selectors use.
 */
export function selectableFields(group: string, resource: string, object: Readonly<Record<string, unknown>>): Record<string, string> {
  const specific = SPECIFIC_FIELDS[`${group}/${resource}`];
  const namespaced = CLUSTER_SCOPED.has(`${group}/${resource}`) ? false : hasNamespace(object);
  return { ...(specific ? specific(object) : {}), ...metadataFields(object, namespaced) };
}

/**
 * Converts the field labels of a parsed selector as kube-apiserver does before listing or
 * watching `resource` in `group`/`version`, and returns the converted selector (for pods
 * `spec.host` becomes `spec.nodeName`, for events.k8s.io `regarding.kind` becomes
 * `involvedObject.kind`). Throws SelectorParseError, a 400 BadRequest, naming the first refused
 * label in the selector's sorted order. `conversion` replaces the table's, for resources it
 * does not know (custom resources).
 */
export function validateFieldSelector(group: string, version: string, resource: string, selector: FieldSelector, conversion?: FieldLabelConversion): FieldSelector {
  return selector.transform(conversion ?? FIELD_LABEL_CONVERSIONS[`${group}/${version}/${resource}`] ?? defaultMetadataConversion);
}

/**
 * The field labels of a custom resource (apiextensions-apiserver's crConverter.ConvertFieldLabel
 * in v1.25): metadata.name, and metadata.namespace when the resource is namespaced; anything
 * else is refused with `field label not supported: <label>`.
 */
export function customResourceFieldLabelConversion(namespaced: boolean): FieldLabelConversion {
  return acceptOnly(namespaced ? ['metadata.name', 'metadata.namespace'] : ['metadata.name'], notSupported);
}

// ---------------------------------------------------------------------------------------------
// Accepted field labels, per served group/version/resource.

function acceptOnly(labels: readonly string[], refuse: (label: string) => string, aliases: Readonly<Record<string, string>> = {}): FieldLabelConversion {
  const accepted = new Set(labels);
  return (label, value) => {
    const renamed = Object.prototype.hasOwnProperty.call(aliases, label) ? aliases[label] : undefined;
    if (renamed !== undefined) return [renamed, value];
    if (accepted.has(label)) return [label, value];
    throw new SelectorParseError(refuse(label));
  };
}

const notSupported = (label: string): string => `field label not supported: ${label}`;

const defaultMetadataConversion = acceptOnly(
  ['metadata.name', 'metadata.namespace'],
  (label) => `${goQuote(label)} is not a known field selector: only "metadata.name", "metadata.namespace"`,
);

const FIELD_LABEL_CONVERSIONS: Readonly<Record<string, FieldLabelConversion | undefined>> = {
  '/v1/pods': acceptOnly(
    [
      'metadata.name',
      'metadata.namespace',
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ],
    notSupported,
    // Old v1 clients still send spec.host.
    { 'spec.host': 'spec.nodeName' },
  ),
  '/v1/nodes': acceptOnly(['metadata.name', 'spec.unschedulable'], notSupported),
  '/v1/replicationcontrollers': acceptOnly(['metadata.name', 'metadata.namespace', 'status.replicas'], notSupported),
  '/v1/events': acceptOnly(
    [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
      'metadata.namespace',
      'metadata.name',
    ],
    notSupported,
  ),
  '/v1/namespaces': acceptOnly(['status.phase', 'metadata.name'], notSupported),
  '/v1/secrets': acceptOnly(['type', 'metadata.namespace', 'metadata.name'], notSupported),
  'batch/v1/jobs': acceptOnly(
    ['metadata.name', 'metadata.namespace', 'status.successful'],
    (label) => `field label ${goQuote(label)} not supported for batchv1.Job`,
  ),
  'certificates.k8s.io/v1/certificatesigningrequests': acceptOnly(['metadata.name', 'spec.signerName'], notSupported),
  // events.k8s.io names map onto the core fields the event registry selects on.
  'events.k8s.io/v1/events': acceptOnly([], notSupported, {
    reason: 'reason',
    'regarding.kind': 'involvedObject.kind',
    'regarding.namespace': 'involvedObject.namespace',
    'regarding.name': 'involvedObject.name',
    'regarding.uid': 'involvedObject.uid',
    'regarding.apiVersion': 'involvedObject.apiVersion',
    'regarding.resourceVersion': 'involvedObject.resourceVersion',
    'regarding.fieldPath': 'involvedObject.fieldPath',
    reportingController: 'reportingComponent',
    source: 'source',
    type: 'type',
    'metadata.namespace': 'metadata.namespace',
    'metadata.name': 'metadata.name',
  }),
};

// ---------------------------------------------------------------------------------------------
// Field values, per group/resource.

type FieldsOf = (object: Readonly<Record<string, unknown>>) => Record<string, string>;

const CLUSTER_SCOPED: ReadonlySet<string> = new Set([
  '/nodes',
  '/namespaces',
  '/persistentvolumes',
  'certificates.k8s.io/certificatesigningrequests',
]);

const eventFields: FieldsOf = (event) => {
  const eventsShape = isEventsGroupShape(event);
  const involved = eventsShape ? child(event, 'regarding') : child(event, 'involvedObject');
  const reportingController = text(event, eventsShape ? 'reportingController' : 'reportingComponent');
  const component = text(child(event, eventsShape ? 'deprecatedSource' : 'source'), 'component');
  return {
    'involvedObject.kind': text(involved, 'kind'),
    'involvedObject.namespace': text(involved, 'namespace'),
    'involvedObject.name': text(involved, 'name'),
    'involvedObject.uid': text(involved, 'uid'),
    'involvedObject.apiVersion': text(involved, 'apiVersion'),
    'involvedObject.resourceVersion': text(involved, 'resourceVersion'),
    'involvedObject.fieldPath': text(involved, 'fieldPath'),
    reason: text(event, 'reason'),
    reportingComponent: reportingController,
    // Events written through events.k8s.io carry no source; the registry falls back to the controller.
    source: component !== '' ? component : reportingController,
    type: text(event, 'type'),
  };
};

const SPECIFIC_FIELDS: Readonly<Record<string, FieldsOf | undefined>> = {
  '/pods': (pod) => {
    const spec = child(pod, 'spec');
    const status = child(pod, 'status');
    return {
      'spec.nodeName': text(spec, 'nodeName'),
      'spec.restartPolicy': text(spec, 'restartPolicy'),
      'spec.schedulerName': text(spec, 'schedulerName'),
      'spec.serviceAccountName': text(spec, 'serviceAccountName'),
      'status.phase': text(status, 'phase'),
      'status.podIP': primaryPodIp(status),
      'status.nominatedNodeName': text(status, 'nominatedNodeName'),
    };
  },
  '/nodes': (node) => ({ 'spec.unschedulable': String(child(node, 'spec')['unschedulable'] === true) }),
  '/replicationcontrollers': (controller) => ({ 'status.replicas': count(child(controller, 'status'), 'replicas') }),
  '/events': eventFields,
  'events.k8s.io/events': eventFields,
  '/namespaces': (namespace) => ({
    'status.phase': text(child(namespace, 'status'), 'phase'),
    name: text(child(namespace, 'metadata'), 'name'),
  }),
  '/secrets': (secret) => ({ type: text(secret, 'type') }),
  '/persistentvolumes': (volume) => ({ name: text(child(volume, 'metadata'), 'name') }),
  '/persistentvolumeclaims': (claim) => ({ name: text(child(claim, 'metadata'), 'name') }),
  'apps/replicasets': (replicaSet) => ({ 'status.replicas': count(child(replicaSet, 'status'), 'replicas') }),
  'batch/jobs': (job) => ({ 'status.successful': count(child(job, 'status'), 'succeeded') }),
  'certificates.k8s.io/certificatesigningrequests': (request) => ({
    'spec.signerName': text(child(request, 'spec'), 'signerName'),
  }),
};

function metadataFields(object: Readonly<Record<string, unknown>>, namespaced: boolean): Record<string, string> {
  const metadata = child(object, 'metadata');
  const fields: Record<string, string> = { 'metadata.name': text(metadata, 'name') };
  if (namespaced) fields['metadata.namespace'] = text(metadata, 'namespace');
  return fields;
}

function hasNamespace(object: Readonly<Record<string, unknown>>): boolean {
  return text(child(object, 'metadata'), 'namespace') !== '';
}

// The v1 → internal conversion fills podIPs from podIP when only podIP is set; the registry
// then reads the first of podIPs.
function primaryPodIp(status: Readonly<Record<string, unknown>>): string {
  const podIps = status['podIPs'];
  if (Array.isArray(podIps) && podIps.length > 0) {
    const first: unknown = podIps[0];
    return isJsonObject(first) ? text(first, 'ip') : '';
  }
  return text(status, 'podIP');
}

function isEventsGroupShape(event: Readonly<Record<string, unknown>>): boolean {
  const apiVersion = text(event, 'apiVersion');
  if (apiVersion.startsWith('events.k8s.io/')) return true;
  if (apiVersion !== '') return false;
  return 'regarding' in event || 'reportingController' in event || 'deprecatedSource' in event;
}

function child(object: Readonly<Record<string, unknown>>, key: string): Readonly<Record<string, unknown>> {
  const value = object[key];
  return isJsonObject(value) ? value : {};
}

function text(object: Readonly<Record<string, unknown>>, key: string): string {
  const value = object[key];
  return typeof value === 'string' ? value : '';
}

/** An int32 count as strconv.Itoa prints it; absent means zero. */
function count(object: Readonly<Record<string, unknown>>, key: string): string {
  const value = object[key];
  return typeof value === 'number' && Number.isFinite(value) ? String(Math.trunc(value)) : '0';
}

