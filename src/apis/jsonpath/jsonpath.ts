/**
 * kubectl's JSONPath (k8s.io/client-go util/jsonpath jsonpath.go, as kube-apiserver v1.25 vendors
 * it): a parsed template walked over a decoded JSON value. `findResults` gives one list of values
 * per top-level node of the template (a text, or one `{...}` action; `{range}`...`{end}` walks
 * the nodes between them once per value, then goes on after the `end`), and `printResults`
 * writes one list as kubectl does: values separated by spaces, strings bare, objects and arrays
 * as compact JSON, null as `<nil>`.
 *
 * Semantics kept from client-go, quirks included: a missing key is an error unless missing keys
 * are allowed, and then yields nothing; a filter skips elements whose operand is missing;
 * comparisons follow text/template (an int never equals a float, `"1" < 2` is an error);
 * `[a:b]` out of range is an error, and an empty slice ends the walk of the remaining inputs of
 * that step; `..` yields every object, array and string below the input, itself included.
 * Where client-go differs: a template is never changed by walking it, so it can be reused; an
 * existence filter counts a step that fails as absent (client-go keeps whatever the failing step
 * returned); a Go map's random order is read as sorted keys; a JSON number without a fraction
 * is an int64 even when written `1.0` (JavaScript cannot tell). Nothing is evaluated as code.
 */
import { GoScalar, goCompare, goJsonMarshal, goSprint, goTypeName, isGoMap, mapKeys } from './go-value';
import { JsonPathError } from './jsonpath-error';
import type { JsonPathNode, ListNode, SliceParam } from './node';
import { parseTemplate } from './parser';

export interface FindOptions {
  /** A missing field yields no value instead of the error `<field> is not found`. */
  readonly allowMissingKeys?: boolean;
}

/**
 * A parsed template. Immutable: parse once (a printer column, a kubectl template) and walk it over
 * any number of values, from any caller.
 */
export class JsonPath {
  private constructor(private readonly root: ListNode) {}

  /** Parses a template (`{.status.conditions[?(@.type=="Ready")].status}`); throws JsonPathError with code ParseError. */
  static parse(template: string): JsonPath {
    return new JsonPath(parseTemplate(template));
  }

  /** The values of each top-level node; throws JsonPathError with code ExecuteError. */
  findResults(data: unknown, options: FindOptions = {}): unknown[][] {
    return new Walk(options.allowMissingKeys === true).findResults(this.root.nodes, 0, data);
  }

  /** The text of one result list: values joined by one space. */
  static printResults(values: readonly unknown[]): string {
    return values.map(printValue).join(' ');
  }

  /** findResults, then every list printed one after the other (kubectl's `-o jsonpath`). */
  execute(data: unknown, options: FindOptions = {}): string {
    return this.findResults(data, options).map((values) => JsonPath.printResults(values)).join('');
  }
}

/** Objects and arrays print as JSON, everything else as Go's `fmt.Sprint` prints it. */
function printValue(value: unknown): string {
  if (Array.isArray(value) || isGoMap(value)) return goJsonMarshal(value);
  return goSprint(value);
}

function fail(message: string): never {
  throw new JsonPathError('ExecuteError', message);
}

/** The state of one findResults call: the range counters of client-go's JSONPath object. */
class Walk {
  private beginRange = 0;
  private inRange = 0;
  private endRange = 0;
  /** The index of the last `end` met, where a finished range resumes. */
  private lastEndNode = -1;

  constructor(private readonly allowMissingKeys: boolean) {}

  /** The results of `nodes[from:]` over `data`; a range recurses on the nodes after it. */
  findResults(nodes: readonly JsonPathNode[], from: number, data: unknown): unknown[][] {
    const cur = [data];
    const full: unknown[][] = [];
    for (let i = from; i < nodes.length; i++) {
      const results = this.walk(cur, nodes[i] as JsonPathNode);
      // An `end` closes the repetition of the innermost range.
      if (this.endRange > 0 && this.endRange <= this.inRange) {
        this.endRange--;
        this.lastEndNode = i;
        break;
      }
      // A `range` walks the nodes after it once per value (once over nothing when there is no
      // value, to find its `end`), then resumes after that `end`.
      if (this.beginRange > 0) {
        this.beginRange--;
        this.inRange++;
        if (results.length > 0) {
          for (const value of results) full.push(...this.findResults(nodes, i + 1, value));
        } else {
          this.findResults(nodes, i + 1, null);
        }
        this.inRange--;
        if (this.lastEndNode > i) i = this.lastEndNode;
        continue;
      }
      full.push(results);
    }
    return full;
  }

  private walk(input: unknown[], node: JsonPathNode): unknown[] {
    switch (node.type) {
      case 'List':
        return this.evalList(input, node);
      case 'Text':
        return [node.text];
      case 'Field':
        return this.evalField(input, node.name);
      case 'Array':
        return this.evalArray(input, node.params);
      case 'Filter':
        return this.evalFilter(input, node.left, node.right, node.operator);
      case 'Int':
        return input.map(() => node.value);
      case 'Float':
        return input.map(() => new GoScalar('float64', node.value));
      case 'Bool':
        return input.map(() => node.value);
      case 'Wildcard':
        return input.flatMap((value) => childrenOf(value));
      case 'Recursive':
        return this.evalRecursive(input);
      case 'Union':
        return node.lists.flatMap((list) => this.evalList(input, list));
      case 'Identifier':
        return this.evalIdentifier(input, node.name);
    }
  }

  private evalList(input: unknown[], list: ListNode): unknown[] {
    let current = input;
    for (const node of list.nodes) current = this.walk(current, node);
    return current;
  }

  private evalIdentifier(input: unknown[], name: string): unknown[] {
    if (name === 'range') {
      this.beginRange++;
      return input;
    }
    if (name === 'end') {
      if (this.inRange === 0) fail('not in range, nothing to end');
      this.endRange++;
      return [];
    }
    return fail(`unrecognized identifier ${name}`);
  }

  private evalField(input: unknown[], name: string): unknown[] {
    const results: unknown[] = [];
    for (const value of input) {
      if (isGoMap(value) && Object.prototype.hasOwnProperty.call(value, name)) results.push(value[name]);
    }
    if (results.length === 0 && input.length > 0 && !this.allowMissingKeys) fail(`${name} is not found`);
    return results;
  }

  private evalArray(input: unknown[], params: readonly [SliceParam, SliceParam, SliceParam]): unknown[] {
    const result: unknown[] = [];
    for (const value of input) {
      if (value === null || value === undefined) continue;
      if (!Array.isArray(value)) fail(`${goTypeName(value)} is not array or slice`);
      const length = value.length;
      let start = params[0].known ? params[0].value : 0;
      if (start < 0) start += length;
      let end = params[1].known ? params[1].value : length;
      if (end < 0 || (end === 0 && params[1].derived)) end += length;
      // Asking for no element is always allowed, and stops the step here (client-go returns at once).
      if (start === end) return result;
      if (start >= length || start < 0) fail(`array index out of bounds: index ${start}, length ${length}`);
      if (end > length || end < 0) fail(`array index out of bounds: index ${end - 1}, length ${length}`);
      if (start > end) fail(`starting index ${start} is greater than ending index ${end}`);
      let step = 1;
      if (params[2].known) {
        if (params[2].value <= 0) fail('step must be > 0');
        step = params[2].value;
      }
      for (let i = start; i < end; i += step) result.push(value[i]);
    }
    return result;
  }

  private evalRecursive(input: unknown[]): unknown[] {
    const result: unknown[] = [];
    for (const value of input) {
      if (value === null || value === undefined) continue;
      const children = childrenOf(value);
      if (children.length > 0) {
        result.push(value);
        result.push(...this.evalRecursive(children));
      }
    }
    return result;
  }

  private evalFilter(input: unknown[], left: ListNode, right: ListNode, operator: string): unknown[] {
    const results: unknown[] = [];
    for (const value of input) {
      if (!Array.isArray(value)) fail(`${goSprint(value)} is not array or slice and cannot be filtered`);
      for (const element of value) {
        let lefts: unknown[];
        try {
          lefts = this.evalList([element], left);
        } catch (err) {
          // An existence test treats a failed walk as "absent".
          if (operator === 'exists' && err instanceof JsonPathError) continue;
          throw err;
        }
        if (operator === 'exists') {
          if (lefts.length > 0) results.push(element);
          continue;
        }
        if (lefts.length === 0) continue;
        if (lefts.length > 1) fail('can only compare one element at a time');
        const rights = this.evalList([element], right);
        if (rights.length === 0) continue;
        if (rights.length > 1) fail('can only compare one element at a time');
        const comparison = goCompare(operator, lefts[0], rights[0]);
        if (comparison === undefined) fail(`unrecognized filter operator ${operator}`);
        if (!comparison.ok) fail(comparison.message);
        if (comparison.value) results.push(element);
      }
    }
    return results;
  }
}

/** What `*` and `..` see below a value: map values, array elements, a string's bytes. */
function childrenOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (isGoMap(value)) return mapKeys(value).map((key) => value[key]);
  if (typeof value === 'string') return [...new TextEncoder().encode(value)].map((byte) => new GoScalar('uint8', byte));
  return [];
}
