/**
 * The request pipeline, in one fixed order (README.md beside this file): panic recovery wraps
 * request info → authentication → audit → impersonation → authorization, then the handler.
 * Each filter runs to completion and returns before the next starts, so a request's stack from
 * the socket to the store holds the listener, this chain, the handler, the registry and the
 * object store, whatever the number of filters.
 */
import type { RequestContext } from '../../endpoints';
import type { Filter } from './filter';
import { recoverFromFailure } from './panic-recovery';

export type Handler = (ctx: RequestContext) => Promise<void>;

export class FilterChain {
  constructor(
    readonly filters: readonly Filter[],
    private readonly handler: Handler,
    private readonly log?: (line: string) => void,
  ) {}

  /** Runs the filters and the handler; never rejects: every failure is written as a Status. */
  async serve(ctx: RequestContext): Promise<void> {
    try {
      for (const filter of this.filters) {
        const pending = filter.run(ctx);
        if (pending !== undefined) await pending;
      }
      await this.handler(ctx);
    } catch (err) {
      recoverFromFailure(ctx, err, this.log);
    }
  }
}
