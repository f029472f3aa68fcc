/**
 * The filter chain's `after` hook: what a filter holds for a request's length (an in-flight seat)
 * is given back once the handler returned or threw, last filter first, and only by the filters
 * whose `run` completed.
 */
import { expect } from 'chai';
import type { RequestContext } from '../../../../../src/endpoints';
import { FilterChain } from '../../../../../src/http/filters/chain';
import type { Filter } from '../../../../../src/http/filters/filter';
import { errors } from '../../../../../src/util';

function fakeContext(): RequestContext {
  return { method: 'GET', rawPath: '/api', headers: {}, response: { status: 0, writeStatus: () => undefined }, info: { isResourceRequest: false, path: '/api', verb: 'get' } } as unknown as RequestContext;
}

function holding(name: string, order: string[], fail = false): Filter {
  return {
    name,
    run: () => {
      if (fail) throw errors.tooManyRequests('full', 1);
      order.push(`run ${name}`);
    },
    after: () => order.push(`after ${name}`),
  };
}

describe('filter chain: after', () => {
  it('calls after for every completed filter, last first, once the handler returned', async () => {
    const order: string[] = [];
    await new FilterChain([holding('a', order), holding('b', order)], { serve: async () => { order.push('handler'); } }).serve(fakeContext());
    expect(order).to.deep.equal(['run a', 'run b', 'handler', 'after b', 'after a']);
  });

  it('calls it when the handler throws, and not for a filter that stopped the request', async () => {
    const order: string[] = [];
    await new FilterChain([holding('a', order), holding('b', order)], { serve: async () => { throw errors.badRequest('no'); } }).serve(fakeContext());
    expect(order).to.deep.equal(['run a', 'run b', 'after b', 'after a']);
    const stopped: string[] = [];
    await new FilterChain([holding('a', stopped), holding('b', stopped, true)], { serve: async () => { stopped.push('handler'); } }).serve(fakeContext());
    expect(stopped).to.deep.equal(['run a', 'after a']);
  });
});
