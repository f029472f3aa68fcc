/**
 * Issue 17 on three replicas: a CRD written through one replica becomes Established and is
 * served by every replica, each from its own watch cache of CRDs; an object created through one
 * replica is read through the others; deleting the CRD through another replica removes the
 * objects and stops the serving everywhere. A CRD whose CEL rule does not type-check is refused
 * with cel-go's message, one whose rules all type-check is accepted.
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

  it('refuses a CRD whose validation rule is ill-typed, and accepts one whose rules all type-check', async () => {
    const [first, second] = replicas;
    const rule = 'self.replicas + "x" == "1x"';
    const schemaWith = (rules: Obj[]): Obj => ({
      type: 'object',
      properties: {
        metadata: { type: 'object' },
        spec: {
          type: 'object',
          'x-kubernetes-validations': rules,
          properties: {
            replicas: { type: 'integer', maximum: 100 },
            minReplicas: { type: 'integer' },
            maxReplicas: { type: 'integer' },
            image: { type: 'string', maxLength: 128 },
            mode: { type: 'string', maxLength: 16 },
            port: { 'x-kubernetes-int-or-string': true },
            timeout: { type: 'string', format: 'duration', maxLength: 16 },
            notBefore: { type: 'string', format: 'date-time', maxLength: 32 },
            notAfter: { type: 'string', format: 'date-time', maxLength: 32 },
            labels: { type: 'object', maxProperties: 16, additionalProperties: { type: 'string', maxLength: 63 }, 'x-kubernetes-validations': [{ rule: "self.all(k, k.startsWith('example.com/'))" }] },
            containers: { type: 'array', maxItems: 8, items: { type: 'object', properties: { name: { type: 'string', maxLength: 63 }, image: { type: 'string', maxLength: 128 } } } },
          },
        },
      },
    });
    const crd = (name: string, rules: Obj[]): Obj => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${name}s.typed.example.com` },
      spec: {
        group: 'typed.example.com',
        scope: 'Namespaced',
        names: { plural: `${name}s`, singular: name, kind: name[0].toUpperCase() + name.slice(1) },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schemaWith(rules) } }],
      },
    });
    const post = (body: Obj) => first.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

    const refused = await post(crd('knob', [{ rule: 'self.minReplicas <= self.maxReplicas' }, { rule }]));
    expect(refused.status, refused.text).to.equal(422);
    const status = refused.json<Obj>();
    const detail = `compilation failed: ERROR: <input>:1:15: found no matching overload for '_+_' applied to '(int, string)'\n | ${rule}\n | ..............^`;
    const field = 'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule';
    expect(status.details.causes).to.deep.equal([{ reason: 'FieldValueInvalid', message: `Invalid value: apiextensions.ValidationRule{Rule:"self.replicas + \\"x\\" == \\"1x\\"", Message:""}: ${detail}`, field }]);
    expect(status.message).to.contain(`${field}: Invalid value: apiextensions.ValidationRule{Rule:`);
    expect((await second.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/knobs.typed.example.com')).status).to.equal(404);

    const accepted = await post(crd('lever', [
      { rule: 'self.minReplicas <= self.maxReplicas', message: 'minReplicas must not exceed maxReplicas' },
      { rule: '!has(self.mode) || self.mode.size() > 0' },
      { rule: 'self.replicas >= 0 && self.replicas % 2 == 1' },
      { rule: 'self.replicas == oldSelf.replicas || self.mode == "scaling"' },
      { rule: 'self.notBefore < self.notAfter && self.notAfter - self.notBefore <= duration("720h")' },
      { rule: 'self.timeout < duration("5m")' },
      { rule: "type(self.port) == int ? self.port < 65536 : self.port.matches('^[a-z]+$')" },
      { rule: 'self.containers.map(c, c.name).size() == self.containers.size()' },
      { rule: 'size(self.containers) <= 8 && self.containers.all(c, (self.image + ":latest").startsWith(c.image) || c.image != "")' },
      { rule: "self.image.startsWith('registry.example.com/')" },
    ]));
    expect(accepted.status, accepted.text).to.equal(201);
    await until('levers served', async () => (await second.request('GET', '/apis/typed.example.com/v1/levers')).status === 200, 30_000);
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
