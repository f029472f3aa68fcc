/**
 * RFC 6902 JSON patch as kube-apiserver v1.25 applies it: the handler's decoding checks
 * (k8s.io/apiserver pkg/endpoints/handlers/patch.go applyJSPatch) followed by
 * github.com/evanphx/json-patch v4.12.0, the version vendored by Kubernetes v1.25.
 *
 * That library is looser than the RFC in ways clients can observe, and we follow it:
 * - `replace` of a missing object member succeeds and adds it (its object `get` never fails);
 * - `copy` from a missing object member adds null;
 * - negative array indices count from the end (`-1` is the last element; for `add`, `-1` appends);
 * - indices are parsed like Go's strconv.Atoi, so `+1` and `01` are accepted;
 * - a path without a leading "/" has its first segment ignored (`a/b` acts as `/b`);
 * - `add` without a `value` member adds null;
 * - `replace` at the root path "" swaps the whole document for an object or array value, and is a
 *   no-op for any other value; `test` at "" compares the whole document;
 * - `test` treats a missing member like a null one.
 * Where the library would crash (a nil pointer for `test` without `value` on a missing member),
 * we fail the operation instead.
 *
 * `applyJsonPatchMarshaled` also gives the text the library's Marshal writes for the result (what
 * kube-apiserver quotes when that result does not decode into the kind's type): the objects an
 * operation walked through, tested or landed in are written with sorted keys, the rest as they were.
 */
import { GoMapOrder, type MarshaledDocument } from './go-text';
import { deepEqual, goJsonKind, hasOwn } from './json-value';
import { MAX_JSON_PATCH_OPERATIONS, PatchError } from './patch-error';
import { deepCopy, isJsonObject, type JsonObject, type JsonValue, setMember } from '../apis/object';

/** The `fieldValidation` query parameter; v1.25 treats an empty one as Warn. */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export interface PatchDecodeOptions {
  /** Warn and Strict make the handler pre-decode the body strictly, which words errors differently. */
  fieldValidation?: FieldValidation;
}

type Container = JsonObject | JsonValue[];

/** The document being patched, and which of its objects the library has decoded. */
interface PatchState {
  doc: Container;
  readonly order: GoMapOrder;
}

/** The outcome of one container access; `value` undefined means Go's nil node (absent member). */
type Lookup = { ok: true; value: JsonValue | undefined } | { ok: false; error: string };

class OperationFailed extends Error {}

export function applyJsonPatch(document: JsonValue, patch: unknown, options: PatchDecodeOptions = {}): JsonValue {
  return applyJsonPatchMarshaled(document, patch, options).value;
}

/** applyJsonPatch, with the text Go's Marshal writes for the result. */
export function applyJsonPatchMarshaled(document: JsonValue, patch: unknown, options: PatchDecodeOptions = {}): MarshaledDocument {
  const operations = decodeJsonPatch(patch, options.fieldValidation ?? 'Warn');
  if (operations.length > MAX_JSON_PATCH_OPERATIONS) throw PatchError.tooManyOperations(operations.length);
  const order = new GoMapOrder();
  let value: JsonValue;
  try {
    value = applyOperations(document, operations, order);
  } catch (err) {
    if (err instanceof OperationFailed) throw PatchError.unprocessable(err.message);
    throw err;
  }
  // The document itself is always decoded.
  order.markDecoded(value);
  return { value, goJson: () => order.marshal(value) };
}

/** Validates the body's shape; a null body is a patch without operations, as in Go. */
function decodeJsonPatch(patch: unknown, fieldValidation: FieldValidation): Array<JsonObject | null> {
  if (fieldValidation !== 'Ignore') {
    // The handler first decodes strictly into []jsonPatchOp{Op, Path, From string; Value interface{}}.
    const failure = strictShapeError(patch);
    if (failure !== undefined) throw PatchError.badRequest(`error decoding patch: ${failure}`);
  }
  if (patch === null) return [];
  if (!Array.isArray(patch)) {
    throw PatchError.badRequest(`json: cannot unmarshal ${goJsonKind(patch)} into Go value of type jsonpatch.Patch`);
  }
  for (const element of patch) {
    if (element !== null && !isJsonObject(element)) {
      throw PatchError.badRequest(`json: cannot unmarshal ${goJsonKind(element)} into Go value of type jsonpatch.Operation`);
    }
  }
  return patch as Array<JsonObject | null>;
}

/** The first type error Go's decoder would report for []handlers.jsonPatchOp, if any. */
function strictShapeError(patch: unknown): string | undefined {
  if (patch === null) return undefined;
  if (!Array.isArray(patch)) return `json: cannot unmarshal ${goJsonKind(patch)} into Go value of type []handlers.jsonPatchOp`;
  for (const element of patch) {
    if (element === null) continue;
    if (!isJsonObject(element)) return `json: cannot unmarshal ${goJsonKind(element)} into Go value of type handlers.jsonPatchOp`;
    for (const field of Object.keys(element)) {
      // sigs.k8s.io/json matches field names case-sensitively in strict mode.
      if (field !== 'op' && field !== 'path' && field !== 'from') continue;
      const value = element[field];
      if (value !== null && typeof value !== 'string') {
        return `json: cannot unmarshal ${goJsonKind(value)} into Go struct field jsonPatchOp.${field} of type string`;
      }
    }
  }
  return undefined;
}

function applyOperations(document: JsonValue, operations: Array<JsonObject | null>, order: GoMapOrder): JsonValue {
  if (!isJsonObject(document) && !Array.isArray(document)) {
    throw new OperationFailed(`json: cannot unmarshal ${goJsonKind(document)} into Go value of type jsonpatch.partialDoc`);
  }
  const root: PatchState = { doc: deepCopy(document), order };
  for (const operation of operations) {
    const kind = operationKind(operation);
    const op = operation ?? {};
    switch (kind) {
      case 'add': add(root, op); break;
      case 'remove': remove(root, op); break;
      case 'replace': replace(root, op); break;
      case 'move': move(root, op); break;
      case 'test': test(root, op); break;
      case 'copy': copy(root, op); break;
      default: throw new OperationFailed(`Unexpected kind: ${kind}`);
    }
  }
  return root.doc;
}

function operationKind(operation: JsonObject | null): string {
  const op = operation?.op;
  return typeof op === 'string' ? op : 'unknown';
}

function pointerField(op: JsonObject, field: 'path' | 'from'): string {
  const value = op[field];
  if (value === undefined || value === null) {
    throw new OperationFailed(field === 'path' ? 'operation missing path field: missing value' : 'operation, missing from field: missing value');
  }
  if (typeof value !== 'string') {
    throw new OperationFailed(`json: cannot unmarshal ${goJsonKind(value)} into Go value of type string`);
  }
  return value;
}

/** The operation's value; undefined when the member is absent (Go's nil node). */
function operationValue(op: JsonObject): JsonValue | undefined {
  return hasOwn(op, 'value') ? (op.value as JsonValue) : undefined;
}

/** RFC 6901 unescaping in one pass, so "~01" becomes "~1". */
function decodeToken(token: string): string {
  return token.replace(/~[01]/g, (escape) => (escape === '~1' ? '/' : '~'));
}

/** The container holding the pointer's last token, walking (and so decoding) every token before it. */
function findObject(state: PatchState, path: string): { container: Container; key: string } | undefined {
  const split = path.split('/');
  if (split.length < 2) return undefined;
  let current: Container = state.doc;
  for (const part of split.slice(1, -1)) {
    const next = get(current, decodeToken(part));
    if (!next.ok || next.value === undefined || next.value === null) return undefined;
    if (typeof next.value !== 'object') return undefined;
    state.order.markDecoded(next.value);
    current = next.value;
  }
  return { container: current, key: decodeToken(split[split.length - 1] as string) };
}

/** Go's strconv.Atoi: optional sign, decimal digits, 64-bit range. */
function parseIndex(key: string): number | undefined {
  if (!/^[+-]?[0-9]+$/.test(key)) return undefined;
  const index = Number(key);
  return Number.isSafeInteger(index) ? index : undefined;
}

function invalidIndex(index: number): Lookup {
  return { ok: false, error: `Unable to access invalid index: ${index}: invalid index referenced` };
}

function get(container: Container, key: string): Lookup {
  if (!Array.isArray(container)) {
    return { ok: true, value: hasOwn(container, key) ? (container[key] as JsonValue) : undefined };
  }
  let index = parseIndex(key);
  if (index === undefined) return { ok: false, error: `strconv.Atoi: parsing "${key}": invalid syntax` };
  if (index < 0) {
    if (index < -container.length) return invalidIndex(index);
    index += container.length;
  }
  if (index >= container.length) return invalidIndex(index);
  return { ok: true, value: container[index] };
}

function addTo(container: Container, key: string, value: JsonValue): string | undefined {
  if (!Array.isArray(container)) {
    setMember(container, key, value);
    return undefined;
  }
  if (key === '-') {
    container.push(value);
    return undefined;
  }
  let index = parseIndex(key);
  if (index === undefined) return `value was not a proper array index: '${key}': strconv.Atoi: parsing "${key}": invalid syntax`;
  const grownLength = container.length + 1;
  if (index >= grownLength) return `Unable to access invalid index: ${index}: invalid index referenced`;
  if (index < 0) {
    if (index < -grownLength) return `Unable to access invalid index: ${index}: invalid index referenced`;
    index += grownLength;
  }
  container.splice(index, 0, value);
  return undefined;
}

function removeFrom(container: Container, key: string): string | undefined {
  if (!Array.isArray(container)) {
    if (!hasOwn(container, key)) return `Unable to remove nonexistent key: ${key}: missing value`;
    delete container[key];
    return undefined;
  }
  let index = parseIndex(key);
  if (index === undefined) return `strconv.Atoi: parsing "${key}": invalid syntax`;
  if (index >= container.length) return `Unable to access invalid index: ${index}: invalid index referenced`;
  if (index < 0) {
    if (index < -container.length) return `Unable to access invalid index: ${index}: invalid index referenced`;
    index += container.length;
  }
  container.splice(index, 1);
  return undefined;
}

/** Only called after `get` succeeded, so an array index is in range. */
function setIn(container: Container, key: string, value: JsonValue): void {
  if (!Array.isArray(container)) {
    setMember(container, key, value);
    return;
  }
  let index = parseIndex(key) as number;
  if (index < 0) index += container.length;
  container[index] = value;
}

function add(root: PatchState, op: JsonObject): void {
  const path = pointerField(op, 'path');
  const target = findObject(root, path);
  if (target === undefined) throw new OperationFailed(`add operation does not apply: doc is missing path: "${path}": missing value`);
  const failure = addTo(target.container, target.key, deepCopy(operationValue(op) ?? null));
  if (failure !== undefined) throw new OperationFailed(`error in add for path: '${path}': ${failure}`);
}

function remove(root: PatchState, op: JsonObject): void {
  const path = pointerField(op, 'path');
  const target = findObject(root, path);
  if (target === undefined) throw new OperationFailed(`remove operation does not apply: doc is missing path: "${path}": missing value`);
  const failure = removeFrom(target.container, target.key);
  if (failure !== undefined) throw new OperationFailed(`error in remove for path: '${path}': ${failure}`);
}

function replace(root: PatchState, op: JsonObject): void {
  const path = pointerField(op, 'path');
  const value = operationValue(op);
  if (path === '') {
    if (value === undefined) throw new OperationFailed('replace operation at the document root has no value');
    if (value !== null && typeof value === 'object') root.doc = deepCopy(value);
    return;
  }
  const target = findObject(root, path);
  if (target === undefined) throw new OperationFailed(`replace operation does not apply: doc is missing path: ${path}: missing value`);
  if (!get(target.container, target.key).ok) {
    throw new OperationFailed(`replace operation does not apply: doc is missing key: ${path}: missing value`);
  }
  setIn(target.container, target.key, deepCopy(value ?? null));
}

function move(root: PatchState, op: JsonObject): void {
  const from = pointerField(op, 'from');
  const source = findObject(root, from);
  if (source === undefined) throw new OperationFailed(`move operation does not apply: doc is missing from path: ${from}: missing value`);
  const found = get(source.container, source.key);
  if (!found.ok) throw new OperationFailed(`error in move for path: '${source.key}': ${found.error}`);
  const removal = removeFrom(source.container, source.key);
  if (removal !== undefined) throw new OperationFailed(`error in move for path: '${source.key}': ${removal}`);
  const path = pointerField(op, 'path');
  const target = findObject(root, path);
  if (target === undefined) throw new OperationFailed(`move operation does not apply: doc is missing destination path: ${path}: missing value`);
  const failure = addTo(target.container, target.key, found.value ?? null);
  if (failure !== undefined) throw new OperationFailed(`error in move for path: '${path}': ${failure}`);
}

function test(root: PatchState, op: JsonObject): void {
  const path = pointerField(op, 'path');
  const expected = operationValue(op);
  const failed = new OperationFailed(`testing value ${path} failed: test failed`);
  if (path === '') {
    if (expected === undefined || !deepEqual(root.doc, expected)) throw failed;
    // Comparing decodes every object it compared.
    root.order.markDecodedDeep(root.doc);
    return;
  }
  const target = findObject(root, path);
  if (target === undefined) throw new OperationFailed(`test operation does not apply: is missing path: ${path}: missing value`);
  const found = get(target.container, target.key);
  if (!found.ok) throw new OperationFailed(`error in test for path: '${path}': ${found.error}`);
  const actual = found.value ?? null;
  if (expected === undefined) throw failed;
  if (!deepEqual(actual, expected)) throw failed;
  root.order.markDecodedDeep(actual);
}

function copy(root: PatchState, op: JsonObject): void {
  const from = pointerField(op, 'from');
  const source = findObject(root, from);
  if (source === undefined) throw new OperationFailed(`copy operation does not apply: doc is missing from path: ${from}: missing value`);
  const found = get(source.container, source.key);
  if (!found.ok) throw new OperationFailed(`error in copy for from: '${from}': ${found.error}`);
  const path = pointerField(op, 'path');
  const target = findObject(root, path);
  if (target === undefined) throw new OperationFailed(`copy operation does not apply: doc is missing destination path: ${path}: missing value`);
  // The library copies by marshalling: the copy keeps the original's written order.
  const failure = addTo(target.container, target.key, root.order.copyAsMarshaled(found.value ?? null));
  if (failure !== undefined) throw new OperationFailed(`error while adding value during copy: ${failure}`);
}
