import { expect } from 'chai';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { AdmissionChain, type AdmissionPlugin } from '../../../../src/admission';
import { startTracing } from '../../../../src/observability/tracing';
import { parseTracingConfiguration } from '../../../../src/observability/tracing-config';
import { attributes, pod, refusal } from './plugin-harness';
import type { JsonObject } from '../../../../src/apis/object';

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

  it('in a traced request, records each plugin with work to do as an event on the request\'s span, no span of its own, and hands it the request\'s context', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = startTracing(parseTracingConfiguration('apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:1\nsamplingRatePerMillion: 1000000\n'), { instanceId: 'unit', exporter });
    try {
      const calls: string[] = [];
      const seen: Record<string, string | undefined> = {};
      const spanOf = (name: string, base: AdmissionPlugin): AdmissionPlugin => ({
        ...base,
        async mutate(a) {
          if (!(name in seen)) seen[name] = a.trace === undefined ? undefined : trace.getSpan(a.trace)?.spanContext().spanId;
          return base.mutate?.(a);
        },
      });
      // A webhook plugin with no webhook configured has nothing to do: no event.
      const idle: AdmissionPlugin = { ...spanOf('idle', recorder('idle', calls)), spanWorthy: () => false };
      const chain = new AdmissionChain([spanOf('quota', recorder('quota', calls)), idle]);
      const request = trace.getTracer('test').startSpan('POST', {}, ROOT_CONTEXT);
      const requestTrace = trace.setSpan(ROOT_CONTEXT, request);
      const object = await chain.mutate(attributes({ object: pod('p'), trace: requestTrace }));
      await chain.validate(attributes({ object, trace: requestTrace }));
      // Untraced: the same plugins, no event.
      await chain.mutate(attributes({ object: pod('q') }));
      request.end();
      await tracing.flush();
      const spans = exporter.getFinishedSpans();
      expect(spans.map((s) => s.name)).to.deep.equal(['POST']);
      const events = spans[0].events;
      expect(events.map((e) => e.name)).to.deep.equal(['admission.mutate quota', 'admission.validate quota']);
      expect(events[0].attributes).to.include({ 'carina.admission.plugin': 'quota', 'carina.admission.step': 'admit' });
      expect(events[1].attributes).to.include({ 'carina.admission.plugin': 'quota', 'carina.admission.step': 'validate' });
      for (const event of events) expect(event.attributes?.['carina.stage.duration_ms']).to.be.a('number');
      // Both plugins ran with the request's own context: a webhook call's span is the request's child.
      expect(seen.quota).to.equal(request.spanContext().spanId);
      expect(seen.idle).to.equal(request.spanContext().spanId);
      expect(calls).to.include.members(['idle.mutate', 'idle.validate']);
    } finally {
      await tracing.shutdown();
    }
  });

  it('stops every plugin that holds something', () => {
    let stopped = 0;
    new AdmissionChain([{ name: 'x', sideEffects: 'None', handles: () => false, stop: () => stopped++ }, { name: 'y', sideEffects: 'None', handles: () => false }]).stop();
    expect(stopped).to.equal(1);
  });
});
