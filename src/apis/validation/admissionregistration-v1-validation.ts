/**
 * admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration and MutatingWebhookConfiguration
 * (pkg/apis/admissionregistration/validation and apiserver pkg/util/webhook validation.go, v1.25;
 * spec 02 §4.4 and §7 rule 2): webhook names fully qualified and unique, rules, failurePolicy,
 * matchPolicy, sideEffects (None or NoneOnDryRun, required), timeoutSeconds 1-30, selectors,
 * reinvocationPolicy, exactly one of url (https, no user info, fragment or query) and service,
 * and admissionReviewVersions with one this server knows.
 *
 * On update, as v1.25 ratchets them, the rules on sideEffects, known admissionReviewVersions and
 * unique names apply only when the stored object already kept them.
 */
import { FieldPath } from './field-path';
import { FieldError, duplicate, invalid, notSupported, required } from './field-error';
import { objectsAt, stringAt, stringsAt } from './json-value';
import { validateLabelSelector } from './label-selector';
import { isDNS1035Label, isDNS1123Subdomain, isValidPortNum, nameIsDNSSubdomain } from './name-validation';
import { validateObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { asJsonObject, type JsonObject, metadataOf } from '../object';

const ACCEPTED_REVIEW_VERSIONS = ['v1', 'v1beta1'];
const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const ALL_SIDE_EFFECTS = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];

interface Options {
  requireNoSideEffects: boolean;
  requireRecognizedReviewVersion: boolean;
  requireUniqueNames: boolean;
}

const STRICT: Options = { requireNoSideEffects: true, requireRecognizedReviewVersion: true, requireUniqueNames: true };

function fullyQualifiedName(path: FieldPath, name: string): FieldError[] {
  if (name === '') return [required(path)];
  const errs = isDNS1123Subdomain(name);
  if (errs.length > 0) return [invalid(path, name, errs.join(','))];
  if (name.split('.').length < 3) return [invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

function validateResources(resources: string[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (resources.length === 0) errs.push(required(path));
  const withWildcardSubresources = new Set<string>();
  const subresourcesWithWildcardResource = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSubresource = false;
  resources.forEach((entry, i) => {
    if (entry === '') {
      errs.push(required(path.index(i)));
      return;
    }
    if (entry === '*/*') doubleWildcard = true;
    if (entry === '*') singleWildcard = true;
    const slash = entry.indexOf('/');
    if (slash < 0) {
      withoutSubresource = entry !== '*';
      return;
    }
    const resource = entry.slice(0, slash);
    const subresource = entry.slice(slash + 1);
    if (withWildcardSubresources.has(resource)) errs.push(invalid(path.index(i), entry, `if '${resource}/*' is present, must not specify ${entry}`));
    if (subresourcesWithWildcardResource.has(subresource)) errs.push(invalid(path.index(i), entry, `if '*/${subresource}' is present, must not specify ${entry}`));
    if (subresource === '*') withWildcardSubresources.add(resource);
    if (resource === '*') subresourcesWithWildcardResource.add(subresource);
  });
  if (resources.length > 1 && doubleWildcard) errs.push(invalid(path, resources, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && withoutSubresource) errs.push(invalid(path, resources, "if '*' is present, must not specify other resources without subresources"));
  return errs;
}

function validateRule(rule: JsonObject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const operations = stringsAt(rule['operations']);
  if (operations.length === 0) errs.push(required(path.child('operations')));
  if (operations.length > 1 && operations.includes('*')) errs.push(invalid(path.child('operations'), operations, "if '*' is present, must not specify other operations"));
  operations.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(notSupported(path.child('operations').index(i), op, OPERATIONS));
  });
  const groups = stringsAt(rule['apiGroups']);
  if (groups.length === 0) errs.push(required(path.child('apiGroups')));
  if (groups.length > 1 && groups.includes('*')) errs.push(invalid(path.child('apiGroups'), groups, "if '*' is present, must not specify other API groups"));
  const versions = stringsAt(rule['apiVersions']);
  if (versions.length === 0) errs.push(required(path.child('apiVersions')));
  if (versions.length > 1 && versions.includes('*')) errs.push(invalid(path.child('apiVersions'), versions, "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') errs.push(required(path.child('apiVersions').index(i)));
  });
  errs.push(...validateResources(stringsAt(rule['resources']), path.child('resources')));
  const scope = rule['scope'];
  if (typeof scope === 'string' && !SCOPES.includes(scope)) errs.push(notSupported(path.child('scope'), scope, SCOPES));
  return errs;
}

function validateUrl(path: FieldPath, text: string): FieldError[] {
  const form = '; desired format: https://host[/path]';
  let url: URL;
  try {
    url = new URL(text);
  } catch (err) {
    return [required(path, `url must be a valid URL: ${(err as Error).message}${form}`)];
  }
  const errs: FieldError[] = [];
  const scheme = url.protocol.replace(/:$/, '');
  if (scheme !== 'https') errs.push(invalid(path, scheme, `'https' is the only allowed URL scheme${form}`));
  if (url.host === '') errs.push(invalid(path, url.host, `host must be provided${form}`));
  if (url.username !== '' || url.password !== '') errs.push(invalid(path, url.password === '' ? url.username : `${url.username}:${url.password}`, 'user information is not permitted in the URL'));
  if (url.hash !== '') errs.push(invalid(path, url.hash.slice(1), 'fragments are not permitted in the URL'));
  if (url.search !== '') errs.push(invalid(path, url.search.slice(1), 'query parameters are not permitted in the URL'));
  return errs;
}

function validateService(path: FieldPath, service: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  // v1.25 passes name and namespace to ValidateWebhookService in swapped order: each is reported under the other's field.
  if (stringAt(service['name']) === '') errs.push(required(path.child('namespace'), 'service namespace is required'));
  if (stringAt(service['namespace']) === '') errs.push(required(path.child('name'), 'service name is required'));
  const port = typeof service['port'] === 'number' ? service['port'] : 443;
  const portErrors = isValidPortNum(port);
  if (portErrors.length > 0) errs.push(invalid(path.child('port'), port, `port is not valid: ${portErrors.join(', ')}`));
  if (typeof service['path'] !== 'string') return errs;
  const urlPath = service['path'];
  if (urlPath === '/' || urlPath === '') return errs;
  if (urlPath === '//') return [...errs, invalid(path.child('path'), urlPath, 'segment[0] may not be empty')];
  if (!urlPath.startsWith('/')) errs.push(invalid(path.child('path'), urlPath, "must start with a '/'"));
  let rest = urlPath.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((step, i) => {
    if (step === '') {
      errs.push(invalid(path.child('path'), urlPath, `segment[${i}] may not be empty`));
      return;
    }
    for (const failure of isDNS1123Subdomain(step)) errs.push(invalid(path.child('path'), urlPath, `segment[${i}]: ${failure}`));
  });
  return errs;
}

function validateReviewVersions(versions: string[], requireRecognized: boolean, path: FieldPath): FieldError[] {
  if (versions.length === 0) return [required(path, `must specify one of ${ACCEPTED_REVIEW_VERSIONS.join(', ')}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let accepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(invalid(path.index(i), v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const failure of isDNS1035Label(v)) errs.push(invalid(path.index(i), v, failure));
    if (ACCEPTED_REVIEW_VERSIONS.includes(v)) accepted = true;
  });
  if (requireRecognized && !accepted) errs.push(invalid(path, versions, `must include at least one of ${ACCEPTED_REVIEW_VERSIONS.join(', ')}`));
  return errs;
}

function validateWebhook(hook: JsonObject, mutating: boolean, options: Options, path: FieldPath): FieldError[] {
  const errs = fullyQualifiedName(path.child('name'), stringAt(hook['name']));
  objectsAt(hook['rules']).forEach((rule, i) => errs.push(...validateRule(rule, path.child('rules').index(i))));
  const failurePolicy = hook['failurePolicy'];
  if (typeof failurePolicy === 'string' && !FAILURE_POLICIES.includes(failurePolicy)) errs.push(notSupported(path.child('failurePolicy'), failurePolicy, FAILURE_POLICIES));
  const matchPolicy = hook['matchPolicy'];
  if (typeof matchPolicy === 'string' && !MATCH_POLICIES.includes(matchPolicy)) errs.push(notSupported(path.child('matchPolicy'), matchPolicy, MATCH_POLICIES));
  const allowedSideEffects = options.requireNoSideEffects ? NO_SIDE_EFFECTS : ALL_SIDE_EFFECTS;
  const sideEffects = hook['sideEffects'];
  if (sideEffects === undefined || sideEffects === null) errs.push(required(path.child('sideEffects'), `must specify one of ${allowedSideEffects.join(', ')}`));
  else if (!allowedSideEffects.includes(String(sideEffects))) errs.push(notSupported(path.child('sideEffects'), sideEffects, allowedSideEffects));
  const timeout = hook['timeoutSeconds'];
  if (typeof timeout === 'number' && (timeout > 30 || timeout < 1)) errs.push(invalid(path.child('timeoutSeconds'), timeout, 'the timeout value must be between 1 and 30 seconds'));
  if (hook['namespaceSelector'] !== undefined) errs.push(...validateLabelSelector(hook['namespaceSelector'], path.child('namespaceSelector')));
  if (hook['objectSelector'] !== undefined) errs.push(...validateLabelSelector(hook['objectSelector'], path.child('objectSelector')));
  const reinvocation = hook['reinvocationPolicy'];
  if (mutating && typeof reinvocation === 'string' && !REINVOCATION_POLICIES.includes(reinvocation)) errs.push(notSupported(path.child('reinvocationPolicy'), reinvocation, REINVOCATION_POLICIES));
  const clientConfig = asJsonObject(hook['clientConfig']) ?? {};
  const url = clientConfig['url'];
  const service = asJsonObject(clientConfig['service']);
  if ((typeof url === 'string') === (service !== undefined)) errs.push(required(path.child('clientConfig'), 'exactly one of url or service is required'));
  else if (typeof url === 'string') errs.push(...validateUrl(path.child('clientConfig').child('url'), url));
  else if (service !== undefined) errs.push(...validateService(path.child('clientConfig').child('service'), service));
  return errs;
}

function validateConfiguration(configuration: JsonObject, mutating: boolean, options: Options): FieldError[] {
  const errs = validateObjectMeta(metadataOf(configuration), false, nameIsDNSSubdomain, FieldPath.root('metadata'));
  const names = new Set<string>();
  objectsAt(configuration['webhooks']).forEach((hook, i) => {
    const path = FieldPath.root('webhooks').index(i);
    errs.push(...validateWebhook(hook, mutating, options, path));
    errs.push(...validateReviewVersions(stringsAt(hook['admissionReviewVersions']), options.requireRecognizedReviewVersion, path.child('admissionReviewVersions')));
    const name = stringAt(hook['name']);
    if (options.requireUniqueNames && name !== '') {
      if (names.has(name)) errs.push(duplicate(path.child('name'), name));
      else names.add(name);
    }
  });
  return errs;
}

/** What the stored object already kept, so that an update is not refused for what it inherited. */
function ratchet(old: JsonObject): Options {
  const hooks = objectsAt(old['webhooks']);
  const names = hooks.map((h) => stringAt(h['name']));
  return {
    requireNoSideEffects: hooks.every((h) => NO_SIDE_EFFECTS.includes(stringAt(h['sideEffects']))),
    requireRecognizedReviewVersion: hooks.every((h) => {
      const versions = stringsAt(h['admissionReviewVersions']);
      return versions.length === 0 || versions.some((v) => ACCEPTED_REVIEW_VERSIONS.includes(v));
    }),
    requireUniqueNames: new Set(names).size === names.length,
  };
}

export function validateValidatingWebhookConfiguration(configuration: JsonObject): FieldError[] {
  return validateConfiguration(configuration, false, STRICT);
}

export function validateMutatingWebhookConfiguration(configuration: JsonObject): FieldError[] {
  return validateConfiguration(configuration, true, STRICT);
}

export function validateValidatingWebhookConfigurationUpdate(configuration: JsonObject, old: JsonObject): FieldError[] {
  return [...validateObjectMetaUpdate(metadataOf(configuration), metadataOf(old), FieldPath.root('metadata')), ...validateConfiguration(configuration, false, ratchet(old))];
}

export function validateMutatingWebhookConfigurationUpdate(configuration: JsonObject, old: JsonObject): FieldError[] {
  return [...validateObjectMetaUpdate(metadataOf(configuration), metadataOf(old), FieldPath.root('metadata')), ...validateConfiguration(configuration, true, ratchet(old))];
}
