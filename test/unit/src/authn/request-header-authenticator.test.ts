import { expect } from 'chai';
import { distinctHeaders } from '../../../../src/authn/headers';
import { RequestHeaderAuthenticator, stripAuthenticationHeaders } from '../../../../src/authn/request-header-authenticator';
import { CertificatePool } from '../../../../src/authn/x509-verifier';
import { createTestCa, issueClientCertificate, type TestCertificate } from '../../../support/test-pki';

describe('authn: authenticating proxy (requestheader)', () => {
  let proxyCa: TestCertificate;
  let clusterCa: TestCertificate;
  let proxy: TestCertificate;
  let otherProxy: TestCertificate;

  before(() => {
    proxyCa = createTestCa({ commonName: 'front-proxy-ca', keyIndex: 2 });
    clusterCa = createTestCa({ commonName: 'cluster-ca' });
    proxy = issueClientCertificate(proxyCa, 'front-proxy-client', [], { keyIndex: 3 });
    otherProxy = issueClientCertificate(proxyCa, 'someone-else', [], { keyIndex: 3 });
  });

  function authenticator(allowedNames: string[] = ['front-proxy-client']): RequestHeaderAuthenticator {
    return new RequestHeaderAuthenticator({
      clientCa: new CertificatePool([proxyCa.x509]),
      allowedNames,
      usernameHeaders: ['X-Remote-User', 'X-Other-User'],
      groupHeaders: ['X-Remote-Group'],
      extraHeaderPrefixes: ['X-Remote-Extra-'],
    });
  }

  const raw = [
    'X-Remote-User', 'jane',
    'X-Remote-Group', 'dev',
    'X-Remote-Group', 'a,b',
    'X-Remote-Group', '',
    'X-Remote-Extra-Scopes', 'read',
    'X-Remote-Extra-Scopes', 'write',
    'X-Remote-Extra-Acme.com%2Fproject', 'p1',
    'X-Remote-Extra-Bad%zz', 'kept',
  ];

  it('reads user, groups (each header value, commas kept) and percent-decoded extra keys from a verified proxy', async () => {
    const result = await authenticator().authenticate({ headers: distinctHeaders(raw), peerCertificates: [proxy.x509] });
    expect(result.outcome).to.equal('authenticated');
    if (result.outcome !== 'authenticated') return;
    expect(result.user).to.deep.equal({
      name: 'jane',
      uid: '',
      groups: ['dev', 'a,b'],
      extra: { scopes: ['read', 'write'], 'acme.com/project': ['p1'], 'bad%zz': ['kept'] },
    });
  });

  it('takes the first username header, in flag order, that has a value', async () => {
    const headers = distinctHeaders(['X-Other-User', 'second', 'X-Remote-User', '']);
    const result = await authenticator().authenticate({ headers, peerCertificates: [proxy.x509] });
    expect(result.outcome === 'authenticated' && result.user.name).to.equal('second');
  });

  it('ignores the headers without a certificate, and is not mine without a username header', async () => {
    expect(await authenticator().authenticate({ headers: distinctHeaders(raw), peerCertificates: [] })).to.deep.equal({ outcome: 'not-mine' });
    expect(await authenticator().authenticate({ headers: {}, peerCertificates: [proxy.x509] })).to.deep.equal({ outcome: 'not-mine' });
  });

  it('fails a certificate the requestheader CA did not sign (a cluster client certificate) and a CN not allowed', async () => {
    const clusterClient = issueClientCertificate(clusterCa, 'front-proxy-client');
    const foreign = await authenticator().authenticate({ headers: distinctHeaders(raw), peerCertificates: [clusterClient.x509] });
    expect(foreign).to.deep.include({ outcome: 'failed' });
    expect(foreign.outcome === 'failed' && foreign.reason).to.include('certificate signed by unknown authority');
    const notAllowed = await authenticator().authenticate({ headers: distinctHeaders(raw), peerCertificates: [otherProxy.x509] });
    expect(notAllowed).to.deep.equal({ outcome: 'failed', reason: 'x509: subject with cn=someone-else is not in the allowed list' });
  });

  it('allows any CN when no names are configured', async () => {
    const result = await authenticator([]).authenticate({ headers: distinctHeaders(raw), peerCertificates: [otherProxy.x509] });
    expect(result.outcome).to.equal('authenticated');
  });

  it('strips Authorization and every proxy header, case-insensitively, and keeps the rest', () => {
    const headers = { ...distinctHeaders(raw), authorization: ['Bearer x'], accept: ['application/json'], 'x-remote-extra-': ['y'] };
    const stripped = stripAuthenticationHeaders(headers, authenticator().headerNames);
    expect(Object.keys(stripped)).to.deep.equal(['accept']);
    expect(Object.keys(stripAuthenticationHeaders(headers, undefined))).to.not.include('authorization');
    expect(Object.keys(stripAuthenticationHeaders(headers, undefined))).to.include('x-remote-user');
  });
});
