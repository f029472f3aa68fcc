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
import { errors } from '../util';
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
  const parsed = parseGoDurationNanos(value);
  if (typeof parsed === 'string') throw errors.badRequest(`${INVALID_TIMEOUT} - ${parsed}`);
  const ms = Number(parsed) / 1e6;
  return ms > 0 && ms < MAX_REQUEST_TIMEOUT_MS ? ms : MAX_REQUEST_TIMEOUT_MS;
}

const UNIT_NANOS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n], ['us', 1_000n], ['\u00b5s', 1_000n], ['\u03bcs', 1_000n], ['ms', 1_000_000n],
  ['s', 1_000_000_000n], ['m', 60_000_000_000n], ['h', 3_600_000_000_000n],
]);
const INT64_MAX = (1n << 63n) - 1n;

/** Go's quote() of a value in time's errors (printable text as it is, in double quotes). */
function quote(text: string): string {
  return JSON.stringify(text);
}

/**
 * time.ParseDuration: the nanoseconds of `text`, or Go's error text (`time: invalid duration
 * "x"`, `time: missing unit in duration "1"`, `time: unknown unit "p" in duration "1p"`).
 */
export function parseGoDurationNanos(text: string): bigint | string {
  const invalid = `time: invalid duration ${quote(text)}`;
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') return invalid;
  let total = 0n;
  while (rest !== '') {
    const number = /^(\d*)(?:\.(\d*))?/.exec(rest) as RegExpExecArray;
    const whole = number[1] as string;
    const fraction = number[2];
    if (whole === '' && (fraction === undefined || fraction === '')) return invalid;
    rest = rest.slice(number[0].length);
    const unit = /^[^\d.]*/.exec(rest)?.[0] ?? '';
    if (unit === '') return `time: missing unit in duration ${quote(text)}`;
    const scale = UNIT_NANOS.get(unit);
    if (scale === undefined) return `time: unknown unit ${quote(unit)} in duration ${quote(text)}`;
    rest = rest.slice(unit.length);
    let nanos = BigInt(whole === '' ? '0' : whole) * scale;
    if (fraction !== undefined && fraction !== '') {
      // Go keeps the fraction's value as a float scaled to the unit, truncated to nanoseconds.
      nanos += BigInt(Math.trunc(Number(`0.${fraction}`) * Number(scale)));
    }
    total += nanos;
    if (total > INT64_MAX + (negative ? 1n : 0n)) return invalid;
  }
  return negative ? -total : total;
}
