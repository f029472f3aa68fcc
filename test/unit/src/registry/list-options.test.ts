import { expect } from 'chai';
import { ApiError } from '../../../../src/util';
import { decodeContinueToken, encodeContinueToken, planGet, planList } from '../../../../src/registry/list-options';

function plan(query: string) {
  return planList(new URLSearchParams(query));
}

function failure(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected an ApiError');
}

describe('list options: the resourceVersion tables of spec §4.4', () => {
  it('get: unset is a quorum read, "0" any, other not older than', () => {
    expect(planGet(null)).to.deep.equal({ kind: 'latest' });
    expect(planGet('0')).to.deep.equal({ kind: 'any' });
    expect(planGet('42')).to.deep.equal({ kind: 'notOlderThan', revision: 42 });
  });

  it('list without limit: most recent, any, not older than', () => {
    expect(plan('').mode).to.deep.equal({ kind: 'latest' });
    expect(plan('resourceVersion=0').mode).to.deep.equal({ kind: 'any' });
    expect(plan('resourceVersion=7').mode).to.deep.equal({ kind: 'notOlderThan', revision: 7 });
  });

  it('list with a limit and no continue: most recent, any, exact', () => {
    expect(plan('limit=5').mode).to.deep.equal({ kind: 'latest' });
    expect(plan('limit=5&resourceVersion=0').mode).to.deep.equal({ kind: 'any' });
    expect(plan('limit=5&resourceVersion=7')).to.deep.equal({ mode: { kind: 'exact', revision: 7 }, limit: 5 });
  });

  it('list with a continue token reads exactly at the token\'s version; rv 0 is ignored, another rv is a 400', () => {
    const token = encodeContinueToken(11, 'default/b\u0000');
    expect(plan(`limit=2&continue=${token}`)).to.deep.equal({ mode: { kind: 'exact', revision: 11 }, limit: 2, continueStart: 'default/b\u0000' });
    expect(plan(`limit=2&resourceVersion=0&continue=${token}`).mode).to.deep.equal({ kind: 'exact', revision: 11 });
    const err = failure(() => plan(`limit=2&resourceVersion=5&continue=${token}`));
    expect(err.code).to.equal(400);
    expect(err.message).to.equal('specifying resource version is not allowed when using continue');
  });

  it('resourceVersionMatch=Exact needs a non-zero version; NotOlderThan allows 0', () => {
    expect(plan('resourceVersionMatch=Exact&resourceVersion=9').mode).to.deep.equal({ kind: 'exact', revision: 9 });
    expect(plan('resourceVersionMatch=NotOlderThan&resourceVersion=9').mode).to.deep.equal({ kind: 'notOlderThan', revision: 9 });
    expect(plan('resourceVersionMatch=NotOlderThan&resourceVersion=0').mode).to.deep.equal({ kind: 'any' });
    expect(failure(() => plan('resourceVersionMatch=Exact&resourceVersion=0')).code).to.equal(422);
    const unset = failure(() => plan('resourceVersionMatch=Exact'));
    expect(unset.code).to.equal(422);
    expect(unset.message).to.contain('resourceVersionMatch is forbidden unless resourceVersion is provided');
    expect(failure(() => plan('resourceVersionMatch=Sometimes&resourceVersion=1')).message).to.contain('Unsupported value: "Sometimes"');
  });

  it('rejects a malformed resourceVersion and a damaged continue token with 400', () => {
    expect(failure(() => plan('resourceVersion=abc')).code).to.equal(400);
    expect(failure(() => plan('continue=%%%')).code).to.equal(400);
    const foreign = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 3, start: '../etc' })).toString('base64url');
    expect(failure(() => decodeContinueToken(foreign)).code).to.equal(400);
  });
});
