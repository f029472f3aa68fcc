import { expect } from 'chai';
import { formatGoDuration, parseGoDuration, parseGoDurationOrError } from '../../../../src/util';

// Expected texts are those of Go's time.Duration.String and time.ParseDuration (Go src/time/time.go),
// which metav1.Duration uses for JSON (k8s.io/apimachinery pkg/apis/meta/v1/duration.go).
const second = 1_000_000_000n;

describe('Go duration text', () => {
  const formatted: [bigint, string][] = [
    [0n, '0s'],
    [1n, '1ns'],
    [1_100n, '1.1\u00b5s'],
    [2_200_000n, '2.2ms'],
    [1_000_000n, '1ms'],
    [second, '1s'],
    [1_500_000_000n, '1.5s'],
    [5n * 60n * second, '5m0s'],
    [3_723n * second, '1h2m3s'],
    [2n * 3600n * second, '2h0m0s'],
    [-60n * second, '-1m0s'],
    [9_223_372_036_854_775_807n, '2562047h47m16.854775807s'],
  ];
  for (const [nanos, text] of formatted) {
    it(`formats ${nanos}ns as "${text}" and parses it back`, () => {
      expect(formatGoDuration(nanos)).to.equal(text);
      expect(parseGoDuration(text)).to.equal(nanos);
    });
  }

  const parsed: [string, bigint][] = [
    ['0', 0n],
    ['90m', 5_400n * second],
    ['1.5h', 5_400n * second],
    ['1h30m', 5_400n * second],
    ['300ms', 300_000_000n],
    ['1us', 1_000n],
    ['1\u03bcs', 1_000n],
    ['+2s', 2n * second],
    ['.5s', 500_000_000n],
  ];
  for (const [text, nanos] of parsed) {
    it(`parses "${text}" as ${nanos}ns`, () => {
      expect(parseGoDuration(text)).to.equal(nanos);
    });
  }

  for (const text of ['', '1', 'h', '1x', '.s', '1h-5m', '9223372036854775808ns']) {
    it(`rejects "${text}"`, () => {
      expect(parseGoDuration(text)).to.equal(undefined);
    });
  }

  it('parses durations as Go\'s time.ParseDuration does, with its error texts', () => {
    expect(parseGoDurationOrError('1s')).to.equal(1_000_000_000n);
    expect(parseGoDurationOrError('1m30.5s')).to.equal(90_500_000_000n);
    expect(parseGoDurationOrError('250ms')).to.equal(250_000_000n);
    expect(parseGoDurationOrError('.5h')).to.equal(1_800_000_000_000n);
    expect(parseGoDurationOrError('-2us')).to.equal(-2_000n);
    expect(parseGoDurationOrError('0')).to.equal(0n);
    expect(parseGoDurationOrError('1')).to.equal('time: missing unit in duration "1"');
    expect(parseGoDurationOrError('1p')).to.equal('time: unknown unit "p" in duration "1p"');
    expect(parseGoDurationOrError('abc')).to.equal('time: invalid duration "abc"');
    expect(parseGoDurationOrError('.s')).to.equal('time: invalid duration ".s"');
    expect(parseGoDurationOrError('-')).to.equal('time: invalid duration "-"');
  });

});
