/**
 * Server-side printing of custom resources (spec 01 §2.3): a Name column, then the version's
 * additionalPrinterColumns (an Age column from metadata.creationTimestamp when it declares none),
 * each cell read with the column's JSONPath, as k8s.io/apiextensions-apiserver
 * pkg/registry/customresource/tableconvertor does in v1.25. Only simple paths are supported
 * (`.a.b`, `[0]`, `['key']`), which is what v1.25's validation admits for printer columns.
 */
import type { TableRequest } from '../registry/strategy';
import type { PrinterColumn } from './crd-model';
import { isObject, type JsonObject } from './json-schema';

const NAME_DESCRIPTION = 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names';
const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', priority: 0 };

/** Reads a simple JSONPath; undefined when any step is missing. */
export function readJsonPath(object: unknown, path: string): unknown {
  const steps: Array<string | number> = [];
  const pattern = /\.([^.[\]]+)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]/g;
  let consumed = 0;
  for (const match of path.matchAll(pattern)) {
    if (match.index !== consumed) return undefined;
    consumed += match[0].length;
    if (match[1] !== undefined) steps.push(match[1]);
    else if (match[2] !== undefined) steps.push(Number(match[2]));
    else steps.push(match[3] ?? match[4] ?? '');
  }
  if (consumed !== path.length) return undefined;
  let current: unknown = object;
  for (const step of steps) {
    if (typeof step === 'number') {
      if (!Array.isArray(current)) return undefined;
      current = current[step];
    } else {
      if (!isObject(current)) return undefined;
      current = current[step];
    }
    if (current === undefined) return undefined;
  }
  return current;
}

function cell(value: unknown, type: string): unknown {
  if (value === undefined || value === null) return null;
  switch (type) {
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'string':
    case 'date':
      return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
    default:
      return typeof value === 'object' ? JSON.stringify(value) : value;
  }
}

/** The Table of custom resources with `columns` (already the version's, or empty for the default). */
export function customResourceTable(objects: JsonObject[], listMetadata: JsonObject, request: TableRequest, declared: readonly PrinterColumn[]): JsonObject {
  const columns = declared.length > 0 ? declared : [AGE_COLUMN];
  const definitions = [
    { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
    ...columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? '', priority: c.priority })),
  ];
  const rows = objects.map((object) => {
    const metadata = isObject(object.metadata) ? object.metadata : {};
    const cells = [typeof metadata.name === 'string' ? metadata.name : '', ...columns.map((c) => cell(readJsonPath(object, c.jsonPath), c.type))];
    const shown = request.includeObject === 'Object' ? object : request.includeObject === 'None' ? null : { kind: 'PartialObjectMetadata', apiVersion: request.tableApiVersion, metadata };
    return { cells, object: shown };
  });
  const meta: JsonObject = {};
  if (typeof listMetadata.resourceVersion === 'string' && listMetadata.resourceVersion !== '') meta.resourceVersion = listMetadata.resourceVersion;
  if (typeof listMetadata.continue === 'string' && listMetadata.continue !== '') meta.continue = listMetadata.continue;
  if (typeof listMetadata.remainingItemCount === 'number') meta.remainingItemCount = listMetadata.remainingItemCount;
  return { kind: 'Table', apiVersion: request.tableApiVersion, metadata: meta, columnDefinitions: definitions, rows };
}
