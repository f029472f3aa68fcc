import { expect } from 'chai';
import { TypedDecoder, type DecodeSource } from '../../../../src/apis/schema';
import {
  GENERIC_UNPROCESSABLE_MESSAGE, JSON_PATCH_TYPE, MERGE_PATCH_TYPE, PatchError, STRATEGIC_MERGE_PATCH_TYPE, patchObject, type FieldValidation,
} from '../../../../src/patch';
import type { JsonObject } from '../../../../src/apis/object';

/**
 * Hostile PATCH bodies against kube-apiserver v1.25's answers: the patch libraries it vendors
 * (evanphx/json-patch v4.12.0, apimachinery strategicpatch), its patch handler
 * (k8s.io/apiserver pkg/endpoints/handlers/patch.go) and the decoding of the result into the Go type
 * (JSON for JSON and merge patch, the unstructured converter for strategic merge patch).
 */

interface Refusal {
  code: number;
  /** Absent: the Status carries no reason (an untyped error, StatusReasonUnknown). */
  reason?: string;
  message: string;
}

interface Case {
  name: string;
  current?: JsonObject;
  /** The body; a string is sent as it is (to repeat keys). */
  body: unknown;
  fieldValidation?: FieldValidation;
  /** The patched, typed object. */
  applied?: JsonObject;
  warnings?: string[];
  refused?: Refusal;
}

const decode = (object: JsonObject, level: FieldValidation, source: DecodeSource) => TypedDecoder.shared().decode(object, level, undefined, source);

function configMap(): JsonObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { a: '1' } };
}

function deployment(): JsonObject {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'default', labels: { app: 'd' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'd' } },
      template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } },
    },
  };
}

/** The 422 kube answers for a patched object that does not decode: NewInvalid on the path "patch". */
function undecodable(invalidValue: string, reason: string): Refusal {
  return { code: 422, reason: 'Invalid', message: ` "" is invalid: patch: Invalid value: ${JSON.stringify(invalidValue)}: ${reason}` };
}

const generic422: Refusal = { code: 422, reason: 'Invalid', message: GENERIC_UNPROCESSABLE_MESSAGE };
const untyped500 = (message: string): Refusal => ({ code: 500, message });

function run(patchType: string, c: Case) {
  const text = typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
  const current = c.current ?? (patchType === STRATEGIC_MERGE_PATCH_TYPE ? deployment() : configMap());
  return patchObject(patchType, current, { text, value: JSON.parse(text) }, { fieldValidation: c.fieldValidation ?? 'Warn', decode });
}

function check(patchType: string, c: Case): void {
  it(c.name, () => {
    if (c.refused === undefined) {
      const result = run(patchType, c);
      if (c.applied !== undefined) expect(result.object).to.deep.equal(c.applied);
      expect(result.warnings).to.deep.equal(c.warnings ?? []);
      return;
    }
    let caught: unknown;
    try {
      run(patchType, c);
    } catch (err) {
      caught = err;
    }
    expect(caught, 'refused').to.be.instanceOf(PatchError);
    const status = (caught as PatchError).toStatus();
    expect(status.code).to.equal(c.refused.code);
    expect(status.reason).to.equal(c.refused.reason);
    expect(status.message).to.equal(c.refused.message);
  });
}

const withData = (data: JsonObject): JsonObject => ({ ...configMap(), data });

describe('src/patch patchObject: hostile JSON patches', () => {
  const cases: Case[] = [
    // evanphx/json-patch v4.12.0 findObject splits the path on "/" and drops the first segment unread.
    {
      name: 'a path without its leading "/" acts on its last segment at the top (an unknown member, reported)',
      body: [{ op: 'add', path: 'data/b', value: '2' }],
      applied: configMap(),
      warnings: ['unknown field "b"'],
    },
    {
      name: 'the same under fieldValidation=Strict: 422 quoting the patched document',
      body: [{ op: 'add', path: 'data/b', value: '2' }],
      fieldValidation: 'Strict',
      refused: undecodable('{"apiVersion":"v1","b":"2","data":{"a":"1"},"kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}', 'strict decoding error: unknown field "b"'),
    },
    { name: 'a one-segment path without "/" names nothing: the generic 422', body: [{ op: 'add', path: 'data', value: {} }], refused: generic422 },
    // The library reads no member as required: an absent value is Go's nil, written as null.
    { name: 'add without value adds null, which the type drops', body: [{ op: 'add', path: '/metadata/labels' }], applied: configMap() },
    {
      name: 'add without value to a list adds null, the zero value of the item type',
      body: [{ op: 'add', path: '/metadata/finalizers', value: ['x'] }, { op: 'add', path: '/metadata/finalizers/-' }],
      applied: { ...configMap(), metadata: { name: 'c', namespace: 'default', finalizers: ['x', ''] } },
    },
    { name: 'replace without value sets null: the zero value of a map value', body: [{ op: 'replace', path: '/data/a' }], applied: withData({ a: '' }) },
    { name: 'move without from: the generic 422', body: [{ op: 'move', path: '/data/b' }], refused: generic422 },
    { name: 'copy without from: the generic 422', body: [{ op: 'copy', path: '/data/b' }], refused: generic422 },
    { name: 'test without value on a present member: the generic 422', body: [{ op: 'test', path: '/data/a' }], refused: generic422 },
    { name: 'an unknown op: the generic 422', body: [{ op: 'merge', path: '/data/a', value: '2' }], refused: generic422 },
    { name: 'an operation without op: the generic 422', body: [{ path: '/data/a', value: '2' }], refused: generic422 },
    { name: 'a failed test: the generic 422', body: [{ op: 'test', path: '/data/a', value: '2' }], refused: generic422 },
    { name: 'a move into its own child: the generic 422', body: [{ op: 'move', from: '/metadata', path: '/metadata/x' }], refused: generic422 },
    {
      name: 'an index past the end of a list: the generic 422',
      body: [{ op: 'add', path: '/metadata/finalizers', value: [] }, { op: 'add', path: '/metadata/finalizers/1', value: 'x' }],
      refused: generic422,
    },
    {
      name: '"-" appends to a list',
      body: [{ op: 'add', path: '/metadata/finalizers', value: ['a'] }, { op: 'add', path: '/metadata/finalizers/-', value: 'b' }],
      applied: { ...configMap(), metadata: { name: 'c', namespace: 'default', finalizers: ['a', 'b'] } },
    },
    {
      name: '"-" names no element to replace: the generic 422',
      body: [{ op: 'add', path: '/metadata/finalizers', value: ['a'] }, { op: 'replace', path: '/metadata/finalizers/-', value: 'b' }],
      refused: generic422,
    },
    {
      name: 'a value of the wrong type: 422 quoting the patched document, with the JSON decoder\'s words',
      body: [{ op: 'replace', path: '/data/a', value: 1 }],
      refused: undecodable('{"apiVersion":"v1","data":{"a":1},"kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}', 'json: cannot unmarshal number into Go struct field ConfigMap.data of type string'),
    },
    {
      name: 'objects an operation walked through are written with sorted keys, the others as they were',
      current: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default', name: 'c', labels: { z: 'z', a: 'a' } }, data: { b: '2', a: '1' } },
      body: [{ op: 'replace', path: '/metadata/labels/z', value: 5 }],
      refused: undecodable(
        '{"apiVersion":"v1","data":{"b":"2","a":"1"},"kind":"ConfigMap","metadata":{"labels":{"a":"a","z":5},"name":"c","namespace":"default"}}',
        'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string'),
    },
    {
      name: 'a document replaced by a list: 422, apiVersion and kind cannot be read from it',
      body: [{ op: 'replace', path: '', value: [1] }],
      refused: undecodable('[1]', 'couldn\'t get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'),
    },
    {
      name: 'a kind of the wrong type: 422, as apiVersion and kind are read first',
      body: [{ op: 'replace', path: '/kind', value: 5 }],
      refused: undecodable('{"apiVersion":"v1","data":{"a":"1"},"kind":5,"metadata":{"name":"c","namespace":"default"}}', 'couldn\'t get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string'),
    },
    {
      name: 'a member an operation does not have is a strict error of the patch ("json patch ...")',
      body: [{ op: 'add', path: '/data/b', value: '2', bogus: 1 }],
      applied: withData({ a: '1', b: '2' }),
      warnings: ['json patch unknown field "[0].bogus"'],
    },
    {
      name: 'under Strict it is refused, listed before the object\'s own unknown members',
      body: [{ op: 'add', path: '/x', value: 1, bogus: 1 }],
      fieldValidation: 'Strict',
      refused: undecodable('{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"name":"c","namespace":"default"},"x":1}', 'strict decoding error: json patch unknown field "[0].bogus", unknown field "x"'),
    },
    {
      name: 'a repeated key in an operation is a strict error of the patch',
      body: '[{"op":"add","op":"add","path":"/data/b","value":"2"}]',
      applied: withData({ a: '1', b: '2' }),
      warnings: ['json patch duplicate field "[0].op"'],
    },
    { name: 'under Ignore nothing of that is reported', body: [{ op: 'add', path: '/x', value: 1, bogus: 1 }], fieldValidation: 'Ignore', applied: configMap() },
    {
      name: 'under Ignore a path of the wrong type is no decoding error (no strict pre-decoding): the generic 422',
      body: [{ op: 'add', path: 5, value: 1 }],
      fieldValidation: 'Ignore',
      refused: generic422,
    },
    {
      name: 'a value of the wrong type wins over strict errors, even under Strict',
      body: [{ op: 'replace', path: '/data/a', value: 1, bogus: 1 }],
      fieldValidation: 'Strict',
      refused: undecodable('{"apiVersion":"v1","data":{"a":1},"kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}', 'json: cannot unmarshal number into Go struct field ConfigMap.data of type string'),
    },
  ];
  for (const c of cases) check(JSON_PATCH_TYPE, c);

  it('sends the 422 with one cause on the field "patch" and no kind or name', () => {
    let caught: unknown;
    try {
      run(JSON_PATCH_TYPE, { name: '', body: [{ op: 'replace', path: '/data/a', value: 1 }] });
    } catch (err) {
      caught = err;
    }
    const invalid = '"{\\"apiVersion\\":\\"v1\\",\\"data\\":{\\"a\\":1},\\"kind\\":\\"ConfigMap\\",\\"metadata\\":{\\"name\\":\\"c\\",\\"namespace\\":\\"default\\"}}"';
    expect((caught as PatchError).toStatus()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: ` "" is invalid: patch: Invalid value: ${invalid}: json: cannot unmarshal number into Go struct field ConfigMap.data of type string`,
      reason: 'Invalid',
      details: { causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: ${invalid}: json: cannot unmarshal number into Go struct field ConfigMap.data of type string`, field: 'patch' }] },
      code: 422,
    });
  });
});

describe('src/patch patchObject: hostile merge patches', () => {
  const cases: Case[] = [
    {
      name: 'labels made a string: 422 quoting the patched document, with the JSON decoder\'s words',
      body: { metadata: { labels: 'invalid' } },
      refused: undecodable('{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"labels":"invalid","name":"c","namespace":"default"}}', 'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string'),
    },
    {
      name: 'a value taken whole is written with sorted keys (the library decodes it to drop its nulls)',
      current: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default', name: 'c' }, data: { b: '2', a: '1' } },
      body: { metadata: { annotations: { z: 1, a: null, b: 'x' } } },
      refused: undecodable('{"apiVersion":"v1","data":{"b":"2","a":"1"},"kind":"ConfigMap","metadata":{"annotations":{"b":"x","z":1},"name":"c","namespace":"default"}}', 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.annotations of type string'),
    },
    { name: 'an unknown member is dropped and reported', body: { bogus: 1 }, applied: configMap(), warnings: ['unknown field "bogus"'] },
    {
      name: 'under Strict it is refused',
      body: { bogus: 1 },
      fieldValidation: 'Strict',
      refused: undecodable('{"apiVersion":"v1","bogus":1,"data":{"a":"1"},"kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}', 'strict decoding error: unknown field "bogus"'),
    },
    { name: 'a repeated key in the patch is a strict error', body: '{"data":{"b":"1","b":"2"}}', applied: withData({ a: '1', b: '2' }), warnings: ['duplicate field "data.b"'] },
    {
      name: 'under Strict it is refused',
      body: '{"data":{"b":"1","b":"2"}}',
      fieldValidation: 'Strict',
      refused: undecodable('{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}', 'strict decoding error: duplicate field "data.b"'),
    },
    { name: 'a null patch: "Invalid JSON Patch", an untyped 500', body: null, refused: untyped500('Invalid JSON Patch') },
    {
      name: 'a list as the patch, under Ignore: it replaces the document, which has no kind to read',
      body: [{ a: 1 }],
      fieldValidation: 'Ignore',
      refused: undecodable('[{"a":1}]', 'couldn\'t get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'),
    },
    {
      name: 'a list as the patch, under Warn: refused by the strict pre-decoding with 400',
      body: [{ a: 1 }],
      refused: { code: 400, reason: 'BadRequest', message: 'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}' },
    },
  ];
  for (const c of cases) check(MERGE_PATCH_TYPE, c);
});

describe('src/patch patchObject: hostile strategic merge patches', () => {
  const withSpec = (spec: JsonObject): JsonObject => {
    const object = deployment();
    return { ...object, spec: { ...(object.spec as JsonObject), ...spec } };
  };
  const podSpec = (patch: JsonObject): JsonObject => ({ spec: { template: { spec: patch } } });
  const rollingUpdate = withSpec({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } });
  const cases: Case[] = [
    // kubectl's own command tests (test/cmd/core.sh) expect this text for `kubectl patch -p '{"metadata":{"labels":"invalid"}}'`.
    {
      name: 'labels made a string: 422 quoting the patch, with the converter\'s words',
      body: { metadata: { labels: 'invalid' } },
      refused: undecodable('map[metadata:map[labels:invalid]]', 'cannot restore map from string'),
    },
    { name: 'a string for replicas', body: { spec: { replicas: '3' } }, refused: undecodable('map[spec:map[replicas:3]]', 'unrecognized type: int32') },
    { name: 'an integer label value', body: { metadata: { labels: { app: 5 } } }, refused: undecodable('map[metadata:map[labels:map[app:5]]]', 'cannot convert int64 to string') },
    {
      name: 'the patch is quoted as the merge left it: directives and ordered lists consumed',
      body: { spec: { replicas: 'x', template: { spec: { '$setElementOrder/containers': [{ name: 'app' }], containers: [{ name: 'app', image: 'y' }] } } } },
      refused: undecodable('map[spec:map[replicas:x template:map[spec:map[]]]]', 'unrecognized type: int32'),
    },
    { name: '$patch: bogus in a map: an untyped 500', body: { spec: { $patch: 'bogus' } }, refused: untyped500('unknown patch type: bogus in map: map[$patch:bogus]') },
    { name: '$patch: merge in a map: an untyped 500', body: { spec: { $patch: 'merge' } }, refused: untyped500('unknown patch type: merge in map: map[$patch:merge]') },
    { name: '$patch given a map, printed with %s', body: { spec: { $patch: { a: 'b' } } }, refused: untyped500('unknown patch type: map[a:b] in map: map[$patch:map[a:b]]') },
    { name: '$patch given a number, printed with %s', body: { spec: { $patch: 1 } }, refused: untyped500('unknown patch type: %!s(int64=1) in map: map[$patch:1]') },
    {
      name: '$patch: bogus in a list item: an untyped 500',
      body: podSpec({ containers: [{ name: 'app', $patch: 'bogus' }] }),
      refused: untyped500('unknown patch type: bogus in map: map[$patch:bogus name:app]'),
    },
    {
      name: '$setElementOrder naming a list the type does not have: an untyped 500',
      body: podSpec({ '$setElementOrder/containerz': [{ name: 'app' }] }),
      refused: untyped500('unable to find api field in struct PodSpec for the json field "containerz"'),
    },
    {
      name: '$setElementOrder naming a list in other letter case finds it, as Go\'s field lookup does',
      body: podSpec({ '$setElementOrder/Containers': [{ name: 'app' }] }),
      applied: deployment(),
    },
    {
      name: '$setElementOrder in a map whose values are not lists: an untyped 500',
      body: { metadata: { labels: { '$setElementOrder/tier': [] } } },
      refused: untyped500('expected slice or array type, but got: map'),
    },
    {
      name: '$setElementOrder given a string: an untyped 500',
      body: podSpec({ '$setElementOrder/containers': 'app' }),
      refused: untyped500('expected a []interface {}, but received a string'),
    },
    {
      name: '$setElementOrder without an item of the patch list: an untyped 500',
      body: podSpec({ '$setElementOrder/containers': [{ name: 'zz' }], containers: [{ name: 'app', image: 'x' }] }),
      refused: untyped500('The order in patch list:\n[map[image:x name:app]]\n doesn\'t match $setElementOrder list:\n[map[name:zz]]\n'),
    },
    {
      name: '$setElementOrder items without the merge key: an untyped 500',
      body: podSpec({ '$setElementOrder/containers': [{ image: 'x' }], containers: [{ name: 'app', image: 'y' }] }),
      refused: untyped500('map: map[image:x] does not contain declared merge key: name'),
    },
    {
      name: '$setElementOrder with items the patch list lacks only orders the list',
      body: podSpec({ '$setElementOrder/containers': [{ name: 'zz' }, { name: 'app' }] }),
      applied: deployment(),
    },
    {
      name: '$retainKeys given a string: 400',
      current: rollingUpdate,
      body: { spec: { strategy: { $retainKeys: 'type', type: 'Recreate' } } },
      refused: { code: 400, reason: 'BadRequest', message: 'invalid patch format of retainKeys' },
    },
    {
      name: '$retainKeys without a member the patch sets: 400',
      current: rollingUpdate,
      body: { spec: { strategy: { $retainKeys: [], type: 'Recreate' } } },
      refused: { code: 400, reason: 'BadRequest', message: 'invalid patch format of retainKeys' },
    },
    {
      name: '$retainKeys drops the members it does not list',
      current: rollingUpdate,
      body: { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
      applied: withSpec({ strategy: { type: 'Recreate' } }),
    },
    { name: '$deleteFromPrimitiveList without a list name: 400', body: { metadata: { $deleteFromPrimitiveList: ['x'] } }, refused: { code: 400, reason: 'BadRequest', message: 'invalid patch format of primitive list' } },
    {
      name: '$deleteFromPrimitiveList of a list the object does not have changes nothing',
      body: { metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] } },
      applied: deployment(),
    },
    // v1.25 keeps directives found inside a value it takes whole (fixed later by kubernetes PR 117568).
    {
      name: 'a directive inside a value taken whole is an unknown member of a struct',
      body: podSpec({ affinity: { $patch: 'replace', nodeAffinity: {} } }),
      applied: withSpec({ template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'app', image: 'nginx' }], affinity: { nodeAffinity: {} } } } }),
      warnings: ['unknown field "spec.template.spec.affinity.$patch"'],
    },
    {
      name: 'under Strict it is refused',
      body: podSpec({ affinity: { $patch: 'replace', nodeAffinity: {} } }),
      fieldValidation: 'Strict',
      refused: undecodable('map[spec:map[template:map[spec:map[affinity:map[$patch:replace nodeAffinity:map[]]]]]]', 'strict decoding error: unknown field "spec.template.spec.affinity.$patch"'),
    },
    {
      name: 'a directive inside a map value taken whole stays, as a map entry',
      body: { metadata: { annotations: { $patch: 'delete' } } },
      applied: { ...deployment(), metadata: { name: 'd', namespace: 'default', labels: { app: 'd' }, annotations: { $patch: 'delete' } } },
    },
    {
      name: 'a repeated key in the patch is a strict error',
      body: '{"metadata":{"labels":{"a":"1","a":"2"}}}',
      applied: { ...deployment(), metadata: { name: 'd', namespace: 'default', labels: { app: 'd', a: '2' } } },
      warnings: ['duplicate field "metadata.labels.a"'],
    },
    {
      name: 'unknown members are reported sorted, after the patch\'s repeated keys',
      body: '{"spec":{"zeta":1,"alpha":1,"zeta":2}}',
      fieldValidation: 'Strict',
      refused: undecodable('map[spec:map[alpha:1 zeta:2]]', 'strict decoding error: duplicate field "spec.zeta", unknown field "spec.alpha", unknown field "spec.zeta"'),
    },
    {
      name: 'a kind of the wrong type is the converter\'s first failure',
      body: { kind: 5 },
      refused: undecodable('map[kind:5]', 'cannot convert int64 to string'),
    },
  ];
  for (const c of cases) check(STRATEGIC_MERGE_PATCH_TYPE, c);
});
