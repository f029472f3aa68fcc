/**
 * What every built-in printer shares: the Table shapes, tolerant readers for decoded JSON, the
 * Name/Age columns and the formatting helpers of kubernetes pkg/printers/internalversion (v1.25).
 */
import { labelSelectorFromObject, type LabelSelectorObject } from '../selectors';
import { humanDuration } from './human-duration';
import { type JsonObject, metadataOf, objectOrEmpty } from '../object';

/** metav1.TableColumnDefinition: every field is serialized, even when empty. */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export type TableCell = string | number | boolean;

/** metav1.TableRowCondition; only pods in a terminal phase carry one. */
export interface TableRowCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface PrintedRow {
  cells: TableCell[];
  conditions?: TableRowCondition[];
}

export interface PrintContext {
  /** Milliseconds since the epoch that ages are measured against. */
  now: number;
}

/** The column definitions and row function kube registers with TableHandler for one kind. */
export interface KindPrinter {
  columns: readonly TableColumnDefinition[];
  printRow(object: JsonObject, context: PrintContext): PrintedRow;
  /** The order rows appear in, for the few kinds whose list printer sorts (FlowSchema). */
  order?(objects: readonly JsonObject[]): JsonObject[];
}

export function column(name: string, type: string, description: string, options: { format?: string; priority?: number } = {}): TableColumnDefinition {
  return { name, type, format: options.format ?? '', description: description.trimEnd(), priority: options.priority ?? 0 };
}

export function wideColumn(name: string, type: string, description: string): TableColumnDefinition {
  return column(name, type, description, { priority: 1 });
}

// metav1.ObjectMeta{}.SwaggerDoc()["name"] and ["creationTimestamp"] as of v1.25.
export const OBJECT_NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names';
export const CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

export const NAME_COLUMN = column('Name', 'string', OBJECT_NAME_DESCRIPTION, { format: 'name' });
export const AGE_COLUMN = column('Age', 'string', CREATION_TIMESTAMP_DESCRIPTION);
export const CONTAINERS_COLUMN = wideColumn('Containers', 'string', 'Names of each container in the template.');
export const IMAGES_COLUMN = wideColumn('Images', 'string', 'Images referenced by each container in the template.');

// ---- tolerant readers: decoded JSON may lack any field, exactly as Go zero values do ----

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

export function asNumber(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** Follows a path of object keys; anything missing on the way reads as undefined. */
export function at(object: unknown, ...path: string[]): unknown {
  let current: unknown = object;
  for (const key of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    current = (current as JsonObject)[key];
  }
  return current;
}

export function countKeys(value: unknown): number {
  return Object.keys(objectOrEmpty(value)).length;
}

// ---- time ----

/** Milliseconds since the epoch, or undefined for a missing (zero) metav1.Time. */
export function parseTime(value: unknown): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

/** translateTimestampSince: "<unknown>" for a zero time, else HumanDuration(now - t). */
export function ageSince(value: unknown, context: PrintContext): string {
  const time = parseTime(value);
  return time === undefined ? '<unknown>' : humanDuration(context.now - time);
}

export function ageOf(object: JsonObject, context: PrintContext): string {
  return ageSince(metadataOf(object)['creationTimestamp'], context);
}

// ---- formatting helpers of pkg/printers/internalversion ----

/** layoutContainerCells: comma-joined container names and images. */
export function containerCells(containers: unknown): [names: string, images: string] {
  const list = asArray(containers).map(objectOrEmpty);
  return [list.map((c) => asString(c['name'])).join(','), list.map((c) => asString(c['image'])).join(',')];
}

/** labels.FormatLabels: "k=v" sorted by key, "<none>" when empty. */
export function formatLabels(labels: unknown): string {
  const set = objectOrEmpty(labels);
  const text = Object.keys(set)
    .sort(compareBytes)
    .map((key) => `${key}=${asString(set[key])}`)
    .join(',');
  return text === '' ? '<none>' : text;
}

/** LabelSelectorAsSelector(...).String(): a missing selector selects nothing and prints as "". */
export function labelSelectorText(selector: unknown): string {
  const value = selector === null || selector === undefined ? undefined : (objectOrEmpty(selector) as LabelSelectorObject);
  return labelSelectorFromObject(value).toString();
}

/** metav1.FormatLabelSelector: like labelSelectorText, but "<none>" when empty and "<error>" when invalid. */
export function formatLabelSelector(selector: unknown): string {
  let text: string;
  try {
    text = labelSelectorText(selector);
  } catch {
    return '<error>';
  }
  return text === '' ? '<none>' : text;
}

/** printBoolPtr: "True"/"False", "<unset>" for nil. */
export function formatOptionalBool(value: unknown): string {
  if (typeof value !== 'boolean') return '<unset>';
  return value ? 'True' : 'False';
}

/** Go compares strings byte-wise; for the ASCII of keys and names code units agree. */
export function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** sets.NewString(...).List(): de-duplicated and sorted. */
export function sortedUnique(values: readonly string[]): string[] {
  return [...new Set(values)].sort(compareBytes);
}
