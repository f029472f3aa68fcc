/**
 * The observability layer's operating errors. Each has a stable `code`; callers match on it.
 *
 * | code                  | when                                                               |
 * |-----------------------|--------------------------------------------------------------------|
 * | TRACING_CONFIG_READ   | --tracing-config-file cannot be read                               |
 * | TRACING_CONFIG_DECODE | it is not YAML/JSON, or not a TracingConfiguration of a known version |
 * | TRACING_CONFIG_INVALID| a field fails v1.25's validation (the message lists every failure) |
 */
export type ObservabilityErrorCode = 'TRACING_CONFIG_READ' | 'TRACING_CONFIG_DECODE' | 'TRACING_CONFIG_INVALID';

export class ObservabilityError extends Error {
  constructor(readonly code: ObservabilityErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ObservabilityError';
  }
}

export function isObservabilityError(err: unknown, code?: ObservabilityErrorCode): err is ObservabilityError {
  return err instanceof ObservabilityError && (code === undefined || err.code === code);
}
