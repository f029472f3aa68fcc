/**
 * WATCH (spec 01 §2.5, §6): a stream of events from the watch cache, in the negotiated
 * representation or as one-row Tables, until timeoutSeconds (default: a random time between
 * --min-request-timeout and twice it) or the client leaves. The deprecated path of one object
 * (`/watch/namespaces/NS/RESOURCE/NAME`) watches that name, as a field selector on metadata.name
 * would.
 */
import { parseFieldSelector } from '../../apis/selectors';
import { errors } from '../../util';
import { int64Query, type RequestScope } from '../request-scope';
import { WatchStream } from '../watch-stream';
import { tableRequest } from './table-response';
import type { JsonObject } from '../../apis/object';

export async function watch(scope: RequestScope, activeWatches: Set<WatchStream>): Promise<void> {
  const table = tableRequest(scope);
  const choice = scope.ctx.response.negotiate(scope.offer(true));
  const { strategy } = scope;
  const asTable = table !== undefined
    ? (object: JsonObject, noHeaders: boolean) => {
      const rendered = strategy.toTable([object], { resourceVersion: (object.metadata as JsonObject | undefined)?.resourceVersion }, table);
      // After the first event a watching client has the columns already (kube sends them once).
      if (noHeaders) rendered.columnDefinitions = null;
      return rendered;
    }
    : undefined;
  const filter = scope.selectorFilter();
  if (scope.name !== '') refuseOtherNameInFieldSelector(scope);
  const requested = int64Query(scope.query, 'timeoutSeconds');
  const timeoutSeconds = requested !== undefined ? Math.max(0, requested) : scope.config.minWatchTimeoutSeconds * (1 + Math.random());
  const stream = new WatchStream({
    storage: scope.storage,
    codec: scope.config.codec,
    namespace: scope.namespace,
    name: scope.name,
    filter,
    representation: table !== undefined ? 'json' : choice.representation,
    resourceVersion: scope.query.get('resourceVersion') ?? '',
    allowBookmarks: scope.query.get('allowWatchBookmarks') === 'true',
    sendInitialEvents: scope.query.get('sendInitialEvents') === 'true',
    resourceVersionMatch: scope.query.get('resourceVersionMatch') ?? '',
    timeoutMs: timeoutSeconds * 1000,
    asTable,
    // A metadata watch gets PartialObjectMetadata events, whichever of the two metadata kinds it named.
    partialApiVersion: choice.partial?.apiVersion,
  });
  activeWatches.add(stream);
  try {
    await stream.run(scope.ctx.response.stream());
  } finally {
    activeWatches.delete(stream);
  }
}

/** A field selector beside a named watch path may only pin the same name (v1.25's list handler). */
function refuseOtherNameInFieldSelector(scope: RequestScope): void {
  const fieldSelector = parseFieldSelector(scope.query.get('fieldSelector') ?? '');
  if (!fieldSelector.isEmpty() && fieldSelector.requiresExactMatch('metadata.name') !== scope.name) {
    throw errors.badRequest("fieldSelector metadata.name doesn't match requested name");
  }
}
