/**
 * Go's strconv.ParseInt(s, 10, 64) as kube-apiserver's query-parameter decoding uses it for the
 * int64 options (limit, timeoutSeconds, gracePeriodSeconds): an optional sign and decimal digits,
 * nothing else ("1e3", "1.5" and "" are invalid syntax), within int64. A failure's text is Go's,
 * because kube-apiserver answers it verbatim in a 400.
 */

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

export type ParsedInt64 = { ok: true; value: bigint } | { ok: false; message: string };

export function parseInt64(text: string): ParsedInt64 {
  if (!/^[+-]?[0-9]+$/.test(text)) return { ok: false, message: `strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax` };
  const value = BigInt(text);
  if (value > INT64_MAX || value < INT64_MIN) return { ok: false, message: `strconv.ParseInt: parsing ${JSON.stringify(text)}: value out of range` };
  return { ok: true, value };
}

/** An int64 as a JavaScript number: exact within ±2^53, saturated beyond (a limit that large means "all"). */
export function int64ToNumber(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) return Number.MAX_SAFE_INTEGER;
  if (value < BigInt(Number.MIN_SAFE_INTEGER)) return Number.MIN_SAFE_INTEGER;
  return Number(value);
}
