/**
 * What the certificate controllers read of a CertificateSigningRequest, in its stored (v1 JSON)
 * form, and who they write as (kube-controller-manager pkg/controller/certificates
 * certificate_controller_utils.go; v1.25 runs these controllers with the
 * `kube-system/certificate-controller` service account's credentials, which the default RBAC
 * policy grants update on the approval and status subresources, `approve` on the kubelet client
 * signer and `sign` on every kubernetes.io signer; writing as that identity lets the
 * CertificateApproval and CertificateSigning admission plugins authorize these writes as they
 * authorize kube-controller-manager's).
 */
import { SERVICE_ACCOUNTS_GROUP, AUTHENTICATED_GROUP, SERVICE_ACCOUNT_USER_PREFIX, type UserInfo } from '../authn';
import { CertificateRequestError, parseCertificateRequestPem, type CertificateRequest } from '../apis/validation';
import { type JsonObject, objectOrEmpty } from '../apis/object';
import { resourceKeyPrefix } from '../apis/catalogue';

export const CSR_KEY_PREFIX = resourceKeyPrefix({ group: 'certificates.k8s.io', resource: 'certificatesigningrequests' });

export interface CsrCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastUpdateTime?: string;
  readonly lastTransitionTime?: string;
}

/** The identity of a kube-controller-manager controller run with --use-service-account-credentials. */
export function controllerServiceAccount(name: string, namespace = 'kube-system'): UserInfo {
  return {
    name: `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`,
    uid: '',
    groups: [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`, AUTHENTICATED_GROUP],
    extra: {},
  };
}

export const CERTIFICATE_CONTROLLER_USER = controllerServiceAccount('certificate-controller');

export function csrName(csr: JsonObject): string {
  const name = objectOrEmpty(csr.metadata).name;
  return typeof name === 'string' ? name : '';
}

export function csrSpec(csr: JsonObject): JsonObject {
  return objectOrEmpty(csr.spec);
}

export function csrConditions(csr: JsonObject): CsrCondition[] {
  const conditions = objectOrEmpty(csr.status).conditions;
  if (!Array.isArray(conditions)) return [];
  return conditions.filter((c): c is CsrCondition => typeof c === 'object' && c !== null && typeof (c as CsrCondition).type === 'string');
}

/** GetCertApprovalCondition. */
export function approvalState(csr: JsonObject): { approved: boolean; denied: boolean } {
  const types = csrConditions(csr).map((c) => c.type);
  return { approved: types.includes('Approved'), denied: types.includes('Denied') };
}

/** IsCertificateRequestApproved: approved and not denied. */
export function isApproved(csr: JsonObject): boolean {
  const { approved, denied } = approvalState(csr);
  return approved && !denied;
}

export function hasTrueCondition(csr: JsonObject, type: string): boolean {
  return csrConditions(csr).some((c) => c.type === type && c.status === 'True');
}

/** status.certificate's bytes; empty when not issued. */
export function issuedCertificate(csr: JsonObject): Buffer {
  const value = objectOrEmpty(csr.status).certificate;
  return typeof value === 'string' ? Buffer.from(value, 'base64') : Buffer.alloc(0);
}

/** spec.request's bytes (the PEM). */
export function requestBytes(csr: JsonObject): Buffer {
  const value = csrSpec(csr).request;
  return typeof value === 'string' ? Buffer.from(value, 'base64') : Buffer.alloc(0);
}

/** spec.request parsed; a request that does not parse fails the sync with kube's message (the controllers retry it). */
export function parsedRequestOf(csr: JsonObject, name: string): CertificateRequest {
  try {
    return parseCertificateRequestPem(requestBytes(csr));
  } catch (err) {
    if (err instanceof CertificateRequestError) throw new Error(`unable to parse csr ${JSON.stringify(name)}: ${err.message}`);
    throw err;
  }
}

export function usagesOf(csr: JsonObject): string[] {
  const usages = csrSpec(csr).usages;
  return Array.isArray(usages) ? usages.filter((u): u is string => typeof u === 'string') : [];
}

export function signerNameOf(csr: JsonObject): string {
  const name = csrSpec(csr).signerName;
  return typeof name === 'string' ? name : '';
}

/** Appends a condition to a CSR being written (the strategy stamps lastTransitionTime). */
export function appendCondition(csr: JsonObject, condition: CsrCondition): void {
  const status = { ...objectOrEmpty(csr.status) };
  status.conditions = [...csrConditions(csr), condition];
  csr.status = status;
}

/** metav1.Now() as serialized. */
export function timestamp(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
