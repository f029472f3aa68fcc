import { expect } from 'chai';
import { FieldPath, fieldErrorMessage } from '../../../../../src/apis/validation';
import { compileRule } from '../../../../../src/apiextensions/cel/rule-compiler';
import { validateRules } from '../../../../../src/apiextensions/cel/rule-validator';
import { validateSchemaRules } from '../../../../../src/apiextensions/cel/schema-rules';
import type { JsonSchemaProps } from '../../../../../src/apiextensions/json-schema';

/**
 * Regular expressions in rules are Go's (RE2), as kube-apiserver v1.25 built with Go 1.19 has them:
 * what RE2 knows works, what ECMAScript knows and RE2 does not is refused when the CRD is written
 * (cel.OptimizeRegex compiles constant patterns at program creation), with Go's messages.
 */

const schema = (rule: string): JsonSchemaProps => ({
  type: 'object',
  properties: { name: { type: 'string', maxLength: 64 }, pattern: { type: 'string', maxLength: 64 } },
  'x-kubernetes-validations': [{ rule }],
});

function run(rule: string, object: Record<string, unknown>): string[] {
  return validateRules(object, undefined, schema(rule)).map(fieldErrorMessage);
}

function compileError(rule: string): string | undefined {
  const outcome = compileRule({ rule }, schema(rule), false);
  return outcome.ok ? undefined : outcome.message;
}

describe('apiextensions CEL: regular expressions have RE2 (Go) semantics', () => {
  it('accepts and runs (?i), \\z, [[:alpha:]] and \\pL', () => {
    const rules = [
      "self.name.matches('(?i)^web-[a-z]+$')",
      "self.name.matches(r'^WEB-[[:alpha:]]+\\z')",
      "self.name.matches(r'^\\pL+-\\pL+$')",
    ];
    for (const rule of rules) expect(compileError(rule), rule).to.equal(undefined);
    for (const rule of rules) expect(run(rule, { name: 'WEB-Tier' }), rule).to.deep.equal([]);
    // \z is the very end of the text.
    expect(run("self.name.matches(r'^WEB-[[:alpha:]]+\\z')", { name: 'WEB-tier\n' })).to.deep.equal([': Invalid value: "object": failed rule: self.name.matches(r\'^WEB-[[:alpha:]]+\\z\')']);
    // \pL takes letters of any script.
    expect(run("self.name.matches(r'^\\pL+-\\pL+$')", { name: 'été-Ω' })).to.deep.equal([]);
  });

  it('refuses a backreference when the CRD is written, with Go\'s message', () => {
    expect(compileError("self.name.matches('(a)\\\\1')")).to.equal('program instantiation failed: error parsing regexp: invalid escape sequence: `\\1`');
  });

  it('refuses lookahead, lookbehind and (?<name>) groups (Go 1.19 knows only (?P<name>))', () => {
    expect(compileError("self.name.matches('a(?=b)')")).to.equal('program instantiation failed: error parsing regexp: invalid or unsupported Perl syntax: `(?=`');
    expect(compileError("self.name.matches('(?<=a)b')")).to.equal('program instantiation failed: error parsing regexp: invalid or unsupported Perl syntax: `(?<`');
    expect(compileError("self.name.find('(?<n>x)') == ''")).to.equal('program instantiation failed: error parsing regexp: invalid or unsupported Perl syntax: `(?<`');
    expect(compileError("self.name.find('(?P<n>x)') == ''")).to.equal(undefined);
    expect(compileError("self.name.findAll('x{1001}').size() == 0")).to.equal('program instantiation failed: error parsing regexp: invalid repeat count: `{1001}`');
  });

  it('reports a pattern that only the data supplies when the rule runs', () => {
    expect(run('self.name.matches(self.pattern)', { name: 'a', pattern: '(a)\\1' })).to.deep.equal([
      ': Invalid value: "object": error parsing regexp: invalid escape sequence: `\\1` evaluating rule: self.name.matches(self.pattern)',
    ]);
  });

  it('finds as Go\'s FindString and FindAllString do, empty matches included', () => {
    expect(run("self.name.find('[0-9]+') == '123' && self.name.findAll('[0-9]+') == ['123', '456'] && self.name.findAll('[0-9]+', 1) == ['123']", { name: 'abc123def456' })).to.deep.equal([]);
    // An empty match right after a match is skipped: ["", "aaa", ""], not ECMAScript's four matches.
    expect(run("self.name.findAll('a*') == ['', 'aaa', '']", { name: 'baaac' })).to.deep.equal([]);
    expect(run("self.name.find('z') == ''", { name: 'abc' })).to.deep.equal([]);
  });
});

const SCHEMA_PATH = FieldPath.root('spec', 'versions').index(0).child('schema', 'openAPIV3Schema');
const check = (s: JsonSchemaProps): string[] => validateSchemaRules(s, SCHEMA_PATH).map(fieldErrorMessage);

describe('apiextensions CEL: the libraries v1.25 ships, and nothing newer', () => {
  const spec: JsonSchemaProps = {
    type: 'object',
    properties: {
      s: { type: 'string', maxLength: 64, 'x-kubernetes-validations': [] },
      l: { type: 'array', maxItems: 8, items: { type: 'integer' } },
    },
  };
  const refusal = (rule: string): string[] => check({ ...spec, 'x-kubernetes-validations': [{ rule }] });

  it('accepts the lists, regex, URLs and strings libraries', () => {
    for (const rule of [
      'self.l.isSorted() && self.l.sum() >= self.l.min() && self.l.max() >= 0 && self.l.indexOf(1) >= -1 && self.l.lastIndexOf(1) >= -1',
      "self.s.find('[a-z]+') != '' || self.s.findAll('[0-9]').size() >= 0",
      "isURL(self.s) && url(self.s).getScheme() == 'https' && url(self.s).getHost() != '' && url(self.s).getHostname() != '' && url(self.s).getPort() != '' && url(self.s).getEscapedPath() != '' && size(url(self.s).getQuery()) >= 0",
      "self.s.lowerAscii().upperAscii().trim().replace('a', 'b').substring(0).charAt(0) != 'x' && self.s.split(',').size() > 0 && self.s.indexOf('a') >= -1",
    ]) expect(refusal(rule), rule).to.deep.equal([]);
  });

  it('refuses functions that came after v1.25 as undeclared references', () => {
    const root = 'spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].rule';
    // The first reference cel-go v0.12 reports: a namespace's name, where the function has one.
    for (const [rule, undeclared] of [
      ['quantity(self.s).isInteger()', 'quantity'],
      ['isIP(self.s)', 'isIP'],
      ["cidr(self.s).containsIP('10.0.0.1')", 'cidr'],
      ['isQuantity(self.s)', 'isQuantity'],
      ["'%s'.format([self.s]) != ''", 'format'],
      ["strings.quote(self.s) != ''", 'strings'],
      ['cel.bind(x, self.s, x == x)', 'cel'],
      ['sets.contains(self.l, [1])', 'sets'],
      ["base64.encode(b'a') != ''", 'base64'],
      ['math.greatest(1, 2) == 2', 'math'],
    ]) {
      const errs = refusal(rule);
      expect(errs, rule).to.have.length(1);
      expect(errs[0].startsWith(`${root}: Invalid value: apiextensions.ValidationRule{Rule:`), rule).to.equal(true);
      expect(errs[0], rule).to.match(new RegExp(`: compilation failed: ERROR: <input>:1:\\d+: undeclared reference to '${undeclared}' \\(in container ''\\)\n`));
    }
  });

  it('refuses optional types, which v1.25\'s parser does not know', () => {
    const errs = refusal('self.?s.orValue(\'\') == \'\'');
    expect(errs[0]).to.match(/compilation failed: ERROR: <input>:1:\d+: Syntax error: /);
  });
});

describe('apiextensions CEL: the strings library answers as cel-go v0.12\'s (Go strings)', () => {
  const text: JsonSchemaProps = { type: 'object', properties: { s: { type: 'string', maxLength: 32 } } };
  const evaluate = (rule: string, s: string): string[] => validateRules({ s }, undefined, { ...text, 'x-kubernetes-validations': [{ rule }] }).map(fieldErrorMessage);

  it('counts characters, not UTF-16 units, in indexes', () => {
    expect(evaluate("self.s.indexOf('x') == 12 && self.s.charAt(11) == '👑' && self.s.substring(11, 12) == '👑' && self.s.lastIndexOf('o') == 2", 'Rook takes 👑x')).to.deep.equal([]);
  });

  it('splits and replaces with Go\'s counts: the last part keeps the rest, a negative count means all', () => {
    expect(evaluate("self.s.split(' ', 2) == ['Rook', 'takes x'] && self.s.split(' ', 0) == [] && self.s.replace(' ', '_', -1) == 'Rook_takes_x' && self.s.replace(' ', '_', 1) == 'Rook_takes x'", 'Rook takes x')).to.deep.equal([]);
  });

  it('trims what Go\'s TrimSpace trims, and words range errors as cel-go does', () => {
    expect(evaluate("self.s.trim() == 'x'", '\u2003 x \u00a0')).to.deep.equal([]);
    expect(evaluate('self.s.charAt(5) == "a"', 'abc')).to.deep.equal([': Invalid value: "object": index out of range: 5 evaluating rule: self.s.charAt(5) == "a"']);
    expect(evaluate('self.s.substring(2, 1) == ""', 'abc')).to.deep.equal([': Invalid value: "object": invalid substring range. start: 2, end: 1 evaluating rule: self.s.substring(2, 1) == ""']);
  });

  it('knows durations and timestamps by their qualified type names', () => {
    const typed: JsonSchemaProps = { type: 'object', properties: { d: { type: 'string', format: 'duration' } }, 'x-kubernetes-validations': [{ rule: 'type(self.d) == google.protobuf.Duration && type(self.d) != google.protobuf.Timestamp' }] };
    expect(validateRules({ d: '1h' }, undefined, typed).map(fieldErrorMessage)).to.deep.equal([]);
  });
});
