/**
 * A small command-line flag parser in kube-apiserver's style: `--name=value` or `--name value`,
 * booleans as `--name` or `--name=false`. Unknown flags are errors, so a typo never silently
 * starts a server with a default. Lists come in pflag's two kinds: `list` (StringSlice: values
 * split at commas, and repeating the flag adds more) and `array` (StringArray: each occurrence is
 * one value, commas included). Given on the command line, a list replaces its default.
 */
import { parseGoDuration } from '../util';

export interface FlagSpec {
  name: string;
  kind: 'string' | 'number' | 'boolean' | 'duration' | 'list' | 'array';
  default: string | number | boolean | string[];
  help: string;
}

export type FlagValues = Record<string, string | number | boolean | string[]>;

export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

export function parseFlags(args: string[], specs: FlagSpec[]): FlagValues {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const values: FlagValues = {};
  for (const spec of specs) values[spec.name] = Array.isArray(spec.default) ? [...spec.default] : spec.default;
  const given = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) throw new FlagError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const spec = byName.get(name);
    if (!spec) throw new FlagError(`unknown flag: --${name}`);
    let raw: string;
    if (eq >= 0) raw = arg.slice(eq + 1);
    else if (spec.kind === 'boolean') raw = 'true';
    else if (i + 1 < args.length) raw = args[++i];
    else throw new FlagError(`flag needs an argument: --${name}`);
    if (spec.kind === 'list' || spec.kind === 'array') {
      const added = spec.kind === 'list' ? raw.split(',').map((v) => v.trim()).filter((v) => v !== '') : [raw];
      values[name] = given.has(name) ? [...(values[name] as string[]), ...added] : added;
    } else {
      values[name] = convert(spec, raw);
    }
    given.add(name);
  }
  return values;
}

function convert(spec: FlagSpec, raw: string): string | number | boolean {
  switch (spec.kind) {
    case 'list':
    case 'array':
      return raw;
    case 'string':
      return raw;
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) throw new FlagError(`invalid argument "${raw}" for "--${spec.name}": not a number`);
      return n;
    }
    case 'boolean':
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      throw new FlagError(`invalid argument "${raw}" for "--${spec.name}": not a boolean`);
    case 'duration':
      return parseDurationMs(raw, spec.name);
  }
}

/** A number flag that must be a whole number, zero or more. */
export function nonNegativeInteger(flags: FlagValues, name: string): number {
  const value = flags[name] as number;
  if (!Number.isInteger(value) || value < 0) throw new FlagError(`--${name} must be a non-negative integer, not ${value}`);
  return value;
}

/** Go's durations (time.ParseDuration): "300ms", "1.5s", "5m", "1h30m"; a bare "0" is zero; never negative. */
export function parseDurationMs(raw: string, flag = 'duration'): number {
  const nanos = parseGoDuration(raw);
  if (nanos === undefined || nanos < 0n) throw new FlagError(`invalid argument "${raw}" for "--${flag}": not a duration (e.g. 300ms, 5s, 5m, 1h)`);
  return Number(nanos) / 1e6;
}

export function formatHelp(command: string, summary: string, specs: FlagSpec[]): string {
  const lines = [`Usage: carina ${command} [flags]`, '', summary, '', 'Flags:'];
  const width = Math.max(...specs.map((s) => s.name.length + (s.kind === 'boolean' ? 0 : s.kind.length + 1))) + 4;
  for (const s of specs) {
    const left = `  --${s.name}${s.kind === 'boolean' ? '' : ' ' + (s.kind === 'list' ? 'strings' : s.kind === 'array' ? 'stringArray' : s.kind)}`;
    const empty = s.default === '' || (Array.isArray(s.default) && s.default.length === 0);
    const def = empty ? '' : ` (default ${Array.isArray(s.default) ? JSON.stringify(s.default.join(',')) : JSON.stringify(s.default)})`;
    lines.push(`${left.padEnd(width + 2)}  ${s.help}${def}`);
  }
  return lines.join('\n') + '\n';
}
