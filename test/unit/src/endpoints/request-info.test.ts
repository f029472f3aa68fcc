import { expect } from 'chai';
import { parseRequestInfo } from '../../../../src/endpoints/request-info';

const q = (s = '') => new URLSearchParams(s);

describe('request info', () => {
  it('reads the path shapes of spec §4.1', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/default/configmaps/a', q())).to.include({ group: '', version: 'v1', namespace: 'default', resource: 'configmaps', name: 'a', subresource: '', verb: 'get' });
    expect(parseRequestInfo('GET', '/apis/apps/v1/deployments', q())).to.include({ group: 'apps', resource: 'deployments', namespace: '', verb: 'list' });
    expect(parseRequestInfo('GET', '/apis/apps/v1/namespaces/x/deployments', q('watch=1'))).to.include({ namespace: 'x', verb: 'watch' });
    expect(parseRequestInfo('PUT', '/apis/apps/v1/namespaces/x/deployments/d/status', q())).to.include({ name: 'd', subresource: 'status', verb: 'update' });
    expect(parseRequestInfo('DELETE', '/api/v1/namespaces/x/pods', q())).to.include({ verb: 'deletecollection' });
  });

  it('reads the deprecated /watch/ paths as watches, a name in the path kept', () => {
    expect(parseRequestInfo('GET', '/api/v1/watch/namespaces/ns/configmaps', q())).to.include({ namespace: 'ns', resource: 'configmaps', name: '', verb: 'watch' });
    expect(parseRequestInfo('GET', '/api/v1/watch/namespaces/ns/configmaps/c', q())).to.include({ namespace: 'ns', resource: 'configmaps', name: 'c', subresource: '', verb: 'watch' });
    expect(parseRequestInfo('GET', '/api/v1/watch/pods', q())).to.include({ namespace: '', resource: 'pods', verb: 'watch' });
    expect(parseRequestInfo('GET', '/api/v1/watch/namespaces', q())).to.include({ resource: 'namespaces', name: '', verb: 'watch' });
    expect(parseRequestInfo('GET', '/api/v1/watch/namespaces/kube-system', q())).to.include({ resource: 'namespaces', name: 'kube-system', namespace: 'kube-system', verb: 'watch' });
    expect(parseRequestInfo('GET', '/apis/apps/v1/watch/namespaces/x/deployments/d', q('watch=false'))).to.include({ group: 'apps', namespace: 'x', resource: 'deployments', name: 'd', verb: 'watch' });
    expect(parseRequestInfo('POST', '/apis/apps/v1/watch/deployments', q())).to.include({ verb: 'watch' });
    expect(() => parseRequestInfo('GET', '/api/v1/watch', q())).to.throw('unable to determine kind and namespace from url');
  });

  it('makes ?watch= a watch of a collection only, reading the value as Go reads a boolean parameter', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/ns/configmaps/c', q('watch=true'))).to.include({ name: 'c', verb: 'get' });
    for (const value of ['1', 'true', 'True', '', 'yes']) expect(parseRequestInfo('GET', '/api/v1/namespaces/ns/configmaps', q(`watch=${value}`)).verb, value).to.equal('watch');
    for (const value of ['0', 'false', 'FALSE', 'f', 'F']) expect(parseRequestInfo('GET', '/api/v1/namespaces/ns/configmaps', q(`watch=${value}`)).verb, value).to.equal('list');
  });

  it('treats namespaces/NAME as the namespace object itself', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/kube-system', q())).to.include({ resource: 'namespaces', name: 'kube-system', verb: 'get' });
    expect(parseRequestInfo('PUT', '/api/v1/namespaces/gone/finalize', q())).to.include({ resource: 'namespaces', name: 'gone', subresource: 'finalize' });
    expect(parseRequestInfo('GET', '/api/v1/namespaces', q())).to.include({ resource: 'namespaces', verb: 'list' });
  });

  it('reads a proxy subresource with a path of its own after it, as the proxy subresource; refuses dots and encoded slashes there too', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/ns/pods/p/proxy/metrics/cadvisor', q())).to.include({ resource: 'pods', name: 'p', subresource: 'proxy', verb: 'get' });
    expect(parseRequestInfo('POST', '/api/v1/nodes/n/proxy/a/b/', q())).to.include({ resource: 'nodes', name: 'n', subresource: 'proxy', verb: 'create' });
    expect(parseRequestInfo('GET', '/api/v1/namespaces/ns/services/https:s:443/proxy/x', q())).to.include({ resource: 'services', name: 'https:s:443', subresource: 'proxy' });
    // Only the proxy takes a path: configmaps/NAME/status/x is no resource.
    expect(parseRequestInfo('GET', '/api/v1/namespaces/ns/configmaps/c/status/x', q()).isResourceRequest).to.equal(false);
    for (const path of ['/api/v1/namespaces/ns/pods/p/proxy/../../secrets', '/api/v1/namespaces/ns/pods/p/proxy/a%2F..%2Fb', '/api/v1/nodes/n/proxy/%2e%2e/x']) {
      expect(() => parseRequestInfo('GET', path, q()), path).to.throw('invalid request path');
    }
  });

  it('reads OPTIONS on a resource path as a resource request without a verb, as kube does', () => {
    expect(parseRequestInfo('OPTIONS', '/api/v1/namespaces/ns/pods/p/proxy/x', q())).to.include({ isResourceRequest: true, resource: 'pods', name: 'p', subresource: 'proxy', verb: '' });
    expect(parseRequestInfo('OPTIONS', '/api/v1/namespaces/ns/pods', q())).to.include({ isResourceRequest: true, resource: 'pods', verb: '' });
    expect(parseRequestInfo('OPTIONS', '/healthz', q())).to.include({ isResourceRequest: false, verb: 'options' });
  });

  it('leaves discovery and other documents as non-resource requests', () => {
    for (const path of ['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/version', '/healthz', '/openapi/v2']) {
      expect(parseRequestInfo('GET', path, q()).isResourceRequest, path).to.equal(false);
    }
  });
});

describe('request info: hostile paths', () => {
  const refused = (path: string) => {
    try {
      parseRequestInfo('DELETE', path, q());
    } catch (err) {
      return (err as { code?: number }).code;
    }
    return 200;
  };

  it('refuses dot segments, raw or percent-encoded, before any routing', () => {
    for (const path of [
      '/api/v1/namespaces/default/configmaps/../secrets/token',
      '/api/v1/namespaces/default/configmaps/%2e%2e/secrets/token',
      '/api/v1/namespaces/default/configmaps/%2E%2E/secrets/token',
      '/api/v1/namespaces/default/configmaps/./x',
      '/api/v1/namespaces/default/configmaps/%2e',
    ]) {
      expect(refused(path), path).to.equal(400);
    }
  });

  it('refuses backslashes, encoded slashes, NUL bytes and escapes that do not decode', () => {
    for (const path of [
      '/api/v1/namespaces/default/configmaps/a\\b',
      '/api/v1/namespaces/default/configmaps/a%5Cb',
      '/api/v1/namespaces/default/configmaps/..%2Fsecrets%2Ftoken',
      '/api/v1/namespaces/default/configmaps/a%00',
      '/api/v1/namespaces/default/configmaps/%C0%AE',
      '/api/v1/namespaces/default/configmaps/%E0%A4%A',
      '/api/v1/namespaces/default/configmaps/%zz',
      '/api/v1/namespaces//configmaps',
    ]) {
      expect(refused(path), path).to.equal(400);
    }
  });

  it('decodes each segment once: an encoded name is the name, not more path', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/default/configmaps/a%3Ab', q())).to.include({ name: 'a:b', resource: 'configmaps', namespace: 'default' });
    expect(parseRequestInfo('GET', '/apis/', q())).to.include({ isResourceRequest: false, path: '/apis' });
  });
});
