import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { authenticationConfigMapData, combinedAuthenticationData, localApiService } from '../../../../src/aggregator';
import { createClusterCa } from '../../../../src/certificates';

describe('aggregator: what kube-apiserver writes at start', () => {
  it('a local APIService per built-in group-version, with v1.25\'s priorities and no service', () => {
    expect(localApiService('apps', 'v1')).to.deep.equal({
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1.apps', labels: { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' } },
      spec: { group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 },
    });
    expect(localApiService('autoscaling', 'v2')?.spec).to.deep.include({ groupPriorityMinimum: 17500, versionPriority: 30 });
    expect(localApiService('example.com', 'v1')).to.equal(undefined);
  });

  it('extension-apiserver-authentication holds the CAs and the request-header settings as JSON lists', () => {
    expect(authenticationConfigMapData('CLIENT-CA', { clientCaPem: 'PROXY-CA', allowedNames: ['front-proxy-client'], usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'] })).to.deep.equal({
      'client-ca-file': 'CLIENT-CA',
      'requestheader-allowed-names': '["front-proxy-client"]',
      'requestheader-client-ca-file': 'PROXY-CA',
      'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
      'requestheader-group-headers': '["X-Remote-Group"]',
      'requestheader-username-headers': '["X-Remote-User"]',
    });
  });
});

describe('aggregator: extension-apiserver-authentication combined as kube\'s ClusterAuthenticationTrust controller does', function () {
  this.timeout(60_000);
  const settings = (clientCaPem: string, proxyCaPem: string) => authenticationConfigMapData(clientCaPem, { clientCaPem: proxyCaPem, allowedNames: ['front-proxy-client'], usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'] });
  const fingerprints = (bundle: string | undefined) => (bundle?.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []).map((pem) => new X509Certificate(pem).fingerprint256);

  it('keeps the CAs already there (an earlier build\'s, another replica\'s) beside this one\'s, each once, in Go\'s PEM; the lists once each', async () => {
    const [clusterCa, earlierProxyCa, frontProxyCa] = await Promise.all([createClusterCa(), createClusterCa(), createClusterCa()]);
    const existing = { ...settings(clusterCa.certPem, earlierProxyCa.certPem), 'requestheader-allowed-names': '["aggregator"]' };
    const combined = combinedAuthenticationData(existing, settings(clusterCa.certPem, frontProxyCa.certPem));
    expect(Object.keys(combined).sort()).to.deep.equal(['client-ca-file', 'requestheader-allowed-names', 'requestheader-client-ca-file', 'requestheader-extra-headers-prefix', 'requestheader-group-headers', 'requestheader-username-headers']);
    expect(fingerprints(combined['client-ca-file'])).to.deep.equal(fingerprints(clusterCa.certPem));
    expect(fingerprints(combined['requestheader-client-ca-file'])).to.deep.equal([...fingerprints(earlierProxyCa.certPem), ...fingerprints(frontProxyCa.certPem)]);
    expect(combined['requestheader-client-ca-file']).to.not.include('\r');
    expect(combined['requestheader-allowed-names']).to.equal('["aggregator","front-proxy-client"]');
    expect(combined['requestheader-username-headers']).to.equal('["X-Remote-User"]');
    expect(combinedAuthenticationData(combined, settings(clusterCa.certPem, frontProxyCa.certPem))).to.deep.equal(combined);
  });

  it('drops expired CAs; without a request-header CA only client-ca-file is written', async () => {
    const [clusterCa, expired] = await Promise.all([createClusterCa(), createClusterCa({ now: new Date(Date.now() - 11 * 365 * 24 * 3600_000) })]);
    const combined = combinedAuthenticationData({ 'client-ca-file': `${expired.certPem}${clusterCa.certPem}` }, { 'client-ca-file': clusterCa.certPem });
    expect(combined).to.have.keys(['client-ca-file']);
    expect(fingerprints(combined['client-ca-file'])).to.deep.equal(fingerprints(clusterCa.certPem));
  });
});
