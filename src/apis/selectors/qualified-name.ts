/**
 * Label keys and values as selectors check them: the same rules and messages as object
 * validation (apimachinery pkg/util/validation), so one implementation serves both.
 */
import { isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from '../validation/name-validation';

/** A label key: an optional DNS subdomain prefix and '/', then a name of at most 63 characters. */
export const qualifiedNameErrors: (value: string) => string[] = isQualifiedName;

/** A label value: empty, or at most 63 characters of [A-Za-z0-9-_.] starting and ending alphanumeric. */
export const labelValueErrors: (value: string) => string[] = isValidLabelValue;

export const dns1123SubdomainErrors: (value: string) => string[] = isDNS1123Subdomain;
