import { expect } from 'chai';
import { LinearizableRevision } from '../../../../src/storage/linearizable-revision';

/** A read the test answers by hand. */
function manualReads(): { reads: Array<(revision: number) => void>; source: LinearizableRevision } {
  const reads: Array<(revision: number) => void> = [];
  const source = new LinearizableRevision(() => new Promise<number>((resolve) => reads.push(resolve)));
  return { reads, source };
}

describe('LinearizableRevision (consistent reads from the watch cache)', () => {
  it('answers callers that arrive while a read is in flight with the next read, shared by all of them, never with the read that began before them', async () => {
    const { reads, source } = manualReads();
    const first = source.current();
    const late = [source.current(), source.current(), source.current()];
    expect(reads).to.have.length(1);
    // A write is acknowledged at revision 7 after the first read began: the first read may miss it.
    reads[0](6);
    expect(await first).to.equal(6);
    await new Promise((r) => setImmediate(r));
    expect(reads).to.have.length(2);
    reads[1](7);
    expect(await Promise.all(late)).to.deep.equal([7, 7, 7]);
    expect(source.reads).to.equal(2);
  });

  it('starts a read at once when none is in flight, and after a failed one', async () => {
    const failing = new LinearizableRevision(async () => {
      throw new Error('no leader');
    });
    let failed = 0;
    await failing.current().catch(() => failed++);
    await failing.current().catch(() => failed++);
    expect(failed).to.equal(2);
    expect(failing.reads).to.equal(2);
    const { reads, source } = manualReads();
    const a = source.current();
    reads[0](3);
    expect(await a).to.equal(3);
    const b = source.current();
    expect(reads).to.have.length(2);
    reads[1](4);
    expect(await b).to.equal(4);
  });
});
