import { expect } from 'chai';
import { MAX_BODY_DEPTH } from '../../../../../src/util';
import { asJsonObject, deepCopy, isJsonObject, isJsonValue, objectOrEmpty, setMember, type JsonObject } from '../../../../../src/apis/object';

describe('apis/object: JSON values', () => {
  describe('isJsonObject', () => {
    it('accepts objects and refuses null, arrays and scalars', () => {
      expect(isJsonObject({})).to.equal(true);
      expect(isJsonObject({ a: 1 })).to.equal(true);
      for (const value of [null, undefined, [], [{}], 'x', 1, true]) expect(isJsonObject(value), String(value)).to.equal(false);
    });
  });

  describe('asJsonObject and objectOrEmpty', () => {
    it('return an object as it is, the same instance', () => {
      const object = { a: 1 };
      expect(asJsonObject(object)).to.equal(object);
      expect(objectOrEmpty(object)).to.equal(object);
    });

    it('read anything else as undefined, or as a new empty object', () => {
      for (const value of [null, undefined, [], 'x', 0]) {
        expect(asJsonObject(value), String(value)).to.equal(undefined);
        expect(objectOrEmpty(value), String(value)).to.deep.equal({});
      }
      expect(objectOrEmpty(null)).not.to.equal(objectOrEmpty(null));
    });
  });

  describe('isJsonValue', () => {
    it('accepts what JSON.parse returns, however deep', () => {
      expect(isJsonValue(JSON.parse('{"a":[1,"x",null,true,{"b":{"c":[]}}]}'))).to.equal(true);
      expect(isJsonValue(null)).to.equal(true);
    });

    it('refuses undefined, functions and non-finite numbers anywhere inside', () => {
      expect(isJsonValue(undefined)).to.equal(false);
      expect(isJsonValue({ a: { b: undefined } })).to.equal(false);
      expect(isJsonValue([1, () => 1])).to.equal(false);
      expect(isJsonValue({ n: Number.NaN })).to.equal(false);
      expect(isJsonValue({ n: Number.POSITIVE_INFINITY })).to.equal(false);
    });
  });

  describe('setMember', () => {
    it('stores "__proto__" as an own member without changing the prototype', () => {
      const object: JsonObject = {};
      setMember(object, '__proto__', { polluted: true });
      expect(Object.getPrototypeOf(object)).to.equal(Object.prototype);
      expect(Object.keys(object)).to.deep.equal(['__proto__']);
      expect(({} as JsonObject).polluted).to.equal(undefined);
    });
  });

  describe('deepCopy', () => {
    it('copies objects and arrays at every depth, sharing nothing', () => {
      const original: JsonObject = { metadata: { name: 'web', labels: { app: 'web' } }, spec: { ports: [{ port: 80 }] } };
      const copy = deepCopy(original);
      expect(copy).to.deep.equal(original);
      (copy.metadata as JsonObject).name = 'changed';
      ((copy.spec as JsonObject).ports as JsonObject[])[0]!.port = 81;
      expect(original).to.deep.equal({ metadata: { name: 'web', labels: { app: 'web' } }, spec: { ports: [{ port: 80 }] } });
    });

    it('keeps key order, which the stored and served field order depend on', () => {
      const copy = deepCopy({ kind: 'Pod', apiVersion: 'v1', metadata: { namespace: 'a', name: 'b' } });
      expect(Object.keys(copy)).to.deep.equal(['kind', 'apiVersion', 'metadata']);
      expect(Object.keys(copy.metadata)).to.deep.equal(['namespace', 'name']);
    });

    it('copies an own "__proto__" member as a member, as JSON.parse made it', () => {
      const parsed = JSON.parse('{"__proto__":{"x":1},"a":2}') as JsonObject;
      const copy = deepCopy(parsed);
      expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype);
      expect(Object.keys(copy)).to.deep.equal(['__proto__', 'a']);
      expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).to.deep.equal({ x: 1 });
      expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).not.to.equal(Object.getOwnPropertyDescriptor(parsed, '__proto__')?.value);
    });

    it('returns scalars, null and undefined as they are', () => {
      for (const value of [null, undefined, 0, 'x', false]) expect(deepCopy(value)).to.equal(value);
    });

    it('copies the deepest body the server accepts (MAX_BODY_DEPTH levels of objects and arrays)', () => {
      let nested: unknown = 'leaf';
      for (let level = 0; level < MAX_BODY_DEPTH; level++) nested = level % 2 === 0 ? { next: nested } : [nested];
      expect(deepCopy(nested)).to.deep.equal(nested);
    });

    it('keeps members that hold undefined', () => {
      const copy = deepCopy({ a: undefined, b: 1 });
      expect(Object.keys(copy)).to.deep.equal(['a', 'b']);
    });
  });
});
