/**
 * Issue 17 on three replicas: a CRD written through one replica becomes Established and is
 * served by every replica, each from its own watch cache of CRDs; an object created through one
 * replica is read through the others; deleting the CRD through another replica removes the
 * objects and stops the serving everywhere.
 */
import { expect } from 'chai';
import { CarinaApiProcess } from '../../support/carina-api-process';
import { until } from '../../support/until';

type Obj = Record<string, any>;

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'dials.replicas.example.com' },
  spec: {
    group: 'replicas.example.com',
    scope: 'Cluster',
    names: { plural: 'dials', singular: 'dial', kind: 'Dial' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { value: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= 0' }] } } } } } } }],
  },
};

describe('custom resources on three replicas', function () {
  this.timeout(180_000);
  let replicas: CarinaApiProcess[] = [];

  before(async () => {
    replicas = await CarinaApiProcess.startCluster(3);
  });

  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
  });

  it('a CRD created on one replica is established and served on every replica', async () => {
    const [first, second, third] = replicas;
    const created = await first.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: JSON.stringify(CRD), headers: { 'content-type': 'application/json' } });
    expect(created.status, created.text).to.equal(201);
    for (const replica of replicas) {
      await until(`dials served by ${replica.url}`, async () => (await replica.request('GET', '/apis/replicas.example.com/v1/dials')).status === 200, 30_000);
      const discovery = (await replica.request('GET', '/apis/replicas.example.com/v1')).json<Obj>();
      expect(discovery.resources.map((r: Obj) => r.name)).to.include('dials');
    }
    const object = await second.request('POST', '/apis/replicas.example.com/v1/dials', { body: JSON.stringify({ apiVersion: 'replicas.example.com/v1', kind: 'Dial', metadata: { name: 'd1' }, spec: { value: 1 } }), headers: { 'content-type': 'application/json' } });
    expect(object.status, object.text).to.equal(201);
    const refused = await third.request('POST', '/apis/replicas.example.com/v1/dials', { body: JSON.stringify({ apiVersion: 'replicas.example.com/v1', kind: 'Dial', metadata: { name: 'd2' }, spec: { value: -1 } }), headers: { 'content-type': 'application/json' } });
    expect(refused.status).to.equal(422);
    expect(refused.json<Obj>().message).to.equal('Dial.replicas.example.com "d2" is invalid: spec.value: Invalid value: "integer": failed rule: self >= 0');
    const read = await third.request('GET', '/apis/replicas.example.com/v1/dials/d1');
    expect(read.json<Obj>().spec).to.deep.equal({ value: 1 });
  });

  it('deleting the CRD through another replica removes its objects and the serving everywhere', async () => {
    const deleted = await replicas[2].request('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/dials.replicas.example.com');
    expect(deleted.status).to.equal(200);
    for (const replica of replicas) {
      await until(`dials gone from ${replica.url}`, async () => (await replica.request('GET', '/apis/replicas.example.com/v1/dials')).status === 404, 30_000);
      expect((await replica.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/dials.replicas.example.com')).status).to.equal(404);
    }
  });
});
