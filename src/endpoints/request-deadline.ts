/**
 * The `timeout` query parameter (apiserver WithRequestDeadline and
 * WithTimeoutForNonLongRunningRequests): it bounds a request that is not long-running, whose
 * answer is then a 504 if it has not started by the deadline. It does not shorten a watch
 * (which `timeoutSeconds` does: handlers/watch.ts) nor any other long-running request, so a
 * client that sends both, as kubectl does with --request-timeout, keeps its watch open past the
 * timeout and times out on its side. A value Go's time.ParseDuration refuses is a 400, for
 * every request that is not long-running, before authentication looks at it.
 *
 * As in v1.25, a timeout of zero or less, or one past the server's maximum (kube-apiserver's
 * --request-timeout, one minute by default), gets that maximum. Unlike v1.25, a request that
 * sends no timeout gets no deadline: Carina has no --request-timeout, and a one-minute cap on
 * every LIST would cut the unpaged lists of large collections it streams.
 */
import { errors, parseGoDurationOrError } from '../util';
import type { RequestInfo } from './request-info';

/** kube-apiserver's default --request-timeout. */
export const MAX_REQUEST_TIMEOUT_MS = 60_000;

const INVALID_TIMEOUT = 'invalid timeout specified in the request URL';

/** Verbs and subresources kube-apiserver holds open (BasicLongRunningRequestCheck in its default setup). */
const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

export function isLongRunning(info: RequestInfo): boolean {
  if (LONG_RUNNING_VERBS.has(info.verb)) return true;
  return info.isResourceRequest && LONG_RUNNING_SUBRESOURCES.has(info.subresource);
}

/**
 * How long the request may take, in milliseconds from its start, from its `timeout`
 * parameter; undefined when it sets none or is long-running. A timeout Go does not parse is a
 * 400 with v1.25's message.
 */
export function requestTimeoutMs(info: RequestInfo, query: URLSearchParams): number | undefined {
  if (isLongRunning(info)) return undefined;
  const value = query.get('timeout');
  if (value === null || value === '') return undefined;
  const parsed = parseGoDurationOrError(value);
  if (typeof parsed === 'string') throw errors.badRequest(`${INVALID_TIMEOUT} - ${parsed}`);
  const ms = Number(parsed) / 1e6;
  return ms > 0 && ms < MAX_REQUEST_TIMEOUT_MS ? ms : MAX_REQUEST_TIMEOUT_MS;
}
