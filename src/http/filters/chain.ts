/**
 * The request pipeline, in one fixed order (README.md beside this file): tracing wraps panic
 * recovery, which wraps request info → authentication → audit → impersonation → authorization,
 * then the handler (the server's RequestRouter, src/http/request-router.ts). Each filter runs to
 * completion and returns before the next starts, so a request's stack from the socket to the
 * store holds the listener, this chain, the router, the endpoints, the resource's storage, the
 * registry and the object store, whatever the number of filters. The request's span is started
 * and finished here (tracing.ts), not around the chain, so tracing adds no frame either.
 *
 * A filter that holds something for the request's length (an in-flight seat) gives it back in its
 * `after`, called once the handler returned or threw, last filter first.
 *
 * With tracing on and the request sampled, each filter after request info that has work to do
 * for the request (Filter.spanWorthy) is a stage of the request: an event on its span, named
 * after the filter, with its duration (src/observability/spans.ts); otherwise the loop is the
 * same as without tracing.
 */
import type { RequestContext } from '../../endpoints';
import type { LogLine } from '../../observability/logger';
import { inStageMaybeAsync } from '../../observability/spans';
import type { RequestRouter } from '../request-router';
import type { Filter } from './filter';
import { recoverFromFailure } from './panic-recovery';
import { startRequestSpan } from './tracing';

/** Where a request goes after the filters: the server's RequestRouter (a test's own handler in the chain's tests). */
export type Handler = Pick<RequestRouter, 'serve'>;

/** Filters too small to be worth a stage of their own. */
const UNTRACED_FILTERS = new Set(['request-info']);

export class FilterChain {
  /** Whether some filter holds something for the request's length (Filter.after). */
  private readonly anyAfter: boolean;

  constructor(
    readonly filters: readonly Filter[],
    private readonly handler: Handler,
    private readonly log?: LogLine,
  ) {
    this.anyAfter = filters.some((filter) => filter.after !== undefined);
  }

  /**
   * Runs the filters and the handler inside the request's server span (when tracing samples
   * it); never rejects: every failure is written as a Status.
   */
  async serve(ctx: RequestContext): Promise<void> {
    const span = startRequestSpan(ctx);
    let completed = 0;
    try {
      for (const filter of this.filters) {
        if (ctx.trace !== undefined && !UNTRACED_FILTERS.has(filter.name) && filter.spanWorthy?.(ctx) !== false) {
          const staged = inStageMaybeAsync(filter.name, ctx.trace, () => filter.run(ctx));
          if (staged !== undefined) await staged;
          completed++;
          continue;
        }
        const pending = filter.run(ctx);
        if (pending !== undefined) await pending;
        completed++;
      }
      await this.handler.serve(ctx);
    } catch (err) {
      recoverFromFailure(ctx, err, this.log);
    } finally {
      if (this.anyAfter) for (let i = completed - 1; i >= 0; i--) this.filters[i].after?.(ctx);
      span?.finish();
    }
  }
}
