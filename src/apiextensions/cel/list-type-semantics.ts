/**
 * Lists of a custom resource whose schema says `x-kubernetes-list-type: set` or `map`, as v1.25's
 * CEL sees them (k8s.io/apiserver pkg/cel value.go: unstructuredSetList, unstructuredMapList):
 *
 * - `X + Y`, X such a list: a set keeps X's elements in place and appends those of Y it does not
 *   hold yet (a union); a map list keeps the positions of X's keys, each element replaced by Y's
 *   element of the same key, and appends Y's elements of other keys in their order. The result is
 *   a list of the same type.
 * - `X == Y` (and `!=`), X such a list: the order does not count. A set equals a list of as many
 *   elements, each of which it holds; a map list equals a list of as many elements, each of which
 *   has a key X holds, with an equal element there. Element equality follows the same rules all
 *   the way down (an object holding a set list compares it without order).
 *
 * Which rule applies is decided by the left operand, as cel-go asks the left value: a list
 * literal or a list of type atomic on the left concatenates and compares in order.
 *
 * The lists are marked when the object is turned into CEL values (typedCelList), and the
 * environment's `_+_` for lists and `_==_`/`_!=_` are replaced (LIST_TYPE_FUNCTIONS).
 */
import { celEnv, celFunc, celList, celListConcat, CelScalar, isCelList, isCelMap, isCelUint, listType, type CelFunc, type CelList, type CelMap, type CelValue } from '@bufbuild/cel';

type ListSemantics = { readonly type: 'set' } | { readonly type: 'map'; readonly keys: readonly string[] };

const semanticsOf = new WeakMap<CelList, ListSemantics>();

const LIST = listType(CelScalar.DYN);

/** CEL's own equality, for what this module does not change (scalars, timestamps, bytes, ...). */
let standardEquals: ((lhs: CelValue, rhs: CelValue) => boolean) | undefined;

function celEquals(lhs: CelValue, rhs: CelValue): boolean {
  if (standardEquals === undefined) {
    const group = celEnv().funcs.find('_==_');
    standardEquals = (l, r) => group?.call(0, undefined, [l, r]) === true;
  }
  return standardEquals(lhs, rhs);
}

function schemaSemantics(listTypeName: unknown, mapKeys: unknown): ListSemantics | undefined {
  if (listTypeName === 'set') return { type: 'set' };
  if (listTypeName === 'map') return { type: 'map', keys: Array.isArray(mapKeys) ? mapKeys.filter((k): k is string => typeof k === 'string') : [] };
  return undefined;
}

/**
 * `items` (already CEL values) as a list with its schema's list type: a marked CelList for `set`
 * and `map`, the array itself otherwise.
 */
export function typedCelList(items: unknown[], schema: { 'x-kubernetes-list-type'?: unknown; 'x-kubernetes-list-map-keys'?: unknown } | undefined): unknown {
  const semantics = schemaSemantics(schema?.['x-kubernetes-list-type'], schema?.['x-kubernetes-list-map-keys']);
  if (semantics === undefined) return items;
  return marked(celList(items as CelValue[]), semantics);
}

function marked(list: CelList, semantics: ListSemantics): CelList {
  semanticsOf.set(list, semantics);
  return list;
}

/** A string that is the same for two scalars exactly when Go's map keys of them are (type and value). */
function scalarKey(value: CelValue | undefined): string {
  if (value === undefined || value === null) return 'null';
  switch (typeof value) {
    case 'bigint': return `int:${value}`;
    case 'number': return `double:${value}`;
    case 'string': return `string:${value}`;
    case 'boolean': return `bool:${value}`;
    default:
      if (isCelUint(value)) return `uint:${value.value}`;
      return `other:${String(value)}`;
  }
}

function mapKeyOf(element: CelValue, keys: readonly string[]): string {
  if (!isCelMap(element)) return 'not-a-map';
  return JSON.stringify(keys.map((key) => scalarKey(element.has(key) ? element.get(key) : undefined)));
}

/** The element of a set as a key: its scalar key, or (for a list or map element) its place among those seen. */
function setKeyOf(element: CelValue, seen: CelValue[]): string {
  if (isCelList(element) || isCelMap(element)) {
    const index = seen.findIndex((candidate) => equalsAsKubernetes(candidate, element));
    return `composite:${index < 0 ? seen.push(element) - 1 : index}`;
  }
  return scalarKey(element);
}

function setAdd(lhs: CelList, rhs: CelList): CelList {
  const seen: CelValue[] = [];
  const held = new Set<string>();
  const elements: CelValue[] = [];
  for (const element of lhs) {
    held.add(setKeyOf(element, seen));
    elements.push(element);
  }
  for (const element of rhs) {
    const key = setKeyOf(element, seen);
    if (held.has(key)) continue;
    held.add(key);
    elements.push(element);
  }
  return marked(celList(elements), { type: 'set' });
}

function mapListAdd(lhs: CelList, rhs: CelList, keys: readonly string[]): CelList {
  const elements: CelValue[] = [];
  const positions = new Map<string, number>();
  for (const element of lhs) {
    positions.set(mapKeyOf(element, keys), elements.length);
    elements.push(element);
  }
  for (const element of rhs) {
    const position = positions.get(mapKeyOf(element, keys));
    if (position === undefined) elements.push(element);
    else elements[position] = element;
  }
  return marked(celList(elements), { type: 'map', keys });
}

function listAdd(lhs: CelList, rhs: CelList): CelList {
  const semantics = semanticsOf.get(lhs);
  if (semantics === undefined) return celListConcat(lhs, rhs);
  return semantics.type === 'set' ? setAdd(lhs, rhs) : mapListAdd(lhs, rhs, semantics.keys);
}

function setEquals(lhs: CelList, rhs: CelList): boolean {
  if (lhs.size !== rhs.size) return false;
  const seen: CelValue[] = [];
  const held = new Set<string>();
  for (const element of lhs) held.add(setKeyOf(element, seen));
  for (const element of rhs) if (!held.has(setKeyOf(element, seen))) return false;
  return true;
}

function mapListEquals(lhs: CelList, rhs: CelList, keys: readonly string[]): boolean {
  if (lhs.size !== rhs.size) return false;
  const byKey = new Map<string, CelValue>();
  for (const element of lhs) byKey.set(mapKeyOf(element, keys), element);
  for (const element of rhs) {
    const mine = byKey.get(mapKeyOf(element, keys));
    if (mine === undefined || !equalsAsKubernetes(mine, element)) return false;
  }
  return true;
}

function mapEquals(lhs: CelMap, rhs: CelMap): boolean {
  if (lhs.size !== rhs.size) return false;
  for (const [key, value] of lhs) {
    if (!rhs.has(key)) return false;
    const other = rhs.get(key);
    if (other === undefined || !equalsAsKubernetes(value, other)) return false;
  }
  return true;
}

/** CEL equality, with the left operand's list type deciding how a list compares, at every depth. */
export function equalsAsKubernetes(lhs: CelValue, rhs: CelValue): boolean {
  if (isCelList(lhs)) {
    if (!isCelList(rhs)) return false;
    const semantics = semanticsOf.get(lhs);
    if (semantics?.type === 'set') return setEquals(lhs, rhs);
    if (semantics?.type === 'map') return mapListEquals(lhs, rhs, semantics.keys);
    if (lhs.size !== rhs.size) return false;
    for (let i = 0; i < lhs.size; i++) {
      const l = lhs.get(i);
      const r = rhs.get(i);
      if (l === undefined || r === undefined || !equalsAsKubernetes(l, r)) return false;
    }
    return true;
  }
  // Maps with keys other than strings keep CEL's own comparison (its cross-type numeric keys).
  if (isCelMap(lhs) && isCelMap(rhs) && [...lhs.keys()].every((key) => typeof key === 'string')) return mapEquals(lhs, rhs);
  return celEquals(lhs, rhs);
}

/** The environment's list `+`, `==` and `!=`, replaced (same overload ids as CEL's own). */
export const LIST_TYPE_FUNCTIONS: readonly CelFunc[] = [
  celFunc('_+_', [LIST, LIST], LIST, (lhs, rhs) => listAdd(lhs, rhs)),
  celFunc('_==_', [CelScalar.DYN, CelScalar.DYN], CelScalar.BOOL, (lhs, rhs) => equalsAsKubernetes(lhs, rhs)),
  celFunc('_!=_', [CelScalar.DYN, CelScalar.DYN], CelScalar.BOOL, (lhs, rhs) => !equalsAsKubernetes(lhs, rhs)),
];
