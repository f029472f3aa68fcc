export { packagePath, packageRoot } from './package-root';
export { AssertionError, assert } from './assert';
export { ApiError, errors, isApiError, qualifiedResource, type GroupResource, type StatusCause, type StatusDetails, type StatusReason } from './api-error';
export { int64ToNumber, parseInt64, type ParsedInt64 } from './go-strconv';
export { formatGoDuration, parseGoDuration, parseGoDurationOrError } from './go-duration';
export { MAX_BODY_DEPTH, nestsDeeperThan } from './json-depth';
export { jose, nodeForge, undici } from './lazy-packages';
