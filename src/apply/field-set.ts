/**
 * Sets of field paths, the unit of ownership in server-side apply, with the FieldsV1 encoding that
 * kube-apiserver v1.25 stores in `metadata.managedFields[].fieldsV1`.
 *
 * The model and its encoding follow sigs.k8s.io/structured-merge-diff v4 (fieldpath package): a
 * set is a tree whose nodes hold "members" (paths owned as a whole) and "children" (paths with
 * owned descendants). A path element is `f:<field name>`, `k:<json of the key fields>` (items of a
 * map list), `v:<json value>` (items of a set list) or `i:<index>`; `.` marks a node that is both
 * a member and has children. Elements are kept in structured-merge-diff's order so that the
 * encoding is byte-identical to what Kubernetes writes.
 */
import { isJsonObject, type JsonObject } from '../apis/object';

export interface KeyField {
  readonly name: string;
  readonly value: unknown;
}

export type PathElement =
  | { readonly type: 'field'; readonly name: string }
  /** Key fields sorted by name, as structured-merge-diff keeps them. */
  | { readonly type: 'key'; readonly fields: readonly KeyField[] }
  | { readonly type: 'value'; readonly value: unknown }
  | { readonly type: 'index'; readonly index: number };

export type FieldPath = readonly PathElement[];

export class FieldSetDecodeError extends Error {
  override name = 'FieldSetDecodeError';
}

export const fieldElement = (name: string): PathElement => ({ type: 'field', name });
export const indexElement = (index: number): PathElement => ({ type: 'index', index });
export const valueElement = (value: unknown): PathElement => ({ type: 'value', value });
export function keyElement(fields: Iterable<KeyField>): PathElement {
  return { type: 'key', fields: [...fields].sort((a, b) => compareGoStrings(a.name, b.name)) };
}

/** Go's strings.Compare: byte order of the UTF-8 encodings. */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0;
  // For BMP-only text UTF-16 order equals UTF-8 byte order except around surrogates.
  if (/^[\u0000-\ud7ff]*$/.test(a) && /^[\u0000-\ud7ff]*$/.test(b)) return a < b ? -1 : 1;
  return Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
}

/** Rank of a value's kind in structured-merge-diff's total order (value.Compare). */
function kindRank(value: unknown): number {
  if (typeof value === 'number') return 0;
  if (typeof value === 'string') return 2;
  if (typeof value === 'boolean') return 3;
  if (Array.isArray(value)) return 4;
  if (isJsonObject(value)) return 5;
  return 6; // null
}

/** The total order structured-merge-diff puts on values: numbers, strings, bools, lists, maps, null. */
export function compareValues(a: unknown, b: unknown): number {
  const rankA = kindRank(a);
  const rankB = kindRank(b);
  if (rankA !== rankB) return rankA < rankB ? -1 : 1;
  if (typeof a === 'number' && typeof b === 'number') return a === b ? 0 : a < b ? -1 : 1;
  if (typeof a === 'string' && typeof b === 'string') return compareGoStrings(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; ; i++) {
      if (i >= a.length && i >= b.length) return 0;
      if (i >= a.length) return -1;
      if (i >= b.length) return 1;
      const c = compareValues(a[i], b[i]);
      if (c !== 0) return c;
    }
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keysA = Object.keys(a).sort(compareGoStrings);
    const keysB = Object.keys(b).sort(compareGoStrings);
    for (let i = 0; ; i++) {
      if (i >= keysA.length && i >= keysB.length) return 0;
      if (i >= keysA.length) return -1;
      if (i >= keysB.length) return 1;
      const keyA = keysA[i] as string;
      const keyB = keysB[i] as string;
      const byKey = compareGoStrings(keyA, keyB);
      if (byKey !== 0) return byKey;
      const byValue = compareValues(a[keyA], b[keyB]);
      if (byValue !== 0) return byValue;
    }
  }
  return 0;
}

/** Equality as structured-merge-diff sees it (value.Equals). */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => valuesEqual(item, b[i]));
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && valuesEqual(a[key], b[key]));
  }
  return false;
}

/** PathElement.Compare: field names, then keys, then values, then indexes. */
export function comparePathElements(a: PathElement, b: PathElement): number {
  const order = { field: 0, key: 1, value: 2, index: 3 } as const;
  if (a.type !== b.type) return order[a.type] < order[b.type] ? -1 : 1;
  switch (a.type) {
    case 'field':
      return compareGoStrings(a.name, (b as typeof a).name);
    case 'key': {
      const other = (b as typeof a).fields;
      for (let i = 0; ; i++) {
        if (i >= a.fields.length && i >= other.length) return 0;
        if (i >= a.fields.length) return -1;
        if (i >= other.length) return 1;
        const mine = a.fields[i] as KeyField;
        const theirs = other[i] as KeyField;
        const byName = compareGoStrings(mine.name, theirs.name);
        if (byName !== 0) return byName;
        const byValue = compareValues(mine.value, theirs.value);
        if (byValue !== 0) return byValue;
      }
    }
    case 'value':
      return compareValues(a.value, (b as typeof a).value);
    case 'index': {
      const other = (b as typeof a).index;
      return a.index === other ? 0 : a.index < other ? -1 : 1;
    }
  }
}

const GO_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A JSON string as Go's encoding/json writes it (HTML-safe, U+2028/9 escaped). */
export function goQuote(text: string): string {
  return `"${text.replace(/["\\\u0000-\u001f<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

function goNumber(value: number): string {
  if (!Number.isFinite(value)) throw new FieldSetDecodeError(`unsupported value: ${value}`);
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return String(value);
  const abs = Math.abs(value);
  if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) {
    // Go writes exponents with at least two digits only when needed: 1e-07 becomes 1e-7.
    return value.toExponential().replace(/e([+-])0*(\d)/, 'e$1$2');
  }
  return String(value);
}

/** Compact JSON with Go's conventions: map keys sorted, HTML-safe strings. */
export function goJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'string') return goQuote(value);
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`;
  if (isJsonObject(value)) {
    const keys = Object.keys(value).sort(compareGoStrings);
    return `{${keys.map((key) => `${goQuote(key)}:${goJson(value[key])}`).join(',')}}`;
  }
  throw new FieldSetDecodeError(`cannot encode ${typeof value}`);
}

/** The FieldsV1 key of an element: `f:name`, `k:{...}`, `v:...`, `i:3`. */
export function serializePathElement(element: PathElement): string {
  switch (element.type) {
    case 'field':
      return `f:${element.name}`;
    case 'key':
      // Keys are written in their (sorted) order, not re-sorted like a map.
      return `k:{${element.fields.map((field) => `${goQuote(field.name)}:${goJson(field.value)}`).join(',')}}`;
    case 'value':
      return `v:${goJson(element.value)}`;
    case 'index':
      return `i:${element.index}`;
  }
}

/** Parses a FieldsV1 key; undefined for an element type this version does not know (dropped, as Kubernetes does). */
export function parsePathElement(text: string): PathElement | undefined {
  if (text.length < 2) throw new FieldSetDecodeError('key must be 2 characters long:');
  if (text[1] !== ':') throw new FieldSetDecodeError(`missing colon: ${text}`);
  const body = text.slice(2);
  switch (text[0]) {
    case 'f':
      return fieldElement(body);
    case 'v':
      return valueElement(parseJson(body));
    case 'k': {
      const parsed = parseJson(body);
      if (!isJsonObject(parsed)) throw new FieldSetDecodeError(`key is not an object: ${text}`);
      return keyElement(Object.entries(parsed).map(([name, value]) => ({ name, value })));
    }
    case 'i': {
      if (!/^[+-]?\d+$/.test(body)) throw new FieldSetDecodeError(`strconv.Atoi: parsing ${goQuote(body)}: invalid syntax`);
      return indexElement(Number(body));
    }
    default:
      return undefined;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new FieldSetDecodeError(`parsing path element: ${(err as Error).message}`);
  }
}

/** Path.String(): `.spec.replicas`, `.spec.containers[name="nginx"].image`, `[=value]`, `[0]`. */
export function pathToString(path: FieldPath): string {
  return path.map(elementToString).join('');
}

function valueToString(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goQuote(value);
  if (Array.isArray(value)) return `[${value.map(valueToString).join(',')}]`;
  if (isJsonObject(value)) return Object.keys(value).map((key) => `${key}=${valueToString(value[key])}`).join('');
  return String(value);
}

function elementToString(element: PathElement): string {
  switch (element.type) {
    case 'field':
      return `.${element.name}`;
    case 'key':
      return `[${element.fields.map((field) => `${field.name}=${valueToString(field.value)}`).join(',')}]`;
    case 'value':
      return `[=${valueToString(element.value)}]`;
    case 'index':
      return `[${element.index}]`;
  }
}

interface ChildNode {
  readonly element: PathElement;
  readonly set: FieldSet;
}

/**
 * A set of field paths. Elements are indexed by their serialized form, which is canonical (key
 * fields sorted, values written as Go writes them).
 */
export class FieldSet {
  private readonly members = new Map<string, PathElement>();
  private readonly children = new Map<string, ChildNode>();

  static empty(): FieldSet {
    return new FieldSet();
  }

  static of(paths: Iterable<FieldPath>): FieldSet {
    const set = new FieldSet();
    for (const path of paths) set.insert(path);
    return set;
  }

  /** Decodes the FieldsV1 tree (the parsed JSON object); throws FieldSetDecodeError. */
  static fromFieldsV1(fields: unknown): FieldSet {
    if (fields === null || fields === undefined) return new FieldSet();
    if (!isJsonObject(fields)) throw new FieldSetDecodeError('FieldsV1 must be a JSON object');
    return FieldSet.readNode(fields).set;
  }

  static fromJson(text: string): FieldSet {
    return FieldSet.fromFieldsV1(parseJson(text));
  }

  private static readNode(node: JsonObject): { set: FieldSet; isMember: boolean } {
    const set = new FieldSet();
    let isMember = false;
    for (const [key, child] of Object.entries(node)) {
      if (key === '.') {
        isMember = true;
        continue;
      }
      const element = parsePathElement(key);
      if (element === undefined) continue;
      if (!isJsonObject(child)) throw new FieldSetDecodeError(`FieldsV1 value of ${goQuote(key)} must be an object`);
      const grandchildren = FieldSet.readNode(child);
      if (grandchildren.isMember) set.members.set(serializePathElement(element), element);
      if (!grandchildren.set.isEmpty()) set.children.set(serializePathElement(element), { element, set: grandchildren.set });
    }
    // A node with no children at all is a leaf, hence a member of its parent.
    if (set.isEmpty()) isMember = true;
    return { set, isMember };
  }

  isEmpty(): boolean {
    if (this.members.size > 0) return false;
    for (const child of this.children.values()) if (!child.set.isEmpty()) return false;
    return true;
  }

  copy(): FieldSet {
    const out = new FieldSet();
    for (const [key, element] of this.members) out.members.set(key, element);
    for (const [key, child] of this.children) out.children.set(key, { element: child.element, set: child.set.copy() });
    return out;
  }

  insert(path: FieldPath): void {
    // The empty path is the whole object, whose ownership is not tracked.
    if (path.length === 0) return;
    let node: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) node = node.descend(path[i] as PathElement);
    const last = path[path.length - 1] as PathElement;
    node.members.set(serializePathElement(last), last);
  }

  /** True when the path is a member (owned as a whole). */
  has(path: FieldPath): boolean {
    if (path.length === 0) return false;
    const parent = this.at(path.slice(0, -1));
    return parent !== undefined && parent.members.has(serializePathElement(path[path.length - 1] as PathElement));
  }

  /** The subtree below `path` (its children), or undefined when nothing below it is in the set. */
  at(path: FieldPath): FieldSet | undefined {
    let node: FieldSet | undefined = this;
    for (const element of path) {
      node = node.children.get(serializePathElement(element))?.set;
      if (node === undefined) return undefined;
    }
    return node;
  }

  /** True when the path is a member or something below it is. */
  hasPrefix(path: FieldPath): boolean {
    if (this.has(path)) return true;
    const below = this.at(path);
    return below !== undefined && !below.isEmpty();
  }

  private descend(element: PathElement): FieldSet {
    const key = serializePathElement(element);
    let child = this.children.get(key);
    if (child === undefined) {
      child = { element, set: new FieldSet() };
      this.children.set(key, child);
    }
    return child.set;
  }

  union(other: FieldSet): FieldSet {
    const out = this.copy();
    for (const [key, element] of other.members) out.members.set(key, element);
    for (const [key, child] of other.children) {
      const mine = out.children.get(key);
      out.children.set(key, { element: child.element, set: mine === undefined ? child.set.copy() : mine.set.union(child.set) });
    }
    return out;
  }

  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [key, element] of this.members) if (other.members.has(key)) out.members.set(key, element);
    for (const [key, child] of this.children) {
      const theirs = other.children.get(key);
      if (theirs === undefined) continue;
      const both = child.set.intersection(theirs.set);
      if (!both.isEmpty()) out.children.set(key, { element: child.element, set: both });
    }
    return out;
  }

  /** Paths of this set that are not paths of `other` (structured-merge-diff Set.Difference). */
  difference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [key, element] of this.members) if (!other.members.has(key)) out.members.set(key, element);
    for (const [key, child] of this.children) {
      const theirs = other.children.get(key);
      const rest = theirs === undefined ? child.set.copy() : child.set.difference(theirs.set);
      if (!rest.isEmpty()) out.children.set(key, { element: child.element, set: rest });
    }
    return out;
  }

  /** Removes every path at or below a member of `other` (Set.RecursiveDifference). */
  recursiveDifference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [key, element] of this.members) if (!other.members.has(key)) out.members.set(key, element);
    for (const [key, child] of this.children) {
      if (other.members.has(key)) continue;
      const theirs = other.children.get(key);
      const rest = theirs === undefined ? child.set.copy() : child.set.recursiveDifference(theirs.set);
      if (!rest.isEmpty()) out.children.set(key, { element: child.element, set: rest });
    }
    return out;
  }

  equals(other: FieldSet): boolean {
    return this.toJson() === other.toJson();
  }

  /** Every member path: a node's members first, then its children's, each in element order. */
  paths(): FieldPath[] {
    const out: FieldPath[] = [];
    const walk = (set: FieldSet, prefix: FieldPath): void => {
      for (const element of sortedElements(set.members.values())) out.push([...prefix, element]);
      const children = [...set.children.values()].sort((a, b) => comparePathElements(a.element, b.element));
      for (const child of children) walk(child.set, [...prefix, child.element]);
    };
    walk(this, []);
    return out;
  }

  /** The FieldsV1 tree as a JSON object whose key order is the one Kubernetes writes. */
  toFieldsV1(): JsonObject {
    return this.emit(false);
  }

  /** The FieldsV1 bytes exactly as structured-merge-diff serialises them. */
  toJson(): string {
    return writeJson(this.toFieldsV1());
  }

  private emit(includeSelf: boolean): JsonObject {
    const out: JsonObject = {};
    const members = sortedElements(this.members.values());
    const children = [...this.children.values()].filter((child) => !child.set.isEmpty()).sort((a, b) => comparePathElements(a.element, b.element));
    if (includeSelf && (members.length > 0 || children.length > 0)) out['.'] = {};
    let m = 0;
    let c = 0;
    while (m < members.length || c < children.length) {
      const member = members[m];
      const child = children[c];
      const order = member === undefined ? 1 : child === undefined ? -1 : comparePathElements(member, child.element);
      if (order < 0) {
        out[serializePathElement(member as PathElement)] = {};
        m++;
      } else if (order > 0) {
        const node = child as ChildNode;
        out[serializePathElement(node.element)] = node.set.emit(false);
        c++;
      } else {
        const node = child as ChildNode;
        out[serializePathElement(node.element)] = node.set.emit(true);
        m++;
        c++;
      }
    }
    return out;
  }
}

function sortedElements(elements: Iterable<PathElement>): PathElement[] {
  return [...elements].sort(comparePathElements);
}

/** Writes an emitted FieldsV1 tree: keys in insertion order, Go string escaping. */
function writeJson(node: JsonObject): string {
  return `{${Object.entries(node).map(([key, child]) => `${goQuote(key)}:${writeJson(child as JsonObject)}`).join(',')}}`;
}
