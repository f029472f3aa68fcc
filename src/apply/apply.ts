/**
 * Server-side apply and field ownership, pure: given the live object and a write, compute the new
 * object and its `metadata.managedFields` as kube-apiserver v1.25 does.
 *
 * The layering follows k8s.io/apiserver pkg/endpoints/handlers/fieldmanager (v1.25), outermost
 * first: the kubectl last-applied annotation sync and client-side -> server-side upgrade, the
 * "before-first-apply" owner for objects without managed fields, the cap of ten Update entries,
 * the timestamping of changed managers, the stripping of identity fields (name, uid, ...) from the
 * sets, and the structured merge itself (sigs.k8s.io/structured-merge-diff v4 merge.Updater).
 */
import { ApiError, errors } from '../util';
import { FieldSet, fieldElement, goJson, goQuote, pathToString, type FieldPath } from './field-set';
import {
  decodeManagedFields, encodeManagedFields, isManagedFieldsReset, managerKey, ManagedFieldsDecodeError,
  type ManagedFieldSets, type ManagedFieldsOperation, type ManagerFields, type ManagerIdentity,
} from './managed-fields';
import { topologyForKind, type TopologyNode } from './schema-topology';
import { compareValues, type Comparison, fieldSetOf, isSameComparison, mergeValues, pruneValue, reconcileFieldSet } from './structured-value';
import { deepCopy, ensureMetadata, isJsonObject, metadataOf, type JsonObject } from '../apis/object';

/** One field another manager owns and the apply would change. */
export interface ApplyConflict {
  readonly manager: string;
  readonly operation: ManagedFieldsOperation;
  readonly apiVersion: string;
  readonly subresource: string;
  /** The field path as Kubernetes prints it, e.g. `.spec.replicas`. */
  readonly field: string;
}

/** An apply refused for conflicts; its message is kube-apiserver's. See applyConflictStatus. */
export class ApplyConflictError extends Error {
  override name = 'ApplyConflictError';
  constructor(readonly conflicts: ApplyConflict[]) {
    super(applyConflictMessage(conflicts));
  }

  toApiError(): ApiError {
    return applyConflictStatus(this.conflicts);
  }
}

/**
 * Converts an object to another apiVersion of its kind, for managers whose fields were recorded in
 * that version; undefined when the version is no longer served, and such managers are dropped, as
 * Kubernetes drops them. Without a converter every version is read as the written one.
 */
export type ManagedFieldsConverter = (object: JsonObject, apiVersion: string) => JsonObject | undefined;

/** What both kinds of write may add to the kind's built-in view of the object. */
interface SchemaOptions {
  readonly convert?: ManagedFieldsConverter;
  /** The topology of each apiVersion, for kinds whose schema is not built in (custom resources); default: the built-in one. */
  readonly topologyOf?: (apiVersion: string, kind: string) => TopologyNode;
}

export interface ApplyOptions extends SchemaOptions {
  readonly force: boolean;
  /** RFC 3339 time recorded in the entries this write touches. */
  readonly now: string;
  readonly subresource?: string;
  /**
   * Fields the endpoint resets whatever the write says (the strategy's reset fields, e.g. `status`
   * on a main resource, everything but `status` on /status): never owned nor conflicting.
   */
  readonly ignoredFields?: readonly FieldPath[];
}

export interface UpdateOptions extends SchemaOptions {
  readonly now: string;
  readonly subresource?: string;
  /** As ApplyOptions.ignoredFields. */
  readonly ignoredFields?: readonly FieldPath[];
}

/** Managers Kubernetes names itself (fieldmanager.go, capmanagers.go). */
const BEFORE_FIRST_APPLY = 'before-first-apply';
const ANCIENT_CHANGES = 'ancient-changes';
const MAX_UPDATE_MANAGERS = 10;
/** The manager kubectl uses for server-side apply, whose conflicts with its client-side past are forgiven. */
const KUBECTL_MANAGER = 'kubectl';
const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** apimachinery ValidateAnnotationsSize: 256 KiB over all keys and values. */
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;
/** apimachinery validation.FieldManagerMaxLength. */
const FIELD_MANAGER_MAX_LENGTH = 128;

/** Fields never tracked (stripmeta.go): identity and bookkeeping of the object itself. */
const STRIPPED_FIELDS = FieldSet.of([
  ['apiVersion'], ['kind'], ['metadata'], ['metadata', 'name'], ['metadata', 'namespace'], ['metadata', 'creationTimestamp'],
  ['metadata', 'selfLink'], ['metadata', 'uid'], ['metadata', 'clusterName'], ['metadata', 'generation'],
  ['metadata', 'managedFields'], ['metadata', 'resourceVersion'],
].map((names) => names.map(fieldElement)));

/** How conflict messages name a manager (conflict.go printManager). */
export function describeManager(manager: Pick<ApplyConflict, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  let text = goQuote(manager.manager);
  if (manager.subresource !== '') text = `${text} with subresource ${goQuote(manager.subresource)}`;
  // The identity carries no time, so Update managers are never printed "at <time>".
  if (manager.operation === 'Update') text = `${text} using ${manager.apiVersion}`;
  return text;
}

function identityKey(conflict: ApplyConflict): string {
  return managerKey(conflict);
}

/** The message of the 409 for apply conflicts, exactly as kube-apiserver v1.25 words it. */
export function applyConflictMessage(conflicts: readonly ApplyConflict[]): string {
  if (conflicts.length === 1) {
    const only = conflicts[0] as ApplyConflict;
    return `Apply failed with 1 conflict: conflict with ${describeManager(only)}: ${only.field}`;
  }
  const byManager = new Map<string, ApplyConflict[]>();
  for (const conflict of conflicts) {
    const key = identityKey(conflict);
    byManager.set(key, [...(byManager.get(key) ?? []), conflict]);
  }
  const lines: string[] = [];
  for (const key of [...byManager.keys()].sort()) {
    const group = byManager.get(key) as ApplyConflict[];
    lines.push(`conflicts with ${describeManager(group[0] as ApplyConflict)}:`);
    for (const conflict of group) lines.push(`- ${conflict.field}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/** The 409 Conflict Status for apply conflicts (apimachinery errors.NewApplyConflict). */
export function applyConflictStatus(conflicts: readonly ApplyConflict[]): ApiError {
  const causes = conflicts.map((conflict) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${describeManager(conflict)}`,
    field: conflict.field,
  }));
  return new ApiError(409, 'Conflict', applyConflictMessage(conflicts), { causes });
}

/**
 * The manager name of a write without `fieldManager`: the User-Agent up to its first '/', without
 * unprintable characters, cut to 128 bytes (handlers/rest.go prefixFromUserAgent). kubectl names
 * its writes itself (kubectl-client-side-apply, kubectl-edit, ...), so this mostly names other clients.
 */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const prefix = (userAgent ?? '').split('/')[0] as string;
  let out = '';
  let bytes = 0;
  for (const char of prefix) {
    if (!/^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(char)) continue;
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > FIELD_MANAGER_MAX_LENGTH) break;
    out += char;
    bytes += size;
  }
  return out;
}

/** A deep copy without metadata.managedFields. */
function withoutManagedFields(object: JsonObject): JsonObject {
  const copy = deepCopy(object);
  delete metadataOf(copy).managedFields;
  return copy;
}

function withManagedFields(object: JsonObject, managers: ManagedFieldSets): JsonObject {
  const encoded = encodeManagedFields(managers);
  if (encoded === undefined) return object;
  ensureMetadata(object).managedFields = encoded;
  return object;
}

function cloneManagers(managers: ManagedFieldSets): ManagedFieldSets {
  return new Map([...managers].map(([key, value]) => [key, { ...value }]));
}

function setFields(managers: ManagedFieldSets, key: string, fields: FieldSet): void {
  const current = managers.get(key);
  if (current === undefined) return;
  if (fields.isEmpty()) managers.delete(key);
  else managers.set(key, { ...current, fields });
}

function stripMeta(managers: ManagedFieldSets): void {
  for (const [key, entry] of [...managers]) setFields(managers, key, entry.fields.difference(STRIPPED_FIELDS));
}

/** Conflicts of one write, per manager key: the owned fields it would change. */
type ConflictSets = Map<string, FieldSet>;

class ConflictsFound extends Error {
  constructor(readonly sets: ConflictSets, readonly managers: ManagedFieldSets) {
    super('apply conflicts');
  }

  toConflicts(allowed?: FieldSet): ApplyConflict[] {
    const out: ApplyConflict[] = [];
    for (const key of [...this.sets.keys()].sort()) {
      const manager = this.managers.get(key) as ManagerFields;
      for (const path of (this.sets.get(key) as FieldSet).paths()) {
        if (allowed?.has(path) === true) continue;
        out.push({ manager: manager.manager, operation: manager.operation, apiVersion: manager.apiVersion, subresource: manager.subresource, field: pathToString(path) });
      }
    }
    return out;
  }

  allPaths(): FieldSet {
    let all = FieldSet.empty();
    for (const set of this.sets.values()) all = all.union(set);
    return all;
  }
}

/**
 * merge.Updater.update: other managers lose what the write changes (when forced) and what it
 * removes; without force, owned fields that would change are conflicts. Each manager's fields
 * are compared in the apiVersion it recorded them in; managers of versions no longer served go.
 */
function settleOwnership(engine: Engine, managers: ManagedFieldSets, writerKey: string | undefined, before: unknown, after: unknown, force: boolean): Comparison {
  const current = changesBetween(engine, engine.apiVersion, before, after);
  const byVersion = new Map<string, Comparison | undefined>([[engine.apiVersion, current]]);
  const conflicts: ConflictSets = new Map();
  const settled: Array<[string, Comparison]> = [];
  for (const [key, entry] of [...managers]) {
    if (key === writerKey) continue;
    if (!byVersion.has(entry.apiVersion)) {
      const beforeThere = viewAt(engine, before, entry.apiVersion);
      const afterThere = viewAt(engine, after, entry.apiVersion);
      byVersion.set(entry.apiVersion, beforeThere === undefined || afterThere === undefined ? undefined : changesBetween(engine, entry.apiVersion, beforeThere, afterThere));
    }
    const comparison = byVersion.get(entry.apiVersion);
    if (comparison === undefined) {
      managers.delete(key);
      continue;
    }
    settled.push([key, comparison]);
    const conflict = entry.fields.intersection(comparison.modified.union(comparison.added));
    if (!conflict.isEmpty()) conflicts.set(key, conflict);
  }
  if (!force && conflicts.size > 0) throw new ConflictsFound(conflicts, managers);
  for (const [key, comparison] of settled) {
    const entry = managers.get(key) as ManagerFields;
    setFields(managers, key, entry.fields.difference(comparison.modified.union(comparison.added)).difference(comparison.removed));
  }
  for (const [key, entry] of [...managers]) if (entry.fields.isEmpty()) managers.delete(key);
  return current;
}

/** `object` (of the engine's apiVersion, or its zero value) as `apiVersion` sees it; undefined when that version is gone. */
function viewAt(engine: Engine, object: unknown, apiVersion: string): unknown {
  if (apiVersion === engine.apiVersion || engine.convert === undefined) return object;
  if (!isJsonObject(object) || typeof object.apiVersion !== 'string') {
    // The zero value a create is compared against: the other version's own zero value, if it is served.
    return engine.convert({ apiVersion: engine.apiVersion, kind: engine.kind }, apiVersion) === undefined ? undefined : engine.topologyAt(apiVersion).zeroValue();
  }
  return engine.convert(object, apiVersion);
}

/**
 * Managers' sets brought in line with the schema of their version (Updater's
 * reconcileManagedFieldsWithSchemaChanges): a part of a structure that has since become atomic
 * makes its owner own the whole.
 */
function reconcileWithSchema(engine: Engine, live: JsonObject | undefined, managers: ManagedFieldSets): void {
  if (live === undefined) return;
  for (const [key, entry] of [...managers]) {
    const liveThere = viewAt(engine, live, entry.apiVersion);
    if (liveThere === undefined) continue;
    const reconciled = reconcileFieldSet(entry.fields, liveThere, engine.topologyAt(entry.apiVersion));
    if (reconciled !== undefined) managers.set(key, { ...entry, fields: reconciled });
  }
}

interface Engine {
  readonly topology: TopologyNode;
  readonly apiVersion: string;
  readonly kind: string;
  readonly convert: ManagedFieldsConverter | undefined;
  topologyAt(apiVersion: string): TopologyNode;
  readonly now: string;
  readonly ignored: FieldSet;
  /** What a new object is compared against: the zero value Go would make for the kind. */
  readonly zero: unknown;
}

function engineFor(object: JsonObject, now: string, ignoredFields: readonly FieldPath[] = [], schema: SchemaOptions = {}): Engine {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const topologyOf = schema.topologyOf ?? topologyForKind;
  const topology = topologyOf(apiVersion, kind);
  const topologies = new Map<string, TopologyNode>([[apiVersion, topology]]);
  const topologyAt = (version: string): TopologyNode => {
    let found = topologies.get(version);
    if (found === undefined) {
      found = topologyOf(version, kind);
      topologies.set(version, found);
    }
    return found;
  };
  return { topology, apiVersion, kind, convert: schema.convert, topologyAt, now, ignored: FieldSet.of(ignoredFields), zero: topology.zeroValue() };
}

/** Compares two versions of an object as `apiVersion` sees them, leaving out the ignored fields (Comparison.ExcludeFields). */
function changesBetween(engine: Engine, apiVersion: string, before: unknown, after: unknown): Comparison {
  const comparison = compareValues(before, after, engine.topologyAt(apiVersion));
  if (engine.ignored.isEmpty()) return comparison;
  return {
    modified: comparison.modified.recursiveDifference(engine.ignored),
    added: comparison.added.recursiveDifference(engine.ignored),
    removed: comparison.removed.recursiveDifference(engine.ignored),
  };
}

/** A non-apply write by `identity` from `before` to `after` (managedFieldsUpdater + Updater.Update). */
function recordUpdate(engine: Engine, before: unknown, after: JsonObject, managers: ManagedFieldSets, identity: ManagerIdentity): void {
  const comparison = settleOwnership(engine, managers, undefined, before, after, true);
  const changed = comparison.modified.union(comparison.added);
  const own = changed.difference(STRIPPED_FIELDS);
  stripMeta(managers);
  // Only a write that took fields stamps its manager; a no-op update leaves the entry alone.
  if (own.isEmpty()) return;
  const key = managerKey(identity);
  const previous = managers.get(key);
  managers.set(key, {
    ...identity,
    apiVersion: engine.apiVersion,
    time: engine.now,
    fields: previous === undefined ? own : own.union(previous.fields),
  });
}

/** Keeps at most ten Update entries by folding the oldest into "ancient-changes" per apiVersion (capmanagers.go). */
function capUpdateManagers(managers: ManagedFieldSets): void {
  const updaters = [...managers].filter(([, entry]) => entry.operation === 'Update');
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  const millis = (time: string | undefined): number => (time === undefined ? Number.NaN : Date.parse(time));
  updaters.sort(([, a], [, b]) => {
    const ta = millis(a.time);
    const tb = millis(b.time);
    return Number.isNaN(ta) || Number.isNaN(tb) ? 0 : ta - tb;
  });
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (const [key, entry] of updaters) {
    if (length <= MAX_UPDATE_MANAGERS) break;
    const current = managers.get(key);
    if (current === undefined) continue;
    const identity: ManagerIdentity = { manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: entry.apiVersion, subresource: '' };
    const bucketKey = managerKey(identity);
    const first = firstOfVersion.get(entry.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(entry.apiVersion, key);
      continue;
    }
    let bucket = managers.get(bucketKey);
    if (bucket === undefined) {
      const firstEntry = managers.get(first) as ManagerFields;
      managers.delete(first);
      bucket = { ...identity, time: firstEntry.time, fields: firstEntry.fields };
    }
    managers.delete(key);
    managers.set(bucketKey, { ...identity, time: current.time, fields: current.fields.union(bucket.fields) });
    length--;
  }
}

interface ApplyOutcome {
  /** The new object, or undefined when the apply changes nothing. */
  readonly object: JsonObject | undefined;
  readonly managers: ManagedFieldSets;
}

/** One attempt of the apply chain below the kubectl last-applied handling. */
function applyOnce(engine: Engine, live: JsonObject | undefined, config: JsonObject, decoded: ManagedFieldSets, identity: ManagerIdentity, force: boolean): ApplyOutcome {
  const managers = cloneManagers(decoded);
  if (managers.size === 0 && live !== undefined) {
    // Fields set before anyone applied get an owner, so that appliers conflict with them.
    recordUpdate(engine, engine.zero, live, managers, { manager: BEFORE_FIRST_APPLY, operation: 'Update', apiVersion: engine.apiVersion, subresource: '' });
  }
  const key = managerKey(identity);
  const previous = managers.get(key);
  const configFields = fieldSetOf(config, engine.topology).recursiveDifference(engine.ignored);
  managers.set(key, { ...identity, apiVersion: engine.apiVersion, time: previous?.time, fields: configFields });
  let merged = mergeValues(live, config, engine.topology) as JsonObject;
  if (previous !== undefined && !previous.fields.isEmpty()) {
    let owned = FieldSet.empty();
    for (const entry of managers.values()) owned = owned.union(entry.fields);
    merged = pruneValue(merged, engine.topology, previous.fields, owned) as JsonObject;
  }
  const comparison = settleOwnership(engine, managers, key, live ?? engine.zero, merged, force);
  stripMeta(managers);
  const changed = !isSameComparison(comparison);
  const own = managers.get(key);
  if (changed && own !== undefined) managers.set(key, { ...own, time: engine.now });
  capUpdateManagers(managers);
  return { object: changed ? merged : undefined, managers };
}

/**
 * The fields of the last-applied annotation that still hold their live values: kubectl owned them
 * through client-side apply, so its server-side apply may take them over (lastappliedmanager.go).
 */
function fieldsFromLastApplied(engine: Engine, live: JsonObject | undefined): FieldSet | undefined {
  const annotations = metadataOf(live).annotations;
  const lastApplied = isJsonObject(annotations) ? annotations[LAST_APPLIED_ANNOTATION] : undefined;
  if (typeof lastApplied !== 'string' || lastApplied === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(lastApplied);
  } catch {
    return undefined;
  }
  if (!isJsonObject(parsed) || parsed.apiVersion !== engine.apiVersion) return undefined;
  try {
    const comparison = compareValues(parsed, live, engine.topology);
    return fieldSetOf(parsed, engine.topology).difference(comparison.modified).difference(comparison.added).difference(comparison.removed);
  } catch {
    return undefined;
  }
}

/** The annotation value kubectl would write for `config` (lastappliedupdater.go buildLastApplied). */
function lastAppliedValue(config: JsonObject): string {
  const copy = deepCopy(config);
  const annotations = metadataOf(copy).annotations;
  if (isJsonObject(annotations)) delete annotations[LAST_APPLIED_ANNOTATION];
  // json.Encoder ends the document with a newline, as kubectl's own annotation does.
  return `${goJson(copy)}\n`;
}

function syncLastApplied(object: JsonObject, config: JsonObject): void {
  const annotations = metadataOf(object).annotations;
  if (!isJsonObject(annotations)) return;
  const current = annotations[LAST_APPLIED_ANNOTATION];
  if (typeof current !== 'string' || current === '') return;
  annotations[LAST_APPLIED_ANNOTATION] = lastAppliedValue(config);
  let size = 0;
  for (const [name, value] of Object.entries(annotations)) size += name.length + (typeof value === 'string' ? value.length : 0);
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) delete annotations[LAST_APPLIED_ANNOTATION];
}

/**
 * Server-side apply of `config` (the applied partial object) by `manager` onto `live` (undefined
 * when creating). Returns the merged object with metadata.managedFields updated. `force` takes
 * ownership of conflicting fields.
 *
 * Throws ApplyConflictError (409) on conflicts, ApiError 400 when the body carries
 * managedFields, ApplyTypeError when a value does not fit the schema (e.g. a map list item
 * without its key), and ManagedFieldsDecodeError when the live entries are unreadable.
 */
export function apply(live: JsonObject | undefined, config: JsonObject, manager: string, options: ApplyOptions): JsonObject {
  const configManagedFields = metadataOf(config).managedFields;
  if (configManagedFields !== undefined && configManagedFields !== null) throw errors.badRequest('metadata.managedFields must be nil');
  const engine = engineFor(config, options.now, options.ignoredFields, options);
  let decoded: ManagedFieldSets;
  try {
    decoded = decodeManagedFields(metadataOf(live).managedFields);
  } catch (err) {
    if (err instanceof ManagedFieldsDecodeError) throw new ManagedFieldsDecodeError(`failed to decode managed fields: ${err.message}`);
    throw err;
  }
  const liveObject = live === undefined ? undefined : withoutManagedFields(live);
  reconcileWithSchema(engine, liveObject, decoded);
  const identity: ManagerIdentity = { manager, operation: 'Apply', apiVersion: engine.apiVersion, subresource: options.subresource ?? '' };

  let outcome: ApplyOutcome;
  try {
    outcome = applyOnce(engine, liveObject, config, decoded, identity, options.force);
  } catch (err) {
    if (!(err instanceof ConflictsFound)) throw err;
    if (manager !== KUBECTL_MANAGER) throw new ApplyConflictError(err.toConflicts());
    // kubectl switching from client-side apply keeps the fields its last-applied annotation names.
    const allowed = fieldsFromLastApplied(engine, liveObject);
    if (allowed === undefined) throw new ApplyConflictError(err.toConflicts());
    if (!err.allPaths().difference(allowed).isEmpty()) throw new ApplyConflictError(err.toConflicts(allowed));
    outcome = applyOnce(engine, liveObject, config, decoded, identity, true);
  }

  const object = outcome.object ?? (liveObject === undefined ? deepCopy(config) : deepCopy(liveObject));
  if (manager === KUBECTL_MANAGER) syncLastApplied(object, config);
  return withManagedFields(object, outcome.managers);
}

/**
 * A non-apply write (create, update, patch) by `manager`: the fields it changed become owned by
 * it with operation Update (never conflicts); other managers lose those fields.
 *
 * `managedFields` in the written object: a list with one empty entry resets them (the write's
 * changes are then owned by `manager` alone); an empty list, an absent field or unreadable entries
 * keep the live object's; a readable non-empty list replaces them.
 */
export function updateManagedFields(live: JsonObject | undefined, updated: JsonObject, manager: string, options: UpdateOptions): JsonObject {
  const engine = engineFor(updated, options.now, options.ignoredFields, options);
  const subresource = options.subresource ?? '';
  const written = metadataOf(updated).managedFields;
  const reset = subresource === '' && isManagedFieldsReset(written);
  const liveEntries = (): ManagedFieldSets => {
    try {
      return decodeManagedFields(metadataOf(live).managedFields);
    } catch {
      return new Map();
    }
  };
  let managers: ManagedFieldSets;
  if (reset) {
    managers = new Map();
  } else if (subresource !== '') {
    // A subresource write cannot set managedFields.
    managers = liveEntries();
  } else {
    let fromWrite: ManagedFieldSets | undefined;
    try {
      fromWrite = decodeManagedFields(written);
    } catch {
      fromWrite = undefined;
    }
    managers = fromWrite !== undefined && fromWrite.size > 0 ? fromWrite : liveEntries();
  }

  const object = withoutManagedFields(updated);
  // Objects that predate field tracking stay untracked until they are applied to (skipnonapplied.go).
  if (managers.size === 0 && live !== undefined && !reset) return object;
  const before = live === undefined ? engine.zero : withoutManagedFields(live);
  if (live !== undefined) reconcileWithSchema(engine, before as JsonObject, managers);
  recordUpdate(engine, before, object, managers, { manager, operation: 'Update', apiVersion: engine.apiVersion, subresource });
  capUpdateManagers(managers);
  return withManagedFields(object, managers);
}

/** The field set an object specifies under its kind's schema, e.g. for tests and diagnostics. */
export function fieldsOf(object: JsonObject): FieldSet {
  return fieldSetOf(object, engineFor(object, '').topology);
}

export type { FieldPath };
