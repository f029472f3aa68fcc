import { expect } from 'chai';
import { GoMapOrder, goFormatS, goFormatV, goJsonString } from '../../../../src/patch';
import type { JsonObject } from '../../../../src/apis/object';

// Expected texts are what Go 1.19 (kube-apiserver v1.25's toolchain) prints: fmt's %v and %s of the
// values json.Unmarshal gives (integers kept as int64, as kube decodes patches), and encoding/json's
// Marshal with its default HTML escaping.
describe('src/patch go-text: fmt %v of decoded JSON', () => {
  const cases: Array<[string, unknown, string]> = [
    ['a map, keys sorted', { b: 1, a: 'x', c: true }, 'map[a:x b:1 c:true]'],
    ['keys sorted by code point, as Go compares UTF-8 bytes', { '\u{1F600}': 1, '\uffff': 2 }, 'map[\uffff:2 \u{1F600}:1]'],
    ['a slice with nil and an empty map', [1, 'a', null, {}], '[1 a <nil> map[]]'],
    ['a fraction', 1.5, '1.5'],
    ['a float64 of a million or more, with an exponent', 1234567.5, '1.2345675e+06'],
    ['a small float64, with an exponent below 1e-4', 0.00001, '1e-05'],
    ['0.0001, without', 0.0001, '0.0001'],
    ['an integer beyond int64, a float64', 1e19, '1e+19'],
    ['a large int64', 1e18, '1000000000000000000'],
  ];
  for (const [name, value, text] of cases) {
    it(name, () => expect(goFormatV(value as JsonObject)).to.equal(text));
  }
});

describe('src/patch go-text: fmt %s of decoded JSON (a $patch value in a message)', () => {
  const cases: Array<[unknown, string]> = [
    ['bogus', 'bogus'],
    [1, '%!s(int64=1)'],
    [1.5, '%!s(float64=1.5)'],
    [true, '%!s(bool=true)'],
    [null, '%!s(<nil>)'],
    [{ a: 1, b: 'x' }, 'map[a:%!s(int64=1) b:x]'],
    [['x', 2], '[x %!s(int64=2)]'],
  ];
  for (const [value, text] of cases) {
    it(`${JSON.stringify(value)} -> ${text}`, () => expect(goFormatS(value as JsonObject)).to.equal(text));
  }
});

describe('src/patch go-text: encoding/json strings', () => {
  it('escapes HTML characters, U+2028/U+2029 and control characters as Go 1.19 does', () => {
    expect(goJsonString('<a&b>')).to.equal('"\\u003ca\\u0026b\\u003e"');
    expect(goJsonString('\n\t\r\b\f\u0001')).to.equal('"\\n\\t\\r\\u0008\\u000c\\u0001"');
    expect(goJsonString('\u2028\u2029')).to.equal('"\\u2028\\u2029"');
    expect(goJsonString('"\\')).to.equal('"\\"\\\\"');
  });

  it('writes other characters as they are, and a lone surrogate as \\ufffd', () => {
    expect(goJsonString('é\u{1F600}\u007f')).to.equal('"é\u{1F600}\u007f"');
    expect(goJsonString('a\ud800b')).to.equal('"a\\ufffdb"');
  });
});

describe('src/patch go-text: GoMapOrder', () => {
  it('writes decoded objects with sorted keys and the others in their order', () => {
    const inner = { z: 1, a: 2 };
    const document = { b: inner, a: { y: 1, x: 2 } };
    const order = new GoMapOrder();
    expect(order.marshal(document)).to.equal('{"b":{"z":1,"a":2},"a":{"y":1,"x":2}}');
    order.markDecoded(document);
    expect(order.marshal(document)).to.equal('{"a":{"y":1,"x":2},"b":{"z":1,"a":2}}');
    order.markDecodedDeep(document);
    expect(order.marshal(document)).to.equal('{"a":{"x":2,"y":1},"b":{"a":2,"z":1}}');
  });

  it('copies the way the library does: in written order, nothing in the copy decoded', () => {
    const order = new GoMapOrder();
    const value = { b: { d: 1, c: 2 }, a: [{ f: 1, e: 2 }] };
    order.markDecoded(value);
    const copy = order.copyAsMarshaled(value) as JsonObject;
    expect(Object.keys(copy)).to.deep.equal(['a', 'b']);
    expect(order.marshal(copy)).to.equal('{"a":[{"f":1,"e":2}],"b":{"d":1,"c":2}}');
    expect(copy.b).not.to.equal(value.b);
  });
});
