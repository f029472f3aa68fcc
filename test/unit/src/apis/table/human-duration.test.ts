import { expect } from 'chai';
import { humanDuration, shortHumanDuration } from '../../../../../src/apis/table';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

// Expected strings follow k8s.io/apimachinery pkg/util/duration/duration.go (v1.25).
describe('humanDuration', () => {
  const cases: Array<[number, string]> = [
    [-2 * S, '<invalid>'],
    [-1500, '0s'],
    [-999, '0s'],
    [0, '0s'],
    [59 * S, '59s'],
    [119 * S, '119s'],
    [2 * M, '2m'],
    [5 * M + 30 * S, '5m30s'],
    [9 * M + 59 * S, '9m59s'],
    [10 * M + 30 * S, '10m'],
    [179 * M, '179m'],
    [3 * H, '3h'],
    [3 * H + 25 * M, '3h25m'],
    [7 * H + 59 * M, '7h59m'],
    [8 * H + 30 * M, '8h'],
    [47 * H, '47h'],
    [2 * D, '2d'],
    [2 * D + 5 * H, '2d5h'],
    [7 * D + 23 * H, '7d23h'],
    [8 * D + 5 * H, '8d'],
    [729 * D, '729d'],
    [730 * D, '2y'],
    [3 * 365 * D + 120 * D, '3y120d'],
    [9 * 365 * D + 20 * D, '9y'],
  ];
  for (const [milliseconds, expected] of cases) {
    it(`prints ${milliseconds}ms as ${expected}`, () => {
      expect(humanDuration(milliseconds)).to.equal(expected);
    });
  }
});

describe('shortHumanDuration', () => {
  const cases: Array<[number, string]> = [
    [-2 * S, '<invalid>'],
    [-1 * S, '0s'],
    [59 * S, '59s'],
    [60 * S, '1m'],
    [59 * M + 59 * S, '59m'],
    [23 * H + 59 * M, '23h'],
    [364 * D, '364d'],
    [366 * D, '1y'],
  ];
  for (const [milliseconds, expected] of cases) {
    it(`prints ${milliseconds}ms as ${expected}`, () => {
      expect(shortHumanDuration(milliseconds)).to.equal(expected);
    });
  }
});
