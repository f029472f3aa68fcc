import { expect } from 'chai';
import { estimateWork, type RequestDigest } from '../../../../src/flowcontrol';

function digest(verb: string, query: Record<string, string> = {}, name = ''): RequestDigest {
  return { isResourceRequest: true, verb, path: '', group: '', version: 'v1', namespace: 'default', resource: 'pods', subresource: '', name, user: { name: 'u', groups: [] }, query: new URLSearchParams(query) };
}

const sources = (objects: number | undefined, watches = 0) => ({ objectCount: () => objects, interestedWatchCount: () => watches });

describe('flowcontrol: the work estimate', () => {
  it('charges a LIST one seat per 100 objects it goes through, between 1 and 10', () => {
    // From the store, unpaged: twice the objects.
    expect(estimateWork(digest('list'), sources(300)).initialSeats).to.equal(6);
    // From the watch cache (rv=0): every object once.
    expect(estimateWork(digest('list', { resourceVersion: '0' }), sources(300)).initialSeats).to.equal(3);
    // A page of 100 from the store.
    expect(estimateWork(digest('list', { limit: '100' }), sources(10_000)).initialSeats).to.equal(2);
    // With a selector, the whole resource plus the page.
    expect(estimateWork(digest('list', { limit: '100', labelSelector: 'a=b' }), sources(10_000)).initialSeats).to.equal(10);
    expect(estimateWork(digest('list'), sources(10_000)).initialSeats).to.equal(10);
    expect(estimateWork(digest('list'), sources(0)).initialSeats).to.equal(1);
    // A resource the counts do not know: one seat.
    expect(estimateWork(digest('list'), sources(undefined)).initialSeats).to.equal(1);
  });

  it('charges a watch that starts with the current state like the list of it, a resumed one 1 seat', () => {
    expect(estimateWork(digest('watch'), sources(10_000)).initialSeats).to.equal(10);
    expect(estimateWork(digest('watch', { resourceVersion: '0' }), sources(450)).initialSeats).to.equal(5);
    expect(estimateWork(digest('watch', { resourceVersion: '123' }), sources(10_000)).initialSeats).to.equal(1);
  });

  it('holds a write\'s seats for its watchers after it executes', () => {
    expect(estimateWork(digest('create'), sources(0, 0))).to.deep.equal({ initialSeats: 1, finalSeats: 0, additionalLatencySeconds: 0 });
    const few = estimateWork(digest('update'), sources(0, 25));
    expect(few.finalSeats).to.equal(3);
    expect(few.additionalLatencySeconds).to.be.closeTo(0.005, 1e-9);
    // 1,000 watchers: 100 seat-slots of 5 ms, reshaped to 10 seats for 50 ms.
    const many = estimateWork(digest('delete'), sources(0, 1000));
    expect(many.finalSeats).to.equal(10);
    expect(many.additionalLatencySeconds).to.be.closeTo(0.05, 1e-9);
  });

  it('charges one seat for everything else', () => {
    expect(estimateWork(digest('get', {}, 'p'), sources(10_000)).initialSeats).to.equal(1);
  });
});
