import { expect } from 'chai';
import { authenticationConfigMapData, localApiService } from '../../../../src/aggregator';

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
