/**
 * One audit.k8s.io/v1 Event, as kube-apiserver v1.25 writes it to its log (apiserver
 * pkg/apis/audit/v1 types.go, pkg/audit/request.go): the fields in Go's order, empty ones left
 * out, timestamps as MicroTime (`2006-01-02T15:04:05.000000Z`).
 *
 * - objectRef (resource requests): resource, namespace, name, uid, apiGroup, apiVersion,
 *   resourceVersion, subresource; name, namespace, uid and resourceVersion are taken from the
 *   request's object when a create or update sends one (LogRequestObject);
 * - responseStatus: `{"metadata":{},"code":N}`, or the Status the response carried (its status,
 *   message, reason, details and code);
 * - requestObject (level Request and above, after RequestReceived): the object sent, or the
 *   patch as sent for a patch (YAML apply patches as JSON); responseObject (RequestResponse,
 *   ResponseComplete): the object or Status written;
 * - annotations: every audit annotation of the request; those a mutating webhook's patch
 *   produced (`patch.webhook.admission.k8s.io/...`) only at level Request and above.
 *
 * Beyond v1.25: no credential is ever written. TokenReview `spec.token`, TokenRequest
 * `status.token` and Secret `data`/`stringData` values are blanked in request and response
 * objects (kube-apiserver logs them at Request level and leaves it to the policy to avoid).
 */
import type { AuditLevel, AuditRecord } from './audit-contract';
import type { UserInfo } from '../authn';
import { type JsonObject, asJsonObject } from '../apis/object';

/** Decodes a Protobuf request body of a kind, for requestObject (the server's codec); undefined when it cannot. */
export type ProtobufBodyDecoder = (bytes: Buffer) => unknown;

const PATCH_ANNOTATION_PREFIX = 'patch.webhook.admission.k8s.io/';
const LEVEL_ORDER: readonly AuditLevel[] = ['None', 'Metadata', 'Request', 'RequestResponse'];

function atLeast(level: AuditLevel, wanted: AuditLevel): boolean {
  return LEVEL_ORDER.indexOf(level) >= LEVEL_ORDER.indexOf(wanted);
}

/** metav1.MicroTime: RFC 3339 with microseconds, in UTC. */
export function microTime(date: Date): string {
  return `${date.toISOString().slice(0, 23)}000Z`;
}

function userJson(user: UserInfo | undefined): JsonObject {
  if (user === undefined) return {};
  const out: JsonObject = {};
  if (user.name !== '') out.username = user.name;
  if (user.uid !== '') out.uid = user.uid;
  if (user.groups.length > 0) out.groups = [...user.groups];
  if (Object.keys(user.extra).length > 0) out.extra = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]));
  return out;
}

function decodeBody(body: { contentType: string; bytes: Buffer; yamlAsJson?: string }, protobuf: ProtobufBodyDecoder | undefined): unknown {
  const type = body.contentType.split(';')[0].trim().toLowerCase();
  try {
    if (type === 'application/vnd.kubernetes.protobuf') return protobuf?.(body.bytes);
    // A YAML body is never parsed here (on the event loop): the handler's decoding, done on the
    // YAML worker, is recorded, and a body no handler decoded has no object to log.
    if (type === 'application/yaml' || type === 'application/apply-patch+yaml' || type.endsWith('+yaml')) return body.yamlAsJson === undefined ? undefined : JSON.parse(body.yamlAsJson) as unknown;
    return JSON.parse(body.bytes.toString('utf8')) as unknown;
  } catch {
    // A body the handler refused (400) is not worth logging as an object.
    return undefined;
  }
}

/** A copy without metadata.managedFields, for the object and each item of a list. */
function withoutManagedFields(value: unknown): unknown {
  const object = asJsonObject(value);
  if (object === undefined) return value;
  let out: JsonObject = object;
  const metadata = asJsonObject(object.metadata);
  if (metadata !== undefined && 'managedFields' in metadata) {
    const { managedFields: _dropped, ...rest } = metadata;
    out = { ...object, metadata: rest };
  }
  if (Array.isArray(object.items)) out = { ...out, items: object.items.map(withoutManagedFields) };
  return out;
}

function blankValues(map: unknown): unknown {
  const entries = asJsonObject(map);
  return entries === undefined ? map : Object.fromEntries(Object.keys(entries).map((k) => [k, '']));
}

/** Credentials an object carries, blanked (see the header). */
export function withoutCredentials(value: unknown): unknown {
  const object = asJsonObject(value);
  if (object === undefined) return value;
  const kind = object.kind;
  const apiVersion = String(object.apiVersion ?? '');
  if (kind === 'TokenReview' && apiVersion.startsWith('authentication.k8s.io/')) {
    const spec = asJsonObject(object.spec);
    return spec === undefined || !('token' in spec) ? object : { ...object, spec: { ...spec, token: '' } };
  }
  if (kind === 'TokenRequest' && apiVersion.startsWith('authentication.k8s.io/')) {
    const status = asJsonObject(object.status);
    return status === undefined || !('token' in status) ? object : { ...object, status: { ...status, token: '' } };
  }
  if (kind === 'Secret') {
    const out: JsonObject = { ...object };
    if ('data' in out) out.data = blankValues(out.data);
    if ('stringData' in out) out.stringData = blankValues(out.stringData);
    return out;
  }
  if (Array.isArray(object.items)) return { ...object, items: object.items.map(withoutCredentials) };
  return object;
}

function objectRefOf(record: AuditRecord, requestObject: unknown): JsonObject | undefined {
  const info = record.info;
  if (info === undefined || !info.isResourceRequest) return undefined;
  const fromBody = (record.verb === 'create' || record.verb === 'update') ? (asJsonObject(requestObject)?.metadata as JsonObject | undefined) : undefined;
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const ref: JsonObject = {};
  if (info.resource !== '') ref.resource = info.resource;
  const namespace = info.namespace !== '' ? info.namespace : text(fromBody?.namespace);
  if (namespace !== '') ref.namespace = namespace;
  const name = record.name !== '' ? record.name : text(fromBody?.name);
  if (name !== '') ref.name = name;
  const uid = text(fromBody?.uid);
  if (uid !== '') ref.uid = uid;
  if (info.group !== '') ref.apiGroup = info.group;
  if (info.version !== '') ref.apiVersion = info.version;
  const resourceVersion = text(fromBody?.resourceVersion);
  if (resourceVersion !== '') ref.resourceVersion = resourceVersion;
  if (info.subresource !== '') ref.subresource = info.subresource;
  return ref;
}

function responseStatusOf(auditRecord: AuditRecord): JsonObject | undefined {
  if (auditRecord.authenticationFailure !== undefined) return { metadata: {}, message: auditRecord.authenticationFailure, code: auditRecord.responseCode };
  const status = auditRecord.responseStatus;
  if (status !== undefined) {
    const out: JsonObject = { metadata: {} };
    for (const field of ['status', 'message', 'reason', 'details'] as const) {
      const value = status[field];
      if (value !== undefined && value !== '' && value !== null) out[field] = value;
    }
    out.code = typeof status.code === 'number' && status.code !== 0 ? status.code : auditRecord.responseCode;
    return out;
  }
  return auditRecord.responseCode > 0 ? { metadata: {}, code: auditRecord.responseCode } : undefined;
}

/** The Event of one record, ready for JSON.stringify. */
export function auditEventOf(auditRecord: AuditRecord, protobuf?: ProtobufBodyDecoder): JsonObject {
  const level = auditRecord.level;
  const decoded = auditRecord.requestBody !== undefined ? decodeBody(auditRecord.requestBody, protobuf) : undefined;
  const event: JsonObject = {
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level,
    auditID: auditRecord.auditId,
    stage: auditRecord.stage,
    requestURI: auditRecord.requestUri,
    verb: auditRecord.verb,
    user: userJson(auditRecord.user),
  };
  if (auditRecord.impersonatedUser !== undefined) event.impersonatedUser = userJson(auditRecord.impersonatedUser);
  event.sourceIPs = [...auditRecord.sourceIps];
  if (auditRecord.userAgent !== undefined && auditRecord.userAgent !== '') event.userAgent = auditRecord.userAgent;
  const objectRef = objectRefOf(auditRecord, decoded);
  if (objectRef !== undefined) event.objectRef = objectRef;
  const responseStatus = responseStatusOf(auditRecord);
  if (responseStatus !== undefined) event.responseStatus = responseStatus;
  const trim = (value: unknown) => withoutCredentials(auditRecord.omitManagedFields ? withoutManagedFields(value) : value);
  if (atLeast(level, 'Request') && decoded !== undefined && decoded !== null) event.requestObject = trim(decoded);
  if (atLeast(level, 'RequestResponse') && auditRecord.responseObject !== undefined) event.responseObject = trim(auditRecord.responseObject);
  event.requestReceivedTimestamp = microTime(auditRecord.requestReceivedTimestamp);
  event.stageTimestamp = microTime(auditRecord.stageTimestamp);
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(auditRecord.annotations)) {
    if (key.startsWith(PATCH_ANNOTATION_PREFIX) && !atLeast(level, 'Request')) continue;
    annotations[key] = value;
  }
  if (Object.keys(annotations).length > 0) event.annotations = annotations;
  return event;
}
