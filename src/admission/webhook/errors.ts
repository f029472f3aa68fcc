/**
 * The typed errors of the admission webhooks (apiserver pkg/util/webhook ErrCallingWebhook and
 * ErrWebhookRejection, admission/plugin/webhook/errors). Inside a dispatcher a call ends in one
 * of three ways, and each is handled in one place (dispatch-outcome.ts):
 *
 * | code               | what happened                                        | becomes                                       |
 * |--------------------|------------------------------------------------------|-----------------------------------------------|
 * | CALLING_WEBHOOK    | no usable answer: refused, timed out, HTTP error, garbage, circuit open | failurePolicy Ignore: skipped; Fail: 500 `failed calling webhook "NAME": ...` |
 * | WEBHOOK_REJECTION  | the webhook answered `allowed: false`                | its Status (code >= 400, message prefixed)    |
 * | (an ApiError)      | the server's own failure (a patch that does not apply) | returned as is                              |
 *
 * Configuration that cannot be used (the admission configuration file, its kubeconfig, the
 * ImagePolicyWebhook configuration) is INVALID_CONFIGURATION: the server refuses to start.
 *
 * Invariant: no message carries a credential; the client kubeconfig's contents are never quoted.
 */
import type { ApiError } from '../../util';

export type WebhookErrorCode = 'CALLING_WEBHOOK' | 'WEBHOOK_REJECTION' | 'INVALID_CONFIGURATION';

/** A webhook call that gave no usable answer; `status` is what the rejection metric counts. */
export class CallingWebhookError extends Error {
  override name = 'CallingWebhookError';
  readonly code = 'CALLING_WEBHOOK' as const;

  constructor(
    readonly webhookName: string,
    /** Why, as kube words it after `failed calling webhook "NAME": `. */
    readonly reason: string,
    /** The HTTP code the failure stands for (503 when the webhook could not be reached). */
    readonly statusCode: number,
    options: { cause?: unknown } = {},
  ) {
    super(`failed calling webhook "${webhookName}": ${reason}`, options.cause === undefined ? undefined : { cause: options.cause });
  }
}

/** The webhook refused the request; `status` is the answer the client gets. */
export class WebhookRejectionError extends Error {
  override name = 'WebhookRejectionError';
  readonly code = 'WEBHOOK_REJECTION' as const;

  constructor(readonly status: ApiError) {
    super(status.message);
  }
}

export class WebhookConfigurationError extends Error {
  override name = 'WebhookConfigurationError';
  readonly code = 'INVALID_CONFIGURATION' as const;

  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
}

export function isCallingWebhookError(err: unknown): err is CallingWebhookError {
  return (err as { code?: unknown } | undefined)?.code === 'CALLING_WEBHOOK';
}

export function isWebhookRejectionError(err: unknown): err is WebhookRejectionError {
  return (err as { code?: unknown } | undefined)?.code === 'WEBHOOK_REJECTION';
}

/** The message of anything thrown. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
