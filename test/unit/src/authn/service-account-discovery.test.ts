import { expect } from 'chai';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { AuthnError } from '../../../../src/authn/errors';
import { buildIssuerDiscovery } from '../../../../src/authn/service-account-discovery';
import { parsePublicKeysPem } from '../../../../src/authn/service-account-keys';

describe('authn: service-account issuer discovery', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
  const keys = parsePublicKeysPem(`${rsa}${ec}`, 'sa.pub');

  it('builds the openid-configuration with the derived jwks_uri and sorted algorithms', async () => {
    const discovery = await buildIssuerDiscovery({ issuer: 'https://kubernetes.default.svc', externalAddress: '10.0.0.1:6443', keys });
    expect(discovery.openidConfiguration.body).to.equal(
      '{"issuer":"https://kubernetes.default.svc","jwks_uri":"https://10.0.0.1:6443/openid/v1/jwks",'
      + '"response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES384","RS256"]}',
    );
    expect(discovery.openidConfiguration.cacheControl).to.equal('public, max-age=3600');
    expect(discovery.jwks.contentType).to.equal('application/jwk-set+json');
  });

  it('lists every key as a public JWK in go-jose field order, usable for verification', async () => {
    const discovery = await buildIssuerDiscovery({ issuer: 'https://issuer.example', jwksUri: 'https://issuer.example/keys', keys });
    const parsed = JSON.parse(discovery.jwks.body) as { keys: Record<string, string>[] };
    expect(parsed.keys.map((key) => Object.keys(key))).to.deep.equal([['use', 'kty', 'kid', 'alg', 'n', 'e'], ['use', 'kty', 'kid', 'crv', 'alg', 'x', 'y']]);
    expect(parsed.keys.map((key) => key.kid)).to.deep.equal(keys.map((key) => key.kid));
    for (const [index, jwk] of parsed.keys.entries()) {
      expect(jwk).to.not.have.property('d');
      const imported = createPublicKey({ key: jwk as never, format: 'jwk' });
      expect(imported.export({ type: 'spki', format: 'pem' })).to.equal(keys[index].key.export({ type: 'spki', format: 'pem' }));
    }
    expect(JSON.parse(discovery.openidConfiguration.body).jwks_uri).to.equal('https://issuer.example/keys');
  });

  it('refuses what v1.25 refuses: http issuers, queries, fragments, an http jwks_uri, nothing to derive it from', async () => {
    const attempt = (options: Parameters<typeof buildIssuerDiscovery>[0]): Promise<string> =>
      buildIssuerDiscovery(options).then(() => 'built', (error: unknown) => (error instanceof AuthnError ? error.message : String(error)));
    expect(await attempt({ issuer: 'http://x', externalAddress: 'a:1', keys })).to.equal('issuer URL must use https scheme, got: http://x');
    expect(await attempt({ issuer: 'https://x?a=b', externalAddress: 'a:1', keys })).to.equal('issuer URL may not include a query, got: https://x?a=b');
    expect(await attempt({ issuer: 'https://x#f', externalAddress: 'a:1', keys })).to.equal('issuer URL may not include a fragment, got: https://x#f');
    expect(await attempt({ issuer: 'https://x', jwksUri: 'http://x/keys', keys })).to.include('jwksURI requires https scheme');
    expect(await attempt({ issuer: 'https://x', keys })).to.equal('either the JWKS URI or the default external address, or both, must be set');
    expect(await attempt({ issuer: 'https://x', externalAddress: 'a:1', keys: [] })).to.equal('no keys provided for validating keyset');
  });
});
