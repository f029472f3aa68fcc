/**
 * Secrets: `stringData` is a write-only convenience. v1.25 merges it into `data` (base64, its
 * keys winning) when it converts the request to its internal type, so it is never stored nor
 * returned. Validation already reads the merged view; canonicalize performs the merge.
 */
import type { KindRules } from './kind-rules';
import type { JsonObject } from '../../apis/object';

function mergeStringData(secret: JsonObject): void {
  const stringData = secret.stringData;
  if (stringData === undefined) return;
  delete secret.stringData;
  if (stringData === null || typeof stringData !== 'object' || Array.isArray(stringData)) return;
  const data = { ...((secret.data as JsonObject | undefined) ?? {}) };
  for (const [key, value] of Object.entries(stringData as JsonObject)) {
    data[key] = Buffer.from(String(value), 'utf8').toString('base64');
  }
  secret.data = data;
}

export const secretRules: KindRules = { canonicalize: mergeStringData };
