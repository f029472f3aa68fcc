export { packagePath, packageRoot } from './package-root';
export { AssertionError, assert } from './assert';
export { ApiError, errors, isApiError, qualifiedResource, type GroupResource, type StatusCause, type StatusDetails, type StatusReason } from './api-error';
