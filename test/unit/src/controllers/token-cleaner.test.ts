import { expect } from 'chai';
import { TokenCleaner } from '../../../../src/controllers/token-cleaner';
import type { GenericRegistry } from '../../../../src/registry';
import { ControllerHarness, Gate, leaderWithWriteHeld } from '../../../support/controller-harness';
import { until } from '../../../support/until';
import { tokenSecret } from '../../../support/bootstrap-tokens';
import type { JsonObject } from '../../../../src/apis/object';

describe('controllers: token cleaner (tokencleaner)', function () {
  this.timeout(20_000);
  let harness: ControllerHarness;
  const running: Array<{ stop(): void }> = [];

  beforeEach(async () => {
    harness = await ControllerHarness.start();
  });

  afterEach(() => {
    for (const r of running.splice(0)) r.stop();
    harness.stop();
  });

  const add = (object: JsonObject) => harness.registry.create(harness.secrets, 'kube-system', object, { dryRun: false, subresource: '' });
  const names = async () => (await harness.registry.list(harness.secrets, 'kube-system', { mode: { kind: 'latest' }, limit: 0 })).items.map((i) => String((i.metadata as JsonObject).name)).sort();

  function cleaner(registry: GenericRegistry = harness.registry): TokenCleaner {
    const c = new TokenCleaner({ registry, secrets: harness.secrets, feed: harness.cache, retryBaseMs: 20 });
    running.push(c);
    return c;
  }

  it('deletes expired and unparsable-expiration tokens, keeps the rest, and deletes a token when it expires', async () => {
    await add(tokenSecret('expird', '0123456789abcdef', { expiration: '2020-01-01T00:00:00Z' }));
    await add(tokenSecret('garble', '0123456789abcdef', { expiration: 'next tuesday' }));
    await add(tokenSecret('foreve', '0123456789abcdef'));
    await add(tokenSecret('future', '0123456789abcdef', { expiration: '2099-01-01T00:00:00Z' }));
    await add(tokenSecret('opaque', '0123456789abcdef', { expiration: '2020-01-01T00:00:00Z' }, 'Opaque'));
    await add(tokenSecret('soonxx', '0123456789abcdef', { expiration: new Date(Date.now() + 1200).toISOString() }));
    cleaner().start();
    await until('the expired tokens to go', async () => (await names()).join() === 'bootstrap-token-foreve,bootstrap-token-future,bootstrap-token-opaque,bootstrap-token-soonxx');
    await until('the token to go when it expires', async () => !(await names()).includes('bootstrap-token-soonxx'), 10_000);
    expect(await names()).to.deep.equal(['bootstrap-token-foreve', 'bootstrap-token-future', 'bootstrap-token-opaque']);
  });

  it('hands over with a delete held: a token re-created under that name meanwhile stays', async () => {
    const expired = { expiration: '2020-01-01T00:00:00Z' };
    for (const id of ['aaaaa1', 'aaaaa2', 'aaaaa3']) await add(tokenSecret(id, '0123456789abcdef', expired));
    const gate = new Gate(2);
    const pair = await leaderWithWriteHeld(harness, gate, (registry) => cleaner(registry));
    await pair.a.stop();
    await until('b to clean up', async () => pair.b.isLeader && (await names()).length === 0);
    // aaaaa2 was the token a's held delete was about: a fresh one takes its name.
    await add(tokenSecret('aaaaa2', '0123456789abcdef'));
    gate.release();
    await gate.settled();
    expect(await names()).to.deep.equal(['bootstrap-token-aaaaa2']);
    await pair.b.stop();
  });
});
