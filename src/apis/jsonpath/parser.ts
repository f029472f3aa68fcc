/**
 * The parser of kubectl's JSONPath templates (k8s.io/client-go util/jsonpath parser.go, as
 * vendored by kube-apiserver v1.25): text outside `{...}` is kept as is; inside an action come
 * fields (`.a`, `..a`, escapes `\.`), `*`, array selections `[i]`, `[a:b:c]`, `[*]`, unions
 * `[a,b]`, quoted keys `['k']` (whose dots still separate fields, as kubectl reads them), filters
 * `[?(@.x == "y")]` and `[?(@.x)]`, quoted strings, numbers, booleans and the identifiers
 * `range` and `end`. Nothing is evaluated here: the result is a tree of nodes (node.ts).
 *
 * The rules and error texts are client-go's, including its quirks: a quote preceded by a
 * backslash never ends a string, a union is split on every comma (quotes included), and `[]`
 * selects the first element.
 */
import { parseInt64 } from '../../util';
import { JsonPathError } from './jsonpath-error';
import type { ListNode, SliceParam } from './node';

const LEFT_DELIM = '{';
const RIGHT_DELIM = '}';
const DICT_KEY = /^'([^']*)'$/;
const SLICE_OPERATOR = /^(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?$/;
// The split of a filter's text into its operands; operands may not contain the operator characters.
const FILTER_COMPARISON = /^([^!<>=]+)([!<>=]+)(.+?)$/s;

/** Parses a whole template: the root list holds text nodes and one list per `{...}` action. */
export function parseTemplate(text: string): ListNode {
  const parser = new Parser(text);
  parser.parse();
  return parser.root;
}

/** Parses `text` as the inside of one action (`{text}`) and returns that action's list. */
function parseAction(text: string): ListNode {
  const root = parseTemplate(`${LEFT_DELIM}${text}${RIGHT_DELIM}`);
  const first = root.nodes[0];
  if (first === undefined || first.type !== 'List') throw new JsonPathError('ParseError', `unclosed action`);
  return first;
}

const EOF = '';

class Parser {
  readonly root: ListNode = { type: 'List', nodes: [] };
  private pos = 0;
  private start = 0;
  private width = 0;

  constructor(private readonly input: string) {}

  parse(): void {
    // Text goes to the root; each `{...}` becomes one list of the root.
    while (this.parseText()) {
      const action: ListNode = { type: 'List', nodes: [] };
      this.root.nodes.push(action);
      this.parseInsideAction(action);
    }
  }

  /** Text up to the next `{` (consumed: true) or to the end (false). */
  private parseText(): boolean {
    for (;;) {
      if (this.input.startsWith(LEFT_DELIM, this.pos)) {
        if (this.pos > this.start) this.root.nodes.push({ type: 'Text', text: this.consumeText() });
        this.pos += LEFT_DELIM.length;
        this.consumeText();
        return true;
      }
      if (this.next() === EOF) break;
    }
    if (this.pos > this.start) this.root.nodes.push({ type: 'Text', text: this.consumeText() });
    return false;
  }

  private parseInsideAction(cur: ListNode): void {
    for (;;) {
      if (this.input.startsWith(RIGHT_DELIM, this.pos)) {
        this.pos += RIGHT_DELIM.length;
        this.consumeText();
        return;
      }
      if (this.input.startsWith('[?(', this.pos)) {
        this.parseFilter(cur);
        continue;
      }
      if (this.input.startsWith('..', this.pos)) {
        this.parseRecursive(cur);
        continue;
      }
      const r = this.next();
      if (r === EOF || isEndOfLine(r)) throw new JsonPathError('ParseError', 'unclosed action');
      if (r === ' ' || r === '@' || r === '$') {
        // Spaces and the current-object markers carry nothing.
        this.consumeText();
      } else if (r === '[') {
        this.parseArray(cur);
      } else if (r === '"' || r === "'") {
        this.parseQuote(cur, r);
      } else if (r === '.') {
        this.parseField(cur);
      } else if (r === '+' || r === '-' || isDigit(r)) {
        this.backup();
        this.parseNumber(cur);
      } else if (isAlphaNumeric(r)) {
        this.backup();
        this.parseIdentifier(cur);
      } else {
        throw new JsonPathError('ParseError', `unrecognized character in action: ${goRuneU(r)}`);
      }
    }
  }

  private parseIdentifier(cur: ListNode): void {
    for (;;) {
      const r = this.next();
      if (isTerminator(r)) {
        this.backup();
        break;
      }
    }
    const value = this.consumeText();
    if (value === 'true' || value === 'false') cur.nodes.push({ type: 'Bool', value: value === 'true' });
    else cur.nodes.push({ type: 'Identifier', name: value });
  }

  private parseRecursive(cur: ListNode): void {
    if (cur.nodes.at(-1)?.type === 'Recursive') throw new JsonPathError('ParseError', 'invalid multiple recursive descent');
    this.pos += 2;
    this.consumeText();
    cur.nodes.push({ type: 'Recursive' });
    if (isAlphaNumeric(this.peek())) this.parseField(cur);
  }

  private parseNumber(cur: ListNode): void {
    const sign = this.peek();
    if (sign === '+' || sign === '-') this.next();
    for (;;) {
      const r = this.next();
      if (r !== '.' && !isDigit(r)) {
        this.backup();
        break;
      }
    }
    const value = this.consumeText();
    const integer = parseInt64(value);
    if (integer.ok) {
      cur.nodes.push({ type: 'Int', value: Number(integer.value) });
      return;
    }
    const float = parseGoFloat(value);
    if (float === undefined) throw new JsonPathError('ParseError', `cannot parse number ${value}`);
    cur.nodes.push({ type: 'Float', value: float });
  }

  private parseArray(cur: ListNode): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === '\n') throw new JsonPathError('ParseError', 'unterminated array');
      if (r === ']') break;
    }
    let text = this.consumeText().slice(1, -1);
    if (text === '*') text = ':';

    const parts = text.split(',');
    if (parts.length > 1) {
      cur.nodes.push({ type: 'Union', lists: parts.map((part) => parseAction(`[${trimSpaces(part)}]`)) });
      return;
    }

    const key = DICT_KEY.exec(text);
    if (key !== null) {
      cur.nodes.push(...parseAction(`.${key[1]}`).nodes);
      return;
    }

    const slice = SLICE_OPERATOR.exec(text);
    if (slice === null) throw new JsonPathError('ParseError', `invalid array index ${text}`);
    const params: SliceParam[] = [];
    for (let i = 0; i < 3; i++) {
      let part = slice[i + 1] ?? '';
      if (part !== '') {
        if (i > 0) part = part.slice(1);
        if (i > 0 && part === '') {
          params.push({ value: 0, known: false, derived: false });
        } else {
          const parsed = parseInt64(part);
          if (!parsed.ok) throw new JsonPathError('ParseError', `array index ${part} is not a number`);
          params.push({ value: Number(parsed.value), known: true, derived: false });
        }
      } else if (i === 1) {
        // `[i]` is the slice `[i:i+1]`; a negative i is resolved against the array's length later.
        params.push({ value: (params[0]?.value ?? 0) + 1, known: true, derived: true });
      } else {
        params.push({ value: 0, known: false, derived: false });
      }
    }
    cur.nodes.push({ type: 'Array', params: params as [SliceParam, SliceParam, SliceParam] });
  }

  private parseFilter(cur: ListNode): void {
    this.pos += 3;
    this.consumeText();
    let begin = false;
    let end = false;
    let pair = '';
    for (;;) {
      const r = this.next();
      if (r === EOF || r === '\n') throw new JsonPathError('ParseError', 'unterminated filter');
      if (r === '"' || r === "'") {
        if (!begin) {
          begin = true;
          pair = r;
          continue;
        }
        if (this.input[this.pos - 2] !== '\\' && r === pair) end = true;
      } else if (r === ')') {
        // Quotes appear at most once on the right and are paired; a `)` inside them is text.
        if (begin === end) break;
      }
    }
    if (this.next() !== ']') throw new JsonPathError('ParseError', 'unclosed array expect ]');
    const text = this.consumeText().slice(0, -2);
    const comparison = FILTER_COMPARISON.exec(text);
    if (comparison === null) {
      cur.nodes.push({ type: 'Filter', left: parseAction(text), right: { type: 'List', nodes: [] }, operator: 'exists' });
      return;
    }
    const left = parseAction(comparison[1] ?? '');
    const right = parseAction(comparison[3] ?? '');
    cur.nodes.push({ type: 'Filter', left, right, operator: comparison[2] ?? '' });
  }

  private parseQuote(cur: ListNode, quote: string): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === '\n') throw new JsonPathError('ParseError', 'unterminated quoted string');
      if (r === quote && this.input[this.pos - 2] !== '\\') break;
    }
    const value = this.consumeText();
    const text = unquoteExtend(value);
    if (text === undefined) throw new JsonPathError('ParseError', `unquote string ${value} error invalid syntax`);
    cur.nodes.push({ type: 'Text', text });
  }

  private parseField(cur: ListNode): void {
    this.consumeText();
    while (this.advance()) {
      // Up to the next terminator that is not escaped.
    }
    const value = this.consumeText();
    if (value === '*') cur.nodes.push({ type: 'Wildcard' });
    else cur.nodes.push({ type: 'Field', name: value.replaceAll('\\', '') });
  }

  private advance(): boolean {
    const r = this.next();
    if (r === '\\') {
      this.next();
    } else if (isTerminator(r)) {
      this.backup();
      return false;
    }
    return true;
  }

  private consumeText(): string {
    const value = this.input.slice(this.start, this.pos);
    this.start = this.pos;
    return value;
  }

  /** The next code point, or EOF; `backup` steps back over it once. */
  private next(): string {
    if (this.pos >= this.input.length) {
      this.width = 0;
      return EOF;
    }
    const r = String.fromCodePoint(this.input.codePointAt(this.pos) ?? 0);
    this.width = r.length;
    this.pos += this.width;
    return r;
  }

  private peek(): string {
    const r = this.next();
    this.backup();
    return r;
  }

  private backup(): void {
    this.pos -= this.width;
  }
}

function isTerminator(r: string): boolean {
  return r === EOF || r === ' ' || r === '\t' || isEndOfLine(r) || '.,[]$@{}'.includes(r);
}

function isEndOfLine(r: string): boolean {
  return r === '\r' || r === '\n';
}

function isDigit(r: string): boolean {
  return /^\p{Nd}$/u.test(r);
}

/** Go's isAlphaNumeric: `_`, a letter or a digit (Unicode). */
function isAlphaNumeric(r: string): boolean {
  return r === '_' || /^[\p{L}\p{Nd}]$/u.test(r);
}

/** strings.Trim(s, " "). */
function trimSpaces(text: string): string {
  return text.replace(/^ +| +$/g, '');
}

/** `%#U` of a rune: `U+002A '*'`, without the quoted character when it is not printable. */
function goRuneU(r: string): string {
  const code = (r.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(r) ? `U+${code} '${r}'` : `U+${code}`;
}

/** strconv.ParseFloat(s, 64) for what parseNumber can collect: a sign, digits and dots. */
function parseGoFloat(text: string): number | undefined {
  if (!/^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)$/.test(text)) return undefined;
  return Number(text);
}

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = { a: 0x07, b: 0x08, f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b, '\\': 0x5c };

/**
 * client-go's UnquoteExtend: strconv.Unquote that also takes single-quoted strings. Escapes are
 * Go's (\a \b \f \n \r \t \v \\ \' \" \xhh \uhhhh \Uhhhhhhhh \ooo); the other quote may not be
 * escaped. `\x` and octal escapes are bytes, read back as UTF-8. Undefined for invalid syntax.
 */
export function unquoteExtend(quoted: string): string | undefined {
  if (quoted.length < 2) return undefined;
  const quote = quoted[0];
  if ((quote !== '"' && quote !== "'") || quoted.at(-1) !== quote) return undefined;
  const body = quoted.slice(1, -1);
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  let i = 0;
  while (i < body.length) {
    const ch = String.fromCodePoint(body.codePointAt(i) ?? 0);
    if (ch === quote) return undefined;
    if (ch !== '\\') {
      bytes.push(...encoder.encode(ch));
      i += ch.length;
      continue;
    }
    const escape = body[i + 1];
    if (escape === undefined) return undefined;
    const simple = SIMPLE_ESCAPES[escape];
    if (simple !== undefined) {
      bytes.push(simple);
      i += 2;
    } else if (escape === '"' || escape === "'") {
      if (escape !== quote) return undefined;
      bytes.push(escape.charCodeAt(0));
      i += 2;
    } else if (escape === 'x' || escape === 'u' || escape === 'U') {
      const size = escape === 'x' ? 2 : escape === 'u' ? 4 : 8;
      const hex = body.slice(i + 2, i + 2 + size);
      if (hex.length !== size || !/^[0-9a-fA-F]+$/.test(hex)) return undefined;
      const code = parseInt(hex, 16);
      if (escape === 'x') {
        bytes.push(code);
      } else {
        if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return undefined;
        bytes.push(...encoder.encode(String.fromCodePoint(code)));
      }
      i += 2 + size;
    } else if (/^[0-7]$/.test(escape)) {
      const octal = body.slice(i + 1, i + 4);
      if (!/^[0-7]{3}$/.test(octal)) return undefined;
      const code = parseInt(octal, 8);
      if (code > 0xff) return undefined;
      bytes.push(code);
      i += 4;
    } else {
      return undefined;
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}
