import { expect } from 'chai';
import { applyJsonPatch, applyJsonPatchMarshaled, GENERIC_UNPROCESSABLE_MESSAGE, PatchError } from '../../../../src/patch';
import type { JsonValue } from '../../../../src/apis/object';

interface Case {
  name: string;
  doc: JsonValue;
  patch: unknown;
  expected?: JsonValue;
  /** When set, the patch must be refused with the generic 422. */
  rejected?: true;
}

// Our own table after the operations of RFC 6902 (sections 4 and A).
const rfcCases: Case[] = [
  { name: 'add an object member', doc: { a: 1 }, patch: [{ op: 'add', path: '/b', value: 'x' }], expected: { a: 1, b: 'x' } },
  { name: 'add replaces an existing member', doc: { a: 1 }, patch: [{ op: 'add', path: '/a', value: [1] }], expected: { a: [1] } },
  { name: 'add inserts into an array', doc: { l: ['x', 'z'] }, patch: [{ op: 'add', path: '/l/1', value: 'y' }], expected: { l: ['x', 'y', 'z'] } },
  { name: 'add with "-" appends', doc: { l: [1] }, patch: [{ op: 'add', path: '/l/-', value: 2 }], expected: { l: [1, 2] } },
  { name: 'add at the array length appends', doc: { l: [1] }, patch: [{ op: 'add', path: '/l/1', value: 2 }], expected: { l: [1, 2] } },
  { name: 'add past the array length fails', doc: { l: [1] }, patch: [{ op: 'add', path: '/l/3', value: 2 }], rejected: true },
  { name: 'add under a missing parent fails', doc: {}, patch: [{ op: 'add', path: '/a/b', value: 1 }], rejected: true },
  { name: 'add a nested object', doc: { a: {} }, patch: [{ op: 'add', path: '/a/b', value: { c: [true] } }], expected: { a: { b: { c: [true] } } } },
  { name: 'remove an object member', doc: { a: 1, b: 2 }, patch: [{ op: 'remove', path: '/a' }], expected: { b: 2 } },
  { name: 'remove an array element', doc: { l: [1, 2, 3] }, patch: [{ op: 'remove', path: '/l/1' }], expected: { l: [1, 3] } },
  { name: 'remove a missing member fails', doc: { a: 1 }, patch: [{ op: 'remove', path: '/b' }], rejected: true },
  { name: 'replace a member', doc: { a: 1 }, patch: [{ op: 'replace', path: '/a', value: 2 }], expected: { a: 2 } },
  { name: 'replace an array element', doc: { l: [1, 2] }, patch: [{ op: 'replace', path: '/l/0', value: 9 }], expected: { l: [9, 2] } },
  { name: 'replace past the array end fails', doc: { l: [1] }, patch: [{ op: 'replace', path: '/l/1', value: 9 }], rejected: true },
  { name: 'move a member', doc: { a: { x: 1 }, b: {} }, patch: [{ op: 'move', from: '/a/x', path: '/b/y' }], expected: { a: {}, b: { y: 1 } } },
  { name: 'move an array element', doc: { l: [1, 2, 3] }, patch: [{ op: 'move', from: '/l/0', path: '/l/2' }], expected: { l: [2, 3, 1] } },
  { name: 'move into its own child fails', doc: { a: { b: 1 } }, patch: [{ op: 'move', from: '/a', path: '/a/b/c' }], rejected: true },
  { name: 'copy a member', doc: { a: { x: [1] } }, patch: [{ op: 'copy', from: '/a/x', path: '/b' }], expected: { a: { x: [1] }, b: [1] } },
  { name: 'test a matching value', doc: { a: { b: [1, { c: 'd' }] } }, patch: [{ op: 'test', path: '/a/b', value: [1, { c: 'd' }] }], expected: { a: { b: [1, { c: 'd' }] } } },
  { name: 'test a different value fails', doc: { a: 1 }, patch: [{ op: 'test', path: '/a', value: 2 }], rejected: true },
  { name: 'test compares objects regardless of member order', doc: { a: { x: 1, y: 2 } }, patch: [{ op: 'test', path: '/a', value: { y: 2, x: 1 } }], expected: { a: { x: 1, y: 2 } } },
  { name: 'test a string against a number fails', doc: { a: '1' }, patch: [{ op: 'test', path: '/a', value: 1 }], rejected: true },
  { name: '~1 and ~0 unescape', doc: { 'a/b': 1, 'm~n': 2 }, patch: [{ op: 'replace', path: '/a~1b', value: 3 }, { op: 'remove', path: '/m~0n' }], expected: { 'a/b': 3 } },
  { name: '~01 unescapes to ~1, not /', doc: { '~1': 1 }, patch: [{ op: 'replace', path: '/~01', value: 2 }], expected: { '~1': 2 } },
  { name: 'the empty member name', doc: { '': 1 }, patch: [{ op: 'replace', path: '/', value: 2 }], expected: { '': 2 } },
  { name: 'a failing operation undoes the whole patch', doc: { a: 1 }, patch: [{ op: 'add', path: '/b', value: 2 }, { op: 'test', path: '/a', value: 5 }], rejected: true },
  { name: 'an unknown op fails', doc: { a: 1 }, patch: [{ op: 'frobnicate', path: '/a' }], rejected: true },
  { name: 'an op without path fails', doc: { a: 1 }, patch: [{ op: 'remove' }], rejected: true },
  { name: 'a null operation fails', doc: { a: 1 }, patch: [null], rejected: true },
];

// Behaviour of github.com/evanphx/json-patch v4.12.0 (vendored by kubernetes v1.25, vendor/github.com/evanphx/json-patch/patch.go)
// that departs from the RFC and that clients of a v1.25 server can observe.
const kubeCases: Case[] = [
  { name: 'replace of a missing member adds it (object get never fails)', doc: { metadata: {} }, patch: [{ op: 'replace', path: '/metadata/labels', value: { a: 'b' } }], expected: { metadata: { labels: { a: 'b' } } } },
  { name: 'copy from a missing member adds null', doc: { a: 1 }, patch: [{ op: 'copy', from: '/nope', path: '/b' }], expected: { a: 1, b: null } },
  { name: 'negative index -1 is the last element', doc: { l: [1, 2, 3] }, patch: [{ op: 'remove', path: '/l/-1' }], expected: { l: [1, 2] } },
  { name: 'add at -1 appends', doc: { l: [1, 2] }, patch: [{ op: 'add', path: '/l/-1', value: 3 }], expected: { l: [1, 2, 3] } },
  { name: 'indices parse like strconv.Atoi', doc: { l: ['a', 'b'] }, patch: [{ op: 'replace', path: '/l/+01', value: 'c' }], expected: { l: ['a', 'c'] } },
  { name: 'a path without leading slash ignores its first segment', doc: { b: 1 }, patch: [{ op: 'replace', path: 'a/b', value: 2 }], expected: { b: 2 } },
  { name: 'add without value adds null', doc: {}, patch: [{ op: 'add', path: '/a' }], expected: { a: null } },
  { name: 'test treats a missing member as null', doc: {}, patch: [{ op: 'test', path: '/a', value: null }], expected: {} },
  { name: 'test without value on a present member fails', doc: { a: 1 }, patch: [{ op: 'test', path: '/a' }], rejected: true },
  { name: 'replace at the root swaps the document', doc: { a: 1 }, patch: [{ op: 'replace', path: '', value: { b: 2 } }], expected: { b: 2 } },
  { name: 'replace at the root with a scalar is a no-op', doc: { a: 1 }, patch: [{ op: 'replace', path: '', value: 3 }], expected: { a: 1 } },
  { name: 'test at the root compares the document', doc: { a: 1 }, patch: [{ op: 'test', path: '', value: { a: 1 } }], expected: { a: 1 } },
  { name: 'add at the root path fails', doc: { a: 1 }, patch: [{ op: 'add', path: '', value: {} }], rejected: true },
  { name: 'a null patch changes nothing', doc: { a: 1 }, patch: null, expected: { a: 1 } },
];

function expectUnprocessable(fn: () => unknown): PatchError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).to.be.instanceOf(PatchError);
  const err = caught as PatchError;
  expect(err.code).to.equal(422);
  return err;
}

describe('src/patch applyJsonPatch', () => {
  for (const c of [...rfcCases, ...kubeCases]) {
    it(c.name, () => {
      const before = JSON.stringify(c.doc);
      if (c.rejected) {
        expectUnprocessable(() => applyJsonPatch(c.doc, c.patch));
      } else {
        expect(applyJsonPatch(c.doc, c.patch)).to.deep.equal(c.expected);
      }
      expect(JSON.stringify(c.doc), 'the input document is not modified').to.equal(before);
    });
  }

  it('answers a failed operation with the generic 422 Status of NewGenericServerResponse', () => {
    // k8s.io/apiserver pkg/endpoints/handlers/patch.go: patchObj.Apply errors become
    // errors.NewGenericServerResponse(422, "", GroupResource{}, "", err.Error(), 0, false), whose message is fixed.
    const err = expectUnprocessable(() => applyJsonPatch({ spec: { replicas: 1 } }, [{ op: 'test', path: '/spec/replicas', value: 2 }]));
    expect(err.toStatus()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: GENERIC_UNPROCESSABLE_MESSAGE, reason: 'Invalid', details: {}, code: 422,
    });
    expect(err.detail).to.equal('testing value /spec/replicas failed: test failed');
  });

  it('keeps the library reason for a missing path in detail', () => {
    const err = expectUnprocessable(() => applyJsonPatch({}, [{ op: 'remove', path: '/metadata/labels/x' }]));
    expect(err.detail).to.equal('remove operation does not apply: doc is missing path: "/metadata/labels/x": missing value');
  });

  it('refuses a body that is not an array with 400, worded by the strict pre-decode under the default Warn', () => {
    // patch.go: with fieldValidation Warn (v1.25 default) or Strict the body is first decoded into []jsonPatchOp.
    expect(() => applyJsonPatch({}, { op: 'add' })).to.throw(PatchError).with.property('message',
      'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp');
    expect(() => applyJsonPatch({}, [{ op: 'add', path: 5 }])).to.throw(PatchError).with.property('message',
      'error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string');
  });

  it('words decode errors as jsonpatch.DecodePatch does when fieldValidation is Ignore', () => {
    let caught: unknown;
    try {
      applyJsonPatch({}, 'x', { fieldValidation: 'Ignore' });
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(PatchError);
    expect((caught as PatchError).code).to.equal(400);
    expect((caught as PatchError).toStatus()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'json: cannot unmarshal string into Go value of type jsonpatch.Patch', reason: 'BadRequest', code: 400,
    });
    // Under Ignore a wrongly typed op is not a decode error; the operation just has no known kind.
    expectUnprocessable(() => applyJsonPatch({}, [{ op: 1, path: '/a' }], { fieldValidation: 'Ignore' }));
  });

  it('refuses more than 10000 operations with 413', () => {
    // patch.go maxJSONPatchOperations = 10000; errors.NewRequestEntityTooLargeError prefixes "Request entity too large: ".
    const patch = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/a', value: 1 }));
    let caught: unknown;
    try {
      applyJsonPatch({ a: 1 }, patch);
    } catch (err) {
      caught = err;
    }
    expect((caught as PatchError).toStatus()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
      reason: 'RequestEntityTooLarge', code: 413,
    });
    expect(applyJsonPatch({ a: 1 }, patch.slice(0, 10000))).to.deep.equal({ a: 1 });
  });

  it('applies the kubectl scale --resource-version form: test then replace', () => {
    const deployment = { metadata: { name: 'web', resourceVersion: '7' }, spec: { replicas: 1 } };
    const patch = [
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'replace', path: '/spec/replicas', value: 3 },
    ];
    expect(applyJsonPatch(deployment, patch)).to.deep.equal({ metadata: { name: 'web', resourceVersion: '7' }, spec: { replicas: 3 } });
    expectUnprocessable(() => applyJsonPatch({ ...deployment, metadata: { name: 'web', resourceVersion: '8' } }, patch));
  });

  it('sets a member named __proto__ as data, not as the prototype', () => {
    const result = applyJsonPatch({}, [{ op: 'add', path: '/__proto__', value: { polluted: true } }]) as Record<string, unknown>;
    expect(Object.keys(result)).to.deep.equal(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    expect(Object.getPrototypeOf(result)).to.equal(Object.prototype);
  });

  it('does not alias the patch value into the result', () => {
    const value = { x: [1] };
    const result = applyJsonPatch({}, [{ op: 'add', path: '/a', value }]) as { a: { x: number[] } };
    result.a.x.push(2);
    expect(value.x).to.deep.equal([1]);
  });
});

// What kube-apiserver quotes in its 422 for a result that does not decode is the library's Marshal of
// it: objects it decoded (the document, those a path walked through, those a test compared) as Go
// maps with sorted keys, the others as the raw bytes it kept.
describe('src/patch applyJsonPatchMarshaled: the text Go writes for the result', () => {
  const text = (doc: JsonValue, patch: unknown): string => applyJsonPatchMarshaled(doc, patch).goJson();

  it('sorts the document and the objects a path walked through, not the others', () => {
    expect(text({ z: { b: 1, a: 2 }, m: { d: { y: 1, x: 2 }, c: 1 } }, [{ op: 'replace', path: '/m/d/x', value: 3 }]))
      .to.equal('{"m":{"c":1,"d":{"x":3,"y":1}},"z":{"b":1,"a":2}}');
  });

  it('sorts everything a successful test compared', () => {
    expect(text({ b: { z: 1, a: { y: 1, x: 2 } }, a: { d: 1, c: 2 } }, [{ op: 'test', path: '/b', value: { a: { x: 2, y: 1 }, z: 1 } }]))
      .to.equal('{"a":{"d":1,"c":2},"b":{"a":{"x":2,"y":1},"z":1}}');
  });

  it('writes a copy in its source\'s order until an operation walks into it', () => {
    expect(text({ m: { z: 1, a: 2 } }, [{ op: 'copy', from: '/m', path: '/c' }])).to.equal('{"c":{"z":1,"a":2},"m":{"z":1,"a":2}}');
    expect(text({ m: { z: 1, a: 2 } }, [{ op: 'copy', from: '/m', path: '/c' }, { op: 'add', path: '/c/k', value: 0 }]))
      .to.equal('{"c":{"a":2,"k":0,"z":1},"m":{"z":1,"a":2}}');
  });

  it('writes added values as the patch gave them, with Go\'s HTML escaping', () => {
    expect(text({}, [{ op: 'add', path: '/v', value: { q: '<b>', p: 1 } }])).to.equal('{"v":{"q":"\\u003cb\\u003e","p":1}}');
  });
});
