import { expect } from 'chai';
import {
  FieldSelector,
  SelectorParseError,
  escapeFieldValue,
  parseFieldSelector,
  unescapeFieldValue,
} from '../../../../../src/apis/selectors';

function parseError(text: string): string {
  try {
    parseFieldSelector(text);
  } catch (error) {
    if (error instanceof SelectorParseError) return error.message;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be refused`);
}

describe('parseFieldSelector', () => {
  describe('reads terms as k8s.io/apimachinery pkg/fields does', () => {
    const cases: Array<[input: string, requirements: Array<{ field: string; operator: '=' | '!='; value: string }>]> = [
      ['', []],
      ['a=b', [{ field: 'a', operator: '=', value: 'b' }]],
      // '==' is the same term as '=' (fields.hasTerm).
      ['a==b', [{ field: 'a', operator: '=', value: 'b' }]],
      ['a!=b', [{ field: 'a', operator: '!=', value: 'b' }]],
      ['a=', [{ field: 'a', operator: '=', value: '' }]],
      // Terms are sorted by their raw text before use.
      [
        'status.phase!=Running,metadata.name=x',
        [
          { field: 'metadata.name', operator: '=', value: 'x' },
          { field: 'status.phase', operator: '!=', value: 'Running' },
        ],
      ],
      // Empty terms are skipped.
      ['a=b,,', [{ field: 'a', operator: '=', value: 'b' }]],
      // No whitespace trimming on either side.
      [' a = b ', [{ field: ' a ', operator: '=', value: ' b ' }]],
      // Escapes: \, \= and \\ in values.
      ['a=b\\,c', [{ field: 'a', operator: '=', value: 'b,c' }]],
      ['a=x\\=y', [{ field: 'a', operator: '=', value: 'x=y' }]],
      ['a=back\\\\slash', [{ field: 'a', operator: '=', value: 'back\\slash' }]],
      // An escaped backslash does not escape the following comma, which then splits terms.
      [
        'a=b\\\\,c=d',
        [
          { field: 'a', operator: '=', value: 'b\\' },
          { field: 'c', operator: '=', value: 'd' },
        ],
      ],
      // The first operator in the term splits it; '!=' is found before a later '='.
      ['a!=b', [{ field: 'a', operator: '!=', value: 'b' }]],
      ['a=!b', [{ field: 'a', operator: '=', value: '!b' }]],
    ];
    for (const [input, requirements] of cases) {
      it(JSON.stringify(input), () => {
        expect(parseFieldSelector(input).requirements()).to.deep.equal(requirements);
      });
    }
  });

  describe('refuses with the exact kube-apiserver 400 message', () => {
    // k8s.io/apimachinery pkg/fields/selector.go v1.25: parseSelector, UnescapeValue.
    const cases: Array<[input: string, message: string]> = [
      ['a', "invalid selector: 'a'; can't understand 'a'"],
      ['a=b,c', "invalid selector: 'a=b,c'; can't understand 'c'"],
      [' ', "invalid selector: ' '; can't understand ' '"],
      // UnescapedRune prints the rune with %v: its code point number.
      ['a=b=c', 'invalid field selector: unescaped character in value: 61'],
      ['a=b\\x', 'invalid field selector: invalid escape sequence: \\x'],
      ['a=b\\', 'invalid field selector: invalid escape sequence: \\'],
    ];
    for (const [input, message] of cases) {
      it(JSON.stringify(input), () => {
        expect(parseError(input)).to.equal(message);
      });
    }
  });

  it('prints values escaped and "==" as "="', () => {
    expect(parseFieldSelector('b==x\\,y,a!=p\\=q\\\\').toString()).to.equal('a!=p\\=q\\\\,b=x\\,y');
    expect(parseFieldSelector('').toString()).to.equal('');
  });
});

describe('FieldSelector.matches', () => {
  const fields = { 'metadata.name': 'web-1', 'status.phase': 'Running', 'spec.nodeName': '' };
  const cases: Array<[selector: string, matches: boolean]> = [
    ['', true],
    ['metadata.name=web-1', true],
    ['metadata.name==web-1', true],
    ['metadata.name=web-2', false],
    ['status.phase!=Running', false],
    ['status.phase!=Pending', true],
    ['spec.nodeName=', true],
    ['spec.nodeName!=', false],
    // A field the object does not provide reads as "" (a Go fields.Set lookup).
    ['not.there=', true],
    ['not.there=x', false],
    ['not.there!=x', true],
    ['metadata.name=web-1,status.phase=Running', true],
    ['metadata.name=web-1,status.phase=Pending', false],
    ['constructor=', true],
  ];
  for (const [selector, expected] of cases) {
    it(`${JSON.stringify(selector)} -> ${expected}`, () => {
      expect(parseFieldSelector(selector).matches(fields)).to.equal(expected);
    });
  }

  it('answers requiresExactMatch for "=" terms only', () => {
    const selector = parseFieldSelector('metadata.name=a,metadata.namespace!=b');
    expect(selector.requiresExactMatch('metadata.name')).to.equal('a');
    expect(selector.requiresExactMatch('metadata.namespace')).to.equal(undefined);
    expect(FieldSelector.everything().isEmpty()).to.equal(true);
  });

  it('transforms labels in order and drops terms converted to nothing', () => {
    const selector = parseFieldSelector('b=2,a=1,c=3').transform((field, value) =>
      field === 'b' ? ['', ''] : [`x.${field}`, value.toUpperCase()],
    );
    expect(selector.toString()).to.equal('x.a=1,x.c=3');
  });
});

describe('escapeFieldValue / unescapeFieldValue', () => {
  const values = ['plain', '', 'a,b', 'a=b', 'a\\b', '\\,=\\', 'ünïcödé ✓ 😀'];
  for (const value of values) {
    it(`round-trips ${JSON.stringify(value)}`, () => {
      expect(unescapeFieldValue(escapeFieldValue(value))).to.equal(value);
    });
  }

  it('escapes exactly backslash, comma and equals', () => {
    expect(escapeFieldValue('a\\b,c=d!')).to.equal('a\\\\b\\,c\\=d!');
  });

  it('refuses an unescaped comma with its code point', () => {
    expect(() => unescapeFieldValue('a,b')).to.throw(SelectorParseError, 'invalid field selector: unescaped character in value: 44');
  });
});
