import { expect } from 'chai';
import {
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isEnvVarName,
  isQualifiedName,
  isValidIP,
  isValidLabelValue,
  isValidPathSegmentName,
  isValidPortName,
  nameIsDNSSubdomain,
} from '../../../../../src/apis/validation/name-validation';

// Messages from k8s.io/apimachinery pkg/util/validation/validation.go, v1.25. RegexError writes
// "'x', " per example and joins them with " or ", hence the double space before "or".
const subdomainMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const labelMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const dns1035Msg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const qualifiedNamePart =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const labelValueMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const configKeyMsg =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

describe('apis/validation name checks', () => {
  const table: Array<[string, (v: string) => string[], string, string[]]> = [
    ['subdomain accepts dotted names', isDNS1123Subdomain, 'a.b-c.d', []],
    ['subdomain refuses underscores', isDNS1123Subdomain, 'bad_name', [subdomainMsg]],
    ['subdomain refuses 254 characters', isDNS1123Subdomain, 'a'.repeat(254), ['must be no more than 253 characters']],
    ['label refuses dots with its own message', isDNS1123Label, 'a.b', ['must not contain dots']],
    ['label refuses upper case', isDNS1123Label, 'Abc', [labelMsg]],
    ['label refuses 64 characters', isDNS1123Label, 'a'.repeat(64), ['must be no more than 63 characters']],
    ['DNS-1035 refuses a leading digit', isDNS1035Label, '1web', [dns1035Msg]],
    ['qualified name accepts a prefix', isQualifiedName, 'example.com/My_Name', []],
    ['qualified name refuses a bad name part', isQualifiedName, 'a b', [qualifiedNamePart]],
    ['qualified name refuses an empty prefix', isQualifiedName, '/x', ['prefix part must be non-empty']],
    ['qualified name refuses an empty name', isQualifiedName, 'example.com/', ['name part must be non-empty', qualifiedNamePart]],
    ['label value accepts empty', isValidLabelValue, '', []],
    ['label value refuses a trailing dash', isValidLabelValue, 'v-', [labelValueMsg]],
    ['config key refuses slashes', isConfigMapKey, 'a/b', [configKeyMsg]],
    ['config key refuses ..', isConfigMapKey, '..', ["must not be '..'"]],
    ['config key refuses a .. prefix', isConfigMapKey, '..x', ["must not start with '..'"]],
    ['env var names may not start with a digit', isEnvVarName, '1X', [
      "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
    ]],
    ['port names need a letter', isValidPortName, '80', ['must contain at least one letter (a-z)']],
    ['port names are at most 15', isValidPortName, 'a'.repeat(16), ['must be no more than 15 characters']],
    ['IP addresses', isValidIP, '10.0.0.256', ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']],
    ['IPv6 addresses', isValidIP, 'fd00::1', []],
    ['path segment names', isValidPathSegmentName, 'a/b%c', ["may not contain '/'", "may not contain '%'"]],
  ];
  for (const [name, check, value, expected] of table) {
    it(name, () => expect(check(value)).to.deep.equal(expected));
  }

  it('allows generateName to end in a dash', () => {
    expect(nameIsDNSSubdomain('web-', true)).to.deep.equal([]);
    expect(nameIsDNSSubdomain('web-', false)).to.deep.equal([subdomainMsg]);
  });
});
