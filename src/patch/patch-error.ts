/**
 * A patch that cannot be applied, carrying the Status kube-apiserver v1.25 answers with
 * (k8s.io/apiserver pkg/endpoints/handlers/patch.go and the libraries it calls):
 *
 * - a body that does not decode as the patch type: 400 BadRequest with the decoder's message;
 * - a JSON patch with more than 10000 operations: 413 RequestEntityTooLarge;
 * - a JSON patch operation that does not apply (failed `test`, missing path, ...), and the strategic
 *   merge patch errors `ErrNoListOfLists`/`ErrPatchContentNotMatchRetainKeys`: 422 Invalid built by
 *   `errors.NewGenericServerResponse`, whose message is always the fixed generic text and whose
 *   details are empty; the library's own text is dropped (kept here in `detail` for logs);
 * - any other library error (e.g. "Invalid JSON Patch" for a null merge patch, "merging lists cannot
 *   yet be specified in the patch"): not a Status error, so `responsewriters.ErrorToAPIStatus` turns it
 *   into code 500 with the bare message and no reason at all (`StatusReasonUnknown`);
 * - a patched object that does not decode into the kind's type (a value of the wrong type, or under
 *   fieldValidation=Strict an unknown or repeated member): `errors.NewInvalid` with an empty kind and
 *   name and one `field.Invalid` on the path `patch`, whose value is the patched document (JSON and
 *   merge patch) or the patch (strategic merge patch): 422 Invalid.
 *
 * It is an ApiError so the HTTP edge renders it like every other failure.
 */
import { fieldErrorCause, invalidMessage, type FieldError } from '../apis/validation';
import { ApiError, type StatusDetails } from '../util';

/** The fixed message of `NewGenericServerResponse(422, ...)` (apimachinery pkg/api/errors). */
export const GENERIC_UNPROCESSABLE_MESSAGE = 'the server rejected our request due to an error in our request';

/** k8s.io/apiserver pkg/endpoints/handlers/patch.go maxJSONPatchOperations. */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

export class PatchError extends ApiError {
  override name = 'PatchError';

  private constructor(
    code: number,
    reason: 'BadRequest' | 'Invalid' | 'RequestEntityTooLarge' | 'InternalError',
    message: string,
    /** What the patch library itself said; for logs, never sent to the client. */
    readonly detail: string,
    /** kube sends no `reason` for errors that were never typed (StatusReasonUnknown). */
    readonly reasonUnknown: boolean,
    details: StatusDetails | undefined,
  ) {
    super(code, reason, message, details);
  }

  /** 400: the body is not a patch of its content type. */
  static badRequest(message: string): PatchError {
    return new PatchError(400, 'BadRequest', message, message, false, undefined);
  }

  /** 422 with kube's generic text; `detail` is the library's reason, which kube does not send. */
  static unprocessable(detail: string): PatchError {
    return new PatchError(422, 'Invalid', GENERIC_UNPROCESSABLE_MESSAGE, detail, false, {});
  }

  /**
   * 422 for a patched object kube cannot turn into its type: `invalidValue` is the text kube shows
   * (quoted with %q), `reason` the decoder's (or the strict decoding) error.
   */
  static undecodable(invalidValue: string, reason: string): PatchError {
    const failure: FieldError = { type: 'FieldValueInvalid', field: 'patch', badValue: invalidValue, detail: reason };
    const message = invalidMessage('', '', [failure]);
    return new PatchError(422, 'Invalid', message, message, false, { causes: [fieldErrorCause(failure)] });
  }

  /** 413 for a JSON patch longer than kube accepts. */
  static tooManyOperations(count: number): PatchError {
    const message = `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${count}`;
    return new PatchError(413, 'RequestEntityTooLarge', message, message, false, undefined);
  }

  /**
   * 500 without a reason: a plain Go error that reached the response writer. `reason` reads
   * InternalError in process, but the Status omits it as kube does.
   */
  static untyped(message: string): PatchError {
    return new PatchError(500, 'InternalError', message, message, true, undefined);
  }

  override toStatus(): Record<string, unknown> {
    const status = super.toStatus();
    if (this.reasonUnknown) delete status.reason;
    return status;
  }
}

export function isPatchError(err: unknown): err is PatchError {
  return err instanceof PatchError;
}
