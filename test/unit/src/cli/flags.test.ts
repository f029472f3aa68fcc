import { expect } from 'chai';
import { FlagError, parseDurationMs, parseFlags, type FlagSpec } from '../../../../src/cli/flags';
import { parseInitialCluster } from '../../../../src/server/store-server';

const specs: FlagSpec[] = [
  { name: 'data-dir', kind: 'string', default: './data', help: '' },
  { name: 'member-id', kind: 'number', default: 1, help: '' },
  { name: 'verbose', kind: 'boolean', default: false, help: '' },
  { name: 'interval', kind: 'duration', default: 1000, help: '' },
];

describe('carina flags', () => {
  it('reads --name=value and --name value, booleans bare or explicit, and keeps defaults', () => {
    expect(parseFlags(['--data-dir=/x', '--member-id', '3', '--verbose', '--interval=1m30s'], specs)).to.deep.equal({ 'data-dir': '/x', 'member-id': 3, verbose: true, interval: 90_000 });
    expect(parseFlags(['--verbose=false'], specs)).to.deep.equal({ 'data-dir': './data', 'member-id': 1, verbose: false, interval: 1000 });
  });

  it('refuses unknown flags, missing values, bad numbers and bad durations', () => {
    expect(() => parseFlags(['--nope'], specs)).to.throw(FlagError, /unknown flag: --nope/);
    expect(() => parseFlags(['--member-id'], specs)).to.throw(FlagError, /needs an argument/);
    expect(() => parseFlags(['--member-id=x'], specs)).to.throw(FlagError, /not a number/);
    expect(() => parseDurationMs('5 minutes')).to.throw(FlagError, /not a duration/);
    expect(parseDurationMs('300ms')).to.equal(300);
    expect(parseDurationMs('0')).to.equal(0);
  });

  it('parses --initial-cluster and refuses malformed or repeated members', () => {
    expect(parseInitialCluster('1@127.0.0.1:2380@127.0.0.1:2379,2@h:1@h:2')).to.deep.equal([
      { id: 1, name: 'member-1', raftAddress: '127.0.0.1:2380', clientUrls: ['https://127.0.0.1:2379'] },
      { id: 2, name: 'member-2', raftAddress: 'h:1', clientUrls: ['https://h:2'] },
    ]);
    expect(() => parseInitialCluster('1@a:1')).to.throw(/expected id@raftHost:port@etcdHost:port/);
    expect(() => parseInitialCluster('1@a:1@b:2,1@c:3@d:4')).to.throw(/appears twice/);
  });
});
