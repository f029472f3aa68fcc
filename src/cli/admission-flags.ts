/**
 * kube-apiserver's admission flags (apiserver pkg/server/options/admission.go and
 * pkg/kubeapiserver/options/admission.go, v1.25, plus DefaultTolerationSeconds' two legacy
 * flags), checked before anything starts with kube-apiserver's messages: an unknown plugin name
 * or a name both enabled and disabled, or an unreadable --admission-control-config-file, stops
 * `carina server` at once. Carina adds a circuit breaker per admission webhook (its three flags).
 */
import { ALL_ORDERED_PLUGINS, DEFAULT_ON_PLUGINS, checkAdmissionOptions, isAdmissionError } from '../admission';
import { admissionPluginRegistry, type ServerAdmissionOptions } from '../server/server-admission';
import { FlagError, nonNegativeInteger, type FlagSpec, type FlagValues } from './flags';

const ALL_NAMES = [...ALL_ORDERED_PLUGINS].sort().join(', ');
const DEFAULT_NAMES = ALL_ORDERED_PLUGINS.filter((name) => DEFAULT_ON_PLUGINS.has(name)).join(', ');

export const ADMISSION_FLAGS: FlagSpec[] = [
  { name: 'enable-admission-plugins', kind: 'list', default: [], help: `admission plugins that should be enabled in addition to default enabled ones (${DEFAULT_NAMES}). Comma-delimited list of admission plugins: ${ALL_NAMES}. The order of plugins in this flag does not matter.` },
  { name: 'disable-admission-plugins', kind: 'list', default: [], help: `admission plugins that should be disabled although they are in the default enabled plugins list (${DEFAULT_NAMES}). Comma-delimited list of admission plugins: ${ALL_NAMES}. The order of plugins in this flag does not matter.` },
  { name: 'admission-control-config-file', kind: 'string', default: '', help: 'File with admission control configuration (AdmissionConfiguration, apiserver.config.k8s.io/v1).' },
  { name: 'default-not-ready-toleration-seconds', kind: 'number', default: 300, help: 'Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration.' },
  { name: 'admission-webhook-circuit-breaker-failures', kind: 'number', default: 5, help: 'Failed calls of one admission webhook within the window that open its circuit breaker (0: never).' },
  { name: 'admission-webhook-circuit-breaker-window', kind: 'duration', default: 30_000, help: 'Window in which an admission webhook\'s failures are counted.' },
  { name: 'admission-webhook-circuit-breaker-cooldown', kind: 'duration', default: 30_000, help: 'How long an open circuit skips (failurePolicy Ignore) or refuses at once (Fail) before one trial call.' },
  { name: 'default-unreachable-toleration-seconds', kind: 'number', default: 300, help: 'Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration.' },
];

/** The admission options from the flags, checked; a FlagError with kube-apiserver's text when they are wrong. */
export function admissionFromFlags(flags: FlagValues): ServerAdmissionOptions {
  const options: ServerAdmissionOptions = {
    enablePlugins: flags['enable-admission-plugins'] as string[],
    disablePlugins: flags['disable-admission-plugins'] as string[],
    configFile: flags['admission-control-config-file'] as string,
    flags: {
      defaultNotReadyTolerationSeconds: flags['default-not-ready-toleration-seconds'] as number,
      defaultUnreachableTolerationSeconds: flags['default-unreachable-toleration-seconds'] as number,
    },
    circuitBreaker: {
      failureThreshold: nonNegativeInteger(flags, 'admission-webhook-circuit-breaker-failures'),
      windowMs: flags['admission-webhook-circuit-breaker-window'] as number,
      cooldownMs: flags['admission-webhook-circuit-breaker-cooldown'] as number,
    },
  };
  try {
    checkAdmissionOptions(options, admissionPluginRegistry());
  } catch (err) {
    if (isAdmissionError(err)) throw new FlagError(err.message);
    throw err;
  }
  return options;
}
