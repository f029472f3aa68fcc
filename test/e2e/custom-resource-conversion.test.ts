/**
 * Issue 17: a CRD served in two versions, stored in v1, converted by a webhook the test runs
 * (HTTPS on 127.0.0.1, trusted through the CRD's caBundle): objects written in v2 are stored in
 * v1 and read back in either version; a list is converted in one ConversionReview; watches get
 * converted events; the review version follows conversionReviewVersions (v1, then v1beta1); a
 * webhook that fails gives kube's 500; a deprecated version answers with its warning. A CRD
 * with strategy None serves both versions of the same object, relabelled.
 */
import { expect } from 'chai';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { stringify } from 'yaml';
import { CarinaApiProcess } from '../support/carina-api-process';
import { createTestCa, issueTestCertificate } from '../support/test-pki';

type Obj = Record<string, any>;

/** v1 keeps spec.replicas; v2 calls it spec.count. */
function convert(object: Obj, desired: string): Obj {
  const spec = { ...(object.spec ?? {}) };
  if (desired.endsWith('/v2') && 'replicas' in spec) {
    spec.count = spec.replicas;
    delete spec.replicas;
  } else if (desired.endsWith('/v1') && 'count' in spec) {
    spec.replicas = spec.count;
    delete spec.count;
  }
  return { ...object, apiVersion: desired, spec, metadata: { ...object.metadata, labels: { ...(object.metadata?.labels ?? {}), converted: 'yes' } } };
}

describe('custom resources: conversion webhook', function () {
  this.timeout(120_000);
  let server: CarinaApiProcess;
  let webhook: https.Server;
  let webhookPort = 0;
  const reviews: Obj[] = [];
  let failNext = false;
  const ca = createTestCa({ commonName: 'conversion-test-ca' });
  const serving = issueTestCertificate(ca, { commonName: 'conversion', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], keyIndex: 2 });

  const kubectl = async (args: string[], input?: string) => {
    const result = await server.kubectl(args, { input });
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}):\n${result.stderr}\n${result.stdout}`);
    return result.stdout;
  };

  function crd(reviewVersions: string[]): Obj {
    const schema = (field: string) => ({ openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { [field]: { type: 'integer' }, note: { type: 'string' } } } } } });
    return {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'shapes.conv.example.com' },
      spec: {
        group: 'conv.example.com',
        scope: 'Namespaced',
        names: { plural: 'shapes', singular: 'shape', kind: 'Shape' },
        versions: [
          { name: 'v1', served: true, storage: true, schema: schema('replicas'), deprecated: true, deprecationWarning: 'conv.example.com/v1 Shape is old; use v2' },
          { name: 'v2', served: true, storage: false, schema: schema('count') },
        ],
        conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: reviewVersions, clientConfig: { url: `https://127.0.0.1:${webhookPort}/convert`, caBundle: Buffer.from(ca.certPem).toString('base64') } } },
      },
    };
  }

  before(async () => {
    webhook = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Obj;
        reviews.push(review);
        const { uid, desiredAPIVersion, objects } = review.request;
        const response = failNext
          ? { uid, result: { status: 'Failure', message: 'the test said no' } }
          : { uid, convertedObjects: (objects as Obj[]).map((o) => convert(o, desiredAPIVersion)), result: { status: 'Success' } };
        failNext = false;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ kind: 'ConversionReview', apiVersion: review.apiVersion, response }));
      });
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    webhookPort = (webhook.address() as AddressInfo).port;
    server = await CarinaApiProcess.start();
    await kubectl(['apply', '-f', '-'], stringify(crd(['v1'])));
    await kubectl(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/shapes.conv.example.com']);
  });

  after(async () => {
    await server?.stop();
    await new Promise((resolve) => webhook?.close(resolve));
  });

  it('an object written in v2 is stored in v1 and read back in both versions', async () => {
    reviews.length = 0;
    const created = await server.request('POST', '/apis/conv.example.com/v2/namespaces/default/shapes', { body: JSON.stringify({ apiVersion: 'conv.example.com/v2', kind: 'Shape', metadata: { name: 'one' }, spec: { count: 3 } }), headers: { 'content-type': 'application/json' } });
    expect(created.status, created.text).to.equal(201);
    expect(created.json<Obj>().spec).to.deep.equal({ count: 3 });
    expect(reviews.map((r) => r.request.desiredAPIVersion)).to.deep.equal(['conv.example.com/v1', 'conv.example.com/v2']);
    expect(reviews[0].apiVersion).to.equal('apiextensions.k8s.io/v1');
    const v1 = await server.request('GET', '/apis/conv.example.com/v1/namespaces/default/shapes/one');
    expect(v1.json<Obj>().spec).to.deep.equal({ replicas: 3 });
    expect(v1.json<Obj>().metadata.labels).to.deep.equal({ converted: 'yes' });
    expect(String(v1.headers.warning)).to.contain('conv.example.com/v1 Shape is old; use v2');
    const v2 = JSON.parse(await kubectl(['get', 'shapes.v2.conv.example.com', 'one', '-o', 'json'])) as Obj;
    expect(v2.apiVersion).to.equal('conv.example.com/v2');
    expect(v2.spec).to.deep.equal({ count: 3 });
  });

  it('a list is converted in one review; a watch gets converted events in order', async () => {
    for (const name of ['two', 'three']) {
      await server.request('POST', '/apis/conv.example.com/v1/namespaces/default/shapes', { body: JSON.stringify({ apiVersion: 'conv.example.com/v1', kind: 'Shape', metadata: { name }, spec: { replicas: 5 } }), headers: { 'content-type': 'application/json' } });
    }
    reviews.length = 0;
    const list = (await server.request('GET', '/apis/conv.example.com/v2/namespaces/default/shapes')).json<Obj>();
    expect(list.items.map((i: Obj) => i.spec)).to.deep.equal([{ count: 3 }, { count: 5 }, { count: 5 }]);
    expect(reviews).to.have.length(1);
    expect(reviews[0].request.objects).to.have.length(3);
    const rv = list.metadata.resourceVersion as string;
    const watching = server.watch(`/apis/conv.example.com/v2/namespaces/default/shapes?watch=1&resourceVersion=${rv}`, (events) => events.length >= 2);
    await server.request('PATCH', '/apis/conv.example.com/v1/namespaces/default/shapes/two', { body: JSON.stringify({ spec: { replicas: 6 } }), headers: { 'content-type': 'application/merge-patch+json' } });
    await server.request('PATCH', '/apis/conv.example.com/v1/namespaces/default/shapes/three', { body: JSON.stringify({ spec: { replicas: 7 } }), headers: { 'content-type': 'application/merge-patch+json' } });
    const events = (await watching).events;
    expect(events.map((e) => [e.type, (e.object as Obj).apiVersion, (e.object as Obj).spec])).to.deep.equal([
      ['MODIFIED', 'conv.example.com/v2', { count: 6 }],
      ['MODIFIED', 'conv.example.com/v2', { count: 7 }],
    ]);
  });

  it('conversion None: the same object in both versions, only apiVersion differs; unserved versions 404', async () => {
    const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } };
    await kubectl(['apply', '-f', '-'], stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'plains.conv.example.com' },
      spec: {
        group: 'conv.example.com',
        scope: 'Cluster',
        names: { plural: 'plains', singular: 'plain', kind: 'Plain' },
        versions: [
          { name: 'v1beta1', served: true, storage: false, schema },
          { name: 'v1', served: true, storage: true, schema },
          { name: 'v0', served: false, storage: false, schema },
        ],
      },
    }));
    await kubectl(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/plains.conv.example.com']);
    const created = await server.request('POST', '/apis/conv.example.com/v1beta1/plains', { body: JSON.stringify({ apiVersion: 'conv.example.com/v1beta1', kind: 'Plain', metadata: { name: 'p' }, spec: { size: 2 } }), headers: { 'content-type': 'application/json' } });
    expect(created.status, created.text).to.equal(201);
    const v1 = (await server.request('GET', '/apis/conv.example.com/v1/plains/p')).json<Obj>();
    expect(v1.apiVersion).to.equal('conv.example.com/v1');
    expect(v1.spec).to.deep.equal({ size: 2 });
    expect((await server.request('GET', '/apis/conv.example.com/v0/plains/p')).status).to.equal(404);
    const crd = (await server.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/plains.conv.example.com')).json<Obj>();
    expect(crd.status.storedVersions).to.deep.equal(['v1']);
    const group = (await server.request('GET', '/apis/conv.example.com')).json<Obj>();
    expect(group.preferredVersion.version).to.equal('v2');
  });

  it('follows conversionReviewVersions, and reports a failing webhook as kube does', async () => {
    await kubectl(['apply', '-f', '-'], stringify(crd(['v1beta1'])));
    reviews.length = 0;
    const ok = await server.request('GET', '/apis/conv.example.com/v2/namespaces/default/shapes/one');
    expect(ok.status).to.equal(200);
    expect(reviews[0]?.apiVersion).to.equal('apiextensions.k8s.io/v1beta1');
    failNext = true;
    const failed = await server.request('GET', '/apis/conv.example.com/v2/namespaces/default/shapes/one');
    expect(failed.status).to.equal(500);
    expect(failed.json<Obj>().message).to.contain('conversion webhook for conv.example.com/v2, Kind=Shape returned failure: the test said no');
  });
});
