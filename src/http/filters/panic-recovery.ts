/**
 * The outermost stage (apiserver WithPanicRecovery): whatever a later stage throws becomes a
 * Status. Typed API errors are the request's answer; anything else is a bug, logged with its
 * stack and answered 500, so a failure never leaves a client without a response.
 */
import { ApiError, errors } from '../../util';
import type { RequestContext } from '../../endpoints';
import type { LogLine } from '../../observability/logger';
import { notePanic } from './audit';

export function recoverFromFailure(ctx: RequestContext, err: unknown, log: LogLine | undefined): void {
  const apiError = err instanceof ApiError ? err : errors.internal(err);
  if (!(err instanceof ApiError)) {
    notePanic(ctx, err);
    log?.(`internal error on ${ctx.method} ${ctx.info?.path ?? '(unparsed path)'}: ${(err as Error)?.stack ?? String(err)}`, ctx.trace);
  }
  ctx.response.writeStatus(apiError);
}
