
export type { FieldError, FieldErrorType } from './field-error';
export { GoValue, fieldErrorCause, fieldErrorMessage, formatGoValue, goQuote, invalidMessage, qualifiedKind, required, invalid, notSupported, tooLong, forbidden } from './field-error';
export { FieldPath } from './field-path';
export { apiGroupOf, validateCreate, validateStatusUpdate, validateUpdate } from './object-validator';
export { withGeneratedJobSelector } from './batch-v1-validation';
export { cronScheduleError } from './cron-schedule';
export { invalidStatus, type InvalidStatus, type StatusCause } from './invalid-status';
export {
  KNOWN_KEY_USAGES,
  LEGACY_UNKNOWN_SIGNER_NAME,
  bytesField,
  validateCertificateSigningRequestApprovalUpdate,
  validateCertificateSigningRequestCreate,
  validateCertificateSigningRequestStatusUpdate,
  validateCertificateSigningRequestUpdate,
  validateSignerName,
} from './certificates-v1-validation';
export {
  CertificateRequestError,
  OID,
  certificateChainError,
  certificateRequestPublicKey,
  certificateRequestSignatureError,
  decodePemBlocks,
  encodePemBlock,
  ipString,
  parseCertificateRequestDer,
  parseCertificateRequestPem,
  type CertificateRequest,
  type PemBlock,
  type PublicKeyAlgorithm,
  type SubjectName,
} from './certificate-request';
export { DerError, derChildren, derContent, derOid, derRaw, expectSequence, readDer, readDerElement, type DerElement } from './der-reader';
