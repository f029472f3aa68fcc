import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BufferedBackend, IgnoreErrorsBackend, TruncatingBackend, UnionBackend, WebhookBackend, withDelivery, type AuditEventBackend, type AuditEventJson } from '../../../../src/audit';
import { until } from '../../../support/until';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A backend that keeps each call's events and answers `took`. */
class Recorder implements AuditEventBackend {
  readonly name = 'recorder';
  readonly calls: AuditEventJson[][] = [];
  took = true;
  processEvents(events: readonly AuditEventJson[]): boolean {
    this.calls.push([...events]);
    return this.took;
  }
  async shutdown(): Promise<void> {}
}

function errorsSink() {
  const lost: Array<{ plugin: string; count: number; reason: string }> = [];
  return { lost, report: (plugin: string, count: number, reason: string) => lost.push({ plugin, count, reason }) };
}

const event = (n: number, extra: Json = {}): AuditEventJson => ({ kind: 'Event', apiVersion: 'audit.k8s.io/v1', level: 'Metadata', auditID: `id-${n}`, stage: 'ResponseComplete', ...extra });

describe('audit: the backends behind the policy (modes, batches, truncation, the webhook)', () => {
  describe('batch mode (BufferedBackend)', () => {
    it('sends a batch as soon as max-size events wait, without waiting for max-wait', async () => {
      const recorder = new Recorder();
      const { report } = errorsSink();
      const buffered = new BufferedBackend(recorder, { bufferSize: 100, maxBatchSize: 3, maxBatchWaitMs: 3_600_000, asyncDelegate: true }, report);
      for (let n = 0; n < 7; n++) expect(buffered.processEvents([event(n)])).to.equal(true);
      await until('two full batches', async () => (recorder.calls.length >= 2 ? true : undefined));
      expect(recorder.calls.map((c) => c.map((e) => e.auditID))).to.deep.equal([['id-0', 'id-1', 'id-2'], ['id-3', 'id-4', 'id-5']]);
      await buffered.shutdown();
      expect(recorder.calls.map((c) => c.length)).to.deep.equal([3, 3, 1]);
    });

    it('sends a smaller batch once max-wait has passed', async () => {
      const recorder = new Recorder();
      const buffered = new BufferedBackend(recorder, { bufferSize: 100, maxBatchSize: 400, maxBatchWaitMs: 20, asyncDelegate: false }, errorsSink().report);
      buffered.processEvents([event(1), event(2)]);
      await until('the timed batch', async () => (recorder.calls.length === 1 ? true : undefined));
      expect(recorder.calls[0].map((e) => e.auditID)).to.deep.equal(['id-1', 'id-2']);
      await buffered.shutdown();
    });

    it('loses what finds the buffer full, counted as plugin "buffered", and still answers taken', async () => {
      const recorder = new Recorder();
      const { lost, report } = errorsSink();
      const buffered = new BufferedBackend(recorder, { bufferSize: 2, maxBatchSize: 400, maxBatchWaitMs: 3_600_000, asyncDelegate: true }, report);
      expect(buffered.processEvents([event(1), event(2), event(3), event(4), event(5)])).to.equal(true);
      expect(lost).to.deep.equal([{ plugin: 'buffered', count: 3, reason: 'audit buffer queue blocked' }]);
      await buffered.shutdown();
      expect(recorder.calls.flat().map((e) => e.auditID)).to.deep.equal(['id-1', 'id-2']);
      buffered.processEvents([event(6)]);
      expect(lost[1]).to.deep.equal({ plugin: 'buffered', count: 1, reason: 'audit backend shut down' });
    });

    it('never lets more than the burst of batches leave at once when throttled, then one per 1/qps', async () => {
      const recorder = new Recorder();
      let clock = 0;
      const buffered = new BufferedBackend(recorder, { bufferSize: 100, maxBatchSize: 1, maxBatchWaitMs: 3_600_000, throttle: { qps: 20, burst: 2 }, asyncDelegate: true }, errorsSink().report, () => clock);
      buffered.processEvents([event(1), event(2), event(3)]);
      await until('the burst', async () => (recorder.calls.length === 2 ? true : undefined));
      // The clock stands still: no token comes back, the third batch waits in the buffer.
      expect(buffered.queued).to.equal(1);
      clock += 50;
      await until('the third batch after a token came back', async () => (recorder.calls.length === 3 ? true : undefined));
      await buffered.shutdown();
    });
  });

  describe('blocking modes and the union', () => {
    it('blocking answers taken whatever the backend says; blocking-strict passes the failure on', () => {
      const failing = new Recorder();
      failing.took = false;
      const { report } = errorsSink();
      expect(withDelivery(failing, { mode: 'blocking', batch: { bufferSize: 1, maxBatchSize: 1, maxBatchWaitMs: 0, asyncDelegate: false } }, report).processEvents([event(1)])).to.equal(true);
      expect(withDelivery(failing, { mode: 'blocking-strict', batch: { bufferSize: 1, maxBatchSize: 1, maxBatchWaitMs: 0, asyncDelegate: false } }, report).processEvents([event(1)])).to.equal(false);
      expect(new IgnoreErrorsBackend(failing).processEvents([event(2)])).to.equal(true);
    });

    it('a union gives every event to each backend and fails when one does', () => {
      const a = new Recorder();
      const b = new Recorder();
      b.took = false;
      expect(new UnionBackend([a, b]).processEvents([event(1)])).to.equal(false);
      expect(a.calls).to.have.length(1);
      expect(b.calls).to.have.length(1);
    });
  });

  describe('truncation (TruncatingBackend)', () => {
    it('drops the objects of an event larger than max-event-size and marks it truncated', () => {
      const recorder = new Recorder();
      const { lost, report } = errorsSink();
      const big = event(1, { level: 'RequestResponse', requestObject: { data: 'x'.repeat(2000) }, responseObject: { data: 'y'.repeat(2000) }, annotations: { a: 'b' } });
      new TruncatingBackend(recorder, { maxEventSize: 1000, maxBatchSize: 10_000 }, report).processEvents([big]);
      const sent = recorder.calls[0][0] as Json;
      expect(sent).not.to.have.property('requestObject');
      expect(sent).not.to.have.property('responseObject');
      expect(sent.annotations).to.deep.equal({ a: 'b', 'audit.k8s.io/truncated': 'true' });
      expect(lost).to.deep.equal([]);
    });

    it('loses an event still too large after truncation, or one at Metadata, counted as plugin "truncate"', () => {
      const recorder = new Recorder();
      const { lost, report } = errorsSink();
      const huge = event(1, { level: 'Metadata', annotations: { note: 'z'.repeat(2000) } });
      new TruncatingBackend(recorder, { maxEventSize: 1000, maxBatchSize: 10_000 }, report).processEvents([huge, event(2)]);
      expect(recorder.calls.flat().map((e) => e.auditID)).to.deep.equal(['id-2']);
      expect(lost).to.deep.equal([{ plugin: 'truncate', count: 1, reason: 'event is too large even after truncating' }]);
    });

    it('splits a call\'s events into batches of at most max-batch-size bytes', () => {
      const recorder = new Recorder();
      const size = Buffer.byteLength(JSON.stringify(event(1)));
      new TruncatingBackend(recorder, { maxEventSize: size, maxBatchSize: size * 2 }, errorsSink().report).processEvents([event(1), event(2), event(3), event(4), event(5)]);
      expect(recorder.calls.map((c) => c.length)).to.deep.equal([2, 2, 1]);
    });
  });

  describe('the webhook (WebhookBackend) against a receiver the test runs', () => {
    let server: Server;
    let url: string;
    let answer: (received: number) => number;
    const bodies: Json[] = [];
    const headers: IncomingMessage['headers'][] = [];
    before(async () => {
      server = createServer((req: IncomingMessage, res: ServerResponse) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json);
          headers.push(req.headers);
          res.statusCode = answer(bodies.length);
          res.end('{}');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/audit`;
    });
    beforeEach(() => {
      bodies.length = 0;
      headers.length = 0;
      answer = () => 200;
    });
    after(() => new Promise((resolve) => server.close(resolve)));

    it('POSTs the events as one audit.k8s.io/v1 EventList with the kubeconfig\'s token', async () => {
      const { lost, report } = errorsSink();
      const webhook = new WebhookBackend({ endpoint: { server: url, insecureSkipTlsVerify: false, bearerToken: 'receiver-token' }, reportError: report });
      expect(await webhook.processEvents([event(1), event(2)])).to.equal(true);
      await webhook.shutdown();
      expect(bodies).to.deep.equal([{ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items: [event(1), event(2)] }]);
      expect(headers[0]['content-type']).to.equal('application/json');
      expect(headers[0].authorization).to.equal('Bearer receiver-token');
      expect(lost).to.deep.equal([]);
    });

    it('retries a 500 with backoff and succeeds, but not a 400', async () => {
      answer = (n) => (n < 3 ? 500 : 200);
      const { lost, report } = errorsSink();
      const webhook = new WebhookBackend({ endpoint: { server: url, insecureSkipTlsVerify: false }, initialBackoffMs: 5, reportError: report });
      expect(await webhook.processEvents([event(1)])).to.equal(true);
      expect(webhook.posts).to.equal(3);
      answer = () => 400;
      expect(await webhook.processEvents([event(2)])).to.equal(false);
      expect(webhook.posts).to.equal(4);
      expect(lost).to.have.length(1);
      expect(lost[0]).to.include({ plugin: 'webhook', count: 1 });
      expect(lost[0].reason).to.include('answered HTTP 400');
      await webhook.shutdown();
    });

    it('a receiver that is down loses the events, counted as plugin "webhook"', async () => {
      const down = createServer();
      await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
      const port = (down.address() as AddressInfo).port;
      await new Promise((resolve) => down.close(resolve));
      const { lost, report } = errorsSink();
      const webhook = new WebhookBackend({ endpoint: { server: `http://127.0.0.1:${port}/audit`, insecureSkipTlsVerify: false }, initialBackoffMs: 5, reportError: report });
      expect(await webhook.processEvents([event(1), event(2), event(3)])).to.equal(false);
      expect(lost).to.have.length(1);
      expect(lost[0]).to.include({ plugin: 'webhook', count: 3 });
      await webhook.shutdown();
    });
  });
});
