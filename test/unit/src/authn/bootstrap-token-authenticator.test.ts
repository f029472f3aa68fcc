import { expect } from 'chai';
import { BootstrapTokenAuthenticator } from '../../../../src/authn/bootstrap-token-authenticator';
import type { JsonObject } from '../../../../src/apis/object';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const NOW = Date.parse('2026-01-01T00:00:00Z');
const TOKEN = 'abcdef.0123456789abcdef';

function secret(data: Record<string, string>, overrides: Record<string, unknown> = {}): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system', uid: 'uid-1', resourceVersion: '10' },
    type: 'bootstrap.kubernetes.io/token',
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
    ...overrides,
  };
}

const VALID = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' };

describe('authn: bootstrap tokens', () => {
  let stored: Map<string, JsonObject>;
  let rejected: string[];
  let now: number;

  function authenticator(): BootstrapTokenAuthenticator {
    return new BootstrapTokenAuthenticator({
      secrets: (namespace, name) => stored.get(`${namespace}/${name}`),
      now: () => now,
      onReject: (reason) => rejected.push(reason),
    });
  }

  beforeEach(() => {
    stored = new Map();
    rejected = [];
    now = NOW;
  });

  it('authenticates system:bootstrap:<id> with system:bootstrappers and the extra groups, sorted and deduplicated', async () => {
    stored.set('kube-system/bootstrap-token-abcdef', secret({ ...VALID, 'auth-extra-groups': 'system:bootstrappers:worker,system:bootstrappers:a,system:bootstrappers:worker' }));
    const result = await authenticator().authenticateToken(TOKEN);
    expect(result.outcome).to.equal('authenticated');
    if (result.outcome !== 'authenticated') return;
    expect(result.user).to.deep.equal({
      name: 'system:bootstrap:abcdef',
      uid: '',
      groups: ['system:bootstrappers', 'system:bootstrappers:a', 'system:bootstrappers:worker'],
      extra: {},
    });
  });

  it('ignores tokens of another shape', async () => {
    stored.set('kube-system/bootstrap-token-abcdef', secret(VALID));
    for (const token of ['ABCDEF.0123456789abcdef', 'abcdef.0123456789abcde', 'abcdef:0123456789abcdef', 'abcdef.0123456789abcdef0', 'x']) {
      expect(await authenticator().authenticateToken(token)).to.deep.equal({ outcome: 'not-mine' });
    }
    expect(rejected).to.deep.equal([]);
  });

  const cases: [string, () => void, string][] = [
    ['no Secret', () => undefined, 'does not exist'],
    ['a Secret being deleted', () => stored.set('kube-system/bootstrap-token-abcdef', secret(VALID, { metadata: { name: 'bootstrap-token-abcdef', deletionTimestamp: '2025-12-31T00:00:00Z' } })), 'deleted'],
    ['another type', () => stored.set('kube-system/bootstrap-token-abcdef', secret(VALID, { type: 'Opaque' })), 'invalid type'],
    ['another secret', () => stored.set('kube-system/bootstrap-token-abcdef', secret({ ...VALID, 'token-secret': 'ffffffffffffffff' })), 'token-secret'],
    ['another id', () => stored.set('kube-system/bootstrap-token-abcdef', secret({ ...VALID, 'token-id': 'zzzzzz' })), 'token-id'],
    ['an expiration in the past', () => stored.set('kube-system/bootstrap-token-abcdef', secret({ ...VALID, expiration: '2025-12-31T23:59:59Z' })), 'expired'],
    ['an unparsable expiration', () => stored.set('kube-system/bootstrap-token-abcdef', secret({ ...VALID, expiration: 'tomorrow' })), 'expired'],
    ['no authentication usage', () => stored.set('kube-system/bootstrap-token-abcdef', secret({ ...VALID, 'usage-bootstrap-authentication': 'false' })), 'usage-bootstrap-authentication=true'],
    ['an extra group outside system:bootstrappers:', () => stored.set('kube-system/bootstrap-token-abcdef', secret({ ...VALID, 'auth-extra-groups': 'system:masters' })), 'auth-extra-groups'],
  ];
  for (const [what, setUp, why] of cases) {
    it(`answers not mine, as v1.25 does, for ${what}, logging why without the secret`, async () => {
      setUp();
      expect(await authenticator().authenticateToken(TOKEN)).to.deep.equal({ outcome: 'not-mine' });
      expect(rejected).to.have.length(1);
      expect(rejected[0]).to.include(why);
      expect(rejected[0]).to.not.include('0123456789abcdef');
    });
  }

  it('accepts an expiration in the future', async () => {
    stored.set('kube-system/bootstrap-token-abcdef', secret({ ...VALID, expiration: '2026-01-02T00:00:00Z' }));
    expect((await authenticator().authenticateToken(TOKEN)).outcome).to.equal('authenticated');
  });

  it('fails when the Secret cannot be looked up', async () => {
    const throwing = new BootstrapTokenAuthenticator({ secrets: () => { throw new Error('watch cache not ready'); } });
    const result = await throwing.authenticateToken(TOKEN);
    expect(result.outcome).to.equal('failed');
  });

  it('rechecks: deleting, changing or expiring the Secret revokes a cached success', async () => {
    stored.set('kube-system/bootstrap-token-abcdef', secret({ ...VALID, expiration: '2026-01-01T01:00:00Z' }));
    const result = await authenticator().authenticateToken(TOKEN);
    if (result.outcome !== 'authenticated' || result.recheck === undefined) throw new Error('expected a recheck');
    expect(result.recheck()).to.equal(true);
    now = Date.parse('2026-01-01T01:00:01Z');
    expect(result.recheck()).to.equal(false);
    now = NOW;
    stored.set('kube-system/bootstrap-token-abcdef', secret(VALID, { metadata: { uid: 'uid-1', resourceVersion: '11' } }));
    expect(result.recheck()).to.equal(false);
    stored.delete('kube-system/bootstrap-token-abcdef');
    expect(result.recheck()).to.equal(false);
  });
});
