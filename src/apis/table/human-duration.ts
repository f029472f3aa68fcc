/**
 * k8s.io/apimachinery pkg/util/duration as kube-apiserver v1.25 prints ages: HumanDuration for the
 * AGE-like cells of the built-in printers, ShortHumanDuration where a coarser figure is wanted.
 * Both take milliseconds and, like Go's int conversion, truncate toward zero.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** About 2-3 significant figures: "45s", "5m30s", "3h", "2d5h", "3y120d". */
export function humanDuration(milliseconds: number): string {
  const seconds = Math.trunc(milliseconds / SECOND);
  // Up to one second in the future is forgiven as clock skew between machines.
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(milliseconds / MINUTE);
  if (minutes < 10) {
    const remainder = seconds % 60;
    return remainder === 0 ? `${minutes}m` : `${minutes}m${remainder}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(milliseconds / HOUR);
  if (hours < 8) {
    const remainder = minutes % 60;
    return remainder === 0 ? `${hours}h` : `${hours}h${remainder}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const remainder = hours % 24;
    return remainder === 0 ? `${days}d` : `${days}d${remainder}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const remainder = days % 365;
    return remainder === 0 ? `${years}y` : `${years}y${remainder}d`;
  }
  return `${years}y`;
}

/** One unit only: "45s", "5m", "3h", "12d", "2y". */
export function shortHumanDuration(milliseconds: number): string {
  const seconds = Math.trunc(milliseconds / SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.trunc(milliseconds / MINUTE);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.trunc(milliseconds / HOUR);
  if (hours < 24) return `${hours}h`;
  if (hours < 24 * 365) return `${Math.trunc(hours / 24)}d`;
  return `${Math.trunc(milliseconds / HOUR / 24 / 365)}y`;
}
