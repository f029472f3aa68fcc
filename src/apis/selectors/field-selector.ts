/**
 * Field selectors as kube-apiserver v1.25 reads them (k8s.io/apimachinery pkg/fields): terms
 * `field=value`, `field==value` and `field!=value` joined by commas, values escaped with `\`.
 * There is no whitespace trimming: `a = b` names the field "a " and the value " b".
 */
import { compareGoStrings } from './go-format';
import { SelectorParseError } from './selector-error';

export interface FieldRequirement {
  readonly field: string;
  /** '==' is read as '='; Kubernetes keeps no trace of which spelling was used. */
  readonly operator: '=' | '!=';
  /** The unescaped value. */
  readonly value: string;
}

/** Maps a field label and value to the ones to select on, or throws to refuse the label. */
export type FieldLabelConversion = (field: string, value: string) => readonly [field: string, value: string];

export class FieldSelector {
  private static readonly everythingSelector = new FieldSelector([]);

  private constructor(private readonly terms: readonly FieldRequirement[]) {}

  static everything(): FieldSelector {
    return FieldSelector.everythingSelector;
  }

  /** @internal Terms in the order kube-apiserver evaluates them (sorted by their written text). */
  static fromRequirements(terms: readonly FieldRequirement[]): FieldSelector {
    return terms.length === 0 ? FieldSelector.everythingSelector : new FieldSelector([...terms]);
  }

  requirements(): readonly FieldRequirement[] {
    return this.terms;
  }

  /** A field missing from `fields` reads as the empty string, as a Go fields.Set lookup does. */
  matches(fields: Readonly<Record<string, string>>): boolean {
    return this.terms.every((term) => {
      const actual = Object.prototype.hasOwnProperty.call(fields, term.field) ? (fields[term.field] ?? '') : '';
      return term.operator === '=' ? actual === term.value : actual !== term.value;
    });
  }

  isEmpty(): boolean {
    return this.terms.length === 0;
  }

  /** The value an '=' term demands of `field`, as fields.Selector.RequiresExactMatch. */
  requiresExactMatch(field: string): string | undefined {
    return this.terms.find((term) => term.operator === '=' && term.field === field)?.value;
  }

  /**
   * Applies a field label conversion to every term in order; the first refusal propagates.
   * A conversion answering an empty field and value drops the term, as fields.Selector.Transform.
   */
  transform(conversion: FieldLabelConversion): FieldSelector {
    const converted: FieldRequirement[] = [];
    for (const term of this.terms) {
      const [field, value] = conversion(term.field, term.value);
      if (field === '' && value === '') continue;
      converted.push({ field, operator: term.operator, value });
    }
    return FieldSelector.fromRequirements(converted);
  }

  /** The canonical text, values escaped: `metadata.name=a\,b,status.phase!=Running`. */
  toString(): string {
    return this.terms.map((term) => `${term.field}${term.operator}${escapeFieldValue(term.value)}`).join(',');
  }
}

/** Parses the `fieldSelector` query parameter; throws SelectorParseError with kube-apiserver's message. */
export function parseFieldSelector(text: string): FieldSelector {
  // Kubernetes sorts the raw terms (escapes included) before reading them; the order decides
  // which unsupported field label a later conversion reports first.
  const parts = splitTerms(text).sort(compareGoStrings);
  const terms: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const split = splitTerm(part);
    if (split === undefined) throw new SelectorParseError(`invalid selector: '${text}'; can't understand '${part}'`);
    terms.push({
      field: split.field,
      operator: split.operator === '!=' ? '!=' : '=',
      value: unescapeFieldValue(split.rawValue),
    });
  }
  return FieldSelector.fromRequirements(terms);
}

/** fields.EscapeValue: prefixes `\`, `,` and `=` with a backslash. */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (char) => `\\${char}`);
}

/** fields.UnescapeValue: the inverse of escapeFieldValue; throws on anything else after `\`. */
export function unescapeFieldValue(raw: string): string {
  if (!/[\\,=]/.test(raw)) return raw;
  let value = '';
  let escaping = false;
  for (const char of raw) {
    if (escaping) {
      if (char !== '\\' && char !== ',' && char !== '=') {
        throw new SelectorParseError(`invalid field selector: invalid escape sequence: \\${char}`);
      }
      value += char;
      escaping = false;
    } else if (char === '\\') {
      escaping = true;
    } else if (char === ',' || char === '=') {
      // Go prints the rune with %v, so the client sees its code point number (e.g. 61 for '=').
      throw new SelectorParseError(`invalid field selector: unescaped character in value: ${char.codePointAt(0)}`);
    } else {
      value += char;
    }
  }
  if (escaping) throw new SelectorParseError('invalid field selector: invalid escape sequence: \\');
  return value;
}

/** Splits on commas that are not escaped; an escaped comma stays in its term with its backslash. */
function splitTerms(text: string): string[] {
  if (text.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let escaping = false;
  for (let index = 0; index < text.length; index++) {
    const char = text.charAt(index);
    if (escaping) {
      escaping = false;
    } else if (char === '\\') {
      escaping = true;
    } else if (char === ',') {
      terms.push(text.slice(start, index));
      start = index + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

const TERM_OPERATORS = ['!=', '==', '='] as const;

/** The first operator occurrence splits the term; field names have no escaping. */
function splitTerm(term: string): { field: string; operator: (typeof TERM_OPERATORS)[number]; rawValue: string } | undefined {
  for (let index = 0; index < term.length; index++) {
    for (const operator of TERM_OPERATORS) {
      if (term.startsWith(operator, index)) {
        return { field: term.slice(0, index), operator, rawValue: term.slice(index + operator.length) };
      }
    }
  }
  return undefined;
}
