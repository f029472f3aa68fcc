/**
 * A reader of Prometheus' text exposition format (0.0.4) for tests: families by name with their
 * TYPE and samples (metric name, labels, value). Enough of the format for what Carina serves:
 * HELP and TYPE comments, label values with \\, \" and \n escapes, values as Go prints them.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedFamily {
  name: string;
  type: string;
  samples: Sample[];
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const pattern = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/g;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null) {
    labels[match[1]] = match[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

/** The family a sample belongs to: its own name, or the histogram's or summary's it suffixes. */
function familyOf(name: string, families: Map<string, ParsedFamily>): ParsedFamily | undefined {
  if (families.has(name)) return families.get(name);
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (name.endsWith(suffix)) {
      const family = families.get(name.slice(0, -suffix.length));
      if (family !== undefined && (family.type === 'histogram' || family.type === 'summary')) return family;
    }
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, ParsedFamily> {
  const families = new Map<string, ParsedFamily>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type !== null) {
      if (families.has(type[1])) throw new Error(`family ${type[1]} is declared twice`);
      families.set(type[1], { name: type[1], type: type[2], samples: [] });
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/.exec(line);
    if (sample === null) throw new Error(`not a sample line: ${line}`);
    const family = familyOf(sample[1], families);
    if (family === undefined) throw new Error(`sample ${sample[1]} before its family's TYPE`);
    family.samples.push({ name: sample[1], labels: parseLabels(sample[2] ?? ''), value: parseValue(sample[3]) });
  }
  return families;
}

/** The value of the one sample of `name` whose labels include `labels` (undefined if none). */
export function sampleValue(families: Map<string, ParsedFamily>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
    }
  }
  return undefined;
}
