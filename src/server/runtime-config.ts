/**
 * --runtime-config: which group-versions a replica serves beyond v1.25's defaults (or not), as
 * kube-apiserver parses the flag: `group/version=true|false` pairs, a bare key meaning true, and
 * only group-versions the catalogue knows.
 */
import { Catalogue } from '../apis/catalogue';

export function parseRuntimeConfig(value: string): Map<string, boolean> {
  const config = new Map<string, boolean>();
  for (const entry of value.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const eq = entry.indexOf('=');
    const key = eq < 0 ? entry : entry.slice(0, eq);
    const raw = eq < 0 ? 'true' : entry.slice(eq + 1);
    if (raw !== 'true' && raw !== 'false') throw new Error(`--runtime-config ${entry}: the value must be true or false`);
    if (!Catalogue.isKnownRuntimeConfigKey(key)) throw new Error(`--runtime-config ${entry}: unknown group/version "${key}"`);
    config.set(key, raw === 'true');
  }
  return config;
}
