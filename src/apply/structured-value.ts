/**
 * The value walks of structured merge, each driven by a TopologyNode: the field set a value
 * spans, the merge of an applied configuration onto a live object, the comparison of two
 * versions, and the removal of owned-but-no-longer-applied items. They follow the typed package of
 * sigs.k8s.io/structured-merge-diff v4 (tofieldset.go, merge.go, compare via TypedValue.Compare,
 * remove.go).
 */
import {
  FieldSet, fieldElement, goQuote, indexElement, keyElement, pathToString, serializePathElement, valueElement, valuesEqual, type FieldPath, type KeyField, type PathElement,
} from './field-set';
import type { TopologyNode } from './schema-topology';
import { deepCopy, isJsonObject, type JsonObject } from '../apis/object';

/** A value the engine cannot place in its schema (a map list item without its key, ...). */
export class ApplyTypeError extends Error {
  override name = 'ApplyTypeError';
}

/** The path element of a list item: its key fields, its value (sets) or its index (atomic lists). */
export function listItemElement(list: TopologyNode, item: unknown, index: number, path: FieldPath): PathElement {
  if (list.listType === 'map' && list.listMapKeys.length > 0) {
    const where = `${pathToString(path)}: element ${index}`;
    if (item === null) throw new ApplyTypeError(`${where}: associative list with keys may not have a null element`);
    if (!isJsonObject(item)) throw new ApplyTypeError(`${where}: associative list with keys may not have non-map elements`);
    const fields: KeyField[] = [];
    for (const name of list.listMapKeys) {
      if (Object.prototype.hasOwnProperty.call(item, name)) {
        fields.push({ name, value: item[name] });
      } else {
        const fallback = list.keyDefault(name);
        if (fallback === undefined) {
          throw new ApplyTypeError(`${where}: associative list with keys has an element that omits key field ${goQuote(name)} (and doesn't have default value)`);
        }
        fields.push({ name, value: fallback });
      }
    }
    return keyElement(fields);
  }
  if (list.listType === 'set' || list.listType === 'map') {
    const where = `${pathToString(path)}: element ${index}`;
    if (isJsonObject(item)) throw new ApplyTypeError(`${where}: associative list without keys has an element that's a map type`);
    if (Array.isArray(item)) throw new ApplyTypeError(`${where}: not supported: associative list with lists as elements`);
    if (item === null) throw new ApplyTypeError(`${where}: associative list without keys has an element that's an explicit null`);
    return valueElement(item);
  }
  return indexElement(index);
}

/** Indexes a granular list by item element; repeated elements keep their first occurrence. */
function indexList(list: TopologyNode, items: readonly unknown[], path: FieldPath): Array<{ element: PathElement; key: string; item: unknown }> {
  const seen = new Set<string>();
  const out: Array<{ element: PathElement; key: string; item: unknown }> = [];
  items.forEach((item, index) => {
    const element = listItemElement(list, item, index, path);
    const key = serializePathElement(element);
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ element, key, item });
  });
  return out;
}

/** The set of fields a value specifies (TypedValue.ToFieldSet). */
export function fieldSetOf(value: unknown, node: TopologyNode): FieldSet {
  const set = FieldSet.empty();
  collectFields(value, node, [], set);
  return set;
}

function collectFields(value: unknown, declared: TopologyNode, path: FieldPath, set: FieldSet): void {
  const node = declared.resolve(value);
  if (node.kind === 'scalar' || node.kind === 'untyped' || node.atomic) {
    set.insert(path);
    return;
  }
  if (node.kind === 'list') {
    if (!Array.isArray(value)) return;
    value.forEach((item, index) => {
      const itemPath = [...path, listItemElement(node, item, index, path)];
      collectFields(item, node.items(), itemPath, set);
      // List items are always owned as a whole too.
      set.insert(itemPath);
    });
    return;
  }
  if (!isJsonObject(value)) return;
  for (const [name, child] of Object.entries(value)) {
    const childTopology = node.child(name);
    const childPath = [...path, fieldElement(name)];
    collectFields(child, childTopology.node, childPath, set);
    // Declared struct fields are owned through their leaves; map keys, nulls and empty objects as themselves.
    if (child === null || (isJsonObject(child) && Object.keys(child).length === 0) || !childTopology.declared) set.insert(childPath);
  }
}

/** Merges `config` onto `live` (TypedValue.Merge): config wins on leaves, granular parts merge. */
export function mergeValues(live: unknown, config: unknown, declared: TopologyNode, path: FieldPath = []): unknown {
  if (config === undefined) return deepCopy(live);
  if (live === undefined) return dropNulls(config);
  const node = declared.resolve(config);
  if (node.kind === 'scalar' || node.kind === 'untyped' || node.atomic) return dropNulls(config);
  if (node.kind === 'list') {
    if (!Array.isArray(config)) return Array.isArray(live) ? deepCopy(live) : dropNulls(config);
    if (!Array.isArray(live)) return dropNulls(config);
    return mergeLists(node, live, config, path);
  }
  if (!isJsonObject(config)) return isJsonObject(live) ? deepCopy(live) : dropNulls(config);
  if (!isJsonObject(live)) return dropNulls(config);
  const out: JsonObject = {};
  for (const [name, liveChild] of Object.entries(live)) {
    if (!Object.prototype.hasOwnProperty.call(config, name)) out[name] = deepCopy(liveChild);
    // An applied null clears the field: Kubernetes stores the merged null as an absent field.
    else if (config[name] !== null) out[name] = mergeValues(liveChild, config[name], node.child(name).node, [...path, fieldElement(name)]);
  }
  for (const [name, configChild] of Object.entries(config)) {
    if (!Object.prototype.hasOwnProperty.call(live, name) && configChild !== null) out[name] = dropNulls(configChild);
  }
  return out;
}

/**
 * Merges two granular lists item by item. The order is structured-merge-diff's: the config's
 * order, with live-only items kept where they were relative to the items both lists share.
 */
function mergeLists(node: TopologyNode, live: readonly unknown[], config: readonly unknown[], path: FieldPath): unknown[] {
  const lhs = indexList(node, live, path);
  const rhs = indexList(node, config, path);
  const lhsByKey = new Map(lhs.map((entry) => [entry.key, entry]));
  const rhsByKey = new Map(rhs.map((entry) => [entry.key, entry]));
  const shared = rhs.filter((entry) => lhsByKey.has(entry.key)).map((entry) => entry.key);
  let sharedIndex = 0;
  let nextShared = shared[sharedIndex];
  const advanceShared = (): void => {
    sharedIndex++;
    nextShared = shared[sharedIndex];
  };
  const out: unknown[] = [];
  const mergeItem = (key: string): unknown => {
    const l = lhsByKey.get(key);
    const r = rhsByKey.get(key);
    const element = (r ?? l)?.element as PathElement;
    return mergeValues(l?.item, r?.item, node.items(), [...path, element]);
  };
  let l = 0;
  let r = 0;
  while (l < lhs.length || r < rhs.length) {
    if (l < lhs.length && r < rhs.length) {
      const lKey = (lhs[l] as { key: string }).key;
      if (lKey === (rhs[r] as { key: string }).key) {
        out.push(mergeItem(lKey));
        l++;
        r++;
        advanceShared();
        continue;
      }
      if (rhsByKey.has(lKey) && nextShared !== undefined && nextShared !== lKey) {
        // A shared item, but not the one due in this round: it is placed when the config reaches it.
        l++;
        continue;
      }
    }
    if (l < lhs.length) {
      const lKey = (lhs[l] as { key: string }).key;
      if (!rhsByKey.has(lKey)) {
        out.push(mergeItem(lKey));
        l++;
        continue;
      }
    }
    if (r < rhs.length) {
      const rKey = (rhs[r] as { key: string }).key;
      out.push(mergeItem(rKey));
      r++;
      if (nextShared === rKey) advanceShared();
    }
  }
  return out;
}

export interface Comparison {
  readonly modified: FieldSet;
  readonly added: FieldSet;
  readonly removed: FieldSet;
}

export function isSameComparison(comparison: Comparison): boolean {
  return comparison.modified.isEmpty() && comparison.added.isEmpty() && comparison.removed.isEmpty();
}

/** What changed from `lhs` to `rhs` (TypedValue.Compare); undefined means absent, null is a value. */
export function compareValues(lhs: unknown, rhs: unknown, node: TopologyNode): Comparison {
  const comparison = { modified: FieldSet.empty(), added: FieldSet.empty(), removed: FieldSet.empty() };
  compareAt(lhs, rhs, node, [], comparison);
  return comparison;
}

function compareLeaf(lhs: unknown, rhs: unknown, path: FieldPath, comparison: Comparison): void {
  if (lhs === undefined) comparison.added.insert(path);
  else if (rhs === undefined) comparison.removed.insert(path);
  else if (!valuesEqual(lhs, rhs)) comparison.modified.insert(path);
}

function compareAt(lhs: unknown, rhs: unknown, declared: TopologyNode, path: FieldPath, comparison: Comparison): void {
  const node = declared.resolve(rhs !== undefined && rhs !== null ? rhs : lhs);
  if (node.kind === 'scalar' || node.kind === 'untyped' || node.atomic) {
    compareLeaf(lhs, rhs, path, comparison);
    return;
  }
  if (node.kind === 'list') {
    const left = Array.isArray(lhs) ? lhs : undefined;
    const right = Array.isArray(rhs) ? rhs : undefined;
    if (isMismatched(lhs, left) || isMismatched(rhs, right) || ((left?.length ?? 0) === 0 && (right?.length ?? 0) === 0)) {
      // Empty or null on both sides is a leaf, which keeps the empty/null distinction.
      compareLeaf(lhs, rhs, path, comparison);
      return;
    }
    const leftItems = new Map(indexList(node, left ?? [], path).map((entry) => [entry.key, entry]));
    const rightItems = indexList(node, right ?? [], path);
    const visited = new Set<string>();
    for (const entry of rightItems) {
      visited.add(entry.key);
      compareAt(leftItems.get(entry.key)?.item, entry.item, node.items(), [...path, entry.element], comparison);
    }
    for (const entry of leftItems.values()) {
      if (!visited.has(entry.key)) compareAt(entry.item, undefined, node.items(), [...path, entry.element], comparison);
    }
    compareContainer(lhs, rhs, path, comparison);
    return;
  }
  const left = isJsonObject(lhs) ? lhs : undefined;
  const right = isJsonObject(rhs) ? rhs : undefined;
  if (isMismatched(lhs, left) || isMismatched(rhs, right) || (Object.keys(left ?? {}).length === 0 && Object.keys(right ?? {}).length === 0)) {
    compareLeaf(lhs, rhs, path, comparison);
    return;
  }
  const names = new Set([...Object.keys(left ?? {}), ...Object.keys(right ?? {})]);
  for (const name of names) compareAt(left?.[name], right?.[name], node.child(name).node, [...path, fieldElement(name)], comparison);
  compareContainer(lhs, rhs, path, comparison);
}

/** A value of the wrong shape for its schema (neither absent nor null): compared as a leaf. */
function isMismatched(value: unknown, typed: unknown): boolean {
  return value !== undefined && value !== null && typed === undefined;
}

/** A map, struct or list that appears or disappears as a whole is itself added or removed. */
function compareContainer(lhs: unknown, rhs: unknown, path: FieldPath, comparison: Comparison): void {
  if (lhs === undefined) comparison.added.insert(path);
  else if (rhs === undefined) comparison.removed.insert(path);
}

/**
 * True when `path` is in `set` once struct fields with owned descendants count as owned
 * (Set.EnsureNamedFieldsAreMembers): owning `.spec.replicas` keeps `.spec` itself.
 */
function ownsWithNamedFields(set: FieldSet, path: FieldPath, declaredField: boolean): boolean {
  if (set.has(path)) return true;
  if (!declaredField) return false;
  const below = set.at(path);
  return below !== undefined && !below.isEmpty();
}

/**
 * Removes from `merged` what the applier owned before (`previous`) and no manager owns any longer
 * (`owned`, which includes the applier's new configuration): Updater.prune with
 * addBackOwnedItems and addBackDanglingItems.
 */
export function pruneValue(merged: unknown, node: TopologyNode, previous: FieldSet, owned: FieldSet): unknown {
  return pruneAt(merged, node, [], previous, owned);
}

function pruneAt(value: unknown, declared: TopologyNode, path: FieldPath, previous: FieldSet, owned: FieldSet): unknown {
  const node = declared.resolve(value);
  if (node.kind === 'scalar' || node.kind === 'untyped' || node.atomic) return value;
  if (node.kind === 'list') {
    if (!Array.isArray(value)) return value;
    const out: unknown[] = [];
    value.forEach((item, index) => {
      const itemPath = [...path, listItemElement(node, item, index, path)];
      if (previous.has(itemPath) && !owned.has(itemPath)) return;
      out.push(pruneAt(item, node.items(), itemPath, previous, owned));
    });
    return out;
  }
  if (!isJsonObject(value)) return value;
  const out: JsonObject = {};
  for (const [name, child] of Object.entries(value)) {
    const { node: childNode, declared: isField } = node.child(name);
    const childPath = [...path, fieldElement(name)];
    if (ownsWithNamedFields(previous, childPath, isField) && !ownsWithNamedFields(owned, childPath, isField)) continue;
    out[name] = pruneAt(child, childNode, childPath, previous, owned);
  }
  return out;
}

/** A copy without the nulls an applied configuration holds: Kubernetes stores them as absent fields. */
export function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (!isJsonObject(value)) return value;
  const out: JsonObject = {};
  for (const [name, child] of Object.entries(value)) if (child !== null) out[name] = dropNulls(child);
  return out;
}

/** The item of `list` that `element` (a key, value or index path element) names, if any. */
function itemAt(list: unknown, element: PathElement): unknown {
  if (!Array.isArray(list)) return undefined;
  switch (element.type) {
    case 'index':
      return list[element.index];
    case 'value':
      return list.find((item) => valuesEqual(item, element.value));
    case 'key':
      return list.find((item) => isJsonObject(item) && element.fields.every((field) => valuesEqual(item[field.name], field.value)));
    default:
      return undefined;
  }
}

/**
 * How many leading elements of `path` survive the schema: the length of the path up to the first
 * composite element the schema now calls atomic, or the whole path.
 */
function atomicPrefixLength(path: FieldPath, live: unknown, root: TopologyNode): number {
  let declared = root;
  let value = live;
  for (let i = 0; i < path.length; i++) {
    // A deduced (untyped) node takes its shape from the live value; without one there is nothing to decide.
    if (declared.kind === 'untyped' && value === undefined) return path.length;
    const node = declared.resolve(value);
    if (i > 0 && node.atomic && (node.kind === 'struct' || node.kind === 'map' || node.kind === 'list')) return i;
    const element = path[i] as PathElement;
    if (element.type === 'field') {
      declared = node.child(element.name).node;
      value = isJsonObject(value) ? value[element.name] : undefined;
    } else {
      declared = node.items();
      value = itemAt(value, element);
    }
  }
  return path.length;
}

/**
 * A manager's field set brought in line with the schema it is now read with
 * (structured-merge-diff ReconcileFieldSetWithSchema): where a struct, map or list became atomic,
 * a manager that owned parts of it owns the whole, so later changes by others conflict with it.
 * The reverse change (atomic to granular) cannot say who owns which part, so it keeps the set
 * as it is. Returns undefined when nothing changes.
 */
export function reconcileFieldSet(set: FieldSet, live: unknown, root: TopologyNode): FieldSet | undefined {
  let changed = false;
  const out = FieldSet.empty();
  for (const path of set.paths()) {
    const length = atomicPrefixLength(path, live, root);
    if (length < path.length) changed = true;
    out.insert(path.slice(0, length));
  }
  return changed ? out : undefined;
}
