/**
 * Which JSON values resource.Quantity's UnmarshalJSON accepts, and its error texts
 * (k8s.io/apimachinery pkg/api/resource quantity.go: ParseQuantity, parseQuantityString).
 */

export const QUANTITY_FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
export const QUANTITY_SUFFIX_WRONG = "unable to parse quantity's suffix";

const SUFFIX_CHARACTERS = 'eEinumkKMGTP';
const KNOWN_SUFFIXES = new Set(['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei', 'n', 'u', 'm', 'k', 'M', 'G', 'T', 'P', 'E']);

const isDigitCode = (code: number): boolean => code >= 48 && code <= 57;

/** The suffix of a quantity string, or undefined when the string has the wrong shape. */
function quantitySuffix(text: string): string | undefined {
  const end = text.length;
  let pos = 0;
  if (text[0] === '-' || text[0] === '+') pos++;
  while (pos < end && text[pos] === '0') pos++;
  if (pos >= end) return '';
  while (pos < end && isDigitCode(text.charCodeAt(pos))) pos++;
  if (pos >= end) return '';
  if (text[pos] === '.') {
    pos++;
    while (pos < end && isDigitCode(text.charCodeAt(pos))) pos++;
    if (pos >= end) return '';
  }
  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARACTERS.includes(text[pos] as string)) pos++;
  if (pos >= end) return text.slice(suffixStart);
  if (text[pos] === '-' || text[pos] === '+') pos++;
  while (pos < end && isDigitCode(text.charCodeAt(pos))) pos++;
  if (pos >= end) return text.slice(suffixStart);
  return undefined;
}

/**
 * Undefined when UnmarshalJSON accepts the raw JSON value, else its error text. Strings lose their
 * quotes and surrounding space first; any other JSON value is parsed as its literal text.
 */
export function quantityDecodeError(value: unknown): string | undefined {
  let text: string;
  if (typeof value === 'string') text = value.trim();
  else if (typeof value === 'number') text = String(value);
  else return QUANTITY_FORMAT_WRONG;
  if (text.length === 0) return QUANTITY_FORMAT_WRONG;
  if (text === '0') return undefined;
  const suffix = quantitySuffix(text);
  if (suffix === undefined) return QUANTITY_FORMAT_WRONG;
  if (KNOWN_SUFFIXES.has(suffix)) return undefined;
  if (/^[eE][-+]?[0-9]+$/.test(suffix)) return undefined;
  return QUANTITY_SUFFIX_WRONG;
}
