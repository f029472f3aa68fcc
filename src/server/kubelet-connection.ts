/**
 * How the connect subresources (src/endpoints/handlers/connect.ts) meet the server: the kubelet
 * client of kube-apiserver v1.25 (--kubelet-client-certificate/--kubelet-client-key, by default
 * a certificate Carina issues from the cluster CA on the first start and keeps, as kubeadm keeps
 * <data-dir>/pki/apiserver-kubelet-client.crt: CN kube-apiserver-kubelet-client, O system:masters;
 * --kubelet-certificate-authority to verify the kubelet, which v1.25 does not do without it;
 * --kubelet-timeout; --kubelet-preferred-address-types), kube's proxy transport for pods,
 * services and other node ports (TLS without verification), and CONNECT admission through the
 * server's admission chain.
 */
import { readFileSync } from 'node:fs';
import { loadOrIssueClientCertificate, type CertificateAndKey } from '../certificates';
import type { AdmissionChain } from '../admission';
import type { ConnectConfig } from '../endpoints';
import { DEFAULT_KUBELET_PORT, DEFAULT_KUBELET_PREFERRED_ADDRESS_TYPES, type ProxyTransport } from '../proxy';

export const KUBELET_CLIENT_USER = 'kube-apiserver-kubelet-client';
export const KUBELET_CLIENT_GROUP = 'system:masters';
/** <data-dir>/pki/<this>.crt and .key: kubeadm's name for the same certificate. */
export const KUBELET_CLIENT_CERTIFICATE_NAME = 'apiserver-kubelet-client';

/** kube-apiserver's kubelet client flags. */
export interface KubeletClientOptions {
  preferredAddressTypes: readonly string[];
  /** Files (PEM); both empty: the certificate issued from the cluster CA. */
  clientCertificateFile: string;
  clientKeyFile: string;
  /** Empty: the kubelet's serving certificate is not verified (v1.25's default). */
  certificateAuthorityFile: string;
  timeoutMs: number;
}

export const DEFAULT_KUBELET_CLIENT_OPTIONS: KubeletClientOptions = {
  preferredAddressTypes: DEFAULT_KUBELET_PREFERRED_ADDRESS_TYPES,
  clientCertificateFile: '',
  clientKeyFile: '',
  certificateAuthorityFile: '',
  timeoutMs: 5000,
};

/** The kubelet client's certificate: the configured files, or the one issued from the cluster CA and kept in the data directory. */
async function kubeletClientCertificate(options: KubeletClientOptions, clusterCa: CertificateAndKey, dataDir: string): Promise<CertificateAndKey> {
  if (options.clientCertificateFile !== '' || options.clientKeyFile !== '') {
    return { certPem: readFileSync(options.clientCertificateFile, 'utf8'), keyPem: readFileSync(options.clientKeyFile, 'utf8') };
  }
  return loadOrIssueClientCertificate(dataDir, clusterCa, { user: KUBELET_CLIENT_USER, groups: [KUBELET_CLIENT_GROUP] }, KUBELET_CLIENT_CERTIFICATE_NAME);
}

export async function buildConnect(options: KubeletClientOptions, clusterCa: CertificateAndKey, admission: AdmissionChain, dataDir: string): Promise<ConnectConfig> {
  const client = await kubeletClientCertificate(options, clusterCa, dataDir);
  const kubeletCa = options.certificateAuthorityFile === '' ? undefined : readFileSync(options.certificateAuthorityFile, 'utf8');
  const transport: ProxyTransport = { cert: client.certPem, key: client.keyPem, ca: kubeletCa, insecureSkipTLSVerify: kubeletCa === undefined, timeoutMs: options.timeoutMs };
  return {
    kubelet: {
      transport,
      insecureTransport: { ...transport, ca: undefined, insecureSkipTLSVerify: true },
      preferredAddressTypes: options.preferredAddressTypes,
      defaultPort: DEFAULT_KUBELET_PORT,
    },
    // kube-apiserver's proxy transport: TLS to pods and services is not verified.
    proxyTransport: { insecureSkipTLSVerify: true, timeoutMs: 30_000 },
    admit: async (attributes) => {
      await admission.mutate(attributes);
      await admission.validate(attributes);
    },
  };
}
