/**
 * The CEL libraries kube-apiserver v1.25 offers to x-kubernetes-validations rules, beside CEL's
 * standard functions (k8s.io/apiserver pkg/cel/library in v1.25: lists.go, regex.go, urls.go; and
 * cel-go's ext.Strings at version 0): their names and signatures are facts of the API; the
 * implementations are ours, over @bufbuild/cel's values.
 *
 * - lists: `isSorted()`, `sum()`, `min()`, `max()`, `indexOf(x)`, `lastIndexOf(x)`;
 * - regex: `find(re)`, `findAll(re)`, `findAll(re, n)`, and CEL's `matches`, all with RE2's (Go's)
 *   semantics through RE2JS: `(?i)`, `\z`, `[[:alpha:]]`, `\pL` work; backreferences and
 *   lookaround are refused as Go refuses them;
 * - urls: `url(s)`, `isURL(s)`, and on a URL `getScheme()`, `getHost()`, `getHostname()`,
 *   `getPort()`, `getEscapedPath()`, `getQuery()`;
 * - strings: `charAt`, `indexOf`, `lastIndexOf`, `lowerAscii`, `upperAscii`, `replace`, `split`,
 *   `substring`, `trim`, `join` (from @bufbuild/cel/ext; `quote` and `format` came after v1.25).
 *
 * A URL is carried as its string: v1.25's URL type has no operators of its own, only the getters.
 */
import { CelScalar, celError, celFunc, celList, celMethod, isCelList, isCelUint, listType, mapType, type CelFunc, type CelList, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { RE2JS } from 're2js';

const LIST = listType(CelScalar.DYN);

function compare(a: CelValue, b: CelValue): number {
  const x = isCelUint(a) ? a.value : a;
  const y = isCelUint(b) ? b.value : b;
  if (typeof x === 'bigint' && typeof y === 'bigint') return x < y ? -1 : x > y ? 1 : 0;
  if ((typeof x === 'number' || typeof x === 'bigint') && (typeof y === 'number' || typeof y === 'bigint')) {
    const nx = Number(x);
    const ny = Number(y);
    return nx < ny ? -1 : nx > ny ? 1 : 0;
  }
  if (typeof x === 'string' && typeof y === 'string') return x < y ? -1 : x > y ? 1 : 0;
  if (typeof x === 'boolean' && typeof y === 'boolean') return Number(x) - Number(y);
  throw celError(`no such overload: comparison of ${typeof x} and ${typeof y}`);
}

function equal(a: CelValue, b: CelValue): boolean {
  try {
    return compare(a, b) === 0;
  } catch {
    return false;
  }
}

function listValues(list: CelList): CelValue[] {
  return [...list];
}

const listFunctions: CelFunc[] = [
  celMethod('isSorted', LIST, [], CelScalar.BOOL, function () {
    const values = listValues(this);
    for (let i = 1; i < values.length; i++) if (compare(values[i - 1], values[i]) > 0) return false;
    return true;
  }),
  celMethod('sum', LIST, [], CelScalar.DYN, function () {
    const values = listValues(this);
    if (values.length === 0) return 0n;
    if (values.every((v) => typeof v === 'bigint')) return (values as bigint[]).reduce((a, b) => a + b, 0n);
    if (values.every((v) => typeof v === 'number')) return (values as number[]).reduce((a, b) => a + b, 0);
    throw celError('no such overload: sum of mixed or non-numeric values');
  }),
  celMethod('min', LIST, [], CelScalar.DYN, function () {
    const values = listValues(this);
    if (values.length === 0) throw celError('min called on empty list');
    return values.reduce((a, b) => (compare(b, a) < 0 ? b : a));
  }),
  celMethod('max', LIST, [], CelScalar.DYN, function () {
    const values = listValues(this);
    if (values.length === 0) throw celError('max called on empty list');
    return values.reduce((a, b) => (compare(b, a) > 0 ? b : a));
  }),
  celMethod('indexOf', LIST, [CelScalar.DYN], CelScalar.INT, function (item) {
    const values = listValues(this);
    return BigInt(values.findIndex((v) => equal(v, item)));
  }),
  celMethod('lastIndexOf', LIST, [CelScalar.DYN], CelScalar.INT, function (item) {
    const values = listValues(this);
    for (let i = values.length - 1; i >= 0; i--) if (equal(values[i], item)) return BigInt(i);
    return -1n;
  }),
];

const regexCache = new Map<string, RE2JS>();

/** Go's regexp error text for a pattern Go 1.19 refuses: `error parsing regexp: <code>: `<expr>``. */
export class RegexSyntaxError extends Error {}

/**
 * Go 1.19 (v1.25's toolchain) knows named groups only as (?P<name>...): the (?<name>...) form that
 * RE2JS accepts came with Go 1.22. Returns the offending text, or undefined.
 */
function goUnsupportedSyntax(pattern: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') {
      inClass = true;
      if (pattern[i + 1] === ']') i++;
    } else if (c === '(' && pattern.startsWith('?<', i + 1)) {
      return '(?<';
    }
  }
  return undefined;
}

/** The pattern compiled with Go's RE2 semantics, or a RegexSyntaxError with Go's message. */
export function compileRegex(pattern: string): RE2JS {
  let re = regexCache.get(pattern);
  if (re === undefined) {
    const unsupported = goUnsupportedSyntax(pattern);
    if (unsupported !== undefined) throw new RegexSyntaxError(`error parsing regexp: invalid or unsupported Perl syntax: \`${unsupported}\``);
    try {
      re = RE2JS.compile(pattern);
    } catch (err) {
      throw new RegexSyntaxError((err as Error).message);
    }
    if (regexCache.size > 256) regexCache.clear();
    regexCache.set(pattern, re);
  }
  return re;
}

function compiledForCel(pattern: string): RE2JS {
  try {
    return compileRegex(pattern);
  } catch (err) {
    throw celError((err as Error).message);
  }
}

/**
 * Go's Regexp.FindAllString: successive non-overlapping matches, where an empty match right after
 * a previous match is skipped; at most `limit` (all when negative).
 */
function findAll(text: string, pattern: string, limit: number): string[] {
  const out: string[] = [];
  if (limit === 0) return out;
  const matcher = compiledForCel(pattern).matcher(text);
  let position = 0;
  let previousEnd = -1;
  while (position <= text.length && (limit < 0 || out.length < limit)) {
    if (!matcher.find(position)) break;
    const start = matcher.start();
    const end = matcher.end();
    let accept = true;
    if (end === start) {
      if (start === previousEnd) accept = false;
      // Step over one character (a surrogate pair is one).
      const code = text.codePointAt(end);
      position = end + (code !== undefined && code > 0xffff ? 2 : 1);
    } else {
      position = end;
    }
    previousEnd = end;
    if (accept) out.push(text.slice(start, end));
  }
  return out;
}

const regexFunctions: CelFunc[] = [
  // CEL's own matches, with RE2 semantics instead of ECMAScript's.
  celMethod('matches', CelScalar.STRING, [CelScalar.STRING], CelScalar.BOOL, function (pattern) {
    return compiledForCel(pattern).matcher(this).find();
  }),
  celFunc('matches', [CelScalar.STRING, CelScalar.STRING], CelScalar.BOOL, (text, pattern) => compiledForCel(pattern).matcher(text).find()),
  celMethod('find', CelScalar.STRING, [CelScalar.STRING], CelScalar.STRING, function (pattern) {
    return findAll(this, pattern, 1)[0] ?? '';
  }),
  celMethod('findAll', CelScalar.STRING, [CelScalar.STRING], listType(CelScalar.STRING), function (pattern) {
    return celList(findAll(this, pattern, -1));
  }),
  celMethod('findAll', CelScalar.STRING, [CelScalar.STRING, CelScalar.INT], listType(CelScalar.STRING), function (pattern, limit) {
    return celList(findAll(this, pattern, Number(limit)));
  }),
];

/** url.ParseRequestURI as v1.25 uses it: absolute URIs, or absolute paths. */
function parseUrl(text: string): URL | undefined {
  if (text.startsWith('/')) {
    try {
      return new URL(text, 'relative:///');
    } catch {
      return undefined;
    }
  }
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(text)) return undefined;
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function urlOf(text: string): URL {
  const parsed = parseUrl(text);
  if (parsed === undefined) throw celError(`URL parse error during conversion from string: parse "${text}": invalid URI for request`);
  return parsed;
}

const urlFunctions: CelFunc[] = [
  celFunc('url', [CelScalar.STRING], CelScalar.STRING, (text) => {
    urlOf(text);
    return text;
  }),
  celFunc('isURL', [CelScalar.STRING], CelScalar.BOOL, (text) => parseUrl(text) !== undefined),
  celMethod('getScheme', CelScalar.STRING, [], CelScalar.STRING, function () {
    const u = urlOf(this);
    return u.protocol === 'relative:' ? '' : u.protocol.replace(/:$/, '');
  }),
  celMethod('getHost', CelScalar.STRING, [], CelScalar.STRING, function () {
    return urlOf(this).host;
  }),
  celMethod('getHostname', CelScalar.STRING, [], CelScalar.STRING, function () {
    return urlOf(this).hostname.replace(/^\[|\]$/g, '');
  }),
  celMethod('getPort', CelScalar.STRING, [], CelScalar.STRING, function () {
    return urlOf(this).port;
  }),
  celMethod('getEscapedPath', CelScalar.STRING, [], CelScalar.STRING, function () {
    return urlOf(this).pathname;
  }),
  celMethod('getQuery', CelScalar.STRING, [], mapType(CelScalar.STRING, listType(CelScalar.STRING)), function () {
    const out = new Map<string, string[]>();
    for (const [key, value] of urlOf(this).searchParams) out.set(key, [...(out.get(key) ?? []), value]);
    return out;
  }),
];

/** Go's unicode.IsSpace, which strings.TrimSpace trims (ECMAScript's trim also takes U+FEFF). */
const GO_SPACE = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const LEADING_SPACE = new RegExp(`^${GO_SPACE}+`);
const TRAILING_SPACE = new RegExp(`${GO_SPACE}+$`);

function outOfRange(index: number | bigint): Error {
  return celError(`index out of range: ${index}`);
}

/** strings.Replace: at most `n` replacements (all when negative); an empty `old` matches before each character and at the end. */
function goReplace(text: string, old: string, replacement: string, n: number): string {
  if (n === 0 || old === replacement) return text;
  const parts = old === '' ? [...text] : text.split(old);
  if (old === '') {
    const limit = n < 0 ? parts.length + 1 : Math.min(n, parts.length + 1);
    let out = '';
    for (let i = 0; i < parts.length; i++) out += (i < limit ? replacement : '') + parts[i];
    return limit > parts.length ? out + replacement : out;
  }
  if (n < 0 || n >= parts.length - 1) return parts.join(replacement);
  return parts.slice(0, n + 1).join(replacement) + old + parts.slice(n + 1).join(old);
}

/** strings.SplitN: at most `n` parts, the last holding the rest (all parts when negative, none when 0); "" splits characters. */
function goSplit(text: string, separator: string, n: number): string[] {
  if (n === 0) return [];
  if (separator === '') {
    const chars = [...text];
    if (n < 0 || n >= chars.length) return chars;
    return [...chars.slice(0, n - 1), chars.slice(n - 1).join('')];
  }
  const parts = text.split(separator);
  if (n < 0 || n >= parts.length) return parts;
  return [...parts.slice(0, n - 1), parts.slice(n - 1).join(separator)];
}

function indexOfOffset(text: string, sub: string, offset: bigint): bigint {
  if (sub === '') return offset;
  const chars = [...text];
  const subChars = [...sub];
  if (offset < 0n || offset >= BigInt(chars.length)) throw outOfRange(offset);
  for (let i = Number(offset); i < chars.length - (subChars.length - 1); i++) {
    if (subChars.every((c, j) => chars[i + j] === c)) return BigInt(i);
  }
  return -1n;
}

function lastIndexOfOffset(text: string, sub: string, offset: bigint): bigint {
  if (sub === '') return offset;
  const chars = [...text];
  const subChars = [...sub];
  if (offset < 0n || offset >= BigInt(chars.length)) throw outOfRange(offset);
  let start = Number(offset);
  if (start > chars.length - subChars.length) start = chars.length - subChars.length;
  for (let i = start; i >= 0; i--) {
    if (subChars.every((c, j) => chars[i + j] === c)) return BigInt(i);
  }
  return -1n;
}

function substring(text: string, start: bigint, end?: bigint): string {
  const chars = [...text];
  const length = BigInt(chars.length);
  const last = end ?? length;
  if (start > length || start < 0n) throw outOfRange(start);
  if (last > length || last < 0n) throw outOfRange(last);
  if (start > last) throw celError(`invalid substring range. start: ${start}, end: ${last}`);
  return chars.slice(Number(start), Number(last)).join('');
}

const asciiCase = (text: string, upper: boolean): string => text.replace(upper ? /[a-z]+/g : /[A-Z]+/g, (run) => (upper ? run.toUpperCase() : run.toLowerCase()));

/**
 * cel-go ext.Strings as v1.25 enables it (cel-go v0.12 ext/strings.go): indexes count characters
 * (code points), not UTF-16 units; replace and split take Go's counts (negative: all); errors are
 * cel-go's (`index out of range: 5`). `quote` and `format` came later. join is @bufbuild/cel's.
 */
const S = CelScalar.STRING;
const I = CelScalar.INT;
const stringFunctions: CelFunc[] = [
  celMethod('charAt', S, [I], S, function (index) {
    const chars = [...this];
    if (index < 0n || index > BigInt(chars.length)) throw outOfRange(index);
    return chars[Number(index)] ?? '';
  }),
  celMethod('indexOf', S, [S], I, function (sub) {
    return indexOfOffset(this, sub, 0n);
  }),
  celMethod('indexOf', S, [S, I], I, function (sub, offset) {
    return indexOfOffset(this, sub, offset);
  }),
  celMethod('lastIndexOf', S, [S], I, function (sub) {
    const length = BigInt([...this].length);
    return sub === '' ? length : lastIndexOfOffset(this, sub, length - 1n);
  }),
  celMethod('lastIndexOf', S, [S, I], I, function (sub, offset) {
    return lastIndexOfOffset(this, sub, offset);
  }),
  celMethod('lowerAscii', S, [], S, function () {
    return asciiCase(this, false);
  }),
  celMethod('upperAscii', S, [], S, function () {
    return asciiCase(this, true);
  }),
  celMethod('replace', S, [S, S], S, function (old, replacement) {
    return goReplace(this, old, replacement, -1);
  }),
  celMethod('replace', S, [S, S, I], S, function (old, replacement, n) {
    return goReplace(this, old, replacement, Number(n));
  }),
  celMethod('split', S, [S], listType(S), function (separator) {
    return celList(goSplit(this, separator, -1));
  }),
  celMethod('split', S, [S, I], listType(S), function (separator, n) {
    return celList(goSplit(this, separator, Number(n)));
  }),
  celMethod('substring', S, [I], S, function (start) {
    return substring(this, start);
  }),
  celMethod('substring', S, [I, I], S, function (start, end) {
    return substring(this, start, end);
  }),
  celMethod('trim', S, [], S, function () {
    return this.replace(LEADING_SPACE, '').replace(TRAILING_SPACE, '');
  }),
  ...strings.filter((f) => f.name === 'join'),
];

export const KUBERNETES_CEL_FUNCTIONS: readonly CelFunc[] = [...listFunctions, ...regexFunctions, ...urlFunctions, ...stringFunctions];

/** Names the static check accepts as functions or methods (standard CEL plus the libraries above). */
export const KNOWN_FUNCTION_NAMES: ReadonlySet<string> = new Set([
  ...KUBERNETES_CEL_FUNCTIONS.map((f) => f.name),
  'size', 'contains', 'startsWith', 'endsWith', 'matches', 'has', 'int', 'uint', 'double', 'string', 'bytes', 'bool', 'type', 'dyn',
  'duration', 'timestamp', 'getFullYear', 'getMonth', 'getDayOfYear', 'getDayOfMonth', 'getDate', 'getDayOfWeek', 'getHours',
  'getMinutes', 'getSeconds', 'getMilliseconds', 'all', 'exists', 'exists_one', 'map', 'filter',
]);

export function isList(value: unknown): value is CelList {
  return isCelList(value);
}
