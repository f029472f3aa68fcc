/** kube-apiserver v1.25's kubelet client flags (pkg/kubeapiserver/options, kubelet client config) and the aggregator's. */
import { DEFAULT_KUBELET_CLIENT_OPTIONS, type KubeletClientOptions } from '../server/kubelet-connection';
import { DEFAULT_AGGREGATOR_OPTIONS, type AggregatorOptions } from '../server/aggregation-layer';
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

export const AGGREGATOR_FLAGS: FlagSpec[] = [
  { name: 'proxy-client-cert-file', kind: 'string', default: '', help: 'Client certificate the aggregator presents to extension API servers (default: one issued from the cluster CA at start, CN front-proxy-client).' },
  { name: 'proxy-client-key-file', kind: 'string', default: '', help: 'Private key of --proxy-client-cert-file.' },
  { name: 'enable-aggregator-routing', kind: 'boolean', default: true, help: 'Route aggregated requests to an endpoint of the APIService\'s Service rather than its cluster IP (Carina always does: it has no service proxy; false is refused).' },
];

export function aggregatorFromFlags(flags: FlagValues): AggregatorOptions {
  const cert = flags['proxy-client-cert-file'] as string;
  const key = flags['proxy-client-key-file'] as string;
  if ((cert === '') !== (key === '')) throw new FlagError('--proxy-client-cert-file and --proxy-client-key-file go together');
  if (flags['enable-aggregator-routing'] !== true) throw new FlagError('--enable-aggregator-routing=false: Carina has no service proxy to reach a cluster IP; aggregated requests go to an endpoint');
  return { ...DEFAULT_AGGREGATOR_OPTIONS, proxyClientCertFile: cert, proxyClientKeyFile: key };
}
