import { expect } from 'chai';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { ConversionWebhookClient } from '../../../../src/apiextensions/conversion-webhook';
import { EndpointsServiceResolver } from '../../../../src/admission/webhook/service-resolver';
import { ApiError } from '../../../../src/util';
import { createTestCa, issueTestCertificate } from '../../../support/test-pki';

type Obj = Record<string, any>;

describe('apiextensions conversion webhook client', function () {
  this.timeout(20_000);
  const ca = createTestCa({ commonName: 'conversion-unit-ca' });
  // Only the Service's DNS name: the client must check the certificate against <name>.<namespace>.svc.
  const serving = issueTestCertificate(ca, { commonName: 'conv', dnsNames: ['conv.webhooks.svc'], keyIndex: 2 });
  let server: https.Server;
  let port = 0;
  let answer: (review: Obj) => Obj = () => ({});
  const seen: Array<{ path: string; review: Obj }> = [];

  before(async () => {
    server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Obj;
        seen.push({ path: req.url ?? '', review });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(answer(review)));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const target = (reviewVersions: string[]) => ({
    group: 'example.com',
    kind: 'Widget',
    reviewVersions,
    clientConfig: { service: { namespace: 'webhooks', name: 'conv', path: '/convert', port: 443 }, caBundle: Buffer.from(ca.certPem).toString('base64') },
  });
  const object = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default', uid: 'u1', labels: { a: 'b' } }, spec: { x: 1 } };

  it('reaches a Service through what the resolver returns, checking the certificate for the Service name', async () => {
    const asked: string[] = [];
    const client = new ConversionWebhookClient(new EndpointsServiceResolver({
      service: async (namespace, name) => {
        asked.push(`${namespace}/${name}`);
        return { spec: { type: 'ClusterIP', ports: [{ name: 'https', port: 443, targetPort: 9443 }] } };
      },
      endpoints: async () => ({ subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port }] }] }),
    }));
    answer = (review) => ({ apiVersion: review.apiVersion, kind: 'ConversionReview', response: { uid: review.request.uid, result: { status: 'Success' }, convertedObjects: review.request.objects.map((o: Obj) => ({ ...o, apiVersion: 'example.com/v2', metadata: { ...o.metadata, uid: o.metadata.uid, labels: { c: 'd' }, resourceVersion: 'changed' } })) } });
    const [converted] = await client.convert(target(['v1beta1', 'v1']), [object], 'example.com/v2');
    expect(asked).to.deep.equal(['webhooks/conv']);
    expect(seen.at(-1)?.path).to.equal('/convert');
    expect(seen.at(-1)?.review.apiVersion).to.equal('apiextensions.k8s.io/v1beta1');
    expect(converted.apiVersion).to.equal('example.com/v2');
    // Labels may change; everything else in metadata is the original's.
    expect(converted.metadata).to.deep.equal({ name: 'w', namespace: 'default', uid: 'u1', labels: { c: 'd' } });
    await client.close();
  });

  it('refuses answers that change identity, miss objects or have the wrong uid', async () => {
    const client = new ConversionWebhookClient({ resolveEndpoint: async () => ({ host: '127.0.0.1', port }) });
    const cases: Array<[(review: Obj) => Obj, string]> = [
      [(review) => ({ response: { uid: review.request.uid, result: { status: 'Success' }, convertedObjects: review.request.objects.map((o: Obj) => ({ ...o, apiVersion: 'example.com/v2', metadata: { ...o.metadata, name: 'other' } })) } }), 'name cannot be changed'],
      [(review) => ({ response: { uid: review.request.uid, result: { status: 'Success' }, convertedObjects: [] } }), 'expected 1 converted objects, got 0'],
      [() => ({ response: { uid: 'nope', result: { status: 'Success' }, convertedObjects: [] } }), 'expected response.uid='],
      [(review) => ({ response: { uid: review.request.uid, result: { status: 'Failure', message: 'no way' } } }), 'returned failure: no way'],
    ];
    for (const [respond, message] of cases) {
      answer = respond;
      const err = await client.convert(target(['v1']), [object], 'example.com/v2').then(() => undefined, (e: unknown) => e);
      expect(err).to.be.instanceOf(ApiError);
      expect((err as ApiError).code).to.equal(500);
      expect((err as ApiError).message).to.contain('conversion webhook for example.com/v2, Kind=Widget');
      expect((err as ApiError).message).to.contain(message);
    }
    await client.close();
  });
});
