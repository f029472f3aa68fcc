/** kube-apiserver v1.25's kubelet client flags (pkg/kubeapiserver/options, kubelet client config). */
import { DEFAULT_KUBELET_CLIENT_OPTIONS, type KubeletClientOptions } from '../server/connect-parts';
import { FlagError, type FlagSpec, type FlagValues } from './flags';

const ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];

export const KUBELET_FLAGS: FlagSpec[] = [
  { name: 'kubelet-preferred-address-types', kind: 'list', default: [...DEFAULT_KUBELET_CLIENT_OPTIONS.preferredAddressTypes], help: 'List of the preferred NodeAddressTypes to use for kubelet connections.' },
  { name: 'kubelet-client-certificate', kind: 'string', default: '', help: 'Path to a client cert file for TLS to kubelets (default: one issued from the cluster CA at start, CN kube-apiserver-kubelet-client, O system:masters).' },
  { name: 'kubelet-client-key', kind: 'string', default: '', help: 'Path to a client key file for TLS to kubelets.' },
  { name: 'kubelet-certificate-authority', kind: 'string', default: '', help: 'Path to a cert file for the certificate authority of the kubelets\' serving certificates (none: they are not verified, as in kube-apiserver).' },
  { name: 'kubelet-timeout', kind: 'duration', default: DEFAULT_KUBELET_CLIENT_OPTIONS.timeoutMs, help: 'Timeout for kubelet operations.' },
];

export function kubeletFromFlags(flags: FlagValues): KubeletClientOptions {
  const types = flags['kubelet-preferred-address-types'] as string[];
  for (const type of types) if (!ADDRESS_TYPES.includes(type)) throw new FlagError(`--kubelet-preferred-address-types: invalid value "${type}": one of ${ADDRESS_TYPES.join(', ')}`);
  const cert = flags['kubelet-client-certificate'] as string;
  const key = flags['kubelet-client-key'] as string;
  if ((cert === '') !== (key === '')) throw new FlagError('--kubelet-client-certificate and --kubelet-client-key go together');
  return {
    preferredAddressTypes: types,
    clientCertificateFile: cert,
    clientKeyFile: key,
    certificateAuthorityFile: flags['kubelet-certificate-authority'] as string,
    timeoutMs: flags['kubelet-timeout'] as number,
  };
}
