import { expect } from 'chai';
import { CircuitBreaker } from '../../../../../src/admission/webhook/circuit-breaker';

describe('admission/webhook: circuit breaker', () => {
  let now = 0;
  const breaker = () => new CircuitBreaker({ failureThreshold: 3, windowMs: 10_000, cooldownMs: 5_000 }, () => now);
  beforeEach(() => {
    now = 1_000_000;
  });

  it('stays closed below the threshold', () => {
    const b = breaker();
    expect(b.failure('w')).to.equal(false);
    expect(b.failure('w')).to.equal(false);
    expect(b.admit('w')).to.deep.equal({ allowed: true, trial: false });
    expect(b.state('w')).to.equal('closed');
  });

  it('opens when the threshold is reached within the window, and short-circuits with the time left', () => {
    const b = breaker();
    b.failure('w');
    b.failure('w');
    expect(b.failure('w')).to.equal(true);
    expect(b.state('w')).to.equal('open');
    now += 2_000;
    expect(b.admit('w')).to.deep.equal({ allowed: false, failures: 3, retryInMs: 3_000 });
  });

  it('forgets failures older than the window', () => {
    const b = breaker();
    b.failure('w');
    b.failure('w');
    now += 10_001;
    expect(b.failure('w')).to.equal(false);
    expect(b.state('w')).to.equal('closed');
  });

  it('a success in between resets the count', () => {
    const b = breaker();
    b.failure('w');
    b.failure('w');
    b.success('w');
    expect(b.failure('w')).to.equal(false);
  });

  it('after the cool-down lets exactly one trial through; its success closes the circuit', () => {
    const b = breaker();
    for (let i = 0; i < 3; i++) b.failure('w');
    now += 5_000;
    expect(b.state('w')).to.equal('half-open');
    expect(b.admit('w')).to.deep.equal({ allowed: true, trial: true });
    expect(b.admit('w').allowed).to.equal(false);
    b.success('w');
    expect(b.state('w')).to.equal('closed');
    expect(b.admit('w')).to.deep.equal({ allowed: true, trial: false });
  });

  it('a failed trial opens the circuit for another cool-down', () => {
    const b = breaker();
    for (let i = 0; i < 3; i++) b.failure('w');
    now += 5_000;
    expect(b.admit('w').allowed).to.equal(true);
    expect(b.failure('w')).to.equal(true);
    expect(b.state('w')).to.equal('open');
    now += 4_999;
    expect(b.admit('w').allowed).to.equal(false);
    now += 1;
    expect(b.admit('w')).to.deep.equal({ allowed: true, trial: true });
  });

  it('keeps webhooks apart', () => {
    const b = breaker();
    for (let i = 0; i < 3; i++) b.failure('a');
    expect(b.admit('b').allowed).to.equal(true);
    expect(b.openCircuits()).to.deep.equal([{ key: 'a', state: 'open' }]);
  });

  it('does nothing with a threshold of 0', () => {
    const b = new CircuitBreaker({ failureThreshold: 0, windowMs: 1, cooldownMs: 1 }, () => now);
    for (let i = 0; i < 10; i++) expect(b.failure('w')).to.equal(false);
    expect(b.admit('w').allowed).to.equal(true);
  });
});
