/**
 * apiregistration.k8s.io/v1 APIService (kube-aggregator pkg/apis/apiregistration/validation,
 * v1.25). The name is not a DNS subdomain but exactly `spec.version + "." + spec.group`, which
 * for the core group is `v1.` (a name only the path-segment rules otherwise constrain); only v1
 * may have the empty group. A local APIService (no service) may carry neither a caBundle nor
 * insecureSkipTLSVerify. ObjectMeta is checked by apimachinery's rules alone, as kube-aggregator
 * checks it (no core finalizer-name rule). A status update checks only the conditions' status.
 */
import { FieldPath } from './field-path';
import { FieldError, goQuote, invalid, notSupported, required } from './field-error';
import { objectsAt, optionalNumberAt, stringAt } from './json-value';
import { isDNS1035Label, isDNS1123Subdomain, isValidPathSegmentName, isValidPortNum, type NameValidator } from './name-validation';
import { validateGenericObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { asJsonObject, metadataOf, type JsonObject } from '../object';

const metadataPath = FieldPath.root('metadata');
const specPath = FieldPath.root('spec');
const CONDITION_STATUSES = ['True', 'False', 'Unknown'];

/** The name rule: a path segment first, then the one name the spec allows. */
function apiServiceName(requiredName: string): NameValidator {
  return (name) => {
    const failures = isValidPathSegmentName(name);
    if (failures.length > 0) return failures;
    return name === requiredName ? [] : [`must be \`spec.version+"."+spec.group\`: ${goQuote(requiredName)}`];
  };
}

/** The bytes a base64 caBundle decodes to (Go's []byte field). */
function caBundleLength(value: unknown): number {
  return typeof value === 'string' ? Buffer.from(value, 'base64').length : 0;
}

export function validateApiService(apiService: JsonObject): FieldError[] {
  const spec = asJsonObject(apiService['spec']) ?? {};
  const group = stringAt(spec['group']);
  const version = stringAt(spec['version']);
  const errs = validateGenericObjectMeta(metadataOf(apiService), false, apiServiceName(`${version}.${group}`), metadataPath);
  if (group === '' && version !== 'v1') errs.push(required(specPath.child('group'), 'only v1 may have an empty group and it better be legacy kube'));
  if (group !== '') for (const failure of isDNS1123Subdomain(group)) errs.push(invalid(specPath.child('group'), group, failure));
  for (const failure of isDNS1035Label(version)) errs.push(invalid(specPath.child('version'), version, failure));
  const groupPriorityMinimum = optionalNumberAt(spec['groupPriorityMinimum']) ?? 0;
  if (groupPriorityMinimum <= 0 || groupPriorityMinimum > 20000) errs.push(invalid(specPath.child('groupPriorityMinimum'), groupPriorityMinimum, 'must be positive and less than 20000'));
  const versionPriority = optionalNumberAt(spec['versionPriority']) ?? 0;
  if (versionPriority <= 0 || versionPriority > 1000) errs.push(invalid(specPath.child('versionPriority'), versionPriority, 'must be positive and less than 1000'));
  const caBundleBytes = caBundleLength(spec['caBundle']);
  const insecureSkipTLSVerify = spec['insecureSkipTLSVerify'] === true;
  const service = asJsonObject(spec['service']);
  if (service === undefined) {
    if (caBundleBytes !== 0) errs.push(invalid(specPath.child('caBundle'), `${caBundleBytes} bytes`, 'local APIServices may not have a caBundle'));
    if (insecureSkipTLSVerify) errs.push(invalid(specPath.child('insecureSkipTLSVerify'), true, 'local APIServices may not have insecureSkipTLSVerify'));
    return errs;
  }
  const servicePath = specPath.child('service');
  if (stringAt(service['namespace']) === '') errs.push(required(servicePath.child('namespace')));
  if (stringAt(service['name']) === '') errs.push(required(servicePath.child('name')));
  // v1 defaults the port to 443; what reaches here without one is Go's zero.
  const port = optionalNumberAt(service['port']) ?? 0;
  const portFailures = isValidPortNum(port);
  if (portFailures.length > 0) errs.push(invalid(servicePath.child('port'), port, `port is not valid: ${portFailures.join(', ')}`));
  if (insecureSkipTLSVerify && caBundleBytes > 0) errs.push(invalid(specPath.child('insecureSkipTLSVerify'), true, 'may not be true if caBundle is present'));
  return errs;
}

export function validateApiServiceUpdate(apiService: JsonObject, old: JsonObject): FieldError[] {
  return [...validateObjectMetaUpdate(metadataOf(apiService), metadataOf(old), metadataPath), ...validateApiService(apiService)];
}

export function validateApiServiceStatusUpdate(apiService: JsonObject, old: JsonObject): FieldError[] {
  const errs = validateObjectMetaUpdate(metadataOf(apiService), metadataOf(old), metadataPath);
  const conditions = objectsAt(asJsonObject(apiService['status'])?.['conditions']);
  conditions.forEach((condition, i) => {
    const status = stringAt(condition['status']);
    if (!CONDITION_STATUSES.includes(status)) errs.push(notSupported(FieldPath.root('status', 'conditions').index(i).child('status'), status, CONDITION_STATUSES));
  });
  return errs;
}
