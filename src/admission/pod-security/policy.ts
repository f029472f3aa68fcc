/**
 * Pod Security Standards policies (kubernetes staging/src/k8s.io/pod-security-admission/api and
 * policy/registry.go, v1.25): a namespace's policy is three level:version pairs (enforce, audit,
 * warn) from its pod-security.kubernetes.io/<mode>[-version] labels over the configured
 * defaults. Evaluating a pod at a level:version runs that version's baseline checks, plus for
 * restricted the restricted ones and the baseline ones they do not override, baseline first,
 * each group in check-id order, so messages are stable. `latest`, and versions newer than this
 * server knows, mean v1.25.
 */
import { CHECKS, type Check, type CheckResult, type Level } from './checks';
import type { JsonObject } from '../../apis/object';

export type { Level } from './checks';

/** The newest policy version this server implements (kube-apiserver v1.25). */
export const LATEST_MINOR = 25;
export const LABEL_PREFIX = 'pod-security.kubernetes.io/';
export const MODES = ['enforce', 'audit', 'warn'] as const;
export type Mode = (typeof MODES)[number];
const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

export interface LevelVersion {
  readonly level: Level;
  /** A minor version of 1.x, or 'latest'. */
  readonly version: number | 'latest';
}

export type Policy = Record<Mode, LevelVersion>;

export const PRIVILEGED_LATEST: LevelVersion = { level: 'privileged', version: 'latest' };

export function levelVersionText(lv: LevelVersion): string {
  return `${lv.level}:${lv.version === 'latest' ? 'latest' : `v1.${lv.version}`}`;
}

export function sameLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return a.level === b.level && a.version === b.version;
}

/** api.CompareLevels: -1, 0 or 1 as a is less strict, as strict or stricter than b. */
export function compareLevels(a: Level, b: Level): number {
  return Math.sign(LEVELS.indexOf(a) - LEVELS.indexOf(b));
}

export function parseLevel(text: string): Level | undefined {
  return (LEVELS as readonly string[]).includes(text) ? (text as Level) : undefined;
}

export function parseVersion(text: string): number | 'latest' | undefined {
  if (text === 'latest') return 'latest';
  const match = /^v1\.([0-9]|[1-9][0-9]*)$/.exec(text);
  return match === null ? undefined : Number(match[1]);
}

/** One invalid label, as field.Invalid's text without the path's prefix. */
export interface LabelError {
  readonly field: string;
  readonly value: string;
  readonly detail: string;
}

/**
 * api.PolicyToEvaluate: the namespace's labels over `defaults`. An invalid level means
 * restricted for enforce (fail closed) and privileged for audit and warn (fail open); an
 * invalid version means latest. The errors are returned beside the policy.
 */
export function policyToEvaluate(labels: Record<string, string>, defaults: Policy): { policy: Policy; errors: LabelError[] } {
  const policy: Record<Mode, { level: Level; version: number | 'latest' }> = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errors: LabelError[] = [];
  for (const mode of MODES) {
    const levelKey = LABEL_PREFIX + mode;
    if (levelKey in labels) {
      const level = parseLevel(labels[levelKey]);
      if (level === undefined) {
        errors.push({ field: `metadata.labels[${levelKey}]`, value: labels[levelKey], detail: `must be one of ${LEVELS.join(', ')}` });
        policy[mode].level = mode === 'enforce' ? 'restricted' : 'privileged';
      } else {
        policy[mode].level = level;
      }
    }
    const versionKey = `${levelKey}-version`;
    if (versionKey in labels) {
      const version = parseVersion(labels[versionKey]);
      if (version === undefined) errors.push({ field: `metadata.labels[${versionKey}]`, value: labels[versionKey], detail: 'must be "latest" or "v1.x"' });
      policy[mode].version = version ?? 'latest';
    }
  }
  return { policy, errors };
}

type VersionedFn = Check['versions'][number];

/** The implementation of `check` for minor version `minor`, if the check exists then. */
function implementationAt(check: Check, minor: number): VersionedFn | undefined {
  let found: VersionedFn | undefined;
  for (const v of check.versions) if (v.minor <= minor) found = v;
  return found;
}

const byId = (a: Check, b: Check) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const BASELINE = CHECKS.filter((c) => c.level === 'baseline').sort(byId);
const RESTRICTED = CHECKS.filter((c) => c.level === 'restricted').sort(byId);

/** Every failed check of the pod at `lv`, in message order. */
export function evaluatePod(lv: LevelVersion, metadata: JsonObject, spec: JsonObject): CheckResult[] {
  if (lv.level === 'privileged') return [];
  const minor = lv.version === 'latest' || lv.version > LATEST_MINOR ? LATEST_MINOR : lv.version;
  const restricted = lv.level === 'restricted' ? RESTRICTED.map((c) => implementationAt(c, minor)).filter((v): v is VersionedFn => v !== undefined) : [];
  const overridden = new Set(restricted.flatMap((v) => v.overrides ?? []));
  const functions = [
    ...BASELINE.filter((c) => !overridden.has(c.id)).map((c) => implementationAt(c, minor)).filter((v): v is VersionedFn => v !== undefined),
    ...restricted,
  ];
  const failures: CheckResult[] = [];
  for (const v of functions) {
    const result = v.fn(metadata, spec);
    if (result !== undefined) failures.push(result);
  }
  return failures;
}

/** AggregateCheckResult.ForbiddenDetail: `reason (detail), reason (detail)`. */
export function forbiddenDetail(failures: readonly CheckResult[]): string {
  return failures.map((f) => (f.detail === '' ? f.reason : `${f.reason} (${f.detail})`)).join(', ');
}

/** AggregateCheckResult.ForbiddenReason: the reasons alone. */
export function forbiddenReason(failures: readonly CheckResult[]): string {
  return failures.map((f) => f.reason).join(', ');
}
