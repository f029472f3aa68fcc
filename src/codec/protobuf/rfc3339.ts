/**
 * The JSON text of metav1.Time (RFC 3339, whole seconds, UTC) and metav1.MicroTime (RFC 3339 with
 * six fractional digits, UTC), converted from and to the seconds and nanoseconds of their Protobuf
 * form. Facts: k8s.io/apimachinery pkg/apis/meta/v1 time.go, micro_time.go, time_proto.go.
 */

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

export interface UnixInstant {
  seconds: number;
  nanos: number;
}

/** Seconds since the epoch and nanoseconds of an RFC 3339 text, or undefined when it is not one. */
export function parseRfc3339(text: string): UnixInstant | undefined {
  const match = rfc3339.exec(text);
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second, fraction, , offsetSign, offsetHours, offsetMinutes] = match;
  const ms = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second));
  if (Number.isNaN(ms)) return undefined;
  let seconds = Math.floor(ms / 1000);
  if (Number(year) < 100) {
    // Date.UTC maps years 0..99 to 1900..1999; undo that.
    const date = new Date(ms);
    date.setUTCFullYear(Number(year));
    seconds = Math.floor(date.getTime() / 1000);
  }
  if (offsetSign !== undefined) {
    const offset = (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60;
    seconds += offsetSign === '+' ? -offset : offset;
  }
  const nanos = fraction === undefined ? 0 : Number(fraction.padEnd(9, '0'));
  return { seconds, nanos };
}

/** metav1.Time in JSON: "2008-01-01T01:01:01Z". */
export function formatTime(seconds: number): string {
  return isoDate(seconds) + 'Z';
}

/** metav1.MicroTime in JSON: "2008-01-01T01:01:01.000002Z" (nanoseconds truncated to micros). */
export function formatMicroTime(seconds: number, nanos: number): string {
  const micros = Math.floor(nanos / 1000).toString().padStart(6, '0');
  return `${isoDate(seconds)}.${micros}Z`;
}

function isoDate(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19);
}
