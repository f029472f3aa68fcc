/**
 * Label key and value validation, worded as k8s.io/apimachinery pkg/util/validation
 * (IsQualifiedName, IsValidLabelValue, IsDNS1123Subdomain) words it in v1.25. Each function
 * returns the list of problems; an empty list means valid.
 */
import { goLength } from './go-format';

const QUALIFIED_NAME_FORMAT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME_MESSAGE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_MAX_LENGTH = 63;
const QUALIFIED_NAME = new RegExp(`^${QUALIFIED_NAME_FORMAT}$`);

const LABEL_VALUE_FORMAT = `(${QUALIFIED_NAME_FORMAT})?`;
const LABEL_VALUE_MESSAGE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MAX_LENGTH = 63;
const LABEL_VALUE = new RegExp(`^${LABEL_VALUE_FORMAT}$`);

const DNS1123_LABEL_FORMAT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FORMAT = `${DNS1123_LABEL_FORMAT}(\\.${DNS1123_LABEL_FORMAT})*`;
const DNS1123_SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_SUBDOMAIN_FORMAT}$`);

/** A label key: an optional DNS subdomain prefix and '/', then a name of at most 63 characters. */
export function qualifiedNameErrors(value: string): string[] {
  const errors: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errors.push(`prefix part ${emptyError()}`);
    else errors.push(...dns1123SubdomainErrors(prefix).map((message) => `prefix part ${message}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_MESSAGE, QUALIFIED_NAME_FORMAT, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errors.push(`name part ${emptyError()}`);
  else if (goLength(name) > QUALIFIED_NAME_MAX_LENGTH) errors.push(`name part ${maxLengthError(QUALIFIED_NAME_MAX_LENGTH)}`);
  if (!QUALIFIED_NAME.test(name)) {
    errors.push(`name part ${regexError(QUALIFIED_NAME_MESSAGE, QUALIFIED_NAME_FORMAT, 'MyName', 'my.name', '123-abc')}`);
  }
  return errors;
}

/** A label value: empty, or at most 63 characters with the qualified-name character rules. */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (goLength(value) > LABEL_VALUE_MAX_LENGTH) errors.push(maxLengthError(LABEL_VALUE_MAX_LENGTH));
  if (!LABEL_VALUE.test(value)) {
    errors.push(regexError(LABEL_VALUE_MESSAGE, LABEL_VALUE_FORMAT, 'MyValue', 'my_value', '12345'));
  }
  return errors;
}

export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (goLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errors.push(maxLengthError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!DNS1123_SUBDOMAIN.test(value)) {
    errors.push(regexError(DNS1123_SUBDOMAIN_MESSAGE, DNS1123_SUBDOMAIN_FORMAT, 'example.com'));
  }
  return errors;
}

function emptyError(): string {
  return 'must be non-empty';
}

function maxLengthError(length: number): string {
  return `must be no more than ${length} characters`;
}

// The examples are joined with "', " + " or " on purpose: kube-apiserver's messages carry the
// resulting double space ("'MyName',  or 'my.name'") and clients compare against it.
function regexError(message: string, format: string, ...examples: string[]): string {
  if (examples.length === 0) return `${message} (regex used for validation is '${format}')`;
  const shown = examples.map((example) => `'${example}', `).join(' or ');
  return `${message} (e.g. ${shown}regex used for validation is '${format}')`;
}
