import { expect } from 'chai';
import {
  LabelSelector,
  SelectorParseError,
  labelSelectorFromObject,
  labelSelectorFromSet,
  parseLabelSelector,
} from '../../../../../src/apis/selectors';

// The regex explanations below are the v1.25 wording of k8s.io/apimachinery
// pkg/util/validation/validation.go (IsQualifiedName, IsValidLabelValue, IsDNS1123Subdomain),
// including the double space its RegexError puts after each example.
const NAME_PART =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

function parseError(text: string): SelectorParseError {
  try {
    parseLabelSelector(text);
  } catch (error) {
    if (error instanceof SelectorParseError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be refused`);
}

describe('parseLabelSelector', () => {
  describe('accepts the v1.25 syntax and prints it canonically', () => {
    // k8s.io/apimachinery pkg/labels/selector.go: requirements are sorted by key, set values
    // sorted and de-duplicated, and Requirement.String spells each operator as below.
    const cases: Array<[input: string, canonical: string]> = [
      ['', ''],
      ['a=b', 'a=b'],
      ['a==b', 'a==b'],
      ['a!=b', 'a!=b'],
      ['x', 'x'],
      ['!x', '!x'],
      ['x,y', 'x,y'],
      ['y,x', 'x,y'],
      ['a in (b, c),d!=e', 'a in (b,c),d!=e'],
      ['a notin (c,b,b)', 'a notin (b,c)'],
      ['  a  =  b  ,\tc\n', 'a=b,c'],
      ['x=', 'x='],
      ['x=,y', 'x=,y'],
      ['x in ()', 'x in ()'],
      ['x in (,)', 'x in ()'],
      ['x in (a,,b)', 'x in (,a,b)'],
      ['x in (a,)', 'x in (,a)'],
      ['x notin (,a)', 'x notin (,a)'],
      ['x>1', 'x>1'],
      ['x<7', 'x<7'],
      // 'in' and 'notin' are operators only right after a key; elsewhere they are words.
      ['in in (in, notin)', 'in in (in,notin)'],
      ['notin=in', 'notin=in'],
      ['example.com/app=web', 'example.com/app=web'],
      ['a=b,a=c', 'a=b,a=c'],
    ];
    for (const [input, canonical] of cases) {
      it(`${JSON.stringify(input)} -> ${JSON.stringify(canonical)}`, () => {
        expect(parseLabelSelector(input).toString()).to.equal(canonical);
      });
    }
  });

  it('exposes requirements with the pkg/selection operator names', () => {
    expect(parseLabelSelector('b in (y,x),!c,a>3,d').requirements()).to.deep.equal([
      { key: 'a', operator: 'gt', values: ['3'] },
      { key: 'b', operator: 'in', values: ['x', 'y'] },
      { key: 'c', operator: '!', values: [] },
      { key: 'd', operator: 'exists', values: [] },
    ]);
  });

  it('reads the empty selector as selecting everything', () => {
    const selector = parseLabelSelector('');
    expect(selector.isEmpty()).to.equal(true);
    expect(selector.matches(undefined)).to.equal(true);
    expect(parseLabelSelector('a').isEmpty()).to.equal(false);
  });

  describe('refuses with the exact kube-apiserver 400 message', () => {
    // Messages of k8s.io/apimachinery pkg/labels/selector.go v1.25 (Parser, NewRequirement),
    // which the list handler returns unchanged as the Status message.
    const cases: Array<[input: string, message: string]> = [
      ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
      ['x (a)', "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"],
      ['!x=y', "found '=', expected: ',' or 'end of string'"],
      ['x=a b', "found 'b', expected: ',' or 'end of string'"],
      ['x=a,', "found '', expected: identifier after ','"],
      ['x,,y', "found ',', expected: identifier after ','"],
      [',x', "found ',', expected: !, identifier, or 'end of string'"],
      ['=x', "found '=', expected: !, identifier, or 'end of string'"],
      ['!', "unable to parse requirement: found '', expected: identifier"],
      ['!!x', "unable to parse requirement: found '!', expected: identifier"],
      ['x=(', "unable to parse requirement: found '(', expected: identifier"],
      ['x notin', "unable to parse requirement: found '' expected: '('"],
      ['x in b', "unable to parse requirement: found 'b' expected: '('"],
      ['x in (a', "unable to parse requirement: found '', expected: ',' or ')'"],
      ['x in (a b)', "unable to parse requirement: found 'b', expected: ',' or ')'"],
      ['x in (,', "unable to parse requirement: found '', expected: ',', or identifier"],
      ['x in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
      ['x>a', `unable to parse requirement: values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer`],
      ['x>99999999999999999999', `unable to parse requirement: values[0]: Invalid value: "99999999999999999999": for 'Gt', 'Lt' operators, the value must be an integer`],
      // A negative bound parses as an integer but is not a valid label value.
      ['x<-1', `unable to parse requirement: values[0][x]: Invalid value: "-1": ${LABEL_VALUE}`],
      ['x<+7', `unable to parse requirement: values[0][x]: Invalid value: "+7": ${LABEL_VALUE}`],
      // Both problems of one requirement come back as an aggregate in brackets.
      [
        'x>_',
        `unable to parse requirement: [values[0]: Invalid value: "_": for 'Gt', 'Lt' operators, the value must be an integer, values[0][x]: Invalid value: "_": ${LABEL_VALUE}]`,
      ],
      ['x in (-a)', `unable to parse requirement: values[0][x]: Invalid value: "-a": ${LABEL_VALUE}`],
      [
        `x=${'v'.repeat(64)}`,
        `unable to parse requirement: values[0][x]: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`,
      ],
      // The parser checks the key with a nil field path, which Go prints as "<nil>".
      ['app:monolith', `unable to parse requirement: <nil>: Invalid value: "app:monolith": ${NAME_PART}`],
      [
        'a/b/c',
        'unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name ' +
          "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
          "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') " +
          "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ],
      [
        'Example.com/a',
        'unable to parse requirement: <nil>: Invalid value: "Example.com/a": prefix part a lowercase RFC 1123 subdomain ' +
          "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
          "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      ],
      ['/a', 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty'],
      [`${'k'.repeat(64)}`, `unable to parse requirement: <nil>: Invalid value: "${'k'.repeat(64)}": name part must be no more than 63 characters`],
      [`p/`, `unable to parse requirement: <nil>: Invalid value: "p/": name part must be non-empty; ${NAME_PART}`],
      // %q escaping of the offending key.
      ['a"b', `unable to parse requirement: <nil>: Invalid value: "a\\"b": ${NAME_PART}`],
    ];
    for (const [input, message] of cases) {
      it(`${JSON.stringify(input)}`, () => {
        const error = parseError(input);
        expect(error.message).to.equal(message);
        expect(error.code).to.equal(400);
        expect(error.reason).to.equal('BadRequest');
      });
    }
  });

  it("reads a NUL byte the way Go's lexer does", () => {
    // pkg/labels Lexer.read returns 0 both at the end and for a NUL byte: where a token starts
    // it ends the input, right after an identifier or operator it is silently swallowed.
    expect(parseLabelSelector('a \u0000,b').toString()).to.equal('a');
    expect(parseLabelSelector('a,\u0000b').toString()).to.equal('a,b');
  });
});

describe('LabelSelector.matches', () => {
  const labels = { app: 'web', tier: 'front', replicas: '3' };
  const cases: Array<[selector: string, labels: Record<string, string> | undefined, matches: boolean]> = [
    ['app=web', labels, true],
    ['app==web', labels, true],
    ['app=db', labels, false],
    ['app!=db', labels, true],
    ['app!=web', labels, false],
    // '!=' and 'notin' match objects that do not carry the label at all.
    ['missing!=x', labels, true],
    ['missing notin (a,b)', labels, true],
    ['missing!=x', undefined, true],
    ['missing=x', labels, false],
    ['missing in (x)', labels, false],
    // An empty value requires the label to exist with an empty value.
    ['missing=', labels, false],
    ['empty=', { empty: '' }, true],
    ['app in (db,web)', labels, true],
    ['app notin (db,web)', labels, false],
    ['app', labels, true],
    ['!app', labels, false],
    ['missing', labels, false],
    ['!missing', labels, true],
    ['!missing', undefined, true],
    ['replicas>2', labels, true],
    ['replicas>3', labels, false],
    ['replicas<4', labels, true],
    ['app>1', labels, false],
    ['missing<9', labels, false],
    ['big>9223372036854775806', { big: '9223372036854775807' }, true],
    ['app=web,tier=front', labels, true],
    ['app=web,tier=back', labels, false],
    // Keys are own properties only, never inherited ones.
    ['!constructor', {}, true],
    ['toString', {}, false],
  ];
  for (const [selector, set, expected] of cases) {
    it(`${JSON.stringify(selector)} on ${JSON.stringify(set)} -> ${expected}`, () => {
      expect(parseLabelSelector(selector).matches(set)).to.equal(expected);
    });
  }

  it('answers requiresExactMatch like labels.Selector.RequiresExactMatch', () => {
    expect(parseLabelSelector('a=1,b in (2),c in (3,4),d!=5').requiresExactMatch('a')).to.equal('1');
    expect(parseLabelSelector('b in (2)').requiresExactMatch('b')).to.equal('2');
    expect(parseLabelSelector('c in (3,4)').requiresExactMatch('c')).to.equal(undefined);
    expect(parseLabelSelector('d!=5').requiresExactMatch('d')).to.equal(undefined);
  });
});

describe('labelSelectorFromObject (metav1.LabelSelectorAsSelector)', () => {
  it('selects nothing for a missing selector and everything for an empty one', () => {
    // k8s.io/apimachinery pkg/apis/meta/v1/helpers.go: nil -> labels.Nothing(), {} -> labels.Everything().
    const nothing = labelSelectorFromObject(undefined);
    expect(nothing.matches({ a: 'b' })).to.equal(false);
    expect(nothing.matches(undefined)).to.equal(false);
    expect(nothing.isEmpty()).to.equal(false);
    expect(nothing.matchesNothing()).to.equal(true);
    expect(nothing.toString()).to.equal('');
    expect(labelSelectorFromObject(null).matchesNothing()).to.equal(true);
    const everything = labelSelectorFromObject({});
    expect(everything.isEmpty()).to.equal(true);
    expect(everything.matches({})).to.equal(true);
    expect(labelSelectorFromObject({ matchLabels: {}, matchExpressions: [] }).isEmpty()).to.equal(true);
  });

  it('combines matchLabels and matchExpressions, sorted by key', () => {
    const selector = labelSelectorFromObject({
      matchLabels: { tier: 'front', app: 'web' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['prod', 'canary'] },
        { key: 'legacy', operator: 'DoesNotExist' },
        { key: 'zone', operator: 'NotIn', values: ['b'] },
        { key: 'owner', operator: 'Exists', values: [] },
      ],
    });
    expect(selector.toString()).to.equal('app=web,env in (canary,prod),!legacy,owner,tier=front,zone notin (b)');
    expect(selector.matches({ app: 'web', tier: 'front', env: 'prod', owner: 'x' })).to.equal(true);
    expect(selector.matches({ app: 'web', tier: 'front', env: 'prod', owner: 'x', zone: 'b' })).to.equal(false);
    expect(selector.matches({ app: 'web', tier: 'front', env: 'prod' })).to.equal(false);
    expect(selector.matches({ app: 'web', tier: 'front', env: 'prod', owner: 'x', legacy: '' })).to.equal(false);
  });

  const refusals: Array<[name: string, selector: Parameters<typeof labelSelectorFromObject>[0], message: string]> = [
    // helpers.go: fmt.Errorf("%q is not a valid pod selector operator", expr.Operator)
    ['an unknown operator', { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, '"Gt" is not a valid pod selector operator'],
    ['a lowercase operator', { matchExpressions: [{ key: 'a', operator: 'in', values: ['1'] }] }, '"in" is not a valid pod selector operator'],
    // NewRequirement: the values are copied with append([]string(nil), ...), a nil slice when empty.
    [
      'In without values',
      { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] },
      "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      'NotIn with values missing',
      { matchExpressions: [{ key: 'a', operator: 'NotIn' }] },
      "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x', 'y'] }] },
      'values: Invalid value: []string{"x", "y"}: values set must be empty for exists and does not exist',
    ],
    ['a bad matchLabels key', { matchLabels: { 'a b': 'c' } }, `key: Invalid value: "a b": ${NAME_PART}`],
    ['a bad matchLabels value', { matchLabels: { a: 'b c' } }, `values[0][a]: Invalid value: "b c": ${LABEL_VALUE}`],
    [
      'a bad key and value together',
      { matchExpressions: [{ key: '-a', operator: 'In', values: ['ok', '-v'] }] },
      `[key: Invalid value: "-a": ${NAME_PART}, values[1][-a]: Invalid value: "-v": ${LABEL_VALUE}]`,
    ],
  ];
  for (const [name, selector, message] of refusals) {
    it(`refuses ${name}`, () => {
      expect(() => labelSelectorFromObject(selector)).to.throw(SelectorParseError).with.property('message', message);
    });
  }
});

describe('labelSelectorFromSet', () => {
  it('builds one equality requirement per label without validating them', () => {
    const selector = labelSelectorFromSet({ b: '2', a: '1', 'not valid': 'x y' });
    expect(selector.toString()).to.equal('a=1,b=2,not valid=x y');
    expect(selector.matches({ a: '1', b: '2', 'not valid': 'x y' })).to.equal(true);
    expect(selector.matches({ a: '1', b: '2' })).to.equal(false);
    expect(labelSelectorFromSet({}).isEmpty()).to.equal(true);
    expect(LabelSelector.everything().matches({})).to.equal(true);
  });
});
