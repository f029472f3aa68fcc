/**
 * A stage of the request pipeline (src/http/filters/README.md has the chain). A filter reads
 * and sets fields of the request context; it stops the request by throwing an ApiError, which
 * the chain writes as a Status. Synchronous filters return undefined and cost no await.
 */
import type { RequestContext } from '../../endpoints';

export interface Filter {
  readonly name: string;
  run(ctx: RequestContext): void | Promise<void>;
  /**
   * Whether this request gives the filter work worth a span of its own when it is traced (audit
   * without a backend, impersonation without Impersonate-* headers: no). Absent: always.
   */
  spanWorthy?(ctx: RequestContext): boolean;
  /**
   * Called once the handler has returned or thrown, for each filter whose `run` completed, last
   * filter first: what a filter holds for the length of the request (an in-flight seat) is given
   * back here. Never throws.
   */
  after?(ctx: RequestContext): void;
}
