/**
 * Server-side printing: the meta.k8s.io Table kube-apiserver v1.25 answers
 * `Accept: application/json;as=Table;g=meta.k8s.io;v=v1` with. Built-in kinds get the columns of
 * kubernetes pkg/printers/internalversion (rendered wide, as the apiserver's TableConvertor always
 * asks for); every other kind gets the default table of apiserver pkg/registry/rest (Name, Created At).
 * Row objects follow apiserver pkg/endpoints/handlers/response.go asTable.
 */
import { horizontalPodAutoscalerPrinter } from './autoscaling-printers';
import { cronJobPrinter, jobPrinter } from './batch-printers';
import { daemonSetPrinter, deploymentPrinter, replicaSetPrinter, statefulSetPrinter } from './apps-printers';
import {
  clusterRoleBindingPrinter,
  ingressClassPrinter,
  ingressPrinter,
  leasePrinter,
  roleBindingPrinter,
  storageClassPrinter,
} from './cluster-printers';
import {
  apiServicePrinter,
  certificateSigningRequestPrinter,
  flowSchemaPrinter,
  priorityLevelConfigurationPrinter,
  storageVersionPrinter,
  webhookConfigurationPrinter,
} from './control-plane-printers';
import {
  configMapPrinter,
  endpointsPrinter,
  eventPrinter,
  namespacePrinter,
  nodePrinter,
  persistentVolumeClaimPrinter,
  persistentVolumePrinter,
  podPrinter,
  replicationControllerPrinter,
  secretPrinter,
  serviceAccountPrinter,
  servicePrinter,
} from './core-printers';
import {
  componentStatusPrinter,
  controllerRevisionPrinter,
  endpointSlicePrinter,
  networkPolicyPrinter,
  podDisruptionBudgetPrinter,
  podTemplatePrinter,
  priorityClassPrinter,
  resourceQuotaPrinter,
  runtimeClassPrinter,
} from './namespaced-printers';
import {
  CREATION_TIMESTAMP_DESCRIPTION,
  NAME_COLUMN,
  asString,
  column,
  parseTime,
  type KindPrinter,
  type TableCell,
  type TableColumnDefinition,
  type TableRowCondition,
} from './printer-support';
import { csiDriverPrinter, csiNodePrinter, csiStorageCapacityPrinter, volumeAttachmentPrinter } from './storage-printers';
import { type JsonObject, metadataOf, nameOf } from '../object';

export type TableApiVersion = 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1';

export interface TableOptions {
  /** metav1.TableOptions includeObject; kube treats an empty value as Metadata. */
  includeObject: 'None' | 'Object' | 'Metadata';
  /** Milliseconds since the epoch that ages are measured against. */
  now: number;
  /** metav1.TableOptions noHeaders: the column definitions are left out (serialized as null). */
  noHeaders?: boolean;
}

export interface ToTableOptions extends TableOptions {
  tableApiVersion?: TableApiVersion;
  /** The kind being listed, needed when the list is empty or its items do not carry apiVersion/kind. */
  objectKind?: { apiVersion: string; kind: string };
}

/** The printers kube registers in AddHandlers, keyed by "group/Kind" (the core group is ""). */
const PRINTERS: ReadonlyMap<string, KindPrinter> = new Map<string, KindPrinter>([
  ['/Pod', podPrinter],
  ['/Service', servicePrinter],
  ['/Node', nodePrinter],
  ['/Namespace', namespacePrinter],
  ['/ConfigMap', configMapPrinter],
  ['/Secret', secretPrinter],
  ['/ServiceAccount', serviceAccountPrinter],
  ['/Endpoints', endpointsPrinter],
  ['/Event', eventPrinter],
  ['/PersistentVolume', persistentVolumePrinter],
  ['/PersistentVolumeClaim', persistentVolumeClaimPrinter],
  ['/ReplicationController', replicationControllerPrinter],
  // events.k8s.io shares the core Event storage and therefore its printer.
  ['events.k8s.io/Event', eventPrinter],
  ['apps/Deployment', deploymentPrinter],
  ['apps/ReplicaSet', replicaSetPrinter],
  ['apps/StatefulSet', statefulSetPrinter],
  ['apps/DaemonSet', daemonSetPrinter],
  ['batch/Job', jobPrinter],
  ['batch/CronJob', cronJobPrinter],
  ['networking.k8s.io/Ingress', ingressPrinter],
  ['networking.k8s.io/IngressClass', ingressClassPrinter],
  ['rbac.authorization.k8s.io/RoleBinding', roleBindingPrinter],
  ['rbac.authorization.k8s.io/ClusterRoleBinding', clusterRoleBindingPrinter],
  ['storage.k8s.io/StorageClass', storageClassPrinter],
  ['coordination.k8s.io/Lease', leasePrinter],
  ['/PodTemplate', podTemplatePrinter],
  ['/ResourceQuota', resourceQuotaPrinter],
  ['/ComponentStatus', componentStatusPrinter],
  ['apps/ControllerRevision', controllerRevisionPrinter],
  ['autoscaling/HorizontalPodAutoscaler', horizontalPodAutoscalerPrinter],
  ['policy/PodDisruptionBudget', podDisruptionBudgetPrinter],
  ['networking.k8s.io/NetworkPolicy', networkPolicyPrinter],
  ['discovery.k8s.io/EndpointSlice', endpointSlicePrinter],
  ['scheduling.k8s.io/PriorityClass', priorityClassPrinter],
  ['node.k8s.io/RuntimeClass', runtimeClassPrinter],
  ['certificates.k8s.io/CertificateSigningRequest', certificateSigningRequestPrinter],
  ['admissionregistration.k8s.io/ValidatingWebhookConfiguration', webhookConfigurationPrinter],
  ['admissionregistration.k8s.io/MutatingWebhookConfiguration', webhookConfigurationPrinter],
  ['flowcontrol.apiserver.k8s.io/FlowSchema', flowSchemaPrinter],
  ['flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration', priorityLevelConfigurationPrinter],
  ['storage.k8s.io/CSIDriver', csiDriverPrinter],
  ['storage.k8s.io/CSINode', csiNodePrinter],
  ['storage.k8s.io/CSIStorageCapacity', csiStorageCapacityPrinter],
  ['storage.k8s.io/VolumeAttachment', volumeAttachmentPrinter],
  ['internal.apiserver.k8s.io/StorageVersion', storageVersionPrinter],
  ['apiregistration.k8s.io/APIService', apiServicePrinter],
]);

/** The default convertor's columns: the object's name and its creation time as a date. */
const DEFAULT_COLUMNS: readonly TableColumnDefinition[] = [NAME_COLUMN, column('Created At', 'date', CREATION_TIMESTAMP_DESCRIPTION)];

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

function printerFor(apiVersion: string, kind: string): KindPrinter | undefined {
  const itemKind = kind.endsWith('List') ? kind.slice(0, -'List'.length) : kind;
  return PRINTERS.get(`${groupOf(apiVersion)}/${itemKind}`) ?? PRINTERS.get(`${groupOf(apiVersion)}/${kind}`);
}

/** True when kube prints this kind with its own columns rather than the default Name/Created At table. */
export function hasCustomColumns(apiVersion: string, kind: string): boolean {
  return printerFor(apiVersion, kind) !== undefined;
}

/**
 * The Table for `objects` (a list's items, or a single object) in the shape kube-apiserver
 * serializes: kind, apiVersion, metadata (resourceVersion/continue/remainingItemCount copied from
 * listMeta), columnDefinitions and rows, each row with cells and the object per includeObject.
 */
export function toTable(objects: readonly JsonObject[], listMeta: JsonObject, options: ToTableOptions): JsonObject {
  const tableApiVersion = options.tableApiVersion ?? 'meta.k8s.io/v1';
  const first = objects[0];
  const apiVersion = options.objectKind?.apiVersion ?? asString(first?.['apiVersion']);
  const kind = options.objectKind?.kind ?? asString(first?.['kind']);
  const printer = printerFor(apiVersion, kind);
  const context = { now: options.now };
  // Rows and their objects follow the printer's order where its list printer sorts.
  const ordered = printer?.order?.(objects) ?? objects;

  let columns: readonly TableColumnDefinition[];
  let printed: Array<{ cells: TableCell[]; conditions?: TableRowCondition[] }> | null;
  if (printer !== undefined) {
    columns = printer.columns;
    printed = ordered.map((object) => printer.printRow(object, context));
  } else {
    columns = DEFAULT_COLUMNS;
    // The default convertor appends to a nil slice, so an empty list has rows: null.
    printed = ordered.length === 0 ? null : ordered.map((object) => ({ cells: [nameOf(object), createdAt(object)] }));
  }

  const rows =
    printed === null
      ? null
      : printed.map((row, index) => {
          const out: JsonObject = { cells: row.cells };
          if (row.conditions !== undefined) out['conditions'] = row.conditions.map((condition) => ({ ...condition }));
          out['object'] = rowObject(ordered[index] ?? {}, options.includeObject, tableApiVersion);
          return out;
        });

  return {
    kind: 'Table',
    apiVersion: tableApiVersion,
    metadata: tableListMeta(listMeta),
    columnDefinitions: options.noHeaders === true ? null : columns.map((definition) => ({ ...definition })),
    rows,
  };
}

/** The object beside each row: the full object, its PartialObjectMetadata, or null for None. */
function rowObject(object: JsonObject, includeObject: TableOptions['includeObject'], tableApiVersion: TableApiVersion): unknown {
  switch (includeObject) {
    case 'Object':
      return object;
    case 'None':
      // RawExtension without an object marshals as null; omitempty does not drop a struct.
      return null;
    default:
      return { kind: 'PartialObjectMetadata', apiVersion: tableApiVersion, metadata: metadataOf(object) };
  }
}

/** metav1.ListMeta with its omitempty fields: only what the list carried. */
function tableListMeta(listMeta: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of ['resourceVersion', 'continue'] as const) {
    const value = listMeta[key];
    if (typeof value === 'string' && value !== '') out[key] = value;
  }
  const remaining = listMeta['remainingItemCount'];
  if (typeof remaining === 'number') out['remainingItemCount'] = remaining;
  return out;
}

/** creationTimestamp.UTC().Format(time.RFC3339); a missing time is Go's zero time. */
function createdAt(object: JsonObject): string {
  const time = parseTime(metadataOf(object)['creationTimestamp']);
  if (time === undefined) return '0001-01-01T00:00:00Z';
  return new Date(time).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
