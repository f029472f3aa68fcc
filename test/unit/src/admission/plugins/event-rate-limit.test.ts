import { expect } from 'chai';
import { eventRateLimitPlugin } from '../../../../../src/admission/plugins/event-rate-limit';
import { ALICE, admit, attributes, makePlugin, refusal, testDeps } from '../plugin-harness';

const events = { resource: 'events', kind: 'Event' };
const event = (name: string) => ({ metadata: { name }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'ns' }, source: { component: 'kubelet' } });
const config = (limits: string) => `apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits: ${limits}\n`;

describe('EventRateLimit', () => {
  it('admits a burst of events per namespace, refuses the next with 429, and refills at qps', async () => {
    let now = 1_000_000;
    const deps = testDeps({ now: () => now });
    const plugin = await makePlugin(eventRateLimitPlugin, deps, config('[{type: Namespace, qps: 1, burst: 2}]'));
    await admit(plugin, attributes({ ...events, object: event('a') }));
    await admit(plugin, attributes({ ...events, object: event('b') }));
    const err = await refusal(admit(plugin, attributes({ ...events, object: event('c') })));
    expect(err.toStatus()).to.deep.equal({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Too many requests: limit reached on type Namespace for key ns', reason: 'TooManyRequests', code: 429 });
    // Another namespace has its own bucket; dry runs are not counted.
    await admit(plugin, attributes({ ...events, namespace: 'other', object: event('d') }));
    await admit(plugin, attributes({ ...events, dryRun: true, object: event('e') }));
    now += 1000;
    await admit(plugin, attributes({ ...events, object: event('f') }));
  });

  it('aggregates the refusals of several buckets and keys users by name', async () => {
    const plugin = await makePlugin(eventRateLimitPlugin, testDeps({ now: () => 0 }), config('[{type: Server, qps: 1, burst: 1}, {type: User, qps: 1, burst: 1}]'));
    await admit(plugin, attributes({ ...events, object: event('a') }));
    const err = await refusal(admit(plugin, attributes({ ...events, object: event('b'), userInfo: ALICE })));
    expect(err.message).to.equal('Too many requests: [limit reached on type Server for key , limit reached on type User for key alice]');
  });

  it('requires a valid configuration', async () => {
    for (const [text, message] of [
      [undefined, 'limits: Invalid value: []eventratelimit.Limit(nil): must not be empty'],
      [config('[{type: Galaxy, qps: 1, burst: 1}]'), 'limits[0].type: Unsupported value: "Galaxy": supported values: "Server", "Namespace", "User", "SourceAndObject"'],
      ['apiVersion: v1\nkind: Configuration\n', 'no kind "Configuration" is registered for version "v1" in scheme "pkg/runtime/scheme.go:100"'],
    ] as const) {
      try {
        await makePlugin(eventRateLimitPlugin, testDeps(), text);
        expect.fail('expected the configuration to be refused');
      } catch (err) {
        expect((err as Error).message).to.equal(message);
      }
    }
  });
});
