/**
 * --tracing-config-file: kube-apiserver's TracingConfiguration (apiserver.config.k8s.io/v1alpha1,
 * the only version v1.25 serves), read once at start. Facts from v1.25 (apiserver
 * pkg/apis/apiserver/v1alpha1 defaults and pkg/apis/apiserver/validation):
 *
 * - `endpoint` defaults to `localhost:4317`; `samplingRatePerMillion` defaults to 0, which
 *   samples no new trace but still follows a caller's sampled `traceparent` (parent-based).
 * - Validation: a rate below 0 is "sampling rate must be positive", above 1,000,000 "sampling
 *   rate per million must be less than or equal to one million"; an endpoint without `//` is
 *   read as `dns://<endpoint>`, and its scheme must be none, dns, unix or unix-abstract.
 *
 * Carina exports with OTLP over HTTP (JSON, POST <endpoint>/v1/traces), not gRPC, so an
 * endpoint is used as `http://host:port`; unix sockets pass v1.25's validation but are refused
 * here because the HTTP exporter cannot dial them. Unknown fields are refused (strict decoding),
 * as kube's config loader does for its own files.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ObservabilityError } from './errors';

export const TRACING_CONFIG_API_VERSION = 'apiserver.config.k8s.io/v1alpha1';
export const TRACING_CONFIG_KIND = 'TracingConfiguration';
export const DEFAULT_TRACING_ENDPOINT = 'localhost:4317';
export const MAX_SAMPLING_RATE_PER_MILLION = 1_000_000;

export interface TracingConfiguration {
  /** As written (or the default): `host:port` or `dns://[authority]/host:port`. */
  readonly endpoint: string;
  /** What the exporter POSTs to: `http://host:port/v1/traces`. */
  readonly exportUrl: string;
  readonly samplingRatePerMillion: number;
}

/** Reads, decodes, defaults and validates a TracingConfiguration file. */
export function readTracingConfiguration(path: string): TracingConfiguration {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ObservabilityError('TRACING_CONFIG_READ', `unable to read tracing configuration from "${path}": ${(err as Error).message}`, { cause: err });
  }
  return parseTracingConfiguration(text);
}

export function parseTracingConfiguration(text: string): TracingConfiguration {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (err) {
    throw new ObservabilityError('TRACING_CONFIG_DECODE', `unable to decode tracing configuration data: ${(err as Error).message}`, { cause: err });
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new ObservabilityError('TRACING_CONFIG_DECODE', 'unable to decode tracing configuration data: not a mapping');
  }
  const object = document as Record<string, unknown>;
  const apiVersion = object.apiVersion;
  const kind = object.kind;
  if (typeof apiVersion !== 'string' || apiVersion === '' || typeof kind !== 'string' || kind === '') {
    throw new ObservabilityError('TRACING_CONFIG_DECODE', `unable to decode tracing configuration data: Object 'Kind' is missing or 'apiVersion' is missing`);
  }
  if (apiVersion !== TRACING_CONFIG_API_VERSION || kind !== TRACING_CONFIG_KIND) {
    throw new ObservabilityError('TRACING_CONFIG_DECODE', `unable to decode tracing configuration data: no kind "${kind}" is registered for version "${apiVersion}"`);
  }
  for (const field of Object.keys(object)) {
    if (!['apiVersion', 'kind', 'endpoint', 'samplingRatePerMillion'].includes(field)) {
      throw new ObservabilityError('TRACING_CONFIG_DECODE', `unable to decode tracing configuration data: strict decoding error: unknown field "${field}"`);
    }
  }
  const endpoint = object.endpoint ?? DEFAULT_TRACING_ENDPOINT;
  const rate = object.samplingRatePerMillion ?? 0;
  if (typeof endpoint !== 'string') {
    throw new ObservabilityError('TRACING_CONFIG_DECODE', `unable to decode tracing configuration data: endpoint: expected a string, got ${JSON.stringify(endpoint)}`);
  }
  if (typeof rate !== 'number' || !Number.isInteger(rate) || rate < -(2 ** 31) || rate >= 2 ** 31) {
    throw new ObservabilityError('TRACING_CONFIG_DECODE', `unable to decode tracing configuration data: samplingRatePerMillion: expected a 32-bit integer, got ${JSON.stringify(rate)}`);
  }
  const failures = [...validateSamplingRate(rate), ...validateEndpoint(endpoint)];
  if (failures.length > 0) throw new ObservabilityError('TRACING_CONFIG_INVALID', `invalid tracing configuration: ${failures.join(', ')}`);
  return { endpoint, exportUrl: exportUrlOf(endpoint), samplingRatePerMillion: rate };
}

function validateSamplingRate(rate: number): string[] {
  const failures: string[] = [];
  if (rate < 0) failures.push(`samplingRatePerMillion: Invalid value: ${rate}: sampling rate must be positive`);
  if (rate > MAX_SAMPLING_RATE_PER_MILLION) failures.push(`samplingRatePerMillion: Invalid value: ${rate}: sampling rate per million must be less than or equal to one million`);
  return failures;
}

/** v1.25's check (a gRPC target name), then what the HTTP exporter can reach. */
function validateEndpoint(endpoint: string): string[] {
  const target = endpoint.includes('//') ? endpoint : `dns://${endpoint}`;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(target)?.[1]?.toLowerCase();
  if (scheme === undefined) return [`endpoint: Invalid value: "${target}": missing protocol scheme`];
  if (!['dns', 'unix', 'unix-abstract'].includes(scheme)) {
    return [`endpoint: Invalid value: "${target}": unsupported scheme: ${scheme}.  Options are none, dns, unix, or unix-abstract.  See https://github.com/grpc/grpc/blob/master/doc/naming.md`];
  }
  if (scheme !== 'dns') return [`endpoint: Invalid value: "${endpoint}": Carina exports traces with OTLP over HTTP, which cannot dial ${scheme} sockets; give host:port`];
  if (hostPortOf(endpoint) === undefined) return [`endpoint: Invalid value: "${endpoint}": expected host:port`];
  return [];
}

/** `host:port`, `dns:host:port`, `dns:///host:port` or `dns://authority/host:port` → host:port. */
function hostPortOf(endpoint: string): string | undefined {
  let rest = endpoint;
  if (/^dns:/i.test(rest)) {
    rest = rest.slice(4);
    // dns://authority/host:port names the DNS server to ask; the target is the last part.
    if (rest.startsWith('//')) {
      const slash = rest.indexOf('/', 2);
      rest = slash < 0 ? rest.slice(2) : rest.slice(slash + 1);
    }
  }
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(rest);
  if (match === null || Number(match[2]) > 65535) return undefined;
  return `${match[1]}:${match[2]}`;
}

function exportUrlOf(endpoint: string): string {
  return `http://${hostPortOf(endpoint) as string}/v1/traces`;
}
