import { toTable } from '../../../../../src/apis/table';
import type { JsonObject } from '../../../../../src/apis/object';

/** 2023-01-10T12:00:00Z: every fixture's ages are measured from here. */
export const NOW = Date.parse('2023-01-10T12:00:00Z');

/** An RFC3339 time the given number of seconds before NOW. */
export function ago(seconds: number): string {
  return new Date(NOW - seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export interface ColumnShape {
  name: string;
  type: string;
  format: string;
  priority: number;
}

function renderOne(object: JsonObject): JsonObject {
  return toTable([object], {}, { includeObject: 'None', now: NOW });
}

/** The columns of the Table for one object, without their (long) descriptions. */
export function columnShapes(object: JsonObject): ColumnShape[] {
  const definitions = renderOne(object)['columnDefinitions'] as Array<ColumnShape & { description: string }>;
  return definitions.map(({ name, type, format, priority }) => ({ name, type, format, priority }));
}

export function columnDescriptions(object: JsonObject): Record<string, string> {
  const definitions = renderOne(object)['columnDefinitions'] as Array<{ name: string; description: string }>;
  return Object.fromEntries(definitions.map((d) => [d.name, d.description]));
}

/** The cells of the single row printed for the object. */
export function cellsOf(object: JsonObject): unknown[] {
  const rows = renderOne(object)['rows'] as Array<{ cells: unknown[] }>;
  return rows[0]?.cells ?? [];
}

export function rowOf(object: JsonObject): JsonObject {
  return (renderOne(object)['rows'] as JsonObject[])[0] ?? {};
}

/** Shorthand for column shape lists: [name, type, priority] with format "name" on Name. */
export function shapes(...columns: Array<[name: string, type: string, priority?: number, format?: string]>): ColumnShape[] {
  return columns.map(([name, type, priority, format]) => ({ name, type, format: format ?? (name === 'Name' ? 'name' : ''), priority: priority ?? 0 }));
}
