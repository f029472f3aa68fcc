import { expect } from 'chai';
import { WorkQueue } from '../../../../src/controllers/work-queue';
import { until } from '../../../support/until';

describe('controllers: WorkQueue', () => {
  it('handles a key once however often it is added before it runs, and again when added while it runs', async () => {
    const handled: string[] = [];
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((r) => { release = r; });
    const queue = new WorkQueue({ name: 't', handle: async (key) => { handled.push(key); if (handled.length === 1) await blocked; } });
    queue.add('a');
    queue.add('a');
    queue.add('b');
    await until('a to start', async () => handled.length === 1);
    queue.add('a');
    release();
    await until('the queue to drain', async () => queue.isIdle);
    expect(handled).to.deep.equal(['a', 'b', 'a']);
    queue.stop();
  });

  it('retries a failing key with backoff, logging unless the error is quiet', async () => {
    const lines: string[] = [];
    let calls = 0;
    const queue = new WorkQueue({
      name: 't',
      retryBaseMs: 5,
      log: (line) => lines.push(line),
      isQuiet: (err) => (err as Error).message === 'not yet',
      handle: async () => {
        calls++;
        if (calls === 1) throw new Error('boom');
        if (calls === 2) throw new Error('not yet');
      },
    });
    queue.add('k');
    await until('three attempts', async () => calls === 3 && queue.isIdle);
    expect(lines).to.deep.equal(['t: k: boom; retrying in 5 ms']);
    queue.stop();
  });

  it('keeps the earlier of two schedules of one key', async () => {
    const handled: string[] = [];
    const queue = new WorkQueue({ name: 't', handle: async (key) => { handled.push(key); } });
    queue.addAfter('k', 60_000);
    queue.addAfter('k', 10);
    queue.addAfter('k', 30_000);
    await until('the earlier schedule to fire', async () => handled.length === 1);
    // The later schedules were dropped, not left pending.
    expect(queue.isIdle).to.equal(true);
    queue.stop();
  });

  it('starts nothing after stop, scheduled keys included', async () => {
    let calls = 0;
    const queue = new WorkQueue({ name: 't', handle: async () => { calls++; } });
    queue.addAfter('later', 10);
    queue.stop();
    queue.add('now');
    expect(queue.isIdle).to.equal(true);
    await new Promise((r) => setImmediate(r));
    expect(calls).to.equal(0);
  });

  it('holds added keys for delayMs so that a burst of changes to one key is one pass', async () => {
    const handled: string[] = [];
    const queue = new WorkQueue({ name: 't', delayMs: 20, handle: async (key) => { handled.push(key); } });
    for (let i = 0; i < 5; i++) queue.add('ns');
    queue.add('other');
    expect(handled).to.deep.equal([]);
    await queue.whenIdle();
    expect(handled.sort()).to.deep.equal(['ns', 'other']);
    queue.stop();
  });

  it('retries a key whose handler answers false, without a log line, and whenIdle waits for the retry', async () => {
    const lines: string[] = [];
    let calls = 0;
    const queue = new WorkQueue({ name: 't', retryBaseMs: 5, log: (line) => lines.push(line), handle: async () => ++calls > 2 });
    queue.add('k');
    await queue.whenIdle();
    expect(calls).to.equal(3);
    expect(lines).to.deep.equal([]);
    queue.stop();
  });
});
