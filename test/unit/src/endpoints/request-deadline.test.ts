import { expect } from 'chai';
import { parseRequestInfo } from '../../../../src/endpoints';
import { isLongRunning, requestTimeoutMs } from '../../../../src/endpoints/request-deadline';
import { ApiError } from '../../../../src/util';

function info(method: string, path: string, query = '') {
  return parseRequestInfo(method, path, new URLSearchParams(query));
}

describe('endpoints: the timeout parameter (WithRequestDeadline)', () => {
  it('bounds requests that are not long-running: at most a minute, and a minute for zero, less or more', () => {
    expect(requestTimeoutMs(info('GET', '/api/v1/namespaces/default/pods'), new URLSearchParams('timeout=1s'))).to.equal(1000);
    expect(requestTimeoutMs(info('POST', '/api/v1/namespaces/default/pods'), new URLSearchParams('timeout=250ms'))).to.equal(250);
    expect(requestTimeoutMs(info('GET', '/version'), new URLSearchParams('timeout=2s'))).to.equal(2000);
    for (const value of ['0s', '-1s', '2m', '1h']) expect(requestTimeoutMs(info('GET', '/api/v1/pods'), new URLSearchParams(`timeout=${value}`)), value).to.equal(60_000);
    expect(requestTimeoutMs(info('GET', '/api/v1/pods'), new URLSearchParams(''))).to.equal(undefined);
    expect(requestTimeoutMs(info('GET', '/api/v1/pods'), new URLSearchParams('timeout='))).to.equal(undefined);
  });

  it('leaves watches and the other long-running requests alone', () => {
    const watch = info('GET', '/api/v1/namespaces/default/pods', 'watch=true&timeout=1s');
    expect(isLongRunning(watch)).to.equal(true);
    expect(requestTimeoutMs(watch, new URLSearchParams('watch=true&timeout=1s'))).to.equal(undefined);
    for (const subresource of ['exec', 'attach', 'log', 'portforward', 'proxy']) expect(isLongRunning(info('GET', `/api/v1/namespaces/default/pods/p/${subresource}`)), subresource).to.equal(true);
    expect(isLongRunning(info('GET', '/api/v1/namespaces/default/pods/p/status'))).to.equal(false);
  });

  it('refuses a timeout Go does not parse with a 400 carrying v1.25\'s message', () => {
    let caught: unknown;
    try {
      requestTimeoutMs(info('GET', '/api/v1/pods'), new URLSearchParams('timeout=abc'));
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(ApiError);
    expect((caught as ApiError).code).to.equal(400);
    expect((caught as ApiError).message).to.equal('invalid timeout specified in the request URL - time: invalid duration "abc"');
  });
});
