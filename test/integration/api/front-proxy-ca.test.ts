/**
 * The front-proxy CA (issue 31): Carina issues the aggregator's client certificate from a CA of
 * its own beside the cluster CA, as kubeadm does, and names that CA in
 * extension-apiserver-authentication; a data directory made by a build without it gets one at
 * start, and the ConfigMap keeps what the earlier build wrote beside it.
 */
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { CarinaApiProcess } from '../../support/carina-api-process';
import { until } from '../../support/until';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const CONFIG_MAP = '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication';

function fingerprints(bundle: string | undefined): string[] {
  return (bundle?.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []).map((pem) => new X509Certificate(pem).fingerprint256);
}

describe('front-proxy CA: a CA of its own for the aggregator\'s client certificate (integration)', function () {
  this.timeout(180_000);
  let server: CarinaApiProcess | undefined;
  after(async () => server?.stop());

  const pkiFile = (name: string) => readFileSync(join((server as CarinaApiProcess).dataDir, 'pki', name), 'utf8');
  const configMap = async (): Promise<Obj> => (await (server as CarinaApiProcess).request('GET', CONFIG_MAP)).json<Obj>();

  it('names front-proxy-ca.crt, not the cluster CA, as the request-header CA; its client certificate is no client of the API', async () => {
    server = await CarinaApiProcess.start();
    const started = server;
    const frontProxyCa = pkiFile('front-proxy-ca.crt');
    const client = new X509Certificate(pkiFile('front-proxy-client.crt'));
    expect(client.subject).to.equal('CN=front-proxy-client');
    expect(client.checkIssued(new X509Certificate(frontProxyCa))).to.equal(true);
    const data = (await until('extension-apiserver-authentication', async () => {
      const answer = await started.request('GET', CONFIG_MAP);
      return answer.status === 200 ? answer.json<Obj>() : undefined;
    }, 30_000)).data;
    expect(fingerprints(data['requestheader-client-ca-file'])).to.deep.equal(fingerprints(frontProxyCa));
    expect(fingerprints(data['client-ca-file'])).to.deep.equal(fingerprints(started.caPem));
    expect(data['requestheader-allowed-names']).to.equal('["front-proxy-client"]');
    // Signed by another CA than the cluster's: Carina does not take it for a user.
    const status = await new Promise<number>((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port: started.port, path: '/api', ca: started.caPem, cert: pkiFile('front-proxy-client.crt'), key: pkiFile('front-proxy-client.key'), agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).to.equal(401);
  });

  it('a data directory from a build without it: a front-proxy CA is made at start, and the ConfigMap keeps the earlier request-header CA beside it', async () => {
    const running = server as CarinaApiProcess;
    const current = await configMap();
    // What an earlier build wrote: the cluster CA as the request-header CA.
    const earlier = { ...current, data: { ...current.data, 'requestheader-client-ca-file': running.caPem } };
    expect((await running.request('PUT', CONFIG_MAP, { body: JSON.stringify(earlier) })).status).to.equal(200);
    await running.stop({ keepData: true });
    for (const name of ['front-proxy-ca.crt', 'front-proxy-ca.key', 'front-proxy-client.crt', 'front-proxy-client.key']) rmSync(join(running.dataDir, 'pki', name));
    await running.launch();
    const made = pkiFile('front-proxy-ca.crt');
    expect(running.log).to.include('created a front-proxy CA');
    const combined = await until('the new front-proxy CA in extension-apiserver-authentication', async () => {
      const data = (await configMap()).data;
      return fingerprints(data['requestheader-client-ca-file']).length === 2 ? data : undefined;
    }, 30_000);
    expect(fingerprints(combined['requestheader-client-ca-file'])).to.deep.equal([...fingerprints(running.caPem), ...fingerprints(made)]);
    expect(new X509Certificate(pkiFile('front-proxy-client.crt')).checkIssued(new X509Certificate(made))).to.equal(true);
  });
});
