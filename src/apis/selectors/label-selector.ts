/**
 * Label selectors as kube-apiserver v1.25 reads them (k8s.io/apimachinery pkg/labels): the
 * `labelSelector` query parameter syntax, with its exact error messages, and the
 * metav1.LabelSelector object form that workload controllers carry.
 */
import { compareGoStrings, goQuote, goStringSliceLiteral } from './go-format';
import { labelValueErrors, qualifiedNameErrors } from './qualified-name';
import { SelectorParseError } from './selector-error';

/** The operator names of k8s.io/apimachinery pkg/selection, which also appear in error messages. */
export type LabelSelectorOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'gt' | 'lt' | 'exists' | '!';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelSelectorOperator;
  /** In the order given (sorted and de-duplicated when parsed from text); empty for exists and '!'. */
  readonly values: readonly string[];
}

export type LabelSet = Readonly<Record<string, string>>;

/** metav1.LabelSelector as it appears in object specs. */
export interface LabelSelectorObject {
  matchLabels?: Readonly<Record<string, string>> | null;
  matchExpressions?: readonly LabelSelectorRequirementObject[] | null;
}

export interface LabelSelectorRequirementObject {
  key: string;
  /** 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; anything else is refused as Kubernetes refuses it. */
  operator: string;
  values?: readonly string[] | null;
}

/** The order the parser names the binary operators in "expected: ..." messages. */
const BINARY_OPERATORS: readonly LabelSelectorOperator[] = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];

/**
 * An AND of requirements. `LabelSelector.nothing()` is the distinct selector a nil
 * metav1.LabelSelector converts to: it matches no object at all.
 */
export class LabelSelector {
  private static readonly everythingSelector = new LabelSelector([], false);
  private static readonly nothingSelector = new LabelSelector([], true);

  private constructor(
    private readonly reqs: readonly LabelRequirement[],
    private readonly selectsNothing: boolean,
  ) {}

  static everything(): LabelSelector {
    return LabelSelector.everythingSelector;
  }

  static nothing(): LabelSelector {
    return LabelSelector.nothingSelector;
  }

  /** @internal Builds from requirements that already passed validation. */
  static fromRequirements(requirements: readonly LabelRequirement[]): LabelSelector {
    return requirements.length === 0 ? LabelSelector.everythingSelector : new LabelSelector(sortByKey(requirements), false);
  }

  requirements(): readonly LabelRequirement[] {
    return this.reqs;
  }

  /** Absent labels (undefined or null) behave as an empty label set. */
  matches(labels: LabelSet | null | undefined): boolean {
    if (this.selectsNothing) return false;
    const set = labels ?? {};
    return this.reqs.every((requirement) => requirementMatches(requirement, set));
  }

  /** True when the selector does not restrict anything (the empty string parses to this). */
  isEmpty(): boolean {
    return !this.selectsNothing && this.reqs.length === 0;
  }

  matchesNothing(): boolean {
    return this.selectsNothing;
  }

  /** The single value a key must equal ('=', '==' or 'in' with one value), as labels.Selector.RequiresExactMatch. */
  requiresExactMatch(key: string): string | undefined {
    const requirement = this.reqs.find((candidate) => candidate.key === key);
    if (requirement === undefined) return undefined;
    const { operator, values } = requirement;
    if ((operator === '=' || operator === '==' || operator === 'in') && values.length === 1) return values[0];
    return undefined;
  }

  /** The canonical text: requirements sorted by key, set values sorted, e.g. `a in (b,c),d!=e`. */
  toString(): string {
    return this.reqs.map(requirementToString).join(',');
  }
}

/**
 * Parses the `labelSelector` query parameter. Throws SelectorParseError carrying the message
 * kube-apiserver answers a bad selector with.
 */
export function parseLabelSelector(text: string): LabelSelector {
  const parser = new Parser(lex(text));
  return LabelSelector.fromRequirements(parser.parse());
}

/**
 * metav1.LabelSelectorAsSelector: a missing selector selects nothing, an empty one everything.
 * matchLabels become '=' requirements; an unknown operator or a bad key/value throws.
 */
export function labelSelectorFromObject(selector: LabelSelectorObject | null | undefined): LabelSelector {
  if (selector === null || selector === undefined) return LabelSelector.nothing();
  const matchLabels = selector.matchLabels ?? {};
  const matchExpressions = selector.matchExpressions ?? [];
  const labelKeys = Object.keys(matchLabels);
  if (labelKeys.length + matchExpressions.length === 0) return LabelSelector.everything();

  const requirements: LabelRequirement[] = [];
  // Go walks matchLabels in random map order; sorted order keeps the reported error stable.
  for (const key of labelKeys.sort(compareGoStrings)) {
    requirements.push(newRequirement(key, '=', [matchLabels[key] ?? '']));
  }
  for (const expression of matchExpressions) {
    const operator = OBJECT_OPERATORS[expression.operator];
    if (operator === undefined) {
      throw new SelectorParseError(`${goQuote(expression.operator)} is not a valid pod selector operator`);
    }
    // Go copies the values with append([]string(nil), ...): no values at all is a nil slice.
    const values = expression.values && expression.values.length > 0 ? [...expression.values] : null;
    requirements.push(newRequirement(expression.key, operator, values));
  }
  return LabelSelector.fromRequirements(requirements);
}

/** labels.SelectorFromSet: one '=' requirement per label, without validating keys or values. */
export function labelSelectorFromSet(labels: LabelSet | null | undefined): LabelSelector {
  const set = labels ?? {};
  return LabelSelector.fromRequirements(
    Object.keys(set).map((key) => ({ key, operator: '=' as const, values: [set[key] ?? ''] })),
  );
}

const OBJECT_OPERATORS: Readonly<Record<string, LabelSelectorOperator | undefined>> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
};

function requirementMatches(requirement: LabelRequirement, labels: LabelSet): boolean {
  const present = Object.prototype.hasOwnProperty.call(labels, requirement.key);
  const value = present ? labels[requirement.key] : undefined;
  switch (requirement.operator) {
    case 'in':
    case '=':
    case '==':
      return value !== undefined && requirement.values.includes(value);
    case 'notin':
    case '!=':
      return value === undefined || !requirement.values.includes(value);
    case 'exists':
      return present;
    case '!':
      return !present;
    case 'gt':
    case 'lt': {
      if (value === undefined || requirement.values.length !== 1) return false;
      const actual = parseInt64(value);
      const bound = parseInt64(requirement.values[0] ?? '');
      if (actual === undefined || bound === undefined) return false;
      return requirement.operator === 'gt' ? actual > bound : actual < bound;
    }
  }
}

function requirementToString(requirement: LabelRequirement): string {
  const { key, operator, values } = requirement;
  if (operator === 'exists') return key;
  if (operator === '!') return `!${key}`;
  const shown = values.length === 1 ? (values[0] ?? '') : [...values].sort(compareGoStrings).join(',');
  switch (operator) {
    case 'in':
      return `${key} in (${shown})`;
    case 'notin':
      return `${key} notin (${shown})`;
    case 'gt':
      return `${key}>${shown}`;
    case 'lt':
      return `${key}<${shown}`;
    default:
      return `${key}${operator}${shown}`;
  }
}

// Go sorts with sort.Sort(ByKey), which for selectors of realistic size is an insertion sort and
// therefore keeps requirements on the same key in their written order; a stable sort agrees.
function sortByKey(requirements: readonly LabelRequirement[]): LabelRequirement[] {
  return [...requirements].sort((a, b) => compareGoStrings(a.key, b.key));
}

/** strconv.ParseInt(s, 10, 64): optional sign, decimal digits, within int64. */
function parseInt64(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  if (value < -(2n ** 63n) || value > 2n ** 63n - 1n) return undefined;
  return value;
}

// ---------------------------------------------------------------------------------------------
// Requirement validation (labels.NewRequirement) and its field.ErrorList rendering.

/** One field.Error rendered as `<path>: Invalid value: <value>: <detail>`. */
function invalidValue(path: string, renderedValue: string, detail: string): string {
  return `${path}: Invalid value: ${renderedValue}: ${detail}`;
}

/**
 * labels.NewRequirement with no field path. `values === null` is Go's nil slice, which only
 * shows in the rendered error. Throws with the aggregated error text.
 */
function newRequirement(key: string, operator: LabelSelectorOperator, values: string[] | null): LabelRequirement {
  const errors = requirementErrors(key, operator, values);
  if (errors.length > 0) throw new SelectorParseError(aggregate(errors));
  return { key, operator, values: values ?? [] };
}

function requirementErrors(key: string, operator: LabelSelectorOperator, values: string[] | null): string[] {
  const errors: string[] = [];
  const keyProblems = qualifiedNameErrors(key);
  if (keyProblems.length > 0) errors.push(invalidValue('key', goQuote(key), keyProblems.join('; ')));

  const list = values ?? [];
  const renderedList = goStringSliceLiteral(values);
  switch (operator) {
    case 'in':
    case 'notin':
      if (list.length === 0) {
        errors.push(invalidValue('values', renderedList, "for 'in', 'notin' operators, values set can't be empty"));
      }
      break;
    case '=':
    case '==':
    case '!=':
      if (list.length !== 1) {
        errors.push(invalidValue('values', renderedList, 'exact-match compatibility requires one single value'));
      }
      break;
    case 'exists':
    case '!':
      if (list.length !== 0) {
        errors.push(invalidValue('values', renderedList, 'values set must be empty for exists and does not exist'));
      }
      break;
    case 'gt':
    case 'lt':
      if (list.length !== 1) {
        errors.push(invalidValue('values', renderedList, "for 'Gt', 'Lt' operators, exactly one value is required"));
      }
      list.forEach((value, index) => {
        if (parseInt64(value) === undefined) {
          errors.push(
            invalidValue(`values[${index}]`, goQuote(value), "for 'Gt', 'Lt' operators, the value must be an integer"),
          );
        }
      });
      break;
  }
  list.forEach((value, index) => {
    const problems = labelValueErrors(value);
    if (problems.length > 0) errors.push(invalidValue(`values[${index}][${key}]`, goQuote(value), problems.join('; ')));
  });
  return errors;
}

/** field.ErrorList.ToAggregate().Error(): duplicates dropped, several errors in brackets. */
function aggregate(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? (unique[0] ?? '') : `[${unique.join(', ')}]`;
}

// ---------------------------------------------------------------------------------------------
// The lexer and parser of pkg/labels/selector.go, kept token for token so that every error names
// the same token kube-apiserver names.

const enum Token {
  EndOfString,
  ClosedPar,
  Comma,
  DoesNotExist,
  DoubleEquals,
  Equals,
  GreaterThan,
  Identifier,
  In,
  LessThan,
  NotEquals,
  NotIn,
  OpenPar,
}

const KEYWORDS: Readonly<Record<string, Token>> = {
  ')': Token.ClosedPar,
  ',': Token.Comma,
  '!': Token.DoesNotExist,
  '==': Token.DoubleEquals,
  '=': Token.Equals,
  '>': Token.GreaterThan,
  in: Token.In,
  '<': Token.LessThan,
  '!=': Token.NotEquals,
  notin: Token.NotIn,
  '(': Token.OpenPar,
};

interface ScannedItem {
  readonly token: Token;
  readonly literal: string;
}

function keyword(text: string): Token | undefined {
  return Object.prototype.hasOwnProperty.call(KEYWORDS, text) ? KEYWORDS[text] : undefined;
}

function isWhitespace(char: string): boolean {
  return char === ' ' || char === '\t' || char === '\r' || char === '\n';
}

function isSpecialSymbol(char: string): boolean {
  return '=!(),><'.includes(char) && char.length === 1;
}

/** Splits the whole selector into tokens, ending with EndOfString. */
function lex(text: string): ScannedItem[] {
  let position = 0;
  // Go's lexer reads bytes and treats a NUL byte exactly like the end of the input.
  const read = (): string => {
    if (position >= text.length) return '\0';
    return text.charAt(position++);
  };
  const unread = (): void => {
    position--;
  };

  const scanIdentifierOrKeyword = (): ScannedItem => {
    let buffer = '';
    for (;;) {
      const char = read();
      if (char === '\0') break;
      if (isSpecialSymbol(char) || isWhitespace(char)) {
        unread();
        break;
      }
      buffer += char;
    }
    return { token: keyword(buffer) ?? Token.Identifier, literal: buffer };
  };

  // Longest match among the operator spellings: "!=" beats "!", "==" beats "=".
  const scanSpecialSymbol = (): ScannedItem => {
    let buffer = '';
    let last: ScannedItem | undefined;
    for (;;) {
      const char = read();
      if (char === '\0') break;
      if (!isSpecialSymbol(char)) {
        unread();
        break;
      }
      buffer += char;
      const token = keyword(buffer);
      if (token !== undefined) {
        last = { token, literal: buffer };
      } else if (last !== undefined) {
        unread();
        break;
      }
    }
    // Every single special symbol is itself a token, so `last` is always set here.
    return last ?? { token: Token.Identifier, literal: buffer };
  };

  const items: ScannedItem[] = [];
  for (;;) {
    let char = read();
    while (isWhitespace(char)) char = read();
    if (char === '\0') {
      items.push({ token: Token.EndOfString, literal: '' });
      return items;
    }
    unread();
    items.push(isSpecialSymbol(char) ? scanSpecialSymbol() : scanIdentifierOrKeyword());
  }
}

/** Where 'in' and 'notin' are operators (after a key) and where they are plain words (values). */
const enum Context {
  KeyAndOperator,
  Values,
}

class Parser {
  private position = 0;

  constructor(private readonly items: readonly ScannedItem[]) {}

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const next = this.lookahead(Context.Values);
      switch (next.token) {
        case Token.Identifier:
        case Token.DoesNotExist: {
          requirements.push(this.parseRequirementWithPrefix());
          const after = this.consume(Context.Values);
          if (after.token === Token.EndOfString) return requirements;
          if (after.token === Token.Comma) {
            const following = this.lookahead(Context.Values);
            if (following.token !== Token.Identifier && following.token !== Token.DoesNotExist) {
              throw new SelectorParseError(`found '${following.literal}', expected: identifier after ','`);
            }
            break;
          }
          throw new SelectorParseError(`found '${after.literal}', expected: ',' or 'end of string'`);
        }
        case Token.EndOfString:
          return requirements;
        default:
          throw new SelectorParseError(`found '${next.literal}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private parseRequirementWithPrefix(): LabelRequirement {
    try {
      return this.parseRequirement();
    } catch (error) {
      if (error instanceof SelectorParseError) {
        throw new SelectorParseError(`unable to parse requirement: ${error.message}`);
      }
      throw error;
    }
  }

  private parseRequirement(): LabelRequirement {
    const { key, operator: inferred } = this.parseKeyAndInferOperator();
    if (inferred === 'exists' || inferred === '!') return newRequirement(key, inferred, []);
    const operator = this.parseOperator();
    const values = operator === 'in' || operator === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, operator, [...values].sort(compareGoStrings));
  }

  private parseKeyAndInferOperator(): { key: string; operator: LabelSelectorOperator | undefined } {
    let operator: LabelSelectorOperator | undefined;
    let item = this.consume(Context.Values);
    if (item.token === Token.DoesNotExist) {
      operator = '!';
      item = this.consume(Context.Values);
    }
    if (item.token !== Token.Identifier) throw new SelectorParseError(`found '${item.literal}', expected: identifier`);
    const keyProblems = qualifiedNameErrors(item.literal);
    if (keyProblems.length > 0) {
      // The parser validates the key with a nil field path, which Go prints as "<nil>".
      throw new SelectorParseError(invalidValue('<nil>', goQuote(item.literal), keyProblems.join('; ')));
    }
    const next = this.lookahead(Context.Values).token;
    if ((next === Token.EndOfString || next === Token.Comma) && operator !== '!') operator = 'exists';
    return { key: item.literal, operator };
  }

  private parseOperator(): LabelSelectorOperator {
    const item = this.consume(Context.KeyAndOperator);
    switch (item.token) {
      case Token.In:
        return 'in';
      case Token.Equals:
        return '=';
      case Token.DoubleEquals:
        return '==';
      case Token.GreaterThan:
        return 'gt';
      case Token.LessThan:
        return 'lt';
      case Token.NotIn:
        return 'notin';
      case Token.NotEquals:
        return '!=';
      default:
        throw new SelectorParseError(`found '${item.literal}', expected: ${BINARY_OPERATORS.join(', ')}`);
    }
  }

  private parseValues(): Set<string> {
    const open = this.consume(Context.Values);
    if (open.token !== Token.OpenPar) throw new SelectorParseError(`found '${open.literal}' expected: '('`);
    const first = this.lookahead(Context.Values);
    switch (first.token) {
      case Token.Identifier:
      case Token.Comma: {
        const values = this.parseIdentifiersList();
        // kube-apiserver names the first value here, not the offending token; kept as is.
        if (this.consume(Context.Values).token !== Token.ClosedPar) {
          throw new SelectorParseError(`found '${first.literal}', expected: ')'`);
        }
        return values;
      }
      case Token.ClosedPar:
        this.consume(Context.Values);
        return new Set(['']);
      default:
        throw new SelectorParseError(`found '${first.literal}', expected: ',', ')' or identifier`);
    }
  }

  /** A possibly empty, comma separated list of possibly empty values: `(a,,b)`, `(,a)`, `(a,)`. */
  private parseIdentifiersList(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const item = this.consume(Context.Values);
      if (item.token === Token.Identifier) {
        values.add(item.literal);
        const next = this.lookahead(Context.Values);
        if (next.token === Token.Comma) continue;
        if (next.token === Token.ClosedPar) return values;
        throw new SelectorParseError(`found '${next.literal}', expected: ',' or ')'`);
      }
      if (item.token === Token.Comma) {
        if (values.size === 0) values.add('');
        const next = this.lookahead(Context.Values).token;
        if (next === Token.ClosedPar) {
          values.add('');
          return values;
        }
        if (next === Token.Comma) {
          this.consume(Context.Values);
          values.add('');
        }
        continue;
      }
      throw new SelectorParseError(`found '${item.literal}', expected: ',', or identifier`);
    }
  }

  private parseExactValue(): Set<string> {
    const next = this.lookahead(Context.Values).token;
    if (next === Token.EndOfString || next === Token.Comma) return new Set(['']);
    const item = this.consume(Context.Values);
    if (item.token === Token.Identifier) return new Set([item.literal]);
    throw new SelectorParseError(`found '${item.literal}', expected: identifier`);
  }

  private lookahead(context: Context): ScannedItem {
    return this.inContext(this.items[this.position], context);
  }

  private consume(context: Context): ScannedItem {
    const item = this.inContext(this.items[this.position], context);
    // Never step past EndOfString: Go's parser never tries to, and stopping there keeps us safe.
    if (this.position < this.items.length - 1) this.position++;
    return item;
  }

  private inContext(item: ScannedItem | undefined, context: Context): ScannedItem {
    const current = item ?? { token: Token.EndOfString, literal: '' };
    if (context === Context.Values && (current.token === Token.In || current.token === Token.NotIn)) {
      return { token: Token.Identifier, literal: current.literal };
    }
    return current;
  }
}
