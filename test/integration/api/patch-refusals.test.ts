/**
 * PATCH bodies that kube-apiserver v1.25 refuses (found by hostile-input fuzzing and kubectl's command
 * tests), sent over HTTP to a real `carina server`: each answer's status code and Status body, and
 * the object left unchanged.
 */
import { expect } from 'chai';
import { CarinaApiProcess, type HttpResult } from '../../support/carina-api-process';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const GENERIC_422 = 'the server rejected our request due to an error in our request';

describe('PATCH bodies kube-apiserver v1.25 refuses, refused alike', function () {
  this.timeout(60_000);
  let server: CarinaApiProcess;
  const patch = (body: unknown, contentType: string, query = ''): Promise<HttpResult> =>
    server.request('PATCH', `${DEPLOYMENTS}/web${query}`, { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'Content-Type': contentType } });

  /** The Status kube's errors.NewInvalid(GroupKind{}, "", [field.Invalid("patch", value, reason)]) gives. */
  function expectUndecodable(result: HttpResult, reason: string): string {
    expect(result.status, result.text).to.equal(422);
    const status = result.json<Obj>();
    expect(status).to.include({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', code: 422 });
    const prefix = ' "" is invalid: patch: Invalid value: ';
    expect(status.message.startsWith(prefix), status.message).to.equal(true);
    expect(status.message.endsWith(`: ${reason}`), status.message).to.equal(true);
    const quoted = status.message.slice(prefix.length, status.message.length - reason.length - 2);
    expect(status.details).to.deep.equal({ causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: ${quoted}: ${reason}`, field: 'patch' }] });
    return JSON.parse(quoted) as string;
  }

  before(async () => {
    server = await CarinaApiProcess.start();
    const created = await server.request('POST', DEPLOYMENTS, {
      body: JSON.stringify({
        apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { app: 'web' } },
        spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } } },
      }),
    });
    expect(created.status, created.text).to.equal(201);
  });

  after(async () => {
    await server?.stop();
  });

  afterEach(async () => {
    // Every refused patch leaves the object as it was.
    const current = (await server.request('GET', `${DEPLOYMENTS}/web`)).json<Obj>();
    expect(current.metadata.labels).to.deep.equal({ app: 'web' });
    expect(current.spec.replicas).to.equal(1);
  });

  it('applies a JSON patch path without its leading "/" to its last segment at the top, as evanphx/json-patch v4.12.0 does', async () => {
    const warned = await patch([{ op: 'add', path: 'spec/paused', value: true }], JSON_PATCH);
    expect(warned.status, warned.text).to.equal(200);
    expect(warned.headers.warning).to.equal('299 - "unknown field \\"paused\\""');
    expect(warned.json<Obj>().spec.paused).to.equal(undefined);
    const strict = await patch([{ op: 'add', path: 'spec/paused', value: true }], JSON_PATCH, '?fieldValidation=Strict');
    const patched = JSON.parse(expectUndecodable(strict, 'strict decoding error: unknown field "paused"')) as Obj;
    expect(patched.paused).to.equal(true);
  });

  it('reads no JSON patch member as required: add without value adds null; a test without value, a move without from, an unknown op fail with the generic 422', async () => {
    const added = await patch([{ op: 'add', path: '/spec/paused' }], JSON_PATCH);
    expect(added.status, added.text).to.equal(200);
    expect(added.json<Obj>().spec.paused).to.equal(undefined);
    for (const operation of [{ op: 'test', path: '/spec/replicas' }, { op: 'move', path: '/spec/x' }, { op: 'copy', path: '/spec/x' }, { op: 'frob', path: '/spec/replicas', value: 2 }, { op: 'move', from: '/spec', path: '/spec/template/x' }]) {
      const result = await patch([operation], JSON_PATCH);
      expect(result.status, JSON.stringify(operation)).to.equal(422);
      expect(result.json()).to.deep.equal({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: GENERIC_422, reason: 'Invalid', details: {}, code: 422 });
    }
  });

  it('answers a JSON patch value of the wrong type with 422 quoting the patched document', async () => {
    const result = await patch([{ op: 'replace', path: '/spec/replicas', value: '3' }], JSON_PATCH);
    const patched = JSON.parse(expectUndecodable(result, 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32')) as Obj;
    expect(patched.spec.replicas).to.equal('3');
    // Go's Marshal of the map the library decoded: sorted keys.
    expect(Object.keys(patched)).to.deep.equal(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  });

  it('answers merge patch labels made a string with 422 and the JSON decoder\'s words', async () => {
    const result = await patch({ metadata: { labels: 'invalid' } }, MERGE_PATCH);
    const patched = JSON.parse(expectUndecodable(result, 'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string')) as Obj;
    expect(patched.metadata.labels).to.equal('invalid');
  });

  it('answers strategic merge patch labels made a string with 422 and the converter\'s words (kubectl test/cmd/core.sh)', async () => {
    const result = await patch({ metadata: { labels: 'invalid' } }, STRATEGIC);
    expect(result.json()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: ' "" is invalid: patch: Invalid value: "map[metadata:map[labels:invalid]]": cannot restore map from string',
      reason: 'Invalid',
      details: { causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: "map[metadata:map[labels:invalid]]": cannot restore map from string', field: 'patch' }] },
      code: 422,
    });
    expect(expectUndecodable(await patch({ spec: { replicas: '3' } }, STRATEGIC), 'unrecognized type: int32')).to.equal('map[spec:map[replicas:3]]');
  });

  it('answers the strategic merge patch directives kube refuses with its untyped 500s', async () => {
    const cases: Array<[unknown, string]> = [
      [{ spec: { $patch: 'bogus' } }, 'unknown patch type: bogus in map: map[$patch:bogus]'],
      [{ spec: { $patch: { a: 'b' } } }, 'unknown patch type: map[a:b] in map: map[$patch:map[a:b]]'],
      [{ spec: { template: { spec: { '$setElementOrder/containerz': [{ name: 'app' }] } } } }, 'unable to find api field in struct PodSpec for the json field "containerz"'],
      [{ metadata: { labels: { '$setElementOrder/tier': [] } } }, 'expected slice or array type, but got: map'],
      [{ spec: { template: { spec: { '$setElementOrder/containers': 'app' } } } }, 'expected a []interface {}, but received a string'],
      [
        { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'zz' }], containers: [{ name: 'app', image: 'x' }] } } } },
        'The order in patch list:\n[map[image:x name:app]]\n doesn\'t match $setElementOrder list:\n[map[name:zz]]\n',
      ],
    ];
    for (const [body, message] of cases) {
      const result = await patch(body, STRATEGIC);
      expect(result.status, JSON.stringify(body)).to.equal(500);
      // ErrorToAPIStatus of a plain error: no reason, no details.
      expect(result.json()).to.deep.equal({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 });
    }
  });

  it('reports strict decoding errors of the patch body itself, as warnings and under Strict as the 422', async () => {
    const warned = await patch([{ op: 'test', path: '/spec/replicas', value: 1, bogus: 1 }], JSON_PATCH);
    expect(warned.status, warned.text).to.equal(200);
    expect(warned.headers.warning).to.equal('299 - "json patch unknown field \\"[0].bogus\\""');
    const strict = await patch('{"metadata":{"labels":{"app":"web","app":"web"}}}', MERGE_PATCH, '?fieldValidation=Strict');
    expectUndecodable(strict, 'strict decoding error: duplicate field "metadata.labels.app"');
  });
});
