/**
 * certificates.k8s.io/v1 CertificateSigningRequest validation as v1.25 runs it
 * (k8s.io/kubernetes pkg/apis/certificates/validation/validation.go, spec 02 §2.3):
 *
 * - create: object metadata (any name), a PEM PKCS#10 request whose signature checks, usages
 *   present, known and unique, a well-formed signerName that is not
 *   `kubernetes.io/legacy-unknown`, expirationSeconds ≥ 600, well-formed conditions (types
 *   unique and non-empty, status required, Approved/Denied/Failed only True, Approved and
 *   Denied exclusive), status.certificate only PEM CERTIFICATE blocks;
 * - every update: the same on the new object, plus: no Approved, Denied or Failed condition is
 *   ever removed, status.certificate is never changed once set;
 * - main and status updates may not add or change Approved/Denied conditions (only the
 *   approval subresource may); only the status subresource may set status.certificate.
 *
 * Problems already present in the stored object are tolerated on update, as v1.25 does for
 * data written by older releases (getValidationOptions). Field errors keep kube's paths and
 * texts; a bad request shows as Go prints a []byte.
 */
import { FieldPath } from './field-path';
import { GoValue, duplicate, forbidden, goQuote, invalid, notSupported, required, tooLong, type FieldError } from './field-error';
import { objectsAt, optionalNumberAt, stringAt, stringsAt } from './json-value';
import { isDNS1123Label, isDNS1123Subdomain } from './name-validation';
import { validateObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { CertificateRequestError, certificateChainError, certificateRequestSignatureError, parseCertificateRequestPem } from './certificate-request';
import { asJsonObject, type JsonObject, metadataOf } from '../object';

export const LEGACY_UNKNOWN_SIGNER_NAME = 'kubernetes.io/legacy-unknown';

/** certificates.KeyUsage values v1.25 accepts (allValidUsages). */
export const KNOWN_KEY_USAGES: readonly string[] = [
  'signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement', 'data encipherment',
  'cert sign', 'crl sign', 'encipher only', 'decipher only', 'any', 'server auth', 'client auth', 'code signing',
  'email protection', 's/mime', 'ipsec end system', 'ipsec tunnel', 'ipsec user', 'timestamping', 'ocsp signing',
  'microsoft sgc', 'netscape sgc',
];
const KNOWN_USAGE_SET = new Set(KNOWN_KEY_USAGES);
const SORTED_USAGES = [...KNOWN_KEY_USAGES].sort();

/** Condition types whose status may only be True. */
const TRUE_ONLY_TYPES = new Set(['Approved', 'Denied', 'Failed']);
const ALL_STATUS_VALUES = ['False', 'True', 'Unknown'];

const DNS1123_SUBDOMAIN_MAX = 253;
const DNS1123_LABEL_MAX = 63;

interface Options {
  allowSettingApprovalConditions: boolean;
  allowSettingCertificate: boolean;
  allowBothApprovedAndDenied: boolean;
  allowLegacySignerName: boolean;
  allowDuplicateConditionTypes: boolean;
  allowEmptyConditionType: boolean;
  allowArbitraryCertificate: boolean;
  allowUnknownUsages: boolean;
  allowDuplicateUsages: boolean;
}

const specPath = FieldPath.root('spec');
const conditionsPath = FieldPath.root('status', 'conditions');
const certificatePath = FieldPath.root('status', 'certificate');

/** The bytes of a `[]byte` field in its JSON form (base64); undefined when absent (a nil slice). */
export function bytesField(value: unknown): Buffer | undefined {
  if (typeof value !== 'string') return undefined;
  return Buffer.from(value, 'base64');
}

/** Go's %#v of a []byte. */
function goBytes(bytes: Buffer | undefined): GoValue {
  if (bytes === undefined) return new GoValue('[]byte(nil)');
  return new GoValue(`[]byte{${[...bytes].map((b) => `0x${b.toString(16)}`).join(', ')}}`);
}

function specOf(csr: JsonObject): JsonObject {
  return asJsonObject(csr['spec']) ?? {};
}

function conditionsOf(csr: JsonObject): JsonObject[] {
  return objectsAt(asJsonObject(csr['status'])?.['conditions']);
}

function certificateOf(csr: JsonObject): Buffer {
  return bytesField(asJsonObject(csr['status'])?.['certificate']) ?? Buffer.alloc(0);
}

/** validateCSR: undefined when the request parses and its signature checks. */
export function certificateRequestError(request: Buffer | undefined): string | undefined {
  try {
    const parsed = parseCertificateRequestPem(request ?? Buffer.alloc(0));
    return certificateRequestSignatureError(parsed);
  } catch (err) {
    if (err instanceof CertificateRequestError) return err.message;
    throw err;
  }
}

/** ValidateSignerName: `<domain>/<path>`, the domain of DNS labels with a dot, the path of subdomains. */
export function validateSignerName(path: FieldPath, signerName: string): FieldError[] {
  const errs: FieldError[] = [];
  if (signerName === '') return [required(path)];
  const segments = signerName.split('/');
  if (segments.length !== 2) {
    return [invalid(path, signerName, 'must be a fully qualified domain and path of the form \'example.com/signer-name\'')];
  }
  const [domain, signerPath] = segments;
  if (domain.length > DNS1123_SUBDOMAIN_MAX) errs.push(tooLong(path, DNS1123_SUBDOMAIN_MAX));
  const domainLabels = domain.split('.');
  for (const label of domainLabels) {
    const labelErrors = isDNS1123Label(label);
    if (labelErrors.length === 0) continue;
    for (const message of labelErrors) errs.push(invalid(path, domain, `validating label ${goQuote(label)}: ${message}`));
    break;
  }
  if (domainLabels.length < 2) errs.push(invalid(path, domain, 'should be a domain with at least two segments separated by dots'));
  for (const label of signerPath.split('.')) {
    const labelErrors = isDNS1123Subdomain(label);
    if (labelErrors.length === 0) continue;
    for (const message of labelErrors) errs.push(invalid(path, signerPath, `validating label ${goQuote(label)}: ${message}`));
    break;
  }
  const maxSignerNameLength = DNS1123_SUBDOMAIN_MAX + (DNS1123_SUBDOMAIN_MAX + DNS1123_LABEL_MAX + 1) + 1;
  if (signerName.length > maxSignerNameLength) errs.push(tooLong(path, maxSignerNameLength));
  return errs;
}

function validateConditions(csr: JsonObject, options: Options): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let hasApproved = false;
  let hasDenied = false;
  conditionsOf(csr).forEach((condition, i) => {
    const type = stringAt(condition['type']);
    const status = stringAt(condition['status']);
    const path = conditionsPath.index(i);
    if (!options.allowEmptyConditionType && type === '') errs.push(required(path.child('type')));
    const allowed = TRUE_ONLY_TYPES.has(type) ? ['True'] : ALL_STATUS_VALUES;
    if (status === '') errs.push(required(path.child('status')));
    else if (!allowed.includes(status)) errs.push(notSupported(path.child('status'), status, allowed));
    if (!options.allowBothApprovedAndDenied) {
      if (type === 'Approved') {
        hasApproved = true;
        if (hasDenied) errs.push(invalid(path.child('type'), type, 'Approved and Denied conditions are mutually exclusive'));
      } else if (type === 'Denied') {
        hasDenied = true;
        if (hasApproved) errs.push(invalid(path.child('type'), type, 'Approved and Denied conditions are mutually exclusive'));
      }
    }
    if (!options.allowDuplicateConditionTypes) {
      if (seen.has(type)) errs.push(duplicate(path.child('type'), type));
      seen.add(type);
    }
  });
  return errs;
}

function validateCertificateSigningRequest(csr: JsonObject, options: Options): FieldError[] {
  // ValidateCertificateRequestName accepts any name: "we don't care what you call your certificate requests".
  const errs = validateObjectMeta(metadataOf(csr), false, () => [], FieldPath.root('metadata'));
  const spec = specOf(csr);
  const request = bytesField(spec['request']);
  const requestError = certificateRequestError(request);
  if (requestError !== undefined) errs.push(invalid(specPath.child('request'), goBytes(request), requestError));
  const usages = stringsAt(spec['usages']);
  if (usages.length === 0) errs.push(required(specPath.child('usages')));
  if (!options.allowUnknownUsages) {
    usages.forEach((usage, i) => {
      if (!KNOWN_USAGE_SET.has(usage)) errs.push(notSupported(specPath.child('usages').index(i), usage, SORTED_USAGES));
    });
  }
  if (!options.allowDuplicateUsages) {
    const seen = new Set<string>();
    usages.forEach((usage, i) => {
      if (seen.has(usage)) errs.push(duplicate(specPath.child('usages').index(i), usage));
      seen.add(usage);
    });
  }
  const signerName = stringAt(spec['signerName']);
  if (!options.allowLegacySignerName && signerName === LEGACY_UNKNOWN_SIGNER_NAME) {
    errs.push(invalid(specPath.child('signerName'), signerName, 'the legacy signerName is not allowed via this API version'));
  } else {
    errs.push(...validateSignerName(specPath.child('signerName'), signerName));
  }
  const expirationSeconds = optionalNumberAt(spec['expirationSeconds']);
  if (expirationSeconds !== undefined && expirationSeconds < 600) {
    errs.push(invalid(specPath.child('expirationSeconds'), expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  errs.push(...validateConditions(csr, options));
  if (!options.allowArbitraryCertificate) {
    const certificateError = certificateChainError(certificateOf(csr));
    if (certificateError !== undefined) errs.push(invalid(certificatePath, '<certificate data>', certificateError));
  }
  return errs;
}

function hasDuplicates(values: readonly string[]): boolean {
  return new Set(values).size !== values.length;
}

/** getValidationOptions: what the stored object already holds is tolerated; subresource rights come off. */
function validationOptions(csr: JsonObject, old: JsonObject | undefined): Options {
  const oldTypes = old === undefined ? [] : conditionsOf(old).map((c) => stringAt(c['type']));
  const oldUsages = old === undefined ? [] : stringsAt(specOf(old)['usages']);
  return {
    allowSettingApprovalConditions: false,
    allowSettingCertificate: false,
    allowBothApprovedAndDenied: oldTypes.includes('Approved') && oldTypes.includes('Denied'),
    allowLegacySignerName: old !== undefined && stringAt(specOf(old)['signerName']) === LEGACY_UNKNOWN_SIGNER_NAME,
    allowDuplicateConditionTypes: hasDuplicates(oldTypes),
    allowEmptyConditionType: oldTypes.includes(''),
    allowArbitraryCertificate: old !== undefined && (certificateOf(csr).equals(certificateOf(old)) || certificateChainError(certificateOf(old)) !== undefined),
    allowUnknownUsages: oldUsages.some((u) => !KNOWN_USAGE_SET.has(u)),
    allowDuplicateUsages: hasDuplicates(oldUsages),
  };
}

function conditionsOfType(csr: JsonObject, type: string): JsonObject[] {
  return conditionsOf(csr).filter((c) => stringAt(c['type']) === type);
}

/** Approved and not Denied, by the stored conditions (a status update cannot change them). */
function isApprovedRequest(csr: JsonObject): boolean {
  const isTrue = (type: string) => conditionsOfType(csr, type).some((c) => (c as { status?: unknown }).status === 'True');
  return isTrue('Approved') && !isTrue('Denied');
}

function validateUpdateWith(csr: JsonObject, old: JsonObject, options: Options): FieldError[] {
  const errs = validateCertificateSigningRequest(csr, options);
  for (const type of ['Approved', 'Denied', 'Failed']) {
    if (conditionsOfType(csr, type).length < conditionsOfType(old, type).length) {
      errs.push(forbidden(conditionsPath, `updates may not remove a condition of type ${goQuote(type)}`));
    }
  }
  if (!options.allowSettingApprovalConditions) {
    for (const type of ['Approved', 'Denied']) {
      const before = conditionsOfType(old, type);
      const after = conditionsOfType(csr, type);
      if (after.length < before.length) continue;
      if (after.length > before.length) errs.push(forbidden(conditionsPath, `updates may not add a condition of type ${goQuote(type)}`));
      else if (JSON.stringify(before) !== JSON.stringify(after)) errs.push(forbidden(conditionsPath, `updates may not modify a condition of type ${goQuote(type)}`));
    }
  }
  const certificate = certificateOf(csr);
  const oldCertificate = certificateOf(old);
  if (!certificate.equals(oldCertificate)) {
    if (!options.allowSettingCertificate) errs.push(forbidden(certificatePath, 'updates may not set certificate content'));
    else if (oldCertificate.length > 0) errs.push(forbidden(certificatePath, 'updates may not modify existing certificate content'));
    // Stricter than v1.25, whose API lets a signer with `sign` issue an unapproved request: the
    // contract's states go pending -> approved -> issued, so a certificate needs an approval.
    else if (!isApprovedRequest(old)) errs.push(forbidden(certificatePath, 'a certificate may only be set on an approved request'));
  }
  return [...errs, ...validateObjectMetaUpdate(metadataOf(csr), metadataOf(old), FieldPath.root('metadata'))];
}

export function validateCertificateSigningRequestCreate(csr: JsonObject): FieldError[] {
  return validateCertificateSigningRequest(csr, validationOptions(csr, undefined));
}

export function validateCertificateSigningRequestUpdate(csr: JsonObject, old: JsonObject): FieldError[] {
  return validateUpdateWith(csr, old, validationOptions(csr, old));
}

export function validateCertificateSigningRequestStatusUpdate(csr: JsonObject, old: JsonObject): FieldError[] {
  return validateUpdateWith(csr, old, { ...validationOptions(csr, old), allowSettingCertificate: true });
}

export function validateCertificateSigningRequestApprovalUpdate(csr: JsonObject, old: JsonObject): FieldError[] {
  return validateUpdateWith(csr, old, { ...validationOptions(csr, old), allowSettingApprovalConditions: true });
}
