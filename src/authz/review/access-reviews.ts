/**
 * The authorization.k8s.io/v1 review objects, evaluated as kube-apiserver v1.25's REST storages
 * do (pkg/registry/authorization/{subjectaccessreview,localsubjectaccessreview,
 * selfsubjectaccessreview,selfsubjectrulesreview} and pkg/apis/authorization/validation):
 *
 * - SubjectAccessReview: the spec's user, groups, extra and uid are asked about;
 * - LocalSubjectAccessReview: the same, limited to the namespace of the request's path;
 * - SelfSubjectAccessReview: the requesting user is asked about;
 * - SelfSubjectRulesReview: the rules the requesting user holds in `spec.namespace`, listed by the
 *   rule resolvers (`incomplete` when one cannot list, e.g. Webhook or Node).
 *
 * Each function is pure over the authorizer it is given: it returns the response object, or
 * the 400/422 ApiError v1.25 answers for a bad request. A version left empty in
 * resourceAttributes is asked about as `*`.
 */
import type { UserInfo } from '../../authn';
import { ApiError, errors, type StatusCause } from '../../util';
import type { AuthorizationAttributes, Authorizer, RuleResolver } from '../authorizer';
import { goQuote } from '../rbac/go-text';
import { type JsonObject, objectOrEmpty } from '../../apis/object';

export const AUTHORIZATION_GROUP = 'authorization.k8s.io';

export type ReviewOutcome = { readonly ok: true; readonly object: Record<string, unknown> } | { readonly ok: false; readonly error: ApiError };

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

interface FieldError { field: string; value: string; detail: string }

/** field.Invalid(...).Error(), with `value` already printed as Go prints it. */
function fieldErrorText(e: FieldError): string {
  return `${e.field}: Invalid value: ${e.value}: ${e.detail}`;
}

function invalid(kind: string, errs: FieldError[]): ApiError {
  const texts = errs.map(fieldErrorText);
  const aggregate = texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
  const causes: StatusCause[] = errs.map((e) => ({ reason: 'FieldValueInvalid', message: `Invalid value: ${e.value}: ${e.detail}`, field: e.field }));
  return errors.invalid(AUTHORIZATION_GROUP, kind, '', `${kind}.${AUTHORIZATION_GROUP} "" is invalid: ${aggregate}`, causes);
}

/** How Go's %#v prints the internal NonResourceAttributes, or "null" when absent. */
function printNonResource(value: unknown): string {
  if (value === undefined || value === null) return '"null"';
  const v = objectOrEmpty(value);
  return `authorization.NonResourceAttributes{Path:${goQuote(str(v.path))}, Verb:${goQuote(str(v.verb))}}`;
}

/** An approximation of %#v of metav1.ObjectMeta: the fields a client is likely to have set. */
function printMeta(meta: JsonObject): string {
  const parts = [`Name:${goQuote(str(meta.name))}`, `GenerateName:${goQuote(str(meta.generateName))}`, `Namespace:${goQuote(str(meta.namespace))}`];
  return `v1.ObjectMeta{${parts.join(', ')}, ...}`;
}

function metaIsEmpty(meta: JsonObject, allow: readonly string[]): boolean {
  for (const [key, value] of Object.entries(meta)) {
    if (allow.includes(key) || key === 'managedFields' || value === null || value === undefined || value === '') continue;
    if (typeof value === 'object' && Object.keys(value as object).length === 0) continue;
    return false;
  }
  return true;
}

function validateSpec(spec: JsonObject, requireSubject: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ra = spec.resourceAttributes;
  const na = spec.nonResourceAttributes;
  const has = (v: unknown): boolean => v !== undefined && v !== null;
  if (has(ra) && has(na)) errs.push({ field: 'spec.nonResourceAttributes', value: printNonResource(na), detail: 'cannot be specified in combination with resourceAttributes' });
  if (!has(ra) && !has(na)) errs.push({ field: 'spec.resourceAttributes', value: printNonResource(na), detail: 'exactly one of nonResourceAttributes or resourceAttributes must be specified' });
  if (requireSubject && str(spec.user) === '' && strs(spec.groups).length === 0) errs.push({ field: 'spec.user', value: goQuote(str(spec.user)), detail: 'at least one of user or group must be specified' });
  return errs;
}

/** authorizationutil.ResourceAttributesFrom / NonResourceAttributesFrom. */
export function attributesFromSpec(user: UserInfo, spec: JsonObject): AuthorizationAttributes {
  const ra = spec.resourceAttributes;
  if (ra !== undefined && ra !== null) {
    const r = objectOrEmpty(ra);
    return {
      user,
      verb: str(r.verb),
      isResourceRequest: true,
      path: '',
      apiGroup: str(r.group),
      apiVersion: str(r.version) === '' ? '*' : str(r.version),
      resource: str(r.resource),
      subresource: str(r.subresource),
      namespace: str(r.namespace),
      name: str(r.name),
    };
  }
  const n = objectOrEmpty(spec.nonResourceAttributes);
  return { user, verb: str(n.verb), isResourceRequest: false, path: str(n.path), apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' };
}

function userFromSpec(spec: JsonObject): UserInfo {
  const extra: Record<string, string[]> = {};
  for (const [key, values] of Object.entries(objectOrEmpty(spec.extra))) extra[key] = strs(values);
  return { name: str(spec.user), uid: str(spec.uid), groups: strs(spec.groups), extra };
}

async function decide(kind: string, body: JsonObject, user: UserInfo, authorizer: Authorizer): Promise<ReviewOutcome> {
  const spec = objectOrEmpty(body.spec);
  const result = await authorizer.authorize(attributesFromSpec(user, spec));
  const status: JsonObject = { allowed: result.decision === 'allow' };
  if (result.decision === 'deny') status.denied = true;
  if (result.reason !== '') status.reason = result.reason;
  if (result.error) status.evaluationError = result.error;
  return {
    ok: true,
    object: { kind, apiVersion: `${AUTHORIZATION_GROUP}/v1`, metadata: { ...objectOrEmpty(body.metadata), creationTimestamp: null }, spec, status },
  };
}

/** POST /apis/authorization.k8s.io/v1/subjectaccessreviews. */
export async function evaluateSubjectAccessReview(body: JsonObject, authorizer: Authorizer): Promise<ReviewOutcome> {
  const kind = 'SubjectAccessReview';
  const errs = validateSpec(objectOrEmpty(body.spec), true);
  const meta = objectOrEmpty(body.metadata);
  if (!metaIsEmpty(meta, [])) errs.push({ field: 'metadata', value: printMeta(meta), detail: 'must be empty' });
  if (errs.length > 0) return { ok: false, error: invalid(kind, errs) };
  return decide(kind, body, userFromSpec(objectOrEmpty(body.spec)), authorizer);
}

/** POST /apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews. */
export async function evaluateLocalSubjectAccessReview(body: JsonObject, requestNamespace: string, authorizer: Authorizer): Promise<ReviewOutcome> {
  const kind = 'LocalSubjectAccessReview';
  const meta = { ...objectOrEmpty(body.metadata) };
  // The create handler fills the namespace from the path, or refuses a different one.
  if (str(meta.namespace) === '') meta.namespace = requestNamespace;
  else if (meta.namespace !== requestNamespace) {
    return { ok: false, error: errors.badRequest('the namespace of the provided object does not match the namespace sent on the request') };
  }
  const spec = objectOrEmpty(body.spec);
  const errs = validateSpec(spec, true);
  if (!metaIsEmpty(meta, ['namespace'])) errs.push({ field: 'metadata', value: printMeta(meta), detail: 'must be empty except for namespace' });
  const ra = spec.resourceAttributes;
  if (ra !== undefined && ra !== null && str(objectOrEmpty(ra).namespace) !== str(meta.namespace)) {
    errs.push({ field: 'spec.resourceAttributes.namespace', value: goQuote(str(objectOrEmpty(ra).namespace)), detail: 'must match metadata.namespace' });
  }
  if (spec.nonResourceAttributes !== undefined && spec.nonResourceAttributes !== null) {
    errs.push({ field: 'spec.nonResourceAttributes', value: printNonResource(spec.nonResourceAttributes), detail: 'disallowed on this kind of request' });
  }
  if (errs.length > 0) return { ok: false, error: invalid(kind, errs) };
  if (requestNamespace === '') return { ok: false, error: errors.badRequest(`namespace is required on this type: ${requestNamespace}`) };
  if (requestNamespace !== str(meta.namespace)) return { ok: false, error: errors.badRequest(`spec.resourceAttributes.namespace must match namespace: ${requestNamespace}`) };
  return decide(kind, { ...body, metadata: meta }, userFromSpec(spec), authorizer);
}

/** POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews, for `user` (the requester). */
export async function evaluateSelfSubjectAccessReview(body: JsonObject, user: UserInfo | undefined, authorizer: Authorizer): Promise<ReviewOutcome> {
  const kind = 'SelfSubjectAccessReview';
  const errs = validateSpec(objectOrEmpty(body.spec), false);
  const meta = objectOrEmpty(body.metadata);
  if (!metaIsEmpty(meta, [])) errs.push({ field: 'metadata', value: printMeta(meta), detail: 'must be empty' });
  if (errs.length > 0) return { ok: false, error: invalid(kind, errs) };
  if (user === undefined) return { ok: false, error: errors.badRequest('no user present on request') };
  return decide(kind, body, user, authorizer);
}

/** POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews, for `user` (the requester). */
export async function evaluateSelfSubjectRulesReview(body: JsonObject, user: UserInfo | undefined, resolver: RuleResolver): Promise<ReviewOutcome> {
  if (user === undefined) return { ok: false, error: errors.badRequest('no user present on request') };
  const namespace = str(objectOrEmpty(body.spec).namespace);
  if (namespace === '') return { ok: false, error: errors.badRequest('no namespace on request') };
  const rules = await resolver.rulesFor(user, namespace);
  const status: JsonObject = {
    resourceRules: rules.resourceRules.map((r) => {
      const out: JsonObject = { verbs: [...r.verbs] };
      if (r.apiGroups.length > 0) out.apiGroups = [...r.apiGroups];
      if (r.resources.length > 0) out.resources = [...r.resources];
      if (r.resourceNames.length > 0) out.resourceNames = [...r.resourceNames];
      return out;
    }),
    nonResourceRules: rules.nonResourceRules.map((r) => {
      const out: JsonObject = { verbs: [...r.verbs] };
      if (r.nonResourceURLs.length > 0) out.nonResourceURLs = [...r.nonResourceURLs];
      return out;
    }),
    incomplete: rules.incomplete,
  };
  if (rules.evaluationError !== '') status.evaluationError = rules.evaluationError;
  return { ok: true, object: { kind: 'SelfSubjectRulesReview', apiVersion: `${AUTHORIZATION_GROUP}/v1`, metadata: { creationTimestamp: null }, spec: {}, status } };
}
