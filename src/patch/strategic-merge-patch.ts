/**
 * Strategic merge patch as kube-apiserver v1.25 applies it: k8s.io/apimachinery
 * pkg/util/strategicpatch `StrategicMergeMapPatch` with MergeParallelList and IgnoreUnmatchedNulls,
 * the error mapping of k8s.io/apiserver pkg/endpoints/handlers/patch.go
 * (`interpretStrategicMergePatchError`), and the patch body decoding before it.
 *
 * - Maps merge member by member; a null member deletes. A value for a member the original lacks (or
 *   holds with another JSON type) is taken whole, with its nested nulls dropped.
 * - Lists with strategy "merge" merge: lists of objects by the merge key (containers by name, ports
 *   by containerPort, ...), lists of scalars as a union. Other lists are replaced.
 * - Directives: `$patch: replace|delete` in a map; `$patch: delete|replace` as a list item
 *   (`$patch: merge` is refused, as in kube); `$retainKeys`; `$deleteFromPrimitiveList/<list>`;
 *   `$setElementOrder/<list>`.
 * - The result order of a merged list: patch items in patch (or `$setElementOrder`) order,
 *   interleaved with the items only the server has, kept in their old relative order.
 *
 * Like v1.25 (before kubernetes PR 117568), a directive nested inside a value that is taken whole is
 * kept in the result: the conversion to the typed object (patchObject) then reports it as an unknown
 * member of a struct, and keeps it as an entry of a map (where validation may refuse it).
 *
 * Field lookups follow the schema leniently, except for the list a `$setElementOrder` names
 * (PatchSchemaNode.lookupListToOrder), which fails as kube's reflection-based lookup does.
 */
import { goFormatS, goFormatV } from './go-text';
import { goJsonKind, hasOwn } from './json-value';
import { PatchError } from './patch-error';
import { PatchLookupError, type PatchLookup, type PatchSchemaNode } from './patch-schema';
import { deepCopy, isJsonObject, type JsonObject, type JsonValue, setMember } from '../apis/object';

const DIRECTIVE_MARKER = '$patch';
const DELETE_DIRECTIVE = 'delete';
const REPLACE_DIRECTIVE = 'replace';
const MERGE_DIRECTIVE = 'merge';
const RETAIN_KEYS_STRATEGY = 'retainKeys';
const RETAIN_KEYS_DIRECTIVE = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST_PREFIX = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER_PREFIX = '$setElementOrder';

/** apimachinery pkg/util/mergepatch errors.go, with the HTTP status patch.go gives each. */
const MERGEPATCH_ERRORS = {
  noListOfLists: { message: 'lists of lists are not supported', status: 422 },
  badPrimitiveList: { message: 'invalid patch format of primitive list', status: 400 },
  badRetainKeys: { message: 'invalid patch format of retainKeys', status: 400 },
  badSetElementOrder: { message: 'invalid patch format of setElementOrder list', status: 400 },
} as const;

/** A failure inside the merge, carrying what patch.go would make of it. */
class MergeFailure extends Error {
  constructor(message: string, readonly status: 400 | 422 | 500 = 500) {
    super(message);
  }
}

function sentinel(error: (typeof MERGEPATCH_ERRORS)[keyof typeof MERGEPATCH_ERRORS]): MergeFailure {
  return new MergeFailure(error.message, error.status);
}

/**
 * Applies `patch` to `document` with the merge rules of `schema` (from PatchSchema.forKind);
 * without a schema every list is replaced and every map merged. Inputs are not modified.
 */
export function applyStrategicMergePatch(document: JsonValue, patch: unknown, schema: PatchSchemaNode | undefined): JsonValue {
  return applyStrategicMergePatchKeepingPatch(document, patch, schema).value;
}

/**
 * applyStrategicMergePatch, with the patch as the merge left it: the library consumes directives and
 * merged lists from the patch map it is given, and kube-apiserver prints that map (with %+v) when
 * the result does not convert into the kind's type. A null patch is Go's nil map.
 */
export function applyStrategicMergePatchKeepingPatch(
  document: JsonValue, patch: unknown, schema: PatchSchemaNode | undefined,
): { value: JsonValue; patchAfterMerge: JsonObject } {
  if (patch === null) return { value: deepCopy(document), patchAfterMerge: {} };
  if (!isJsonObject(patch)) {
    // patch.go decodes the body into map[string]interface{} and answers BadRequest with the decoder's text.
    throw PatchError.badRequest(`json: cannot unmarshal ${goJsonKind(patch)} into Go value of type map[string]interface {}`);
  }
  const original = isJsonObject(document) ? deepCopy(document) : {};
  const patchAfterMerge = deepCopy(patch);
  try {
    return { value: mergeMap(original, patchAfterMerge, schema), patchAfterMerge };
  } catch (err) {
    // A field lookup that fails is a plain error in kube too.
    if (err instanceof PatchLookupError) throw PatchError.untyped(err.message);
    if (!(err instanceof MergeFailure)) throw err;
    if (err.status === 400) throw PatchError.badRequest(err.message);
    if (err.status === 422) throw PatchError.unprocessable(err.message);
    throw PatchError.untyped(err.message);
  }
}

// ---- the Go type names and %v rendering the library's messages use ----

type GoType = 'map[string]interface {}' | '[]interface {}' | 'string' | 'int64' | 'float64' | 'bool' | 'nil';

function goType(value: JsonValue | undefined): GoType {
  if (value === null || value === undefined) return 'nil';
  if (Array.isArray(value)) return '[]interface {}';
  switch (typeof value) {
    case 'string': return 'string';
    case 'boolean': return 'bool';
    case 'number': return Number.isInteger(value) ? 'int64' : 'float64';
    default: return 'map[string]interface {}';
  }
}

function badArgType(expected: GoType, actual: JsonValue | undefined): MergeFailure {
  const actualType = actual === null || actual === undefined ? '%!s(<nil>)' : goType(actual);
  return new MergeFailure(`expected a ${expected}, but received a ${actualType}`);
}

function noMergeKey(item: JsonObject, mergeKey: string): MergeFailure {
  return new MergeFailure(`map: ${goFormatV(item)} does not contain declared merge key: ${mergeKey}`);
}

function badPatchType(directive: JsonValue | undefined, map: JsonObject): MergeFailure {
  return new MergeFailure(`unknown patch type: ${goFormatS(directive)} in map: ${goFormatV(map)}`);
}

/** Go's == on two interface{} values holding JSON scalars. */
function sameScalar(left: JsonValue | undefined, right: JsonValue | undefined): boolean {
  if (left === undefined || right === undefined) return left === right;
  if (typeof left === 'object' && left !== null) return false;
  return left === right && goType(left) === goType(right);
}

// ---- maps ----

function mergeMap(original: JsonObject, patch: JsonObject, schema: PatchSchemaNode | undefined): JsonObject {
  if (hasOwn(patch, DIRECTIVE_MARKER)) return handleDirectiveInMergeMap(patch[DIRECTIVE_MARKER] as JsonValue, patch);

  applyRetainKeysDirective(original, patch);
  mergePatchIntoOriginal(original, patch, schema);

  for (const patchKey of Object.keys(patch)) {
    const patchValue = patch[patchKey] as JsonValue;
    let key = patchKey;
    let isDeleteList = false;
    if (patchKey.startsWith(DELETE_FROM_PRIMITIVE_LIST_PREFIX)) {
      isDeleteList = true;
      const listKey = extractKey(patchKey, DELETE_FROM_PRIMITIVE_LIST_PREFIX);
      if (listKey.length > 0) key = listKey;
    }

    if (patchValue === null) {
      delete original[key];
      continue;
    }

    if (!hasOwn(original, key)) {
      if (!isDeleteList) setMember(original, key, discardNullValues(patchValue));
      continue;
    }

    const originalValue = original[key] as JsonValue;
    const originalType = goType(originalValue);
    if (originalType !== goType(patchValue)) {
      if (!isDeleteList) setMember(original, key, discardNullValues(patchValue));
      continue;
    }

    if (originalType === 'map[string]interface {}') {
      const lookup = lookupForStruct(schema, key);
      const strategy = otherThanRetainKeys(lookup.meta.strategies);
      setMember(original, key, strategy === REPLACE_DIRECTIVE
        ? patchValue
        : mergeMap(originalValue as JsonObject, patchValue as JsonObject, lookup.schema));
    } else if (originalType === '[]interface {}') {
      const lookup = lookupForSlice(schema, key);
      const strategy = otherThanRetainKeys(lookup.meta.strategies);
      setMember(original, key, mergeSliceHandler(
        originalValue as JsonValue[], patchValue as JsonValue[], lookup, strategy, isDeleteList));
    } else {
      setMember(original, key, patchValue);
    }
  }
  return original;
}

function lookupForStruct(schema: PatchSchemaNode | undefined, key: string): PatchLookup {
  return schema === undefined ? { schema: undefined, meta: { strategies: [], mergeKey: '' } } : schema.lookupForStruct(key);
}

function lookupForSlice(schema: PatchSchemaNode | undefined, key: string): PatchLookup {
  return schema === undefined ? { schema: undefined, meta: { strategies: [], mergeKey: '' } } : schema.lookupForSlice(key);
}

/** extractRetainKeysPatchStrategy: retainKeys is handled by the `$retainKeys` directive itself. */
function otherThanRetainKeys(strategies: readonly string[]): string {
  if (strategies.length === 0) return '';
  if (strategies.length === 1) return strategies[0] === RETAIN_KEYS_STRATEGY ? '' : (strategies[0] as string);
  if (strategies.length === 2) {
    if (strategies[0] === RETAIN_KEYS_STRATEGY) return strategies[1] as string;
    if (strategies[1] === RETAIN_KEYS_STRATEGY) return strategies[0] as string;
  }
  throw new MergeFailure(`unexpected patch strategy: [${strategies.join(' ')}]`);
}

function handleDirectiveInMergeMap(directive: JsonValue | undefined, patch: JsonObject): JsonObject {
  if (directive === REPLACE_DIRECTIVE) {
    delete patch[DIRECTIVE_MARKER];
    return patch;
  }
  if (directive === DELETE_DIRECTIVE) return {};
  throw badPatchType(directive, patch);
}

function discardNullValues(value: JsonValue): JsonValue {
  if (isJsonObject(value)) {
    for (const key of Object.keys(value)) {
      const member = value[key] as JsonValue;
      if (member === null) delete value[key];
      else discardNullValues(member);
    }
  } else if (Array.isArray(value)) {
    for (const item of value) discardNullValues(item);
  }
  return value;
}

/** The list's name after a directive prefix, e.g. "containers" in "$setElementOrder/containers". */
function extractKey(key: string, prefix: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw sentinel(prefix === DELETE_FROM_PRIMITIVE_LIST_PREFIX ? MERGEPATCH_ERRORS.badPrimitiveList : MERGEPATCH_ERRORS.badSetElementOrder);
  }
  return key.slice(slash + 1);
}

/** `$retainKeys`: drop original members not listed; every patched member must be listed. */
function applyRetainKeysDirective(original: JsonObject, patch: JsonObject): void {
  if (!hasOwn(patch, RETAIN_KEYS_DIRECTIVE)) return;
  const retainKeys = patch[RETAIN_KEYS_DIRECTIVE];
  delete patch[RETAIN_KEYS_DIRECTIVE];
  if (!Array.isArray(retainKeys)) throw sentinel(MERGEPATCH_ERRORS.badRetainKeys);
  const retained = (key: string): boolean => retainKeys.some((item) => item === key);
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null || key.startsWith(DELETE_FROM_PRIMITIVE_LIST_PREFIX) || key.startsWith(SET_ELEMENT_ORDER_PREFIX)) continue;
    if (!retained(key)) throw sentinel(MERGEPATCH_ERRORS.badRetainKeys);
  }
  for (const key of Object.keys(original)) {
    if (!retained(key)) delete original[key];
  }
}

/** `$setElementOrder/<list>`: merge that list now and order it as the directive says. */
function mergePatchIntoOriginal(original: JsonObject, patch: JsonObject, schema: PatchSchemaNode | undefined): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER_PREFIX)) continue;
    const order = patch[key] as JsonValue;
    delete patch[key];
    if (!Array.isArray(order)) throw badArgType('[]interface {}', order);
    const listKey = extractKey(key, SET_ELEMENT_ORDER_PREFIX);

    const foundOriginal = hasOwn(original, listKey);
    const foundPatch = hasOwn(patch, listKey);
    const originalList = original[listKey];
    const patchList = patch[listKey];
    if (foundOriginal && !Array.isArray(originalList)) throw badArgType('[]interface {}', originalList as JsonValue);
    if (foundPatch && !Array.isArray(patchList)) throw badArgType('[]interface {}', patchList as JsonValue);
    const originalItems = foundOriginal ? (originalList as JsonValue[]) : [];
    const patchItems = foundPatch ? (patchList as JsonValue[]) : [];

    const lookup = schema === undefined ? lookupForSlice(schema, listKey) : schema.lookupListToOrder(listKey);
    const strategy = otherThanRetainKeys(lookup.meta.strategies);
    const mergeKey = lookup.meta.mergeKey;
    validatePatchWithSetOrderList(patchItems, order, mergeKey);

    let merged: JsonValue[];
    if (foundOriginal && !foundPatch) merged = originalItems;
    else if (!foundOriginal && foundPatch) merged = patchItems;
    else if (foundOriginal && foundPatch) merged = mergeSliceHandler(originalItems, patchItems, lookup, strategy, false);
    else continue;

    const [inOrder, serverOnly] = mergeKey === ''
      ? partitionPrimitivesByPresentInList(merged, order)
      : partitionMapsByPresentInList(merged, order, mergeKey);
    const kind = sliceElementType(originalItems, patchItems);
    setMember(original, listKey, normalizeElementOrder(inOrder, serverOnly, order, originalItems, mergeKey, kind));
    delete patch[listKey];
  }
}

/** The patch list must list its items in the `$setElementOrder` order (deletions aside). */
function validatePatchWithSetOrderList(patchList: JsonValue[], order: JsonValue[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  const kept = mergeKey === '' ? patchList : extractToDeleteItems(patchList)[0];
  let patchIndex = 0;
  let orderIndex = 0;
  while (patchIndex < kept.length && orderIndex < order.length) {
    const item = kept[patchIndex] as JsonValue;
    if (isJsonObject(item) && hasOwn(item, DIRECTIVE_MARKER)) {
      patchIndex++;
      continue;
    }
    if (mergeKeyValueEqual(item, order[orderIndex] as JsonValue, mergeKey)) patchIndex++;
    orderIndex++;
  }
  if (patchIndex < kept.length && orderIndex >= order.length) {
    throw new MergeFailure(`The order in patch list:\n${goFormatV(patchList)}\n doesn't match ${SET_ELEMENT_ORDER_PREFIX} list:\n${goFormatV(order)}\n`);
  }
}

function mergeKeyValueEqual(left: JsonValue, right: JsonValue, mergeKey: string): boolean {
  if (mergeKey === '') return sameScalar(left, right);
  if (!isJsonObject(left)) throw badArgType('map[string]interface {}', left);
  if (!isJsonObject(right)) throw badArgType('map[string]interface {}', right);
  if (!hasOwn(left, mergeKey)) throw noMergeKey(left, mergeKey);
  if (!hasOwn(right, mergeKey)) throw noMergeKey(right, mergeKey);
  return sameScalar(left[mergeKey] as JsonValue, right[mergeKey] as JsonValue);
}

// ---- lists ----

function mergeSliceHandler(
  original: JsonValue[], patch: JsonValue[], lookup: PatchLookup, strategy: string, isDeleteList: boolean,
): JsonValue[] {
  // Since kubernetes PR 110472 (v1.25) a deletion list deletes whatever the field's strategy.
  if (strategy === MERGE_DIRECTIVE || isDeleteList) {
    return mergeSlice(original, patch, lookup.schema, lookup.meta.mergeKey, isDeleteList);
  }
  return patch;
}

type ElementKind = 'map' | 'scalar';

function mergeSlice(
  original: JsonValue[], patch: JsonValue[], schema: PatchSchemaNode | undefined, mergeKey: string, isDeleteList: boolean,
): JsonValue[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = sliceElementType(original, patch);

  let merged: JsonValue[];
  let remainingOriginal = original;
  let remainingPatch = patch;
  if (kind === 'scalar') {
    if (isDeleteList) return deleteFromSlice(original, patch);
    merged = deduplicateScalars([...original, ...patch]);
  } else {
    if (mergeKey === '') throw new MergeFailure('cannot merge lists without merge key for struct');
    [remainingOriginal, remainingPatch] = mergeSliceWithSpecialElements(original, patch, mergeKey);
    merged = mergeSliceWithoutSpecialElements(remainingOriginal, remainingPatch, mergeKey, schema);
  }

  const [inPatch, serverOnly] = mergeKey === ''
    ? partitionPrimitivesByPresentInList(merged, remainingPatch)
    : partitionMapsByPresentInList(merged, remainingPatch, mergeKey);
  return normalizeElementOrder(inPatch, serverOnly, remainingPatch, remainingOriginal, mergeKey, kind);
}

/** All items must share one JSON type, and lists of lists are refused. */
function sliceElementType(...slices: JsonValue[][]): ElementKind {
  let previous: GoType | undefined;
  for (const slice of slices) {
    for (const item of slice) {
      const current = goType(item);
      if (previous === undefined) {
        if (current === '[]interface {}') throw sentinel(MERGEPATCH_ERRORS.noListOfLists);
        previous = current;
      } else if (previous !== current) {
        throw new MergeFailure(`list element types are not identical: ${goFormatV(slices)}`);
      }
    }
  }
  if (previous === undefined) throw new MergeFailure('no elements in any of the given slices');
  if (previous === 'nil') throw new MergeFailure('list elements must not be null');
  return previous === 'map[string]interface {}' ? 'map' : 'scalar';
}

/** `$patch` items of a merging list: delete by key, replace the whole list, or refuse. */
function mergeSliceWithSpecialElements(original: JsonValue[], patch: JsonValue[], mergeKey: string): [JsonValue[], JsonValue[]] {
  const plain: JsonValue[] = [];
  let replace = false;
  let remaining = original;
  for (const item of patch) {
    const map = item as JsonObject;
    if (!hasOwn(map, DIRECTIVE_MARKER)) {
      plain.push(item);
      continue;
    }
    const directive = map[DIRECTIVE_MARKER];
    if (directive === DELETE_DIRECTIVE) {
      if (!hasOwn(map, mergeKey)) throw noMergeKey(map, mergeKey);
      remaining = deleteMatchingEntries(remaining, mergeKey, map[mergeKey] as JsonValue);
    } else if (directive === REPLACE_DIRECTIVE) {
      replace = true;
    } else if (directive === MERGE_DIRECTIVE) {
      throw new MergeFailure('merging lists cannot yet be specified in the patch');
    } else {
      throw badPatchType(directive as JsonValue, map);
    }
  }
  return replace ? [plain, []] : [remaining, plain];
}

function deleteMatchingEntries(original: JsonValue[], mergeKey: string, value: JsonValue): JsonValue[] {
  return original.filter((item, index) => {
    if (!isJsonObject(item)) throw new MergeFailure(`value for key ${index} is not a map`);
    return !(hasOwn(item, mergeKey) && sameScalar(item[mergeKey] as JsonValue, value));
  });
}

function mergeSliceWithoutSpecialElements(
  original: JsonValue[], patch: JsonValue[], mergeKey: string, schema: PatchSchemaNode | undefined,
): JsonValue[] {
  const merged = [...original];
  for (const item of patch) {
    const map = item as JsonObject;
    if (!hasOwn(map, mergeKey)) throw noMergeKey(map, mergeKey);
    const index = findMapInSliceBasedOnKeyValue(merged, mergeKey, map[mergeKey] as JsonValue);
    if (index >= 0) merged[index] = mergeMap(merged[index] as JsonObject, map, schema);
    else merged.push(item);
  }
  return merged;
}

function findMapInSliceBasedOnKeyValue(list: JsonValue[], key: string, value: JsonValue): number {
  for (let index = 0; index < list.length; index++) {
    const item = list[index];
    if (!isJsonObject(item)) throw new MergeFailure(`value for key ${index} is not a map`);
    if (hasOwn(item, key) && sameScalar(item[key] as JsonValue, value)) return index;
  }
  return -1;
}

function deleteFromSlice(current: JsonValue[], toDelete: JsonValue[]): JsonValue[] {
  return current.filter((item) => !toDelete.some((doomed) => sameScalar(item, doomed)));
}

/** Go's in-place deduplication: a later duplicate is overwritten by the current last item. */
function deduplicateScalars(items: JsonValue[]): JsonValue[] {
  const s = [...items];
  let last = s.length - 1;
  for (let i = 0; i < last; i++) {
    for (let j = i + 1; j <= last; j++) {
      if (sameScalar(s[i], s[j])) {
        s[j] = s[last] as JsonValue;
        s.length = last;
        last--;
        j--;
      }
    }
  }
  return s;
}

function partitionPrimitivesByPresentInList(items: JsonValue[], by: JsonValue[]): [JsonValue[], JsonValue[]] {
  const present: JsonValue[] = [];
  const absent: JsonValue[] = [];
  for (const item of items) (by.some((other) => sameScalar(other, item)) ? present : absent).push(item);
  return [present, absent];
}

function partitionMapsByPresentInList(items: JsonValue[], by: JsonValue[], mergeKey: string): [JsonValue[], JsonValue[]] {
  const present: JsonValue[] = [];
  const absent: JsonValue[] = [];
  for (const item of items) {
    if (!isJsonObject(item)) throw badArgType('map[string]interface {}', item);
    if (!hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
    const found = findMapInSliceBasedOnKeyValue(by, mergeKey, item[mergeKey] as JsonValue) >= 0;
    (found ? present : absent).push(item);
  }
  return [present, absent];
}

function extractToDeleteItems(list: JsonValue[]): [JsonValue[], JsonValue[]] {
  const keep: JsonValue[] = [];
  const doomed: JsonValue[] = [];
  for (const item of list) {
    if (!isJsonObject(item)) throw badArgType('map[string]interface {}', item);
    (hasOwn(item, DIRECTIVE_MARKER) && item[DIRECTIVE_MARKER] === DELETE_DIRECTIVE ? doomed : keep).push(item);
  }
  return [keep, doomed];
}

// ---- ordering (strategicpatch normalizeElementOrder and friends) ----

function normalizeElementOrder(
  patch: JsonValue[], serverOnly: JsonValue[], patchOrder: JsonValue[], serverOrder: JsonValue[], mergeKey: string, kind: ElementKind,
): JsonValue[] {
  const sortedPatch = normalizeSliceOrder(patch, patchOrder, mergeKey, kind);
  const sortedServerOnly = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  return mergeSortedSlice(sortedServerOnly, sortedPatch, serverOrder, mergeKey, kind);
}

function normalizeSliceOrder(toSort: JsonValue[], order: JsonValue[], mergeKey: string, kind: ElementKind): JsonValue[] {
  let sortable = toSort;
  let doomed: JsonValue[] = [];
  if (kind === 'map') {
    for (const list of [toSort, order]) {
      for (const item of list) {
        if (!isJsonObject(item)) throw badArgType('map[string]interface {}', item);
        if (!hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
      }
    }
    [sortable, doomed] = extractToDeleteItems(toSort);
  }
  const sorted = stableSort(sortable, (a, b) => {
    const ia = indexOf(order, a, mergeKey, kind);
    if (ia >= 0) {
      const ib = indexOf(order, b, mergeKey, kind);
      if (ib >= 0) return ia < ib;
    }
    // The library's comparator says "less" whenever either item is missing from the order.
    return true;
  });
  return [...sorted, ...doomed];
}

/**
 * Go's sort.SliceStable is an insertion sort for up to 20 items; with the comparator above being a
 * strict order whenever all items are found (the normal case), any stable sort agrees with it.
 */
function stableSort(items: JsonValue[], less: (a: JsonValue, b: JsonValue) => boolean): JsonValue[] {
  const s = [...items];
  for (let i = 1; i < s.length; i++) {
    for (let j = i; j > 0 && less(s[j] as JsonValue, s[j - 1] as JsonValue); j--) {
      const swap = s[j] as JsonValue;
      s[j] = s[j - 1] as JsonValue;
      s[j - 1] = swap;
    }
  }
  return s;
}

/** Interleaves server-only items (left) into patch items (right), both already sorted. */
function mergeSortedSlice(left: JsonValue[], right: JsonValue[], serverOrder: JsonValue[], mergeKey: string, kind: ElementKind): JsonValue[] {
  const result: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) {
      result.push(right[j++] as JsonValue);
    } else if (j >= right.length) {
      result.push(left[i++] as JsonValue);
    } else {
      const li = indexOf(serverOrder, left[i] as JsonValue, mergeKey, kind);
      const ri = indexOf(serverOrder, right[j] as JsonValue, mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) result.push(left[i++] as JsonValue);
      else result.push(right[j++] as JsonValue);
    }
  }
  return result;
}

function indexOf(list: JsonValue[], item: JsonValue, mergeKey: string, kind: ElementKind): number {
  const valueOf = (value: JsonValue | undefined): JsonValue | undefined => {
    if (kind === 'scalar') return value;
    return isJsonObject(value) ? (value[mergeKey] as JsonValue) : undefined;
  };
  const wanted = valueOf(item);
  return list.findIndex((candidate) => sameScalarOrBothMissing(valueOf(candidate), wanted));
}

/** index() in Go compares interface values, where a missing member (nil) equals another. */
function sameScalarOrBothMissing(left: JsonValue | undefined, right: JsonValue | undefined): boolean {
  const l = left === undefined ? null : left;
  const r = right === undefined ? null : right;
  return sameScalar(l, r);
}
