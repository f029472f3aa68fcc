/**
 * Request info (apiserver WithRequestInfo): the path is checked and parsed here, once; every
 * later stage reads `ctx.info`. Dot segments, backslashes, encoded slashes and escapes that do
 * not decode are refused with a 400 before anything routes on the path.
 */
import { parseRequestInfo, type RequestContext } from '../../endpoints';
import type { Filter } from './filter';

export const requestInfoFilter: Filter = {
  name: 'request-info',
  run(ctx: RequestContext): void {
    ctx.info = parseRequestInfo(ctx.method, ctx.rawPath, ctx.query);
  },
};
