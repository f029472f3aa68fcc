import { expect } from 'chai';
import { CsrCleaner, cleanupReason } from '../../../../src/controllers/csr-cleaner';
import type { GenericRegistry } from '../../../../src/registry';
import { ControllerHarness, Gate, leaderWithWriteHeld } from '../../../support/controller-harness';
import { csrObject, makeCsr } from '../../../support/test-csr';
import { createTestCa, issueClientCertificate } from '../../../support/test-pki';
import { until } from '../../../support/until';
import type { JsonObject } from '../../../../src/apis/object';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const now = Date.parse('2030-01-01T12:00:00Z');
const at = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const ca = createTestCa();
const valid = Buffer.from(issueClientCertificate(ca, 'alice', [], { notBefore: new Date(now - 2 * HOUR), notAfter: new Date(now + HOUR) }).certPem).toString('base64');
const expired = Buffer.from(issueClientCertificate(ca, 'alice', [], { notBefore: new Date(now - 2 * HOUR), notAfter: new Date(now - MINUTE) }).certPem).toString('base64');

function csr(conditions: Array<[string, number]>, options: { certificate?: string; createdAgoMs?: number } = {}): JsonObject {
  return {
    metadata: { name: 'c', creationTimestamp: at(now - (options.createdAgoMs ?? MINUTE)) },
    status: {
      conditions: conditions.map(([type, agoMs]) => ({ type, status: 'True', lastUpdateTime: at(now - agoMs) })),
      ...(options.certificate === undefined ? {} : { certificate: options.certificate }),
    },
  };
}

describe('controllers: CSR cleaner (csrcleaner)', function () {
  this.timeout(20_000);

  it('deletes approved-and-issued, denied and failed requests after an hour, pending ones after a day', () => {
    const table: Array<[string, JsonObject, string | undefined]> = [
      ['issued, approved 61m ago', csr([['Approved', 61 * MINUTE]], { certificate: valid }), 'it is more than 1h0m0s old and approved'],
      ['issued, approved 59m ago', csr([['Approved', 59 * MINUTE]], { certificate: valid }), undefined],
      ['approved 2h ago, never issued', csr([['Approved', 2 * HOUR]]), undefined],
      ['denied 61m ago', csr([['Denied', 61 * MINUTE]]), 'it is more than 1h0m0s old and denied'],
      ['denied 59m ago', csr([['Denied', 59 * MINUTE]]), undefined],
      ['failed 61m ago', csr([['Approved', 2 * MINUTE], ['Failed', 61 * MINUTE]]), 'it is more than 1h0m0s old and failed'],
      ['pending for 25h', csr([], { createdAgoMs: 25 * HOUR }), 'it is more than 24h0m0s old and unhandled'],
      ['pending for 23h', csr([], { createdAgoMs: 23 * HOUR }), undefined],
      ['issued, certificate expired', csr([['Approved', 5 * MINUTE]], { certificate: expired }), 'the associated certificate is expired'],
    ];
    for (const [what, object, reason] of table) expect(cleanupReason(object, now), what).to.equal(reason);
  });

  describe('against the registry', () => {
    let harness: ControllerHarness;
    const running: Array<{ stop(): void }> = [];

    beforeEach(async () => {
      harness = await ControllerHarness.start();
    });

    afterEach(() => {
      for (const r of running.splice(0)) r.stop();
      harness.stop();
    });

    const submit = (name: string) => harness.registry.create(harness.csrs, '', csrObject(name, makeCsr({ commonName: name })), { dryRun: false, subresource: '' });
    const names = async () => (await harness.registry.list(harness.csrs, '', { mode: { kind: 'latest' }, limit: 0 })).items.map((i) => String((i.metadata as JsonObject).name));

    function cleaner(clock: () => number, registry: GenericRegistry = harness.registry): CsrCleaner {
      const c = new CsrCleaner({ registry, csrs: harness.csrs, feed: harness.cache, now: clock, intervalMs: 50 });
      running.push(c);
      return c;
    }

    it('deletes stale requests on its first pass and on later ones, keeping fresh ones', async () => {
      await submit('old');
      let clock = Date.now() + 25 * HOUR;
      cleaner(() => clock).start();
      await until('the stale request to go', async () => (await names()).length === 0);
      clock = Date.now();
      await submit('fresh');
      await harness.synced();
      clock = Date.now() + 23 * HOUR;
      const c = cleaner(() => clock);
      c.start();
      await harness.synced();
      expect(await c.clean()).to.equal(0);
      expect(await names()).to.deep.equal(['fresh']);
    });

    it('hands over in the middle of a pass; the old leader\'s held delete spares a request re-created under that name', async () => {
      const all = ['r0', 'r1', 'r2', 'r3', 'r4'];
      for (const name of all) await submit(name);
      await harness.synced();
      const clock = () => Date.now() + 25 * HOUR;
      const gate = new Gate(2);
      const pair = await leaderWithWriteHeld(harness, gate, (registry) => cleaner(clock, registry));
      await pair.a.stop();
      await until('b to take over and clean', async () => pair.b.isLeader && (await names()).length === 0);
      await pair.b.stop();
      // r1 was the request a's held delete was about; a new one takes its name.
      await submit('r1');
      gate.release();
      await gate.settled();
      expect(await names()).to.deep.equal(['r1']);
    });
  });
});
