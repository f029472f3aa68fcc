/**
 * The options of a write as v1.25 decodes and validates them before anything else runs
 * (apimachinery pkg/apis/meta/v1/validation: ValidateCreateOptions, ValidateUpdateOptions,
 * ValidatePatchOptions): dryRun only "All", fieldManager at most 128 bytes of printable
 * characters, fieldValidation one of "", Ignore, Strict, Warn, and for patches `force` only with
 * apply and fieldManager required by it. All errors of one request are one 422 Invalid on the
 * options kind, as kube aggregates them. int64 query parameters are decoded as Go decodes them.
 */
import { FieldPath, fieldErrorCause, forbidden, invalid, invalidMessage, notSupported, required, tooLong, type FieldError } from '../apis/validation';
import { ApiError, errors, int64ToNumber, parseInt64 } from '../util';

export type WriteOptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions';

const FIELD_MANAGER_MAX_LENGTH = 128;
const FIELD_VALIDATION_DIRECTIVES = ['', 'Ignore', 'Strict', 'Warn'];

/** The dryRun values a request names; empty values change nothing (as a bare `?dryRun=` is read). */
export function dryRunValues(query: URLSearchParams): string[] {
  return query.getAll('dryRun').filter((v) => v !== '');
}

function fieldManagerErrors(fieldManager: string): FieldError[] {
  const path = FieldPath.root('fieldManager');
  const found: FieldError[] = [];
  if (Buffer.byteLength(fieldManager, 'utf8') > FIELD_MANAGER_MAX_LENGTH) found.push(tooLong(path, FIELD_MANAGER_MAX_LENGTH));
  let position = 0;
  for (const char of fieldManager) {
    // unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
    if (!/[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(char)) {
      const code = char.codePointAt(0) as number;
      found.push(invalid(path, fieldManager, `invalid character U+${code.toString(16).toUpperCase().padStart(4, '0')} (at position ${position})`));
    }
    position += Buffer.byteLength(char, 'utf8');
  }
  return found;
}

/**
 * Validates the options of a create, update or patch; throws the 422 v1.25 answers.
 * `isApply` only matters for patches.
 */
export function validateWriteOptions(kind: WriteOptionsKind, query: URLSearchParams, isApply = false): void {
  const found: FieldError[] = [];
  const fieldManager = query.get('fieldManager') ?? '';
  if (kind === 'PatchOptions') {
    if (!isApply && query.has('force')) found.push(forbidden(FieldPath.root('force'), 'may not be specified for non-apply patch'));
    if (isApply && fieldManager === '') found.push(required(FieldPath.root('fieldManager'), 'is required for apply patch'));
  }
  found.push(...fieldManagerErrors(fieldManager));
  const dryRun = dryRunValues(query);
  if (dryRun.some((v) => v !== 'All')) found.push(notSupported(FieldPath.root('dryRun'), dryRun, ['All']));
  const fieldValidation = query.get('fieldValidation') ?? '';
  if (!FIELD_VALIDATION_DIRECTIVES.includes(fieldValidation)) found.push(notSupported(FieldPath.root('fieldValidation'), fieldValidation, FIELD_VALIDATION_DIRECTIVES));
  if (found.length > 0) throw optionsInvalidError(kind, found);
}

export function optionsInvalidError(kind: string, found: FieldError[]): ApiError {
  return errors.invalid('meta.k8s.io', kind, '', invalidMessage(`${kind}.meta.k8s.io`, '', found), found.map(fieldErrorCause));
}

/** An int64 query parameter (limit, timeoutSeconds, gracePeriodSeconds); undefined when absent; 400 with Go's text when it does not parse. */
export function int64Query(query: URLSearchParams, name: string): number | undefined {
  const text = query.get(name);
  if (text === null) return undefined;
  const parsed = parseInt64(text);
  if (!parsed.ok) throw errors.badRequest(parsed.message);
  return int64ToNumber(parsed.value);
}
