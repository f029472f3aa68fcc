import { expect } from 'chai';
import { classifyAnswer } from '../../../../src/chaos/chaos-workload';

const status = (code: number, reason: string) => ({ kind: 'response' as const, status: code, body: { kind: 'Status', code, reason }, text: '' });
const create = { op: 'create' as const, name: 'a', value: 'v1' };

describe('chaos: what a client can know from an answer', () => {
  it('records 2xx with the object\'s value and resourceVersion', () => {
    const answer = { kind: 'response' as const, status: 201, body: { metadata: { resourceVersion: '12' }, data: { v: 'v1' } }, text: '' };
    expect(classifyAnswer(create, answer)).to.deep.equal({ outcome: 'ok', output: { status: 'ok', value: 'v1', resourceVersion: '12' }, detail: 'HTTP 201' });
  });

  it('takes 409 and 404 Status answers as definite', () => {
    expect(classifyAnswer(create, status(409, 'AlreadyExists'))).to.include({ outcome: 'failed' });
    expect(classifyAnswer({ op: 'delete', name: 'a' }, status(404, 'NotFound'))).to.deep.include({ outcome: 'failed', output: { status: 'not-found' } });
  });

  it('takes timeouts, resets, 429, 5xx and answers that are not a Status as indefinite', () => {
    expect(classifyAnswer(create, { kind: 'no-answer', error: 'ECONNRESET' })).to.deep.equal({ outcome: 'indefinite', detail: 'ECONNRESET' });
    expect(classifyAnswer(create, status(500, 'InternalError')).outcome).to.equal('indefinite');
    expect(classifyAnswer(create, status(504, 'Timeout')).outcome).to.equal('indefinite');
    expect(classifyAnswer(create, status(429, 'TooManyRequests')).outcome).to.equal('indefinite');
    expect(classifyAnswer(create, { kind: 'response', status: 409, body: undefined, text: '<html>' }).outcome).to.equal('indefinite');
  });

  it('sets aside 422 answers, which the model does not describe', () => {
    expect(classifyAnswer(create, status(422, 'Invalid')).outcome).to.equal('unexpected');
  });
});
