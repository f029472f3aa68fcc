/**
 * CronJob schedules as kube-apiserver v1.25 parses them: github.com/robfig/cron/v3 ParseStandard
 * (five fields, or an @-descriptor, optionally led by TZ=/CRON_TZ=). Returns the parser's error
 * text, which becomes the detail of the spec.schedule error, or undefined when the schedule parses.
 */
interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const minutes: Bounds = { min: 0, max: 59 };
const hours: Bounds = { min: 0, max: 23 };
const daysOfMonth: Bounds = { min: 1, max: 31 };
const months: Bounds = {
  min: 1,
  max: 12,
  names: { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 },
};
const daysOfWeek: Bounds = { min: 0, max: 6, names: { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 } };

const descriptors = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

class CronError extends Error {}

/** strconv.Atoi, with its error text. */
function atoi(text: string): number {
  if (!/^[+-]?[0-9]+$/.test(text)) throw new CronError(`strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`);
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new CronError(`strconv.Atoi: parsing ${JSON.stringify(text)}: value out of range`);
  return value;
}

function mustParseInt(expr: string): number {
  let value: number;
  try {
    value = atoi(expr);
  } catch (e) {
    throw new CronError(`failed to parse int from ${expr}: ${(e as Error).message}`);
  }
  if (value < 0) throw new CronError(`negative number (${value}) not allowed: ${expr}`);
  return value;
}

function parseIntOrName(expr: string, names: Record<string, number> | undefined): number {
  const named = names?.[expr.toLowerCase()];
  return named !== undefined ? named : mustParseInt(expr);
}

function checkRange(expr: string, bounds: Bounds): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = (rangeAndStep[0] ?? '').split('-');
  let start: number;
  let end: number;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = bounds.min;
    end = bounds.max;
  } else {
    start = parseIntOrName(lowAndHigh[0] ?? '', bounds.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1] ?? '', bounds.names);
    else throw new CronError(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = mustParseInt(rangeAndStep[1] ?? '');
    // "N/step" means "N-max/step".
    if (lowAndHigh.length === 1) end = bounds.max;
  } else if (rangeAndStep.length > 2) {
    throw new CronError(`too many slashes: ${expr}`);
  }
  if (start < bounds.min) throw new CronError(`beginning of range (${start}) below minimum (${bounds.min}): ${expr}`);
  if (end > bounds.max) throw new CronError(`end of range (${end}) above maximum (${bounds.max}): ${expr}`);
  if (start > end) throw new CronError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new CronError(`step of range should be a positive number: ${expr}`);
}

function checkField(field: string, bounds: Bounds): void {
  for (const expr of field.split(',').filter((part) => part !== '')) checkRange(expr, bounds);
}

/** time.ParseDuration's acceptance, with its error texts. */
function durationError(text: string): string | undefined {
  const quoted = JSON.stringify(text);
  if (text === '0') return undefined;
  let rest = text.replace(/^[-+]/, '');
  if (rest === '') return `time: invalid duration ${quoted}`;
  while (rest !== '') {
    const number = /^([0-9]*(\.[0-9]*)?)/.exec(rest)?.[1] ?? '';
    if (number === '' || number === '.') return `time: invalid duration ${quoted}`;
    rest = rest.slice(number.length);
    const unit = /^[^0-9.]*/.exec(rest)?.[0] ?? '';
    if (unit === '') return `time: missing unit in duration ${quoted}`;
    if (!['ns', 'us', 'µs', 'μs', 'ms', 's', 'm', 'h'].includes(unit)) return `time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`;
    rest = rest.slice(unit.length);
  }
  return undefined;
}

function isKnownTimeZone(name: string): boolean {
  if (name === 'UTC' || name === 'Local') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export function cronScheduleError(schedule: string): string | undefined {
  try {
    parse(schedule);
    return undefined;
  } catch (e) {
    if (e instanceof CronError) return e.message;
    throw e;
  }
}

function parse(input: string): void {
  let spec = input;
  if (spec.length === 0) throw new CronError('empty spec string');
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    const zone = spec.slice(spec.indexOf('=') + 1, space < 0 ? undefined : space);
    if (!isKnownTimeZone(zone)) throw new CronError(`provided bad location ${zone}: unknown time zone ${zone}`);
    spec = space < 0 ? '' : spec.slice(space).trim();
  }
  if (spec.startsWith('@')) {
    if (descriptors.has(spec)) return;
    if (spec.startsWith('@every ')) {
      const problem = durationError(spec.slice('@every '.length));
      if (problem !== undefined) throw new CronError(`failed to parse duration ${spec}: ${problem}`);
      return;
    }
    throw new CronError(`unrecognized descriptor: ${spec}`);
  }
  const fields = spec.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5) throw new CronError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  const [minute, hour, dayOfMonth, month, dayOfWeek] = fields as [string, string, string, string, string];
  checkField(minute, minutes);
  checkField(hour, hours);
  checkField(dayOfMonth, daysOfMonth);
  checkField(month, months);
  checkField(dayOfWeek, daysOfWeek);
}
