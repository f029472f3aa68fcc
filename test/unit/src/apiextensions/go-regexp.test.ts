import { expect } from 'chai';
import { compileGoRegexp } from '../../../../src/apiextensions/go-regexp';

function matches(pattern: string, value: string): boolean {
  const compiled = compileGoRegexp(pattern);
  if (!compiled.ok) throw new Error(`${pattern}: ${compiled.message}`);
  return compiled.regexp.matches(value);
}

describe('apiextensions go-regexp: CRD patterns as Go\'s regexp reads them', () => {
  it('accepts RE2 constructs JavaScript reads differently or refuses, and matches with Go semantics', () => {
    const cases: Array<[pattern: string, value: string, expected: boolean]> = [
      ['^(?i)(abort|warn)?$', 'ABORT', true],
      ['^(?i)(abort|warn)?$', 'Warn', true],
      ['^(?i)(abort|warn)?$', '', true],
      ['^(?i)(abort|warn)?$', 'skip', false],
      ['^[a-z]+\\z', 'abc', true],
      ['^[a-z]+\\z', 'abc\n', false],
      ['^[a-z]+$', 'abc\n', false],
      ['^[[:alpha:]]+$', 'abc', true],
      ['^[[:alpha:]]+$', 'ab:', false],
      ['^\\pL+$', 'héllo', true],
      ['^\\pL+$', 'h3llo', false],
      ['^(?P<name>[a-z]+)$', 'abc', true],
      ['^\\Q.*\\E$', '.*', true],
      ['^\\Q.*\\E$', 'ab', false],
      // MatchString is a search: an unanchored pattern matches anywhere.
      ['ab', 'xaby', true],
      ['^.$', '😀', true],
    ];
    for (const [pattern, value, expected] of cases) expect(matches(pattern, value), `${pattern} on ${JSON.stringify(value)}`).to.equal(expected);
  });

  it('refuses what Go 1.19 refuses, with its error text', () => {
    const cases: Array<[pattern: string, message: string]> = [
      ['(a)\\1', 'error parsing regexp: invalid escape sequence: `\\1`'],
      ['(?=a)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
      ['(?!a)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?!`'],
      ['(?<=a)b', 'error parsing regexp: invalid or unsupported Perl syntax: `(?<`'],
      ['(?<name>x)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?<`'],
      ['[z-a]', 'error parsing regexp: invalid character class range: `z-a`'],
      ['+', 'error parsing regexp: missing argument to repetition operator: `+`'],
      ['a{1001}', 'error parsing regexp: invalid repeat count: `{1001}`'],
      ['(', 'error parsing regexp: missing closing ): `(`'],
    ];
    for (const [pattern, message] of cases) expect(compileGoRegexp(pattern), pattern).to.deep.equal({ ok: false, message });
  });

  it('reads `(?<` only where the parser meets a group: not escaped, quoted or in a class', () => {
    for (const pattern of ['\\(?<', '[(?<]', '\\Q(?<\\E', '[[:alpha:](?<]']) expect(compileGoRegexp(pattern).ok, pattern).to.equal(true);
  });
});
