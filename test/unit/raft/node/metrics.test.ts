import { expect } from 'chai';
import { Histogram, exponentialBuckets } from '../../../../raft/node/metrics';

describe('raft/node metrics: Histogram', () => {
  it('makes etcd\'s exponential bucket layouts', () => {
    expect(exponentialBuckets(0.001, 2, 14)).to.deep.equal([0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192]);
    expect(exponentialBuckets(0.0001, 2, 16).at(-1)).to.equal(3.2768);
  });

  it('counts an observation in the first bucket whose bound is not below it, and above the last in the overflow', () => {
    const h = new Histogram([0.1, 1]);
    for (const v of [0.05, 0.1, 0.5, 1, 2]) h.observe(v);
    expect(h.snapshot()).to.deep.equal({ buckets: [0.1, 1], counts: [2, 2, 1], sum: 3.65, count: 5 });
  });

  it('refuses bounds that do not ascend', () => {
    expect(() => new Histogram([1, 1])).to.throw(RangeError);
  });
});
