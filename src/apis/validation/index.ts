export type { JsonObject } from './json-value';
export type { FieldError, FieldErrorType } from './field-error';
export { GoValue, fieldErrorCause, fieldErrorMessage, formatGoValue, goQuote, invalidMessage, qualifiedKind, required, invalid, notSupported, tooLong, forbidden } from './field-error';
export { FieldPath } from './field-path';
export { apiGroupOf, validateCreate, validateStatusUpdate, validateUpdate } from './object-validator';
export { withGeneratedJobSelector } from './batch-v1-validation';
export { cronScheduleError } from './cron-schedule';
export { invalidStatus, type InvalidStatus, type StatusCause } from './invalid-status';
