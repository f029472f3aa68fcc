/**
 * Server-side printing of custom resources (spec 01 §2.3) as kube-apiserver v1.25 does it
 * (k8s.io/apiextensions-apiserver pkg/registry/customresource/tableconvertor, and apihelpers'
 * default Age column):
 *
 * - columns: Name, then the version's additionalPrinterColumns, or an Age column from
 *   metadata.creationTimestamp when it declares none. A column without a description is
 *   described as "Custom resource definition column (in JSONPath format): <jsonPath>";
 * - each jsonPath is read as kubectl's JSONPath template `{<jsonPath>}` with missing keys
 *   allowed. A column whose path does not parse, and every column after it, is left out (v1.25
 *   logs "invalid printer specification" and keeps the columns it had);
 * - a cell is the first value of the path (a filter or `[*]` may find several), or null when
 *   the path finds nothing or fails. By the column's type: `string` prints the value as kubectl's
 *   JSONPath prints it (objects as JSON; null as "<no value>"); `integer` takes numbers (floats
 *   truncated); `number` numbers; `boolean` booleans; `date` an RFC 3339 string, shown as its age
 *   (duration.HumanDuration: "5m", "3d4h"), "<invalid>" when it does not parse, "<unknown>" for
 *   the zero time. A value of another JSON type is null. `format` and `priority` are only
 *   carried into the column definitions (kubectl hides priority > 0 without -o wide).
 */
import { JsonPath } from '../apis/jsonpath';
import { CREATION_TIMESTAMP_DESCRIPTION, OBJECT_NAME_DESCRIPTION, humanDuration } from '../apis/table';
import type { TableRequest } from '../registry';
import type { PrinterColumn } from './crd-model';
import { isJsonObject, type JsonObject } from '../apis/object';

const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: CREATION_TIMESTAMP_DESCRIPTION, priority: 0 };

interface CompiledColumn {
  readonly definition: JsonObject;
  readonly type: string;
  readonly path: JsonPath;
}

/** The columns of one CRD version, their paths parsed once. */
export class PrinterColumns {
  private readonly columns: CompiledColumn[] = [];

  /** `declared`: the version's additionalPrinterColumns (empty for the default Age column). */
  constructor(declared: readonly PrinterColumn[]) {
    for (const column of declared.length > 0 ? declared : [AGE_COLUMN]) {
      let path: JsonPath;
      try {
        path = JsonPath.parse(`{${column.jsonPath}}`);
      } catch {
        break;
      }
      const description = column.description !== undefined && column.description !== '' ? column.description : `Custom resource definition column (in JSONPath format): ${column.jsonPath}`;
      this.columns.push({
        definition: { name: column.name, type: column.type, format: column.format ?? '', description, priority: column.priority },
        type: column.type,
        path,
      });
    }
  }

  /** The Table of `objects`; ages are measured against `nowMs` (milliseconds since the epoch). */
  toTable(objects: JsonObject[], listMetadata: JsonObject, request: TableRequest, nowMs: number): JsonObject {
    const definitions = [
      { name: 'Name', type: 'string', format: 'name', description: OBJECT_NAME_DESCRIPTION, priority: 0 },
      ...this.columns.map((c) => c.definition),
    ];
    const rows = objects.map((object) => {
      const metadata = isJsonObject(object.metadata) ? object.metadata : {};
      const cells = [typeof metadata.name === 'string' ? metadata.name : '', ...this.columns.map((c) => cellOf(c, object, nowMs))];
      const shown = request.includeObject === 'Object' ? object : request.includeObject === 'None' ? null : { kind: 'PartialObjectMetadata', apiVersion: request.tableApiVersion, metadata };
      return { cells, object: shown };
    });
    const meta: JsonObject = {};
    if (typeof listMetadata.resourceVersion === 'string' && listMetadata.resourceVersion !== '') meta.resourceVersion = listMetadata.resourceVersion;
    if (typeof listMetadata.continue === 'string' && listMetadata.continue !== '') meta.continue = listMetadata.continue;
    if (typeof listMetadata.remainingItemCount === 'number') meta.remainingItemCount = listMetadata.remainingItemCount;
    return { kind: 'Table', apiVersion: request.tableApiVersion, metadata: meta, columnDefinitions: definitions, rows };
  }
}

function cellOf(column: CompiledColumn, object: JsonObject, nowMs: number): unknown {
  let results: unknown[][];
  try {
    results = column.path.findResults(object, { allowMissingKeys: true });
  } catch {
    return null;
  }
  const first = results[0];
  if (first === undefined || first.length === 0) return null;
  const value = first[0];
  if (column.type === 'string') return value === null ? '<no value>' : JsonPath.printResults([value]);
  return cellForJsonValue(column.type, value, nowMs);
}

function cellForJsonValue(type: string, value: unknown, nowMs: number): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date': {
      if (typeof value !== 'string') return null;
      const time = parseQueryTime(value);
      if (time === undefined) return '<invalid>';
      return time === ZERO_TIME_MS ? '<unknown>' : humanDuration(nowMs - time);
    }
    default:
      return null;
  }
}

/** 0001-01-01T00:00:00Z, Go's zero time.Time, in milliseconds since the epoch. */
const ZERO_TIME_MS = -62_135_596_800_000;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * metav1.Time's UnmarshalQueryParameter: "" and "null" are the zero time, anything else must be
 * RFC 3339 as Go's time.Parse reads it (fields in range, `T` and `Z` upper case). Milliseconds
 * since the epoch, or undefined when it does not parse.
 */
function parseQueryTime(text: string): number | undefined {
  if (text === '' || text === 'null') return ZERO_TIME_MS;
  const match = RFC3339.exec(text);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeapYear(year) ? 1 : 0);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (match[8] !== 'Z') {
    const offsetHours = Number(match[10]);
    const offsetMins = Number(match[11]);
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes = (match[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const fraction = match[7] === undefined ? 0 : Number(`0.${match[7]}`) * 1000;
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, 0);
  return utc.getTime() + Math.floor(fraction) - offsetMinutes * 60_000;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}
