/**
 * metav1.Time and metav1.MicroTime as their UnmarshalJSON/MarshalJSON see them: Go's time.Parse
 * with the RFC3339 ("2006-01-02T15:04:05Z07:00") or RFC3339Micro ("2006-01-02T15:04:05.000000Z07:00")
 * layout, including the text of its *time.ParseError, and the UTC re-formatting on the way out.
 */

export type GoTimeLayout = 'RFC3339' | 'RFC3339Micro';

const LAYOUT_TEXT: Record<GoTimeLayout, string> = {
  RFC3339: '2006-01-02T15:04:05Z07:00',
  RFC3339Micro: '2006-01-02T15:04:05.000000Z07:00',
};

type Chunk = { literal: string } | { element: 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'micros' | 'zone'; text: string };

/** The layouts split as Go's nextStdChunk splits them. */
const LAYOUT_CHUNKS: Record<GoTimeLayout, readonly Chunk[]> = {
  RFC3339: [
    { element: 'year', text: '2006' }, { literal: '-' }, { element: 'month', text: '01' }, { literal: '-' }, { element: 'day', text: '02' },
    { literal: 'T' }, { element: 'hour', text: '15' }, { literal: ':' }, { element: 'minute', text: '04' }, { literal: ':' },
    { element: 'second', text: '05' }, { element: 'zone', text: 'Z07:00' },
  ],
  RFC3339Micro: [
    { element: 'year', text: '2006' }, { literal: '-' }, { element: 'month', text: '01' }, { literal: '-' }, { element: 'day', text: '02' },
    { literal: 'T' }, { element: 'hour', text: '15' }, { literal: ':' }, { element: 'minute', text: '04' }, { literal: ':' },
    { element: 'second', text: '05' }, { element: 'micros', text: '.000000' }, { element: 'zone', text: 'Z07:00' },
  ],
};

/** A parsed instant: milliseconds since the epoch plus the nanoseconds below the millisecond. */
export interface GoInstant { readonly epochMillis: number; readonly subMilliNanos: number }

export type GoTimeParse = { ok: true; instant: GoInstant } | { ok: false; message: string };

/** Go's time.quote: ASCII kept (quotes and backslashes escaped), every other byte as \xHH. */
function goTimeQuote(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (code >= 0x80 || code < 0x20) {
      for (const byte of Buffer.from(char, 'utf8')) out += `\\x${byte.toString(16).padStart(2, '0')}`;
    } else {
      if (char === '"' || char === '\\') out += '\\';
      out += char;
    }
  }
  return `${out}"`;
}

function isDigit(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  return code >= 48 && code <= 57;
}

/** Go's getnum: one or two digits (exactly two when fixed). */
function getnum(text: string, fixed: boolean): { value: number; rest: string } | undefined {
  if (!isDigit(text, 0)) return undefined;
  if (!isDigit(text, 1)) {
    if (fixed) return undefined;
    return { value: text.charCodeAt(0) - 48, rest: text.slice(1) };
  }
  return { value: (text.charCodeAt(0) - 48) * 10 + (text.charCodeAt(1) - 48), rest: text.slice(2) };
}

function daysIn(month: number, year: number): number {
  if (month === 2) return (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Digits after a '.' or ',' as nanoseconds (at most nine digits count), like Go's parseNanoseconds. */
function fractionNanos(digits: string): number {
  return Number((digits.slice(0, 9)).padEnd(9, '0'));
}

export function parseGoTime(value: string, layout: GoTimeLayout): GoTimeParse {
  const layoutText = LAYOUT_TEXT[layout];
  const chunks = LAYOUT_CHUNKS[layout];
  const fail = (layoutElem: string, valueElem: string, message = ''): GoTimeParse => ({
    ok: false,
    message: message !== ''
      ? `parsing time ${goTimeQuote(value)}${message}`
      : `parsing time ${goTimeQuote(value)} as ${goTimeQuote(layoutText)}: cannot parse ${goTimeQuote(valueElem)} as ${goTimeQuote(layoutElem)}`,
  });
  let rest = value;
  let year = 0; let month = 1; let day = 1; let hour = 0; let minute = 0; let second = 0; let nanos = 0; let offsetSeconds = 0;
  for (let index = 0; index < chunks.length; index++) {
    const chunk = chunks[index] as Chunk;
    if ('literal' in chunk) {
      if (rest.length === 0 || rest[0] !== chunk.literal) return fail(chunk.literal, rest);
      rest = rest.slice(1);
      continue;
    }
    const hold = rest;
    let rangeError = '';
    let bad = false;
    switch (chunk.element) {
      case 'year': {
        if (rest.length < 4 || !isDigit(rest, 0) || !/^[0-9]{4}$/.test(rest.slice(0, 4))) { bad = true; break; }
        year = Number(rest.slice(0, 4));
        rest = rest.slice(4);
        break;
      }
      case 'month': {
        const n = getnum(rest, true);
        if (n === undefined) { bad = true; break; }
        month = n.value; rest = n.rest;
        if (month <= 0 || month > 12) rangeError = 'month';
        break;
      }
      case 'day': {
        const n = getnum(rest, true);
        if (n === undefined) { bad = true; break; }
        day = n.value; rest = n.rest;
        break;
      }
      case 'hour': {
        const n = getnum(rest, false);
        if (n === undefined) { bad = true; break; }
        hour = n.value; rest = n.rest;
        if (hour >= 24) rangeError = 'hour';
        break;
      }
      case 'minute': {
        const n = getnum(rest, true);
        if (n === undefined) { bad = true; break; }
        minute = n.value; rest = n.rest;
        if (minute >= 60) rangeError = 'minute';
        break;
      }
      case 'second': {
        const n = getnum(rest, true);
        if (n === undefined) { bad = true; break; }
        second = n.value; rest = n.rest;
        if (second >= 60) { rangeError = 'second'; break; }
        // A fraction the layout does not mention is still read (Go's special case after seconds).
        const next = chunks[index + 1];
        const layoutHasFraction = next !== undefined && 'element' in next && next.element === 'micros';
        if (!layoutHasFraction && rest.length >= 2 && (rest[0] === '.' || rest[0] === ',') && isDigit(rest, 1)) {
          let end = 2;
          while (end < rest.length && isDigit(rest, end)) end++;
          nanos = fractionNanos(rest.slice(1, end));
          rest = rest.slice(end);
        }
        break;
      }
      case 'micros': {
        if (rest.length < 7 || (rest[0] !== '.' && rest[0] !== ',') || !/^[0-9]{6}$/.test(rest.slice(1, 7))) { bad = true; break; }
        nanos = fractionNanos(rest.slice(1, 7));
        rest = rest.slice(7);
        break;
      }
      case 'zone': {
        if (rest.length >= 1 && rest[0] === 'Z') { rest = rest.slice(1); offsetSeconds = 0; break; }
        if (rest.length < 6 || rest[3] !== ':') { bad = true; break; }
        const sign = rest[0];
        const hh = getnum(rest.slice(1, 3), true);
        const mm = getnum(rest.slice(4, 6), true);
        if (hh === undefined || mm === undefined || (sign !== '+' && sign !== '-')) { bad = true; break; }
        offsetSeconds = (hh.value * 60 + mm.value) * 60 * (sign === '-' ? -1 : 1);
        rest = rest.slice(6);
        break;
      }
    }
    if (rangeError !== '') return fail('', '', `: ${rangeError} out of range`);
    if (bad) return fail(chunk.text, hold);
  }
  if (rest.length !== 0) return fail('', '', `: extra text: ${goTimeQuote(rest)}`);
  if (day < 1 || day > daysIn(month, year)) return fail('', '', ': day out of range');
  const utc = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC maps years 0..99 to 1900..1999.
  const date = new Date(utc);
  if (year < 100) date.setUTCFullYear(year);
  const wholeMillis = Math.floor(nanos / 1e6);
  return { ok: true, instant: { epochMillis: date.getTime() - offsetSeconds * 1000 + wholeMillis, subMilliNanos: nanos % 1e6 } };
}

/** Go's zero time.Time (0001-01-01T00:00:00Z), which metav1.Time marshals as null. */
export const GO_ZERO_TIME_MILLIS = -62135596800000;

/** The instant formatted in UTC with the layout, as metav1.Time / MicroTime MarshalJSON writes it. */
export function formatGoTime(instant: GoInstant, layout: GoTimeLayout): string {
  const iso = new Date(instant.epochMillis).toISOString();
  // toISOString writes years beyond 0..9999 with a sign; Go's layouts keep four digits there.
  const match = /^([+-]?\d+)-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d\d\d)Z$/.exec(iso);
  if (match === null) return iso;
  const [, year = '', mon = '', day = '', hh = '', mm = '', ss = '', millis = ''] = match;
  const base = `${year.replace(/^\+0*/, '').padStart(4, '0')}-${mon}-${day}T${hh}:${mm}:${ss}`;
  if (layout === 'RFC3339') return `${base}Z`;
  const micros = `${millis}${String(Math.floor(instant.subMilliNanos / 1000)).padStart(3, '0')}`;
  return `${base}.${micros}Z`;
}
