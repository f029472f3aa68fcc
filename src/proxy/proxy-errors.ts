/**
 * The proxy's failures and the Status each becomes, with kube-apiserver v1.25's codes and
 * texts. kube hands a proxy's plain Go errors to its error writer, which makes a 500 without a
 * reason (responsewriters.ErrorToAPIStatus: `StatusReasonUnknown`, the error's text as the
 * message); the proxy transport of pods/proxy, services/proxy and nodes/proxy wraps a dial
 * failure as 503 `error trying to reach service: ...` (apimachinery util/proxy/transport.go).
 */
import { ApiError, errors } from '../util';
import { BackendDialError } from './proxy-transport';

/** A failure of the upgrade exchange after the backend was reached (no 101, a malformed answer). */
export class UpgradeProxyError extends Error {
  override name = 'UpgradeProxyError';
}

/** A Go error that reached kube's error writer as it was: 500, no reason, its text as the message. */
export class UnknownReasonError extends ApiError {
  constructor(message: string) {
    super(500, 'InternalError', message);
  }

  override toStatus(): Record<string, unknown> {
    const status = super.toStatus();
    // Go omits the empty StatusReasonUnknown.
    delete status.reason;
    return status;
  }
}

/** Exec, attach and port-forward: `error dialing backend: ...`, or the upgrade's own failure, as 500s without a reason. */
export function upgradeFailure(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof BackendDialError) return new UnknownReasonError(`error dialing backend: ${err.message}`);
  if (err instanceof UpgradeProxyError) return new UnknownReasonError(err.message);
  throw err;
}

/** pods/proxy, services/proxy, nodes/proxy and the aggregator: 503 `error trying to reach service: ...`. */
export function reachFailure(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof BackendDialError || err instanceof UpgradeProxyError) return errors.serviceUnavailable(`error trying to reach service: ${err.message}`);
  throw err;
}
