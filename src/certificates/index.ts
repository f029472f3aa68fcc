/**
 * The cluster's PKI: the CA that `carina server` creates on its first start, the API server's
 * serving certificate and the `system:admin` client certificate issued from it (kept in
 * `<data-dir>/pki/`), and the admin kubeconfig that carries them (`<data-dir>/admin.kubeconfig`).
 * Client-certificate authentication trusts this CA. Other modules use only what is exported here.
 */
export {
  ADMIN_GROUP,
  ADMIN_USER,
  CA_COMMON_NAME,
  CertificateError,
  DEFAULT_SERVING_DNS_NAMES,
  DEFAULT_SERVING_IP_ADDRESSES,
  PKI_DIR_NAME,
  PKI_FILES,
  SERVING_COMMON_NAME,
  createClusterCa,
  generateRsaPrivateKeyPem,
  issueClientCertificate,
  issueServingCertificate,
  loadOrCreateClusterCertificates,
  pkiDirectory,
  writeFileAtomically,
  type CertificateAndKey,
  type CertificateErrorCode,
  type CertificateOutcome,
  type ClientIdentity,
  type ClusterCertificates,
  type IssueOptions,
  type LoadOrCreateOptions,
  type ServingCertificateNames,
} from './cluster-ca';
export {
  ADMIN_KUBECONFIG_NAME,
  KUBECONFIG_CLUSTER_NAME,
  KUBECONFIG_CONTEXT_NAME,
  KubeconfigError,
  apiServerUrl,
  buildKubeconfig,
  currentContextCredentials,
  kubeconfigToYaml,
  parseKubeconfig,
  readKubeconfig,
  writeAdminKubeconfig,
  writeKubeconfig,
  type Kubeconfig,
  type KubeconfigCluster,
  type KubeconfigContext,
  type KubeconfigCredentials,
  type KubeconfigErrorCode,
  type KubeconfigOptions,
  type KubeconfigUser,
} from './kubeconfig';
