/**
 * metav1.LabelSelector: its validation (apimachinery pkg/apis/meta/v1/validation), its meaning as a
 * labels.Selector (LabelSelectorAsSelector: nil selects nothing, {} selects everything) and its Go rendering.
 */
import { FieldPath } from './field-path';
import { FieldError, GoValue, forbidden, goQuote, goStringMap, goStringSlice, invalid, required } from './field-error';
import { objectsAt, stringAt, stringMapAt, stringsAt } from './json-value';
import { isQualifiedName, isValidLabelValue } from './name-validation';
import { asJsonObject, type JsonObject } from '../object';

export function validateLabelName(name: string, path: FieldPath): FieldError[] {
  return isQualifiedName(name).map((msg) => invalid(path, name, msg));
}

export function validateLabels(labels: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const [key, value] of Object.entries(stringMapAt(labels) ?? {})) {
    errs.push(...validateLabelName(key, path));
    errs.push(...isValidLabelValue(value).map((msg) => invalid(path, value, msg)));
  }
  return errs;
}

export function validateLabelSelector(selector: unknown, path: FieldPath): FieldError[] {
  const ps = asJsonObject(selector);
  if (ps === undefined) return [];
  const errs = validateLabels(ps['matchLabels'], path.child('matchLabels'));
  objectsAt(ps['matchExpressions']).forEach((expr, i) => {
    const exprPath = path.child('matchExpressions').index(i);
    const operator = stringAt(expr['operator']);
    const values = stringsAt(expr['values']);
    switch (operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) errs.push(required(exprPath.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) errs.push(forbidden(exprPath.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        errs.push(invalid(exprPath.child('operator'), operator, 'not a valid selector operator'));
    }
    errs.push(...validateLabelName(stringAt(expr['key']), exprPath.child('key')));
  });
  return errs;
}

/** True for a non-nil selector with no requirements: it matches every object. */
export function selectorIsEmpty(selector: unknown): boolean {
  const ps = asJsonObject(selector);
  return ps !== undefined && Object.keys(stringMapAt(ps['matchLabels']) ?? {}).length === 0 && objectsAt(ps['matchExpressions']).length === 0;
}

/** Whether the labels satisfy the selector; a nil selector matches nothing. */
export function selectorMatches(selector: unknown, labels: unknown): boolean {
  const ps = asJsonObject(selector);
  if (ps === undefined) return false;
  const set = stringMapAt(labels) ?? {};
  for (const [key, value] of Object.entries(stringMapAt(ps['matchLabels']) ?? {})) {
    if (set[key] !== value) return false;
  }
  for (const expr of objectsAt(ps['matchExpressions'])) {
    const key = stringAt(expr['key']);
    const values = stringsAt(expr['values']);
    const has = Object.prototype.hasOwnProperty.call(set, key);
    switch (stringAt(expr['operator'])) {
      case 'In':
        if (!has || !values.includes(set[key] ?? '')) return false;
        break;
      case 'NotIn':
        if (has && values.includes(set[key] ?? '')) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** %#v of a metav1.LabelSelector (the value behind the *LabelSelector), as in `field is immutable` errors. */
export function goLabelSelector(selector: JsonObject | undefined): GoValue {
  // A nil *LabelSelector prints as the quoted string "null" (see formatGoValue).
  if (selector === undefined) return new GoValue('"null"');
  const labels = stringMapAt(selector['matchLabels']);
  const exprs = Array.isArray(selector['matchExpressions']) ? objectsAt(selector['matchExpressions']) : undefined;
  const exprText =
    exprs === undefined
      ? '[]v1.LabelSelectorRequirement(nil)'
      : `[]v1.LabelSelectorRequirement{${exprs
          .map(
            (e) =>
              `v1.LabelSelectorRequirement{Key:${goQuote(stringAt(e['key']))}, Operator:${goQuote(stringAt(e['operator']))}, Values:${goStringSlice(
                Array.isArray(e['values']) ? stringsAt(e['values']) : undefined,
              )}}`,
          )
          .join(', ')}}`;
  return new GoValue(`v1.LabelSelector{MatchLabels:${goStringMap(labels)}, MatchExpressions:${exprText}}`);
}
