/**
 * kube-controller-manager v1.25's flags for the controllers Carina runs on the lease holder
 * (cmd/kube-controller-manager/app/options: generic `--controllers`, csrsigningcontroller.go),
 * with their names and defaults, plus kubeadm's `--control-plane-endpoint` for the server that
 * cluster-info publishes:
 *
 * - `--controllers`: `*` runs every controller on by default; `name` enables, `-name` disables;
 *   bootstrapsigner and tokencleaner are off by default, as in kube-controller-manager
 *   (kubeadm runs `--controllers=*,bootstrapsigner,tokencleaner`);
 * - `--cluster-signing-cert-file`/`--cluster-signing-key-file`: the CA of every built-in signer
 *   (default: the cluster CA, `<data-dir>/pki/ca.crt` and `ca.key`), or per signer
 *   `--cluster-signing-{kubelet-serving,kubelet-client,kube-apiserver-client,legacy-unknown}-{cert,key}-file`;
 *   once any per-signer pair is given, signers without one do not sign, and the two general
 *   flags may not be given too;
 * - `--cluster-signing-duration`: the longest certificate lifetime (default 8760h).
 */
import { join } from 'node:path';
import { PKI_FILES, pkiDirectory, DEFAULT_CLUSTER_SIGNING_DURATION_MS, type BuiltInSignerName } from '../certificates';
import type { CarinaControllerName, CertificateSettings } from '../server/certificate-controllers';
import { FlagError, type FlagSpec, type FlagValues } from './flags';

/** Controller names kube-controller-manager v1.25 knows (KnownControllers); Carina runs the ones in CARINA_CONTROLLERS. */
export const KNOWN_CONTROLLERS: ReadonlySet<string> = new Set([
  'attachdetach', 'bootstrapsigner', 'cloud-node-lifecycle', 'clusterrole-aggregation', 'cronjob', 'csrapproving', 'csrcleaner',
  'csrsigning', 'daemonset', 'deployment', 'disruption', 'endpoint', 'endpointslice', 'endpointslicemirroring', 'ephemeral-volume',
  'garbagecollector', 'horizontalpodautoscaling', 'job', 'namespace', 'nodeipam', 'nodelifecycle', 'persistentvolume-binder',
  'persistentvolume-expander', 'podgc', 'pv-protection', 'pvc-protection', 'replicaset', 'replicationcontroller', 'resourcequota',
  'root-ca-cert-publisher', 'route', 'service', 'serviceaccount', 'serviceaccount-token', 'statefulset', 'tokencleaner', 'ttl',
  'ttl-after-finished',
]);

export const CARINA_CONTROLLERS: readonly CarinaControllerName[] = ['namespace', 'garbagecollector', 'clusterrole-aggregation', 'serviceaccount', 'serviceaccount-token', 'root-ca-cert-publisher', 'resourcequota', 'csrsigning', 'csrapproving', 'csrcleaner', 'bootstrapsigner', 'tokencleaner'];

/** ControllersDisabledByDefault. */
const DISABLED_BY_DEFAULT: ReadonlySet<string> = new Set(['bootstrapsigner', 'tokencleaner']);

const SIGNER_FLAG_PREFIXES: ReadonlyArray<readonly [BuiltInSignerName, string]> = [
  ['kubernetes.io/kubelet-serving', 'cluster-signing-kubelet-serving'],
  ['kubernetes.io/kube-apiserver-client-kubelet', 'cluster-signing-kubelet-client'],
  ['kubernetes.io/kube-apiserver-client', 'cluster-signing-kube-apiserver-client'],
  ['kubernetes.io/legacy-unknown', 'cluster-signing-legacy-unknown'],
];

export const CERTIFICATE_FLAGS: FlagSpec[] = [
  { name: 'controllers', kind: 'list', default: ['*'], help: 'Controllers the lease holder runs: * for those on by default, name to enable, -name to disable (bootstrapsigner and tokencleaner are off by default).' },
  { name: 'cluster-signing-cert-file', kind: 'string', default: '', help: 'PEM CA certificate the built-in CSR signers issue with (default: the cluster CA, <data-dir>/pki/ca.crt).' },
  { name: 'cluster-signing-key-file', kind: 'string', default: '', help: 'PEM private key of --cluster-signing-cert-file (default: <data-dir>/pki/ca.key).' },
  ...SIGNER_FLAG_PREFIXES.flatMap(([signer, prefix]): FlagSpec[] => [
    { name: `${prefix}-cert-file`, kind: 'string', default: '', help: `PEM CA certificate for ${signer} (instead of --cluster-signing-cert-file).` },
    { name: `${prefix}-key-file`, kind: 'string', default: '', help: `PEM private key for ${signer}.` },
  ]),
  { name: 'cluster-signing-duration', kind: 'duration', default: DEFAULT_CLUSTER_SIGNING_DURATION_MS, help: 'Longest lifetime of a certificate the built-in signers issue; spec.expirationSeconds may ask for less.' },
  { name: 'control-plane-endpoint', kind: 'string', default: '', help: 'host:port or https URL of the API that kube-public/cluster-info gives joining nodes (default: this replica\'s advertised address and port).' },
];

/** IsControllerEnabled over a validated --controllers list. */
export function controllerEnabler(list: readonly string[]): (name: string) => boolean {
  for (const entry of list) {
    const name = entry.startsWith('-') ? entry.slice(1) : entry;
    if (entry !== '*' && !KNOWN_CONTROLLERS.has(name)) throw new FlagError(`"${name}" is not in the list of known controllers`);
  }
  return (name) => {
    let star = false;
    for (const entry of list) {
      if (entry === name) return true;
      if (entry === `-${name}`) return false;
      if (entry === '*') star = true;
    }
    return star && !DISABLED_BY_DEFAULT.has(name);
  };
}

/** The signer CA files as kube-controller-manager resolves them (getXSignerFiles and its validation). */
export function signerFiles(flags: FlagValues, dataDir: string): Map<BuiltInSignerName, { certFile: string; keyFile: string }> {
  const text = (name: string) => flags[name] as string;
  const specific = SIGNER_FLAG_PREFIXES.map(([signer, prefix]) => ({ signer, prefix, certFile: text(`${prefix}-cert-file`), keyFile: text(`${prefix}-key-file`) }));
  for (const s of specific) {
    if ((s.certFile === '') !== (s.keyFile === '')) throw new FlagError(`--${s.prefix}-cert-file and --${s.prefix}-key-file must be given together`);
  }
  const generalCert = text('cluster-signing-cert-file');
  const generalKey = text('cluster-signing-key-file');
  if ((generalCert === '') !== (generalKey === '')) throw new FlagError('--cluster-signing-cert-file and --cluster-signing-key-file must be given together');
  const anySpecific = specific.some((s) => s.certFile !== '');
  if (anySpecific && generalCert !== '') throw new FlagError('cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time');
  const files = new Map<BuiltInSignerName, { certFile: string; keyFile: string }>();
  const pki = pkiDirectory(dataDir);
  for (const s of specific) {
    if (s.certFile !== '') files.set(s.signer, { certFile: s.certFile, keyFile: s.keyFile });
    else if (!anySpecific) files.set(s.signer, generalCert !== '' ? { certFile: generalCert, keyFile: generalKey } : { certFile: join(pki, PKI_FILES.caCert), keyFile: join(pki, PKI_FILES.caKey) });
  }
  return files;
}

export function certificateSettingsFromFlags(flags: FlagValues, dataDir: string): CertificateSettings {
  const duration = flags['cluster-signing-duration'] as number;
  if (duration <= 0) throw new FlagError('--cluster-signing-duration must be positive');
  return {
    enabled: controllerEnabler(flags.controllers as string[]),
    signerFiles: signerFiles(flags, dataDir),
    signingDurationMs: duration,
    controlPlaneEndpoint: flags['control-plane-endpoint'] as string,
  };
}

/** The URL cluster-info publishes: the endpoint given (https:// added to host:port), else `fallback`. */
export function clusterInfoServer(controlPlaneEndpoint: string, fallback: string): string {
  if (controlPlaneEndpoint === '') return fallback;
  return /^https?:\/\//.test(controlPlaneEndpoint) ? controlPlaneEndpoint : `https://${controlPlaneEndpoint}`;
}
