/**
 * kube-apiserver's --tracing-config-file (v1.25, feature APIServerTracing): a
 * TracingConfiguration file (src/observability/tracing-config.ts). Without the flag nothing of
 * the OpenTelemetry SDK is loaded. The file is read and validated before anything starts, so a
 * bad one stops the server with the file's problem and nothing half up.
 */
import { isObservabilityError } from '../observability/errors';
import { startTracing, type Tracing } from '../observability/tracing';
import { readTracingConfiguration, type TracingConfiguration } from '../observability/tracing-config';
import { FlagError, type FlagSpec, type FlagValues } from './flags';

export const TRACING_FLAGS: FlagSpec[] = [
  { name: 'tracing-config-file', kind: 'string', default: '', help: 'File with an apiserver.config.k8s.io/v1alpha1 TracingConfiguration (endpoint: the OTLP/HTTP collector\'s host:port; samplingRatePerMillion). Without it, nothing is traced.' },
];

/** The configuration the flag names, or undefined without the flag. */
export function tracingFromFlags(flags: FlagValues): TracingConfiguration | undefined {
  const path = flags['tracing-config-file'] as string;
  if (path === '') return undefined;
  try {
    return readTracingConfiguration(path);
  } catch (err) {
    if (isObservabilityError(err)) throw new FlagError(`--tracing-config-file: ${err.message}`);
    throw err;
  }
}

/** Starts this process's tracing when configured; `instanceId` names the replica in its spans. */
export function startServerTracing(configuration: TracingConfiguration | undefined, instanceId: string): Tracing | undefined {
  return configuration === undefined ? undefined : startTracing(configuration, { instanceId });
}
