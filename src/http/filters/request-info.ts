/**
 * Request info (apiserver WithRequestInfo): the path is checked and parsed here, once; every
 * later stage reads `ctx.info`. Dot segments, backslashes, encoded slashes and escapes that do
 * not decode are refused with a 400 before anything routes on the path. The request's deadline
 * from its `timeout` parameter (WithRequestDeadline, the next stage in v1.25 that can stop a
 * request) is set here too: 400 for a timeout Go does not parse, before authentication.
 */
import { parseRequestInfo, requestTimeoutMs, type RequestContext } from '../../endpoints';
import type { Filter } from './filter';

export const requestInfoFilter: Filter = {
  name: 'request-info',
  run(ctx: RequestContext): void {
    ctx.info = parseRequestInfo(ctx.method, ctx.rawPath, ctx.query);
    const timeoutMs = requestTimeoutMs(ctx.info, ctx.query);
    if (timeoutMs !== undefined) ctx.response.deadlineIn(timeoutMs - Number(process.hrtime.bigint() - ctx.startedAt) / 1e6);
  },
};
