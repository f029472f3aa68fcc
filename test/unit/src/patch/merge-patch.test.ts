import { expect } from 'chai';
import { applyMergePatch, PatchError } from '../../../../src/patch';
import type { JsonValue } from '../../../../src/apis/object';

// Our own table after the examples of RFC 7386 appendix A, on object documents (the only kind
// kube-apiserver patches).
const rfcCases: Array<{ name: string; doc: JsonValue; patch: JsonValue; expected: JsonValue }> = [
  { name: 'replaces a scalar', doc: { a: 'b' }, patch: { a: 'c' }, expected: { a: 'c' } },
  { name: 'adds a member', doc: { a: 'b' }, patch: { b: 'c' }, expected: { a: 'b', b: 'c' } },
  { name: 'null deletes a member', doc: { a: 'b' }, patch: { a: null }, expected: {} },
  { name: 'null deletes only that member', doc: { a: 'b', b: 'c' }, patch: { a: null }, expected: { b: 'c' } },
  { name: 'an array replaces a scalar', doc: { a: ['b'] }, patch: { a: 'c' }, expected: { a: 'c' } },
  { name: 'a scalar replaces an array', doc: { a: 'c' }, patch: { a: ['b'] }, expected: { a: ['b'] } },
  { name: 'nested objects merge, null deletes inside', doc: { a: { b: 'c' } }, patch: { a: { b: 'd', c: null } }, expected: { a: { b: 'd' } } },
  { name: 'arrays are replaced, never merged', doc: { a: [{ b: 'c' }] }, patch: { a: [1] }, expected: { a: [1] } },
  { name: 'a null member of the document stays when not patched', doc: { e: null }, patch: { a: 1 }, expected: { e: null, a: 1 } },
  { name: 'nested nulls in a new member are dropped', doc: {}, patch: { a: { bb: { ccc: null } } }, expected: { a: { bb: {} } } },
  { name: 'an empty patch changes nothing', doc: { a: 1 }, patch: {}, expected: { a: 1 } },
  { name: 'deleting a missing member is fine', doc: { a: 1 }, patch: { z: null }, expected: { a: 1 } },
];

function caught(fn: () => unknown): PatchError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(PatchError);
    return err as PatchError;
  }
  throw new Error('expected a PatchError');
}

describe('src/patch applyMergePatch', () => {
  for (const c of rfcCases) {
    it(c.name, () => {
      const before = JSON.stringify(c.doc);
      expect(applyMergePatch(c.doc, c.patch)).to.deep.equal(c.expected);
      expect(JSON.stringify(c.doc)).to.equal(before);
    });
  }

  // evanphx/json-patch v4.12.0 merge.go (vendored by kubernetes v1.25): a null member of the document
  // counts as absent, so the new value is pruned of nulls; an array patched over an object member is
  // taken unpruned.
  it('prunes nulls of a value patched onto a null member, not of an array patched over an object', () => {
    expect(applyMergePatch({ a: null }, { a: { b: null, c: 1 } })).to.deep.equal({ a: { c: 1 } });
    expect(applyMergePatch({ a: { x: 1 } }, { a: [{ b: null }] })).to.deep.equal({ a: [{ b: null }] });
    expect(applyMergePatch({ a: 'x' }, { a: [{ b: null }, null] })).to.deep.equal({ a: [{}, null] });
  });

  it('applies kubectl label/annotate patches: add one label, remove another with null', () => {
    // kubectl label builds a JSON merge patch with jsonpatch.CreateMergePatch and sends it as application/merge-patch+json.
    const pod = { metadata: { name: 'p', labels: { app: 'web', old: 'x' }, annotations: { a: '1' } }, spec: { containers: [{ name: 'c' }] } };
    expect(applyMergePatch(pod, { metadata: { labels: { env: 'prod', old: null } } })).to.deep.equal({
      metadata: { name: 'p', labels: { app: 'web', env: 'prod' }, annotations: { a: '1' } }, spec: { containers: [{ name: 'c' }] },
    });
    expect(applyMergePatch(pod, { metadata: { annotations: { 'example.com/why': 'because' } } })).to.deep.equal({
      metadata: { name: 'p', labels: { app: 'web', old: 'x' }, annotations: { a: '1', 'example.com/why': 'because' } },
      spec: { containers: [{ name: 'c' }] },
    });
  });

  it('applies the kubectl scale form {"spec":{"replicas":n}}', () => {
    expect(applyMergePatch({ spec: { replicas: 1, selector: {} }, status: { replicas: 1 } }, { spec: { replicas: 5 } }))
      .to.deep.equal({ spec: { replicas: 5, selector: {} }, status: { replicas: 1 } });
  });

  it('answers a null patch with the untyped 500 of v1.25 ("Invalid JSON Patch", no reason)', () => {
    // v1.25 patch.go returns jsonpatch.MergePatch's ErrBadJSONPatch unmapped; responsewriters.ErrorToAPIStatus
    // gives a non-Status error code 500 and StatusReasonUnknown (""), which is omitted.
    expect(caught(() => applyMergePatch({ a: 1 }, null)).toStatus()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Invalid JSON Patch', code: 500,
    });
  });

  it('refuses a non-object body with 400 under the default strict pre-decode', () => {
    // patch.go: for Warn/Strict, kjson.UnmarshalStrict into map[string]interface{} fails first -> BadRequest.
    const err = caught(() => applyMergePatch({ a: 1 }, [1]));
    expect(err.code).to.equal(400);
    expect(err.message).to.equal('error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}');
  });

  it('with fieldValidation Ignore, an array patch replaces the document and a scalar is refused', () => {
    expect(applyMergePatch({ a: 1 }, [{ x: null }, null], { fieldValidation: 'Ignore' })).to.deep.equal([{}, null]);
    const err = caught(() => applyMergePatch({ a: 1 }, 'x', { fieldValidation: 'Ignore' }));
    expect(err.code).to.equal(500);
    expect(err.message).to.equal('Invalid JSON Patch');
  });

  it('does not share structure with the patch', () => {
    const patch = { a: { b: [1] } };
    const result = applyMergePatch({}, patch) as { a: { b: number[] } };
    result.a.b.push(2);
    expect(patch.a.b).to.deep.equal([1]);
  });
});
