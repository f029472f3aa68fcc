/**
 * The diff kube-apiserver appends to "may not change" errors. Go prints cmp.Diff of its internal
 * structs; this prints the same shape (a `- `/`+ ` line per changed top-level field, Go field
 * names) with JSON values, which is as much as the wire form can say.
 */
import { semanticEqual } from './json-value';
import type { JsonObject } from '../object';

export function specDiff(goTypeName: string, old: JsonObject, next: JsonObject): string {
  const lines = [`  ${goTypeName}{`];
  for (const key of [...new Set([...Object.keys(old), ...Object.keys(next)])]) {
    if (semanticEqual(old[key], next[key])) continue;
    const goName = key.charAt(0).toUpperCase() + key.slice(1);
    if (old[key] !== undefined) lines.push(`- \t${goName}: ${JSON.stringify(old[key])},`);
    if (next[key] !== undefined) lines.push(`+ \t${goName}: ${JSON.stringify(next[key])},`);
  }
  lines.push('  }');
  return `${lines.join('\n')}\n`;
}
