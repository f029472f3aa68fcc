/**
 * scheduling.k8s.io/v1 PriorityClass (pkg/apis/scheduling/validation, v1.25): a name with the
 * `system-` prefix is reserved for the two system classes and must carry their exact value and
 * globalDefault false; any other class may not exceed HighestUserDefinablePriority (one billion);
 * preemptionPolicy, when set, is PreemptLowerPriority or Never; value and preemptionPolicy are
 * immutable.
 */
import { FieldPath } from './field-path';
import { FieldError, forbidden, invalid, notSupported, required } from './field-error';
import { optionalNumberAt, stringAt } from './json-value';
import { nameIsDNSSubdomain } from './name-validation';
import { validateObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { type JsonObject, metadataOf } from '../object';

const SYSTEM_PREFIX = 'system-';
const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
const SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;
/** The classes kube-apiserver creates at start (scheduling/v1 SystemPriorityClasses). */
const SYSTEM_PRIORITY_CLASSES: ReadonlyMap<string, number> = new Map([
  ['system-node-critical', SYSTEM_CRITICAL_PRIORITY + 1000],
  ['system-cluster-critical', SYSTEM_CRITICAL_PRIORITY],
]);
const PREEMPTION_POLICIES = ['PreemptLowerPriority', 'Never'];

const metadataPath = FieldPath.root('metadata');
const valuePath = FieldPath.root('value');
const preemptionPolicyPath = FieldPath.root('preemptionPolicy');

function valueOf(priorityClass: JsonObject): number {
  return optionalNumberAt(priorityClass['value']) ?? 0;
}

/** Why a system- name does not fit, as IsKnownSystemPriorityClass says it; undefined when it fits. */
function systemClassMismatch(name: string, value: number, globalDefault: boolean): string | undefined {
  const expected = SYSTEM_PRIORITY_CLASSES.get(name);
  if (expected === undefined) return `${name} is not a known system priority class`;
  if (expected !== value) return `value of ${name} PriorityClass must be ${expected}`;
  if (globalDefault) return `globalDefault of ${name} PriorityClass must be false`;
  return undefined;
}

export function validatePriorityClass(priorityClass: JsonObject): FieldError[] {
  const metadata = metadataOf(priorityClass);
  const errs = validateObjectMeta(metadata, false, nameIsDNSSubdomain, metadataPath);
  const name = stringAt(metadata['name']);
  const value = valueOf(priorityClass);
  if (name.startsWith(SYSTEM_PREFIX)) {
    const mismatch = systemClassMismatch(name, value, priorityClass['globalDefault'] === true);
    if (mismatch !== undefined) errs.push(forbidden(metadataPath.child('name'), `priority class names with '${SYSTEM_PREFIX}' prefix are reserved for system use only. error: ${mismatch}`));
  } else if (value > HIGHEST_USER_DEFINABLE_PRIORITY) {
    errs.push(forbidden(valuePath, `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`));
  }
  const policy = priorityClass['preemptionPolicy'];
  if (policy === '') errs.push(required(preemptionPolicyPath));
  else if (policy !== undefined && policy !== null && !PREEMPTION_POLICIES.includes(String(policy))) errs.push(notSupported(preemptionPolicyPath, policy, PREEMPTION_POLICIES));
  return errs;
}

export function validatePriorityClassUpdate(priorityClass: JsonObject, old: JsonObject): FieldError[] {
  const errs = validateObjectMetaUpdate(metadataOf(priorityClass), metadataOf(old), metadataPath);
  if (valueOf(priorityClass) !== valueOf(old)) errs.push(forbidden(valuePath, 'may not be changed in an update.'));
  const policy = priorityClass['preemptionPolicy'] ?? null;
  if (policy !== (old['preemptionPolicy'] ?? null)) errs.push(invalid(preemptionPolicyPath, policy, 'field is immutable'));
  return errs;
}
