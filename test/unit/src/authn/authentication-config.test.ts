import { expect } from 'chai';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildAuthentication, type Authentication, type AuthenticationOptions } from '../../../../src/authn/authentication-config';
import { distinctHeaders } from '../../../../src/authn/headers';
import type { ServiceAccountLookups } from '../../../../src/authn/object-lookup';
import { generateServiceAccountKeyPair } from '../../../../src/authn/service-account-keys';
import { CachedTokenAuthenticator } from '../../../../src/authn/token-cache';
import { evaluateTokenRequest } from '../../../../src/authn/token-request';
import { reviewToken } from '../../../../src/authn/token-review';
import { ApiError } from '../../../../src/util/api-error';
import { createTestCa, issueClientCertificate, type TestCertificate } from '../../../support/test-pki';
import type { JsonObject } from '../../../../src/apis/object';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const STATIC_TOKEN = 'static-token-0123456789';

describe('authn: authentication built from kube-apiserver options', () => {
  let dir: string;
  let clusterCa: TestCertificate;
  let proxyCa: TestCertificate;
  let objects: Map<string, JsonObject>;
  let logs: string[];
  let auth: Authentication;

  const lookups: ServiceAccountLookups = {
    serviceAccount: (ns, name) => objects.get(`serviceaccounts/${ns}/${name}`),
    secret: (ns, name) => objects.get(`secrets/${ns}/${name}`),
    pod: (ns, name) => objects.get(`pods/${ns}/${name}`),
  };

  async function build(overrides: Partial<AuthenticationOptions> = {}): Promise<Authentication> {
    return buildAuthentication({
      clusterCaPem: clusterCa.certPem,
      tokenAuthFile: path.join(dir, 'tokens.csv'),
      enableBootstrapTokenAuth: true,
      serviceAccountKeyFiles: [path.join(dir, 'sa.pub')],
      serviceAccountSigningKeyFile: path.join(dir, 'sa.key'),
      serviceAccountIssuers: [ISSUER],
      externalAddress: '127.0.0.1:6443',
      requestHeader: { clientCaFile: path.join(dir, 'front-proxy-ca.crt'), usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'] },
      ...overrides,
    }, { lookups, log: (message) => logs.push(message) });
  }

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'authn-config-'));
    clusterCa = createTestCa({ commonName: 'cluster-ca' });
    proxyCa = createTestCa({ commonName: 'front-proxy-ca', keyIndex: 2 });
    const pair = await generateServiceAccountKeyPair();
    await fs.writeFile(path.join(dir, 'sa.key'), pair.privateKeyPem);
    await fs.writeFile(path.join(dir, 'sa.pub'), pair.publicKeyPem);
    await fs.writeFile(path.join(dir, 'tokens.csv'), `${STATIC_TOKEN},jane,1001,"dev,ops"\n${STATIC_TOKEN},jane2,1002\n`);
    await fs.writeFile(path.join(dir, 'front-proxy-ca.crt'), proxyCa.certPem);
  });

  after(async () => {
    await auth?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    logs = [];
    objects = new Map<string, JsonObject>([
      ['serviceaccounts/apps/builder', { metadata: { name: 'builder', namespace: 'apps', uid: 'sa-uid' } }],
      ['pods/apps/web-0', { metadata: { name: 'web-0', namespace: 'apps', uid: 'pod-uid' }, spec: { serviceAccountName: 'builder' } }],
    ]);
    await auth?.stop();
    auth = await build();
  });

  it('defaults the API audiences to the issuers, and orders the request authenticators as v1.25', () => {
    expect(auth.apiAudiences).to.deep.equal([ISSUER]);
    expect(auth.requests.authenticatorNames).to.deep.equal(['requestheader', 'x509', 'bearer-token', 'websocket-bearer-token']);
    expect(auth.requestHeaderNames).to.deep.equal({ usernameHeaders: ['x-remote-user'], groupHeaders: ['x-remote-group'], extraHeaderPrefixes: ['x-remote-extra-'] });
    expect(logs.join('\n')).to.include('duplicate token');
    expect(logs.join('\n')).to.not.include(STATIC_TOKEN);
  });

  it('authenticates a client certificate of the cluster CA and, through the proxy CA, the proxy headers', async () => {
    const admin = issueClientCertificate(clusterCa, 'system:admin', ['system:masters']);
    const byCert = await auth.requests.authenticate({ headers: {}, peerCertificates: [admin.x509] });
    expect(byCert).to.deep.include({ outcome: 'authenticated', authenticator: 'x509' });
    const proxy = issueClientCertificate(proxyCa, 'front-proxy-client', [], { keyIndex: 3 });
    const byProxy = await auth.requests.authenticate({ headers: distinctHeaders(['X-Remote-User', 'carol', 'X-Remote-Group', 'g']), peerCertificates: [proxy.x509] });
    expect(byProxy.outcome === 'authenticated' && [byProxy.authenticator, byProxy.user.name, byProxy.user.groups]).to.deep.equal(['requestheader', 'carol', ['g', 'system:authenticated']]);
  });

  it('authenticates the static token, reporting the API audiences', async () => {
    const outcome = await auth.requests.authenticate({ headers: { authorization: `Bearer ${STATIC_TOKEN}` }, peerCertificates: [] });
    expect(outcome).to.deep.equal({
      outcome: 'authenticated', authenticator: 'bearer-token', audiences: [ISSUER],
      user: { name: 'jane2', uid: '1002', groups: ['system:authenticated'], extra: {} },
    });
  });

  it('issues a TokenRequest token that authenticates, is cached, and is revoked at once when the pod goes', async () => {
    const signer = auth.tokenSigner;
    if (signer === undefined) throw new Error('expected a signer');
    const outcome = await evaluateTokenRequest({
      namespace: 'apps', name: 'builder', body: { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web-0' } } },
      serviceAccount: lookups.serviceAccount('apps', 'builder'), pods: lookups.pod, secrets: lookups.secret, signer, apiAudiences: auth.apiAudiences,
    });
    if (outcome instanceof ApiError) throw outcome;
    const token = (outcome.tokenRequest.status as { token: string }).token;
    const request = { headers: { authorization: `Bearer ${token}` }, peerCertificates: [] };
    const first = await auth.requests.authenticate(request);
    expect(first.outcome === 'authenticated' && first.user.name).to.equal('system:serviceaccount:apps:builder');
    await auth.requests.authenticate(request);
    const cache = auth.tokens as CachedTokenAuthenticator;
    expect(cache.stats).to.deep.include({ hits: 1, misses: 1 });

    objects.delete('pods/apps/web-0');
    const revoked = await auth.requests.authenticate(request);
    expect(revoked).to.deep.equal({ outcome: 'unauthorized', failures: [{ authenticator: 'bearer-token/serviceaccount', reason: 'service account token has been invalidated' }] });
    expect(JSON.stringify(revoked)).to.not.include(token);

    const review = await reviewToken({ body: { spec: { token } }, tokens: auth.tokens, apiAudiences: auth.apiAudiences });
    expect((review as { status: unknown }).status).to.deep.equal({ user: {}, error: 'service account token has been invalidated' });
  });

  it('authenticates a bootstrap token from its kube-system Secret', async () => {
    const b64 = (text: string): string => Buffer.from(text).toString('base64');
    objects.set('secrets/kube-system/bootstrap-token-abcdef', {
      metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system', uid: 'u' },
      type: 'bootstrap.kubernetes.io/token',
      data: { 'token-id': b64('abcdef'), 'token-secret': b64('0123456789abcdef'), 'usage-bootstrap-authentication': b64('true') },
    });
    const outcome = await auth.requests.authenticate({ headers: { authorization: 'Bearer abcdef.0123456789abcdef' }, peerCertificates: [] });
    expect(outcome.outcome === 'authenticated' && outcome.user.groups).to.deep.equal(['system:bootstrappers', 'system:authenticated']);
  });

  it('builds the issuer discovery documents', () => {
    const configuration = JSON.parse(auth.issuerDiscovery?.openidConfiguration.body ?? '{}') as Record<string, unknown>;
    expect(configuration).to.deep.include({ issuer: ISSUER, jwks_uri: 'https://127.0.0.1:6443/openid/v1/jwks' });
    expect(JSON.parse(auth.issuerDiscovery?.jwks.body ?? '{}').keys).to.have.length(1);
  });

  it('honours --anonymous-auth=false and refuses a missing file', async () => {
    const strict = await build({ anonymousAuth: false });
    expect(await strict.requests.authenticate({ headers: {}, peerCertificates: [] })).to.deep.equal({ outcome: 'unauthorized', failures: [] });
    const error = await build({ tokenAuthFile: path.join(dir, 'missing.csv') }).then(() => undefined, (e: unknown) => e);
    expect((error as { code?: string }).code).to.equal('IO_ERROR');
  });
});
