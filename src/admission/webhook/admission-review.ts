/**
 * The AdmissionReview a webhook receives and what its answer must be (spec 02 §4.4 points 1-5;
 * apiserver admission/plugin/webhook/request/admissionreview.go and webhook/errors):
 *
 * - version: the first of the webhook's admissionReviewVersions this server knows (`v1`,
 *   `v1beta1`); none known is a calling error (failurePolicy decides);
 * - request: uid, kind, resource, subResource, requestKind, requestResource,
 *   requestSubResource, name, namespace, operation, userInfo, object, oldObject, dryRun,
 *   options, in the field order and with the omissions of v1.25's JSON (object, oldObject and
 *   options are `null` when absent; dryRun is always there); object and oldObject in the field
 *   order of v1.25's typed objects (a custom resource's keys sorted), whatever order the client
 *   sent;
 * - answer (v1): apiVersion `admission.k8s.io/v1`, kind `AdmissionReview`, response.uid equal to
 *   the request's, patchType and patch together, no patch from a validating webhook;
 *   (v1beta1): none of that is checked, and a mutating webhook's patch is taken as a JSONPatch;
 * - a refusal becomes the webhook's Status with a code of at least 400 and the message
 *   `admission webhook "NAME" denied the request: <message or reason>` (or `... denied the
 *   request without explanation`).
 */
import { ApiError, type StatusDetails, type StatusReason } from '../../util';
import type { UserInfo } from '../../authn';
import { inGoOrder } from '../../apis/field-order';
import { type JsonObject, asJsonObject } from '../../apis/object';

export type AdmissionReviewVersion = 'v1' | 'v1beta1';

const KNOWN_VERSIONS: readonly AdmissionReviewVersion[] = ['v1', 'v1beta1'];

/** The version to send, or undefined when the webhook accepts none this server knows. */
export function chooseReviewVersion(accepted: readonly string[]): AdmissionReviewVersion | undefined {
  for (const version of accepted) {
    if ((KNOWN_VERSIONS as readonly string[]).includes(version)) return version as AdmissionReviewVersion;
  }
  return undefined;
}

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

export interface ReviewRequestFields {
  readonly uid: string;
  /** What the webhook registered for (an equivalent resource under matchPolicy Equivalent). */
  readonly kind: GroupVersionKind;
  readonly resource: GroupVersionResource;
  readonly subResource: string;
  /** What the client asked for. */
  readonly requestKind: GroupVersionKind;
  readonly requestResource: GroupVersionResource;
  readonly requestSubResource: string;
  readonly name: string;
  readonly namespace: string;
  readonly operation: string;
  readonly userInfo: UserInfo;
  readonly object?: JsonObject;
  readonly oldObject?: JsonObject;
  readonly dryRun: boolean;
  readonly options?: JsonObject;
}

/** authentication/v1 UserInfo as Go writes it (empty fields omitted). */
function userInfoJson(user: UserInfo): JsonObject {
  const out: JsonObject = {};
  if (user.name !== '') out.username = user.name;
  if (user.uid !== '') out.uid = user.uid;
  if (user.groups.length > 0) out.groups = [...user.groups];
  if (Object.keys(user.extra).length > 0) out.extra = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]));
  return out;
}

/** The AdmissionReview body, as its JSON text (the objects are embedded as they are). */
export function admissionReviewRequest(version: AdmissionReviewVersion, fields: ReviewRequestFields): string {
  const request: JsonObject = {
    uid: fields.uid,
    kind: { group: fields.kind.group, version: fields.kind.version, kind: fields.kind.kind },
    resource: { group: fields.resource.group, version: fields.resource.version, resource: fields.resource.resource },
  };
  if (fields.subResource !== '') request.subResource = fields.subResource;
  request.requestKind = { group: fields.requestKind.group, version: fields.requestKind.version, kind: fields.requestKind.kind };
  request.requestResource = { group: fields.requestResource.group, version: fields.requestResource.version, resource: fields.requestResource.resource };
  if (fields.requestSubResource !== '') request.requestSubResource = fields.requestSubResource;
  if (fields.name !== '') request.name = fields.name;
  if (fields.namespace !== '') request.namespace = fields.namespace;
  request.operation = fields.operation;
  request.userInfo = userInfoJson(fields.userInfo);
  request.object = fields.object === undefined ? null : inGoOrder(fields.object);
  request.oldObject = fields.oldObject === undefined ? null : inGoOrder(fields.oldObject);
  request.dryRun = fields.dryRun;
  request.options = fields.options ?? null;
  return JSON.stringify({ kind: 'AdmissionReview', apiVersion: `admission.k8s.io/${version}`, request });
}

export interface AdmissionResponse {
  readonly allowed: boolean;
  /** The decoded bytes of `patch` (base64 in the answer); empty when none. */
  readonly patch: Buffer;
  /** `JSONPatch`, or '' without a patch. */
  readonly patchType: string;
  readonly result?: JsonObject;
  readonly warnings: readonly string[];
  readonly auditAnnotations: Readonly<Record<string, string>>;
}

/** Why an answer is not a usable AdmissionReview; the caller reports `received invalid webhook response: ...`. */
export class InvalidResponseError extends Error {}

function decodePatch(value: unknown): Buffer {
  if (value === undefined || value === null || value === '') return Buffer.alloc(0);
  if (typeof value !== 'string') throw new InvalidResponseError('json: cannot unmarshal response.patch into Go struct field of type []uint8');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value.replace(/\s/g, ''))) throw new InvalidResponseError('illegal base64 data in response.patch');
  return Buffer.from(value, 'base64');
}

/** Checks an answer against the request (VerifyAdmissionResponse); InvalidResponseError when unusable. */
export function verifyAdmissionResponse(version: AdmissionReviewVersion, uid: string, mutating: boolean, answer: unknown): AdmissionResponse {
  const review = asJsonObject(answer);
  if (review === undefined) throw new InvalidResponseError('the answer is not a JSON object');
  const response = asJsonObject(review.response);
  if (response === undefined) throw new InvalidResponseError('webhook response was absent');
  const warnings = Array.isArray(response.warnings) ? response.warnings.filter((w): w is string => typeof w === 'string') : [];
  const auditAnnotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(asJsonObject(response.auditAnnotations) ?? {})) {
    if (typeof value === 'string') auditAnnotations[key] = value;
  }
  const result = asJsonObject(response.status);
  const allowed = response.allowed === true;
  if (version === 'v1beta1') {
    // v1beta1 answers were never checked for uid or kind; a mutating webhook's patch is a JSONPatch.
    const patch = mutating ? decodePatch(response.patch) : Buffer.alloc(0);
    return { allowed, patch, patchType: patch.length > 0 ? 'JSONPatch' : '', ...(result === undefined ? {} : { result }), warnings, auditAnnotations };
  }
  if (response.uid !== uid) throw new InvalidResponseError(`expected response.uid="${uid}", got "${typeof response.uid === 'string' ? response.uid : ''}"`);
  if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview') {
    const apiVersion = typeof review.apiVersion === 'string' ? review.apiVersion : '';
    const slash = apiVersion.indexOf('/');
    const got = `${slash < 0 ? '' : apiVersion.slice(0, slash)}/${slash < 0 ? apiVersion : apiVersion.slice(slash + 1)}, Kind=${typeof review.kind === 'string' ? review.kind : ''}`;
    throw new InvalidResponseError(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${got}`);
  }
  const patch = decodePatch(response.patch);
  const patchType = typeof response.patchType === 'string' ? response.patchType : '';
  if (patch.length > 0 && patchType === '') throw new InvalidResponseError('webhook returned response.patch but not response.patchType');
  if (patch.length === 0 && patchType !== '') throw new InvalidResponseError('webhook returned response.patchType but not response.patch');
  if (!mutating && patch.length > 0) throw new InvalidResponseError('validating webhook may not return response.patch');
  if (!mutating && patchType !== '') throw new InvalidResponseError('validating webhook may not return response.patchType');
  return { allowed, patch, patchType, ...(result === undefined ? {} : { result }), warnings, auditAnnotations };
}

/**
 * A webhook's own Status, as the client receives it: kube writes exactly the fields the webhook
 * set, so an empty reason is left out rather than sent as "".
 */
export class WebhookStatusError extends ApiError {
  constructor(code: number, reason: string, message: string, details: StatusDetails | undefined, private readonly statusText: string) {
    super(code, reason as StatusReason, message, details);
  }

  override toStatus(): Record<string, unknown> {
    const status: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: this.statusText, message: this.message };
    if (this.reason !== ('' as StatusReason)) status.reason = this.reason;
    if (this.details !== undefined) status.details = this.details;
    status.code = this.code;
    return status;
  }
}

/** The Status of a refusal (webhook errors ToStatusErr). */
export function rejectionStatus(webhookName: string, result: JsonObject | undefined): WebhookStatusError {
  const deniedBy = `admission webhook "${webhookName}" denied the request`;
  const given = result ?? {};
  let code = typeof given.code === 'number' && Number.isInteger(given.code) ? given.code : 0;
  if (code < 400) code = 400;
  // Go's HTTP server cannot write a code above 999 either; the request then fails as a server error.
  if (code > 999) code = 500;
  const status = typeof given.status === 'string' && given.status !== '' && given.status !== 'Success' ? given.status : 'Failure';
  const reason = typeof given.reason === 'string' ? given.reason : '';
  const message = typeof given.message === 'string' && given.message !== ''
    ? `${deniedBy}: ${given.message}`
    : reason !== '' ? `${deniedBy}: ${reason}` : `${deniedBy} without explanation`;
  const details = asJsonObject(given.details) as StatusDetails | undefined;
  return new WebhookStatusError(code, reason, message, details, status);
}
