/**
 * The static type check of one x-kubernetes-validations rule, as kube-apiserver v1.25 runs it when a
 * CRD is written: cel-go v0.12's checker (checker/checker.go, types.go, standard.go) over the
 * declarations that k8s.io/apiextensions-apiserver builds from the schema (pkg/apiserver/schema/cel
 * compilation.go, model/schemas.go `SchemaDeclType`, model/types.go `MaybeAssignTypeName`), with the
 * environment's options (HomogeneousAggregateLiterals; cross-type numeric comparisons left off) and
 * the Kubernetes libraries (k8s.io/apiserver pkg/cel/library lists.go, regex.go, urls.go; cel-go
 * ext.Strings).
 *
 * Every node gets a type; every operator and call must match one overload, or the rule is refused
 * with cel-go's message (`found no matching overload for '_+_' applied to '(int, string)'`, the
 * receiver first for member calls: `'startsWith' applied to 'int.(string)'`). Types print as
 * cel-go v0.12's FormatCheckedType does: `int`, `list(string)`, `map(string, int)`, `timestamp`,
 * `duration`, and objects by the generated name `selfType<n>.path`.
 *
 * Invariant (conservative): whatever this pass does not model is a *vague* dyn, which matches every
 * overload and never makes a rule fail. A false refusal of a valid CRD is far worse than a missed
 * one, so vagueness is the answer wherever the schema or a function is not understood.
 *
 * Locations are cel-go's, not the parser's: cel-go places a call at its `(`, a binary operator at
 * its token and a macro's expansion at the macro's `(`; `offsetOf` recovers those from the source.
 *
 * Like cel-go's checked AST, the result keeps each node's type and each call's matching overload
 * ids (named as cel-go names the ones its cost estimator prices), which `cel-cost.ts` reads.
 */
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { additionalSchema, preservesUnknown, type JsonSchemaProps } from '../json-schema';

type ScalarKind = 'int' | 'uint' | 'double' | 'bool' | 'string' | 'bytes' | 'null' | 'timestamp' | 'duration';

export type CelType =
  | { readonly kind: ScalarKind }
  | { readonly kind: 'dyn'; readonly vague?: boolean }
  | { readonly kind: 'error' }
  | { readonly kind: 'list'; readonly elem: CelType }
  | { readonly kind: 'map'; readonly key: CelType; readonly value: CelType }
  | { readonly kind: 'object'; readonly name: string; readonly field: (name: string) => CelType | undefined }
  | { readonly kind: 'type'; readonly of?: CelType }
  | { readonly kind: 'param'; readonly name: string };

const scalar = (kind: ScalarKind): CelType => ({ kind });
const INT = scalar('int');
const UINT = scalar('uint');
const DOUBLE = scalar('double');
const BOOL = scalar('bool');
const STRING = scalar('string');
const BYTES = scalar('bytes');
const NULL = scalar('null');
const TIMESTAMP = scalar('timestamp');
const DURATION = scalar('duration');
const DYN: CelType = { kind: 'dyn' };
const VAGUE: CelType = { kind: 'dyn', vague: true };
const ERROR: CelType = { kind: 'error' };
const A: CelType = { kind: 'param', name: 'A' };
const B: CelType = { kind: 'param', name: 'B' };
const list = (elem: CelType): CelType => ({ kind: 'list', elem });
const map = (key: CelType, value: CelType): CelType => ({ kind: 'map', key, value });
const typeOf = (of?: CelType): CelType => ({ kind: 'type', of });
/** v1.25's URL values (k8s.io/apiserver pkg/cel/library urls.go, `kubernetes.URL`). */
const URL_TYPE: CelType = { kind: 'object', name: 'kubernetes.URL', field: () => undefined };

/** cel-go v0.12 FormatCheckedType. */
function formatType(t: CelType): string {
  switch (t.kind) {
    case 'dyn': return 'dyn';
    case 'error': return '!error!';
    case 'list': return `list(${formatType(t.elem)})`;
    case 'map': return `map(${formatType(t.key)}, ${formatType(t.value)})`;
    case 'object': return t.name;
    case 'type': return t.of === undefined ? 'type' : `type(${formatType(t.of)})`;
    case 'param': return `type_param:"${t.name}"`;
    default: return t.kind;
  }
}

function isDyn(t: CelType): boolean {
  return t.kind === 'dyn';
}

function isDynOrError(t: CelType): boolean {
  return t.kind === 'dyn' || t.kind === 'error';
}

function isVague(t: CelType): boolean {
  switch (t.kind) {
    case 'dyn': return t.vague === true;
    case 'list': return isVague(t.elem);
    case 'map': return isVague(t.key) || isVague(t.value);
    default: return false;
  }
}

function sameType(a: CelType, b: CelType): boolean {
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'list': return sameType(a.elem, (b as typeof a).elem);
    case 'map': return sameType(a.key, (b as typeof a).key) && sameType(a.value, (b as typeof a).value);
    case 'object': return a.name === (b as typeof a).name;
    case 'param': return a.name === (b as typeof a).name;
    case 'type': {
      const other = (b as typeof a).of;
      return a.of === undefined || other === undefined ? a.of === other : sameType(a.of, other);
    }
    default: return true;
  }
}

/** Type-parameter bindings, as cel-go's `mapping`. */
type Mapping = Map<string, CelType>;

function substitute(m: Mapping, t: CelType, paramToDyn: boolean): CelType {
  switch (t.kind) {
    case 'param': {
      const bound = m.get(t.name);
      if (bound !== undefined) return substitute(m, bound, paramToDyn);
      return paramToDyn ? DYN : t;
    }
    case 'list': return list(substitute(m, t.elem, paramToDyn));
    case 'map': return map(substitute(m, t.key, paramToDyn), substitute(m, t.value, paramToDyn));
    case 'type': return t.of === undefined ? t : typeOf(substitute(m, t.of, paramToDyn));
    default: return t;
  }
}

function isEqualOrLessSpecific(a: CelType, b: CelType): boolean {
  if (isDyn(a) || a.kind === 'param') return true;
  if (isDyn(b) || b.kind === 'param') return false;
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'list': return isEqualOrLessSpecific(a.elem, (b as typeof a).elem);
    case 'map': return isEqualOrLessSpecific(a.key, (b as typeof a).key) && isEqualOrLessSpecific(a.value, (b as typeof a).value);
    case 'type': return true;
    default: return sameType(a, b);
  }
}

function mostGeneral(a: CelType, b: CelType): CelType {
  return isEqualOrLessSpecific(a, b) ? a : b;
}

function notReferencedIn(m: Mapping, t: CelType, within: CelType): boolean {
  if (sameType(t, within)) return false;
  switch (within.kind) {
    case 'param': {
      const bound = m.get(within.name);
      return bound === undefined ? true : notReferencedIn(m, t, bound);
    }
    case 'list': return notReferencedIn(m, t, within.elem);
    case 'map': return notReferencedIn(m, t, within.key) && notReferencedIn(m, t, within.value);
    default: return true;
  }
}

/** Whether `b` (a type parameter) can stand for `a`; binds it when it can. [valid, hadBinding] */
function substitution(m: Mapping, a: CelType, b: CelType & { kind: 'param' }): [boolean, boolean] {
  const bound = m.get(b.name);
  if (bound !== undefined) {
    if (sameType(a, bound)) return [true, true];
    if (assignable(m, a, bound)) {
      m.set(b.name, mostGeneral(a, bound));
      return [true, true];
    }
    return [false, true];
  }
  if (notReferencedIn(m, b, a)) {
    m.set(b.name, a);
    return [true, false];
  }
  return [false, false];
}

/** cel-go's internalIsAssignable: may a value of type `a` be passed where `b` is expected (mutates `m`). */
function assignable(m: Mapping, a: CelType, b: CelType): boolean {
  if (b.kind === 'param') {
    const [valid, hadBinding] = substitution(m, a, b);
    if (valid) return true;
    if (hadBinding) return false;
  }
  if (a.kind === 'param') return substitution(m, b, a)[0];
  if (isDynOrError(a) || isDynOrError(b)) return true;
  if (a.kind === 'null') return b.kind === 'null' || b.kind === 'object' || b.kind === 'timestamp' || b.kind === 'duration';
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'list': return assignable(m, a.elem, (b as typeof a).elem);
    case 'map': return assignable(m, a.key, (b as typeof a).key) && assignable(m, a.value, (b as typeof a).value);
    case 'object': return a.name === (b as typeof a).name;
    default: return true;
  }
}

function assignableList(m: Mapping, as: CelType[], bs: CelType[]): boolean {
  if (as.length !== bs.length) return false;
  return as.every((a, i) => assignable(m, a, bs[i]));
}

interface Overload {
  readonly instance: boolean;
  readonly params: readonly CelType[];
  readonly result: CelType;
}

const global = (params: CelType[], result: CelType): Overload => ({ instance: false, params, result });
const member = (params: CelType[], result: CelType): Overload => ({ instance: true, params, result });

/** Same-typed overloads for each of `types`, as cel-go declares its arithmetic and orderings. */
function homogeneous(types: CelType[], arity: number, result?: CelType): Overload[] {
  return types.map((t) => global(Array.from({ length: arity }, () => t), result ?? t));
}

const ORDERED = [BOOL, INT, UINT, DOUBLE, STRING, BYTES, TIMESTAMP, DURATION];
const COMPARABLE_LIST_ELEMENTS = [INT, UINT, DOUBLE, BOOL, DURATION, TIMESTAMP, STRING, BYTES];
const TIME_PARTS = ['getFullYear', 'getMonth', 'getDayOfYear', 'getDayOfMonth', 'getDate', 'getDayOfWeek'];
const CLOCK_PARTS = ['getHours', 'getMinutes', 'getSeconds', 'getMilliseconds'];

/**
 * The overloads of v1.25's environment: cel-go v0.12 standard declarations (without the cross-type
 * numeric comparisons, which v1.25 does not enable), the Kubernetes libraries and ext.Strings v0.
 * A function known by name but absent here is typed vaguely (never refused).
 */
const DECLARED_FUNCTIONS: ReadonlyMap<string, readonly Overload[]> = new Map<string, Overload[]>([
  ['_?_:_', [global([BOOL, A, A], A)]],
  ['_&&_', [global([BOOL, BOOL], BOOL)]],
  ['_||_', [global([BOOL, BOOL], BOOL)]],
  ['!_', [global([BOOL], BOOL)]],
  ['@not_strictly_false', [global([BOOL], BOOL)]],
  ['_==_', [global([A, A], BOOL)]],
  ['_!=_', [global([A, A], BOOL)]],
  ['_-_', [...homogeneous([INT, UINT, DOUBLE], 2), global([TIMESTAMP, TIMESTAMP], DURATION), global([TIMESTAMP, DURATION], TIMESTAMP), global([DURATION, DURATION], DURATION)]],
  ['_*_', homogeneous([INT, UINT, DOUBLE], 2)],
  ['_/_', homogeneous([INT, UINT, DOUBLE], 2)],
  ['_%_', homogeneous([INT, UINT], 2)],
  ['_+_', [...homogeneous([INT, UINT, DOUBLE, STRING, BYTES], 2), global([list(A), list(A)], list(A)), global([TIMESTAMP, DURATION], TIMESTAMP), global([DURATION, TIMESTAMP], TIMESTAMP), global([DURATION, DURATION], DURATION)]],
  ['-_', homogeneous([INT, DOUBLE], 1)],
  ['_[_]', [global([list(A), INT], A), global([map(A, B), A], B)]],
  ['size', [...[STRING, BYTES, list(A), map(A, B)].map((t) => member([t], INT)), ...[STRING, BYTES, list(A), map(A, B)].map((t) => global([t], INT))]],
  ['@in', [global([A, list(A)], BOOL), global([A, map(A, B)], BOOL)]],
  ['type', [global([A], typeOf(A))]],
  ['int', [INT, UINT, DOUBLE, STRING, TIMESTAMP, DURATION].map((t) => global([t], INT))],
  ['uint', [UINT, INT, DOUBLE, STRING].map((t) => global([t], UINT))],
  ['double', [DOUBLE, INT, UINT, STRING].map((t) => global([t], DOUBLE))],
  ['bool', [BOOL, STRING].map((t) => global([t], BOOL))],
  ['string', [STRING, BOOL, INT, UINT, DOUBLE, BYTES, TIMESTAMP, DURATION].map((t) => global([t], STRING))],
  ['bytes', [BYTES, STRING].map((t) => global([t], BYTES))],
  ['timestamp', [TIMESTAMP, STRING, INT].map((t) => global([t], TIMESTAMP))],
  ['duration', [DURATION, STRING, INT].map((t) => global([t], DURATION))],
  ['dyn', [global([A], DYN)]],
  ['contains', [member([STRING, STRING], BOOL)]],
  ['endsWith', [member([STRING, STRING], BOOL)]],
  ['startsWith', [member([STRING, STRING], BOOL)]],
  ['matches', [member([STRING, STRING], BOOL), global([STRING, STRING], BOOL)]],
  ...TIME_PARTS.map((name): [string, Overload[]] => [name, [member([TIMESTAMP], INT), member([TIMESTAMP, STRING], INT)]]),
  ...CLOCK_PARTS.map((name): [string, Overload[]] => [name, [member([TIMESTAMP], INT), member([TIMESTAMP, STRING], INT), member([DURATION], INT)]]),
  ...(['_<_', '_<=_', '_>_', '_>=_'].map((name): [string, Overload[]] => [name, homogeneous(ORDERED, 2, BOOL)])),
  // k8s.io/apiserver pkg/cel/library lists.go (v1.25).
  ['isSorted', COMPARABLE_LIST_ELEMENTS.map((t) => member([list(t)], BOOL))],
  ['sum', [INT, UINT, DOUBLE, DURATION].map((t) => member([list(t)], t))],
  ['min', COMPARABLE_LIST_ELEMENTS.map((t) => member([list(t)], t))],
  ['max', COMPARABLE_LIST_ELEMENTS.map((t) => member([list(t)], t))],
  // lists.go indexOf/lastIndexOf beside ext.Strings' string forms.
  ['indexOf', [member([list(A), A], INT), member([STRING, STRING], INT), member([STRING, STRING, INT], INT)]],
  ['lastIndexOf', [member([list(A), A], INT), member([STRING, STRING], INT), member([STRING, STRING, INT], INT)]],
  // regex.go.
  ['find', [member([STRING, STRING], STRING)]],
  ['findAll', [member([STRING, STRING], list(STRING)), member([STRING, STRING, INT], list(STRING))]],
  // urls.go.
  ['url', [global([STRING], URL_TYPE)]],
  ['isURL', [global([STRING], BOOL)]],
  ...(['getScheme', 'getHost', 'getHostname', 'getPort', 'getEscapedPath'].map((name): [string, Overload[]] => [name, [member([URL_TYPE], STRING)]])),
  ['getQuery', [member([URL_TYPE], map(STRING, list(STRING)))]],
  // cel-go ext.Strings (version 0).
  ['charAt', [member([STRING, INT], STRING)]],
  ['lowerAscii', [member([STRING], STRING)]],
  ['upperAscii', [member([STRING], STRING)]],
  ['trim', [member([STRING], STRING)]],
  ['replace', [member([STRING, STRING, STRING], STRING), member([STRING, STRING, STRING, INT], STRING)]],
  ['split', [member([STRING, STRING], list(STRING)), member([STRING, STRING, INT], list(STRING))]],
  ['substring', [member([STRING, INT], STRING), member([STRING, INT, INT], STRING)]],
  ['join', [member([list(STRING)], STRING), member([list(STRING), STRING], STRING)]],
]);

/**
 * cel-go's overload id of a declaration (common/overloads): the cost estimator prices calls by these
 * ids, so the ones it knows are named as cel-go names them; the rest only need to be distinct.
 */
function overloadIdOf(name: string, overload: Overload, index: number): string {
  const first = overload.params[0]?.kind;
  const stringish = first === 'string' || first === 'bytes' ? first : undefined;
  const comparisons: Record<string, string> = { '_<_': 'less', '_<=_': 'less_equals', '_>_': 'greater', '_>=_': 'greater_equals' };
  switch (name) {
    case '_==_': return 'equals';
    case '_!=_': return 'not_equals';
    case '_&&_': return 'logical_and';
    case '_||_': return 'logical_or';
    case '_?_:_': return 'conditional';
    case '@not_strictly_false': return 'not_strictly_false';
    case '_+_':
      if (stringish !== undefined) return `add_${stringish}`;
      if (first === 'list') return 'add_list';
      break;
    case '_<_': case '_<=_': case '_>_': case '_>=_':
      if (stringish !== undefined) return `${comparisons[name]}_${stringish}`;
      break;
    case 'matches': return overload.instance ? 'matches_string' : 'matches';
    case 'contains': return 'contains_string';
    case 'startsWith': return 'starts_with_string';
    case 'endsWith': return 'ends_with_string';
    case '@in': return first === undefined ? 'in' : overload.params[1]?.kind === 'map' ? 'in_map' : 'in_list';
    case '_[_]': return first === 'list' ? 'index_list' : 'index_map';
    case 'bytes': if (first === 'string') return 'string_to_bytes'; break;
    case 'string': if (first === 'bytes') return 'bytes_to_string'; break;
    default: break;
  }
  return `${name}#${index}`;
}

const FUNCTIONS: ReadonlyMap<string, readonly (Overload & { readonly id: string })[]> = new Map(
  [...DECLARED_FUNCTIONS].map(([name, overloads]) => [name, overloads.map((o, i) => ({ ...o, id: overloadIdOf(name, o, i) }))]),
);

/** The type identifiers of cel-go's standard environment. */
const TYPE_IDENTIFIERS: ReadonlyMap<string, CelType> = new Map([
  ['int', typeOf(INT)], ['uint', typeOf(UINT)], ['bool', typeOf(BOOL)], ['double', typeOf(DOUBLE)],
  ['bytes', typeOf(BYTES)], ['string', typeOf(STRING)], ['list', typeOf(list(A))], ['map', typeOf(map(A, B))],
  ['null_type', typeOf(NULL)], ['type', typeOf(typeOf())],
  // The well-known types that durations and timestamps are, by their qualified names.
  ['google.protobuf.Duration', typeOf(DURATION)], ['google.protobuf.Timestamp', typeOf(TIMESTAMP)],
]);

/** `a.b.c` for a chain of selections on an identifier, else undefined. */
function qualifiedName(e: Expr | undefined): string | undefined {
  const k = e?.exprKind;
  if (k?.case === 'identExpr') return k.value.name;
  if (k?.case !== 'selectExpr' || k.value.testOnly) return undefined;
  const operand = qualifiedName(k.value.operand);
  return operand === undefined ? undefined : `${operand}.${k.value.field}`;
}

/** apiVersion, kind and metadata.name/generateName: always visible at a resource's root (v1.25 WithTypeAndObjectMeta). */
const ROOT_RESOURCE_FIELDS: Record<string, JsonSchemaProps> = {
  apiVersion: { type: 'string' },
  kind: { type: 'string' },
  metadata: { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } },
};

export function withTypeAndObjectMeta(schema: JsonSchemaProps): JsonSchemaProps {
  const p = schema.properties;
  const meta = p?.metadata?.properties;
  if (p?.kind?.type === 'string' && p.apiVersion?.type === 'string' && p.metadata?.type === 'object' && meta?.name?.type === 'string' && meta.generateName?.type === 'string') return schema;
  return { ...schema, properties: { ...(p ?? {}), ...ROOT_RESOURCE_FIELDS } };
}

const CEL_RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

/** A property name as v1.25 exposes it to CEL (model/escaping.go), or undefined when it is not exposed. */
export function escapedName(name: string): string | undefined {
  if (name === '' || /^[0-9]/.test(name)) return undefined;
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  let ok = true;
  const escaped = name.replace(/__|[-./]|[^a-zA-Z0-9\-./_]/g, (s) => {
    switch (s) {
      case '__': return '__underscores__';
      case '.': return '__dot__';
      case '-': return '__dash__';
      case '/': return '__slash__';
      default:
        ok = false;
        return '';
    }
  });
  return ok ? escaped : undefined;
}

/**
 * The CEL type of values of `schema` (v1.25 SchemaDeclType), named `name` when it is an object.
 * Vague where v1.25 would not expose the node, or where unknown fields are kept: refusing there
 * would need more certainty than this pass has.
 */
function declType(schema: JsonSchemaProps | undefined, name: string, isResource: boolean): CelType {
  if (schema === undefined) return VAGUE;
  if (schema['x-kubernetes-int-or-string'] === true) return DYN;
  const s = isResource ? withTypeAndObjectMeta(schema) : schema;
  switch (s.type) {
    case 'array':
      return s.items === undefined ? VAGUE : list(declType(s.items, `${name}.@idx`, s.items['x-kubernetes-embedded-resource'] === true));
    case 'object': {
      const extra = additionalSchema(s);
      if (extra !== undefined) return map(STRING, declType(extra, `${name}.@elem`, extra['x-kubernetes-embedded-resource'] === true));
      if (s.additionalProperties === true) return VAGUE;
      const properties = s.properties ?? {};
      const open = preservesUnknown(s);
      if (open && Object.keys(properties).length === 0) return VAGUE;
      const fields = new Map<string, CelType>();
      return {
        kind: 'object',
        name,
        field: (field) => {
          const known = fields.get(field);
          if (known !== undefined) return known;
          let property = Object.prototype.hasOwnProperty.call(properties, field) ? properties[field] : undefined;
          // v1.25 exposes escaped names (`foo__dash__bar` for `foo-bar`).
          property ??= Object.entries(properties).find(([key]) => escapedName(key) === field)?.[1];
          if (property === undefined) return open ? VAGUE : undefined;
          const t = declType(property, `${name}.${field}`, property['x-kubernetes-embedded-resource'] === true);
          fields.set(field, t);
          return t;
        },
      };
    }
    case 'string':
      switch (s.format) {
        case 'byte': return BYTES;
        case 'duration': return DURATION;
        case 'date': case 'date-time': return TIMESTAMP;
        default: return STRING;
      }
    case 'boolean': return BOOL;
    case 'number': return DOUBLE;
    case 'integer': return INT;
    default: return VAGUE;
  }
}

/** A type error at a source offset (cel-go's location), before it is printed. */
export interface TypeIssue {
  readonly offset: number;
  readonly message: string;
}

export interface TypeCheckResult {
  readonly issues: readonly TypeIssue[];
  /** The rule's type; undefined when the pass cannot say (vague), which never refuses a rule. */
  readonly resultType: CelType | undefined;
  readonly usesOldSelf: boolean;
  /** Every node's type, by expression id (cel-go's TypeMap); type parameters left unbound are dyn. */
  readonly types: ReadonlyMap<string, CelType>;
  /** Every resolved call's matching overload ids, by expression id (cel-go's ReferenceMap). */
  readonly overloads: ReadonlyMap<string, readonly string[]>;
}

/** Binary operators and the token cel-go locates them at. */
const OPERATOR_TOKENS: Record<string, string> = {
  '_==_': '==', '_!=_': '!=', '_<_': '<', '_<=_': '<=', '_>_': '>', '_>=_': '>=', '@in': 'in',
  '_&&_': '&&', '_||_': '||', '_+_': '+', '_-_': '-', '_*_': '*', '_/_': '/', '_%_': '%', '_?_:_': '?',
};

type Scope = ReadonlyMap<string, CelType>;

class Checker {
  private mapping: Mapping = new Map();
  private freeVars = 0;
  readonly issues: TypeIssue[] = [];
  readonly nodeTypes = new Map<string, CelType>();
  readonly callOverloads = new Map<string, string[]>();
  usesOldSelf = false;

  constructor(
    private readonly source: string,
    private readonly positions: Readonly<Record<string, number>>,
    private readonly knownFunctions: ReadonlySet<string>,
  ) {}

  private position(e: Expr): number {
    return this.positions[e.id.toString()] ?? 0;
  }

  /** The leftmost source offset of a subtree (parser positions are not always the start). */
  private leftmost(e: Expr | undefined): number {
    if (e === undefined) return Number.MAX_SAFE_INTEGER;
    let min = this.position(e);
    const k = e.exprKind;
    switch (k.case) {
      case 'callExpr':
        min = Math.min(min, this.leftmost(k.value.target), ...k.value.args.map((a) => this.leftmost(a)));
        break;
      case 'selectExpr':
        min = Math.min(min, this.leftmost(k.value.operand));
        break;
      case 'comprehensionExpr':
        min = Math.min(min, this.leftmost(k.value.iterRange));
        break;
      default:
        break;
    }
    return min;
  }

  /** Where cel-go reports an error about `e`. */
  private offsetOf(e: Expr): number {
    const src = this.source;
    const k = e.exprKind;
    if (k.case === 'callExpr' && OPERATOR_TOKENS[k.value.function] !== undefined && k.value.args.length >= 2) {
      const token = OPERATOR_TOKENS[k.value.function];
      let i = this.leftmost(k.value.args[1]) - 1;
      while (i >= 0 && /[\s(]/.test(src[i])) i--;
      const start = i - token.length + 1;
      if (start >= 0 && src.slice(start, i + 1) === token) return start;
      // Not found: an operator a macro generated, located like the rest of the expansion below.
    }
    // Calls, macros and the nodes a macro expands to sit at the call's `(` in cel-go.
    const p = this.position(e);
    let i = p;
    if (src[i] === '.') i++;
    while (i < src.length && /\s/.test(src[i])) i++;
    if (!/[A-Za-z_]/.test(src[i] ?? '')) return p;
    while (i < src.length && /[A-Za-z0-9_]/.test(src[i])) i++;
    while (i < src.length && /\s/.test(src[i])) i++;
    return src[i] === '(' ? i : p;
  }

  private report(e: Expr, message: string): void {
    this.issues.push({ offset: this.offsetOf(e), message });
  }

  private assignable(a: CelType, b: CelType): boolean {
    const trial = new Map(this.mapping);
    if (!assignable(trial, a, b)) return false;
    this.mapping = trial;
    return true;
  }

  private freshen(t: CelType, names: Map<string, CelType>): CelType {
    switch (t.kind) {
      case 'param': {
        let fresh = names.get(t.name);
        if (fresh === undefined) {
          fresh = { kind: 'param', name: `_var${this.freeVars++}` };
          names.set(t.name, fresh);
        }
        return fresh;
      }
      case 'list': return list(this.freshen(t.elem, names));
      case 'map': return map(this.freshen(t.key, names), this.freshen(t.value, names));
      case 'type': return t.of === undefined ? t : typeOf(this.freshen(t.of, names));
      default: return t;
    }
  }

  check(e: Expr | undefined, scope: Scope): CelType {
    if (e === undefined) return VAGUE;
    const t = this.checkNode(e, scope);
    this.nodeTypes.set(e.id.toString(), t);
    return t;
  }

  private checkNode(e: Expr, scope: Scope): CelType {
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr':
        switch (k.value.constantKind.case) {
          case 'boolValue': return BOOL;
          case 'int64Value': return INT;
          case 'uint64Value': return UINT;
          case 'doubleValue': return DOUBLE;
          case 'stringValue': return STRING;
          case 'bytesValue': return BYTES;
          case 'nullValue': return NULL;
          default: return VAGUE;
        }
      case 'identExpr': {
        const name = k.value.name;
        if (name === 'oldSelf') this.usesOldSelf = true;
        const t = scope.get(name) ?? TYPE_IDENTIFIERS.get(name);
        if (t !== undefined) return t;
        this.report(e, `undeclared reference to '${name}' (in container '')`);
        return ERROR;
      }
      case 'selectExpr':
        return this.checkSelect(e, k.value.operand, k.value.field, k.value.testOnly, scope);
      case 'callExpr':
        return this.checkCall(e, k.value.function, k.value.target, k.value.args, scope);
      case 'listExpr': {
        let elem: CelType | undefined;
        for (const element of k.value.elements) elem = this.join(element, elem, this.check(element, scope));
        return list(elem ?? this.freshen(A, new Map()));
      }
      case 'structExpr': {
        if (k.value.messageName !== '') {
          for (const entry of k.value.entries) this.check(entry.value, scope);
          return VAGUE;
        }
        let key: CelType | undefined;
        let value: CelType | undefined;
        for (const entry of k.value.entries) {
          if (entry.keyKind.case === 'mapKey') key = this.join(entry.keyKind.value, key, this.check(entry.keyKind.value, scope));
          if (entry.value !== undefined) value = this.join(entry.value, value, this.check(entry.value, scope));
        }
        return map(key ?? this.freshen(A, new Map()), value ?? this.freshen(B, new Map()));
      }
      case 'comprehensionExpr':
        return this.checkComprehension(e, scope);
      default:
        return VAGUE;
    }
  }

  /** Literal elements must agree (v1.25 sets HomogeneousAggregateLiterals). */
  private join(e: Expr, previous: CelType | undefined, current: CelType): CelType {
    if (previous === undefined) return current;
    if (this.assignable(previous, current)) return mostGeneral(previous, current);
    this.report(e, `expected type '${formatType(this.show(previous))}' but found '${formatType(this.show(current))}'`);
    return ERROR;
  }

  private show(t: CelType): CelType {
    return substitute(this.mapping, t, false);
  }

  private checkSelect(e: Expr, operandExpr: Expr | undefined, field: string, testOnly: boolean, scope: Scope): CelType {
    // A qualified type name (google.protobuf.Duration), unless its first name is a variable.
    const qualified = testOnly ? undefined : qualifiedName(e);
    const typeName = qualified !== undefined && !scope.has(qualified.split('.')[0]) ? TYPE_IDENTIFIERS.get(qualified) : undefined;
    if (typeName !== undefined) return typeName;
    const operand = substitute(this.mapping, this.check(operandExpr, scope), false);
    let result: CelType = ERROR;
    switch (operand.kind) {
      case 'map':
        result = operand.value;
        break;
      case 'object': {
        const t = operand.field(field);
        if (t === undefined) this.report(e, `undefined field '${field}'`);
        else result = t;
        break;
      }
      case 'param':
        this.assignable(DYN, operand);
        result = DYN;
        break;
      case 'dyn':
        result = operand.vague === true ? VAGUE : DYN;
        break;
      case 'error':
        result = DYN;
        break;
      default:
        this.report(e, `type '${formatType(operand)}' does not support field selection`);
    }
    return testOnly ? BOOL : substitute(this.mapping, result, false);
  }

  private checkCall(e: Expr, fn: string, targetExpr: Expr | undefined, argExprs: readonly Expr[], scope: Scope): CelType {
    const args = argExprs.map((arg) => this.check(arg, scope));
    const target = targetExpr === undefined ? undefined : this.check(targetExpr, scope);
    const overloads = FUNCTIONS.get(fn);
    if (overloads === undefined) {
      const isName = /^[A-Za-z_][A-Za-z0-9_]*$/.test(fn);
      if (isName && !this.knownFunctions.has(fn)) {
        this.report(e, `undeclared reference to '${fn}' (in container '')`);
        return ERROR;
      }
      return VAGUE;
    }
    const argTypes = target === undefined ? args : [target, ...args];
    let result: CelType | undefined;
    const matched: string[] = [];
    for (const overload of overloads) {
      if (overload.instance !== (target !== undefined)) continue;
      const names = new Map<string, CelType>();
      const params = overload.params.map((p) => this.freshen(p, names));
      const trial = new Map(this.mapping);
      if (!assignableList(trial, argTypes, params)) continue;
      this.mapping = trial;
      matched.push(overload.id);
      const overloadResult = substitute(this.mapping, this.freshen(overload.result, names), false);
      if (result === undefined) result = overloadResult;
      else if (!isDyn(result) && !sameType(overloadResult, result)) result = DYN;
    }
    if (result === undefined) {
      const shown = argTypes.map((t) => formatType(this.show(t)));
      const signature = target === undefined ? `(${shown.join(', ')})` : `${shown[0]}.(${shown.slice(1).join(', ')})`;
      this.report(e, `found no matching overload for '${fn}' applied to '${signature}'`);
      return ERROR;
    }
    this.callOverloads.set(e.id.toString(), matched);
    // A dyn that comes from a vague argument may be a concrete type for cel-go: keep it vague.
    if (isDyn(result) && argTypes.some(isVague)) return VAGUE;
    return result;
  }

  private checkComprehension(e: Expr, scope: Scope): CelType {
    const c = e.exprKind.value as Extract<Expr['exprKind'], { case: 'comprehensionExpr' }>['value'];
    const rangeType = substitute(this.mapping, this.check(c.iterRange, scope), false);
    const accuType = this.check(c.accuInit, scope);
    let varType: CelType;
    switch (rangeType.kind) {
      case 'list': varType = rangeType.elem; break;
      case 'map': varType = rangeType.key; break;
      case 'dyn': varType = rangeType; break;
      case 'error': varType = DYN; break;
      case 'param':
        this.assignable(DYN, rangeType);
        varType = DYN;
        break;
      default:
        if (c.iterRange !== undefined) this.report(c.iterRange, `expression of type '${formatType(rangeType)}' cannot be range of a comprehension (must be list, map, or dynamic)`);
        varType = ERROR;
    }
    const accuScope = new Map(scope);
    accuScope.set(c.accuVar, accuType);
    const loopScope = new Map(accuScope);
    loopScope.set(c.iterVar, varType);
    if (c.iterVar2 !== '') loopScope.set(c.iterVar2, VAGUE);
    const condition = this.check(c.loopCondition, loopScope);
    if (c.loopCondition !== undefined) this.assertType(c.loopCondition, BOOL, condition);
    const step = this.check(c.loopStep, loopScope);
    if (c.loopStep !== undefined) this.assertType(c.loopStep, accuType, step);
    return substitute(this.mapping, this.check(c.result, accuScope), false);
  }

  private assertType(e: Expr, expected: CelType, actual: CelType): void {
    if (!this.assignable(expected, actual)) this.report(e, `expected type '${formatType(this.show(expected))}' but found '${formatType(this.show(actual))}'`);
  }

  finalType(t: CelType): CelType {
    return substitute(this.mapping, t, true);
  }
}

/** A name for the rule's root type that rule authors cannot depend on (v1.25: `selfType` + nanoseconds). */
function selfTypeName(): string {
  return `selfType${Number(process.hrtime.bigint() % 1_000_000_000n)}`;
}

/**
 * Type-checks a parsed rule with `self` and `oldSelf` of `schema` (`isResource` at a resource's
 * root or an embedded resource). `knownFunctions` are the names the environment declares; calls to
 * other names are undeclared references.
 */
export function typeCheckRule(
  expr: Expr,
  source: string,
  positions: Readonly<Record<string, number>>,
  schema: JsonSchemaProps,
  isResource: boolean,
  knownFunctions: ReadonlySet<string>,
): TypeCheckResult {
  const checker = new Checker(source, positions, knownFunctions);
  const self = declType(schema, selfTypeName(), isResource);
  const type = checker.check(expr, new Map([['self', self], ['oldSelf', self]]));
  const resultType = type.kind === 'dyn' && type.vague === true ? undefined : checker.finalType(type);
  const types = new Map<string, CelType>();
  for (const [id, t] of checker.nodeTypes) types.set(id, checker.finalType(t));
  return { issues: checker.issues, resultType, usesOldSelf: checker.usesOldSelf, types, overloads: checker.callOverloads };
}
