import { expect } from 'chai';
import { AdmissionChain, type AdmissionPlugin } from '../../../../src/admission';
import type { JsonObject } from '../../../../src/storage';
import { attributes, pod, refusal } from './plugin-harness';

function recorder(name: string, calls: string[], options: { reinvoke?: boolean; refuse?: boolean } = {}): AdmissionPlugin {
  return {
    name,
    sideEffects: 'None',
    handles: () => true,
    async mutate(a) {
      calls.push(`${name}.mutate${a.reinvocation?.isReinvoke ? ' (again)' : ''}`);
      if (options.reinvoke && a.reinvocation !== undefined && !a.reinvocation.isReinvoke) a.reinvocation.shouldReinvoke = true;
      const object = a.object as JsonObject;
      (object.metadata as JsonObject).labels = { ...(((object.metadata as JsonObject).labels as object | undefined) ?? {}), [name]: 'seen' };
      return object;
    },
    async validate() {
      calls.push(`${name}.validate`);
      if (options.refuse) throw new Error('refused');
    },
  };
}

describe('AdmissionChain', () => {
  it('runs every mutating plugin in order, then every validating plugin, on the mutated object', async () => {
    const calls: string[] = [];
    const chain = new AdmissionChain([recorder('a', calls), recorder('b', calls)]);
    const object = await chain.mutate(attributes({ object: pod('p') }));
    await chain.validate(attributes({ object }));
    expect(calls).to.deep.equal(['a.mutate', 'b.mutate', 'a.validate', 'b.validate']);
    expect((object?.metadata as JsonObject).labels).to.deep.equal({ a: 'seen', b: 'seen' });
  });

  it('runs the mutating plugins once more, and only once, when one asks for reinvocation', async () => {
    const calls: string[] = [];
    const chain = new AdmissionChain([recorder('builtin', calls), recorder('webhook', calls, { reinvoke: true })]);
    await chain.mutate(attributes({ object: pod('p') }));
    expect(calls).to.deep.equal(['builtin.mutate', 'webhook.mutate', 'builtin.mutate (again)', 'webhook.mutate (again)']);
  });

  it('refuses a dry run before a plugin with side effects that did not declare dry-run safety', async () => {
    const calls: string[] = [];
    const unsafe: AdmissionPlugin = { ...recorder('audit.example.com', calls), sideEffects: 'Unknown' };
    const err = await refusal(new AdmissionChain([unsafe]).mutate(attributes({ object: pod('p'), dryRun: true })));
    expect(err.code).to.equal(400);
    expect(err.message).to.equal('admission webhook "audit.example.com" does not support dry run');
    expect(calls).to.deep.equal([]);
  });

  it('stops every plugin that holds something', () => {
    let stopped = 0;
    new AdmissionChain([{ name: 'x', sideEffects: 'None', handles: () => false, stop: () => stopped++ }, { name: 'y', sideEffects: 'None', handles: () => false }]).stop();
    expect(stopped).to.equal(1);
  });
});
