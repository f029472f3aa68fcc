/**
 * The operating errors of building the admission chain (src/admission): bad flags, an unreadable
 * or malformed --admission-control-config-file, a plugin whose configuration is wrong. They stop
 * the server before it listens, with kube-apiserver v1.25's wording (apiserver
 * pkg/server/options/admission.go, pkg/admission/config.go and plugins.go), so the operator
 * reads what they would read from kube-apiserver. Refusals of requests are not here: those are
 * ApiErrors (src/util) that plugins throw.
 */

export type AdmissionErrorCode =
  /** --enable-admission-plugins or --disable-admission-plugins names no registered plugin, or both name one. */
  | 'InvalidPluginFlags'
  /** --admission-control-config-file cannot be read, parsed or decoded. */
  | 'InvalidConfigFile'
  /** A plugin's factory refused its configuration. */
  | 'PluginInitFailed';

export class AdmissionError extends Error {
  override name = 'AdmissionError';
  constructor(readonly code: AdmissionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export function isAdmissionError(err: unknown, code?: AdmissionErrorCode): err is AdmissionError {
  return err instanceof AdmissionError && (code === undefined || err.code === code);
}

/**
 * What a plugin's factory throws for a configuration it cannot use; the framework wraps it as
 * kube-apiserver does: `couldn't init admission plugin "NAME": <message>`.
 */
export class PluginConfigError extends Error {
  override name = 'PluginConfigError';
  readonly code = 'PluginConfigInvalid';
}

/** utilerrors.NewAggregate's text: one error alone, several as `[a, b]`. */
export function aggregateMessage(messages: readonly string[]): string {
  return messages.length === 1 ? messages[0] : `[${messages.join(', ')}]`;
}
