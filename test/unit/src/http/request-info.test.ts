import { expect } from 'chai';
import { parseRequestInfo } from '../../../../src/http/request-info';

const q = (s = '') => new URLSearchParams(s);

describe('request info', () => {
  it('reads the path shapes of spec §4.1', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/default/configmaps/a', q())).to.include({ group: '', version: 'v1', namespace: 'default', resource: 'configmaps', name: 'a', subresource: '', verb: 'get' });
    expect(parseRequestInfo('GET', '/apis/apps/v1/deployments', q())).to.include({ group: 'apps', resource: 'deployments', namespace: '', verb: 'list' });
    expect(parseRequestInfo('GET', '/apis/apps/v1/namespaces/x/deployments', q('watch=1'))).to.include({ namespace: 'x', verb: 'watch' });
    expect(parseRequestInfo('PUT', '/apis/apps/v1/namespaces/x/deployments/d/status', q())).to.include({ name: 'd', subresource: 'status', verb: 'update' });
    expect(parseRequestInfo('DELETE', '/api/v1/namespaces/x/pods', q())).to.include({ verb: 'deletecollection' });
  });

  it('treats namespaces/NAME as the namespace object itself', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/kube-system', q())).to.include({ resource: 'namespaces', name: 'kube-system', verb: 'get' });
    expect(parseRequestInfo('PUT', '/api/v1/namespaces/gone/finalize', q())).to.include({ resource: 'namespaces', name: 'gone', subresource: 'finalize' });
    expect(parseRequestInfo('GET', '/api/v1/namespaces', q())).to.include({ resource: 'namespaces', verb: 'list' });
  });

  it('leaves discovery and other documents as non-resource requests', () => {
    for (const path of ['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/version', '/healthz', '/openapi/v2']) {
      expect(parseRequestInfo('GET', path, q()).isResourceRequest, path).to.equal(false);
    }
  });
});
