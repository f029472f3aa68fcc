import { expect } from 'chai';
import { RequestWindow } from '../../../../src/observability/request-window';

describe('observability/RequestWindow: the status page\'s last two minutes of requests', () => {
  it('sums finished seconds per verb, leaving out the second in progress', () => {
    let now = 1_000_000;
    const window = new RequestWindow(() => now);
    window.record('GET', 0.01);
    window.record('GET', 0.03);
    window.record('POST', 0.2);
    expect(window.summary(10)).to.deep.equal([]);
    now += 1000;
    const summary = window.summary(10);
    expect(summary.map((s) => s.verb)).to.deep.equal(['GET', 'POST']);
    expect(summary[0].perSecond).to.be.closeTo(0.2, 1e-9);
    expect(summary[0].meanMs).to.be.closeTo(20, 1e-9);
    expect(summary[0].maxMs).to.be.closeTo(30, 1e-9);
    expect(window.ratePerSecond(3)).to.deep.equal([0, 0, 3]);
  });

  it('forgets a second when the ring comes back to its slot', () => {
    let now = 5_000_000;
    const window = new RequestWindow(() => now);
    window.record('LIST', 0.1);
    now += 120_000;
    window.record('LIST', 0.1);
    now += 1000;
    expect(window.ratePerSecond(119).reduce((a, b) => a + b, 0)).to.equal(1);
  });
});
