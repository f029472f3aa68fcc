/**
 * The typed errors of the API server. Every layer throws these; the HTTP edge turns them into a
 * Kubernetes `Status` body (`toStatus`) with the same reason, code, message and details that
 * kube-apiserver v1.25 would send for the same failure (apimachinery pkg/api/errors).
 */

export type StatusReason =
  | 'BadRequest' | 'Unauthorized' | 'Forbidden' | 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Gone'
  | 'Invalid' | 'ServerTimeout' | 'Timeout' | 'TooManyRequests' | 'MethodNotAllowed' | 'NotAcceptable'
  | 'RequestEntityTooLarge' | 'UnsupportedMediaType' | 'InternalError' | 'Expired' | 'ServiceUnavailable'
  /** StatusReasonUnknown: omitted from the body, as Go omits the empty reason. */
  | '';

export interface StatusCause { reason?: string; message?: string; field?: string }

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** The resource a message speaks of: `configmaps` or `deployments.apps`. */
export interface GroupResource { group: string; resource: string }

export function qualifiedResource(gr: GroupResource): string {
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  /** Seconds for a `Retry-After` header, when the failure is worth retrying. */
  get retryAfterSeconds(): number | undefined {
    return this.details?.retryAfterSeconds;
  }

  toStatus(): Record<string, unknown> {
    const status: Record<string, unknown> = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
    };
    if (this.reason !== '') status.reason = this.reason;
    if (this.details !== undefined) status.details = this.details;
    status.code = this.code;
    return status;
  }
}

function details(gr: GroupResource, name?: string, extra: Partial<StatusDetails> = {}): StatusDetails {
  const d: StatusDetails = {};
  if (name !== undefined && name !== '') d.name = name;
  if (gr.group !== '') d.group = gr.group;
  d.kind = gr.resource;
  return { ...d, ...extra };
}

export const errors = {
  notFound(gr: GroupResource, name: string): ApiError {
    return new ApiError(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, details(gr, name));
  },
  /** A path that names no resource the server serves. */
  pathNotFound(): ApiError {
    return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
  },
  alreadyExists(gr: GroupResource, name: string): ApiError {
    return new ApiError(409, 'AlreadyExists', `${qualifiedResource(gr)} "${name}" already exists`, details(gr, name));
  },
  conflict(gr: GroupResource, name: string, why: string): ApiError {
    return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`, details(gr, name));
  },
  /** The optimistic-concurrency failure of an update with a stale resourceVersion. */
  staleResourceVersion(gr: GroupResource, name: string): ApiError {
    return errors.conflict(gr, name, 'the object has been modified; please apply your changes to the latest version and try again');
  },
  invalid(group: string, kind: string, name: string, message: string, causes: StatusCause[]): ApiError {
    const d: StatusDetails = { name };
    if (group !== '') d.group = group;
    d.kind = kind;
    d.causes = causes;
    return new ApiError(422, 'Invalid', message, d);
  },
  /** apimachinery NewForbidden: `<resource> "<name>" is forbidden: <why>`, or `forbidden: <why>` off resources. */
  forbidden(gr: GroupResource, name: string, why: string): ApiError {
    if (gr.resource === '') return new ApiError(403, 'Forbidden', `forbidden: ${why}`, {});
    const subject = name === '' ? qualifiedResource(gr) : `${qualifiedResource(gr)} "${name}"`;
    return new ApiError(403, 'Forbidden', `${subject} is forbidden: ${why}`, details(gr, name));
  },
  badRequest(message: string): ApiError {
    return new ApiError(400, 'BadRequest', message);
  },
  /** 410 for a version or continue token older than the kept history. */
  expired(message: string): ApiError {
    return new ApiError(410, 'Expired', message);
  },
  gone(message: string): ApiError {
    return new ApiError(410, 'Gone', message);
  },
  methodNotAllowed(): ApiError {
    return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
  },
  /** apimachinery NewMethodNotSupported, its message replaced when `message` is given (as v1.25's CRD handler does). */
  methodNotSupported(gr: GroupResource, action: string, message = `${action} is not supported on resources of kind ${JSON.stringify(qualifiedResource(gr))}`): ApiError {
    const d: StatusDetails = {};
    if (gr.group !== '') d.group = gr.group;
    if (gr.resource !== '') d.kind = gr.resource;
    return new ApiError(405, 'MethodNotAllowed', message, d);
  },
  notAcceptable(accepted: string[]): ApiError {
    return new ApiError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);
  },
  unsupportedMediaType(accepted: string[]): ApiError {
    return new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
  },
  requestEntityTooLarge(limitBytes: number): ApiError {
    return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limitBytes}`);
  },
  /** 504 for a resourceVersion the store has not reached after a short wait. */
  tooLargeResourceVersion(requested: number, current: number): ApiError {
    return new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    });
  },
  tooManyRequests(message: string, retryAfterSeconds: number): ApiError {
    return new ApiError(429, 'TooManyRequests', message, { retryAfterSeconds });
  },
  serviceUnavailable(message: string): ApiError {
    return new ApiError(503, 'ServiceUnavailable', message);
  },
  /** An error that was no Status where kube-apiserver met it (errToAPIStatus's fallback): the text alone, no reason. */
  unstructured(code: number, message: string): ApiError {
    return new ApiError(code, '', message);
  },
  internal(err: unknown): ApiError {
    const text = err instanceof Error ? err.message : String(err);
    return new ApiError(500, 'InternalError', `Internal error occurred: ${text}`, { causes: [{ message: text }] });
  },
  timeout(message: string, retryAfterSeconds = 1): ApiError {
    return new ApiError(504, 'Timeout', message, { retryAfterSeconds });
  },
};

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}
