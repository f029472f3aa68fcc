/**
 * CertificateSigningRequests (k8s.io/kubernetes pkg/registry/certificates/certificates
 * strategy.go, v1.25; spec 02 §2.3, §3, §4.1). Three update paths, each changing its own part:
 *
 * - the object itself: metadata only; spec and status stay as stored (the spec is immutable,
 *   and "users cannot create pre-approved certificate requests");
 * - `status`: status.certificate and conditions other than Approved/Denied (a signer's Failed);
 *   the Approved/Denied instances are put back as stored when their number is unchanged, so
 *   that adding or removing one is what validation then refuses;
 * - `approval`: status.conditions only (Approved/Denied), everything else as stored.
 *
 * On create, spec.username, uid, groups and extra are the requester's, whatever the client
 * sent, and the status starts empty. Conditions without lastUpdateTime get the time of the
 * write, and lastTransitionTime is kept from a stored condition of the same type and status,
 * else the time of the write: this is the one place a strategy reads the clock, as kube's
 * strategy stamps metav1.Now() there.
 */
import { fieldErrorCause, invalidMessage, qualifiedKind, validateCertificateSigningRequestApprovalUpdate, type FieldError } from '../../apis/validation';
import type { UserInfo } from '../../authn';
import type { CreateContext, ResourceStrategy, ValidationFailure } from '../strategy';
import { defineStrategy } from './define-strategy';
import { emptyStatus, withStatus, type KindRules } from './kind-rules';
import { type JsonObject, deepCopy } from '../../apis/object';

type Condition = JsonObject;

function objectField(object: JsonObject, key: string): JsonObject {
  const value = object[key];
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : {};
}

function conditionsOf(csr: JsonObject): Condition[] {
  const conditions = objectField(csr, 'status').conditions;
  return Array.isArray(conditions) ? conditions.filter((c): c is Condition => typeof c === 'object' && c !== null && !Array.isArray(c)) : [];
}

function setConditions(csr: JsonObject, conditions: Condition[]): void {
  const status = { ...objectField(csr, 'status') };
  if (conditions.length === 0) delete status.conditions;
  else status.conditions = conditions;
  csr.status = status;
}

/** metav1.Now() as it is serialized: RFC 3339 to the second. */
function nowTimestamp(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function isSet(value: unknown): boolean {
  return typeof value === 'string' && value !== '';
}

/** populateConditionTimestamps. */
function populateConditionTimestamps(csr: JsonObject, old: JsonObject): void {
  const now = nowTimestamp();
  const oldConditions = conditionsOf(old);
  setConditions(csr, conditionsOf(csr).map((condition) => {
    const stamped = { ...condition };
    if (!isSet(stamped.lastUpdateTime)) stamped.lastUpdateTime = now;
    if (!isSet(stamped.lastTransitionTime)) {
      const same = oldConditions.find((o) => o.type === stamped.type && o.status === stamped.status && isSet(o.lastTransitionTime));
      stamped.lastTransitionTime = same?.lastTransitionTime ?? now;
    }
    return stamped;
  }));
}

/** preserveConditionInstances: stored instances of `type` replace the new ones when their number is unchanged. */
function preserveConditionInstances(csr: JsonObject, old: JsonObject, type: string): void {
  const conditions = conditionsOf(csr).map((c) => ({ ...c }));
  const newIndices = conditions.flatMap((c, i) => (c.type === type ? [i] : []));
  const oldInstances = conditionsOf(old).filter((c) => c.type === type);
  if (newIndices.length !== oldInstances.length) return;
  newIndices.forEach((index, i) => {
    conditions[index] = deepCopy(oldInstances[i]);
  });
  setConditions(csr, conditions);
}

function keepStored(csr: JsonObject, old: JsonObject, key: string): void {
  if (old[key] === undefined) delete csr[key];
  else csr[key] = deepCopy(old[key]);
}

export const certificateSigningRequestRules: KindRules = withStatus(emptyStatus, {
  prepareForUpdate: (csr, old) => {
    keepStored(csr, old, 'spec');
    keepStored(csr, old, 'status');
  },
  prepareForStatusUpdate: (csr, old) => {
    preserveConditionInstances(csr, old, 'Approved');
    preserveConditionInstances(csr, old, 'Denied');
    populateConditionTimestamps(csr, old);
  },
  prepareForSubresourceUpdate: (subresource, csr, old) => {
    if (subresource !== 'approval') return;
    populateConditionTimestamps(csr, old);
    const conditions = conditionsOf(csr);
    keepStored(csr, old, 'spec');
    keepStored(csr, old, 'status');
    setConditions(csr, conditions);
  },
  resetFields: { '': [['spec'], ['status']], status: [['spec'], ['status', 'conditions']], approval: [['spec'], ['status', 'certificate']] },
});

/** The requester's identity, which spec.username/uid/groups/extra record (omitted when empty, as v1 serializes them). */
function stampRequester(csr: JsonObject, user: UserInfo | undefined): void {
  const spec = { ...objectField(csr, 'spec') };
  delete spec.username;
  delete spec.uid;
  delete spec.groups;
  delete spec.extra;
  if (user !== undefined) {
    if (user.name !== '') spec.username = user.name;
    if (user.uid !== '') spec.uid = user.uid;
    if (user.groups.length > 0) spec.groups = [...user.groups];
    const extra = Object.entries(user.extra);
    if (extra.length > 0) spec.extra = Object.fromEntries(extra.map(([key, values]) => [key, [...values]]));
  }
  csr.spec = spec;
}

function failure(csr: JsonObject, fieldErrors: FieldError[]): ValidationFailure | undefined {
  if (fieldErrors.length === 0) return undefined;
  const name = String(objectField(csr, 'metadata').name ?? '');
  return { message: invalidMessage(qualifiedKind('certificates.k8s.io', 'CertificateSigningRequest'), name, fieldErrors), causes: fieldErrors.map(fieldErrorCause) };
}

/** The CSR strategy: the common one from its rules, with the requester stamped and the approval path's own validation. */
export function certificateSigningRequestStrategy(group: string, resource: string): ResourceStrategy {
  const base = defineStrategy(group, resource, certificateSigningRequestRules);
  return {
    ...base,
    prepareForCreate(csr: JsonObject, context?: CreateContext) {
      base.prepareForCreate(csr, context);
      stampRequester(csr, context?.user);
    },
    validateUpdate(csr, old, namespaced, subresource) {
      if (subresource === 'approval') return failure(csr, validateCertificateSigningRequestApprovalUpdate(csr, old));
      return base.validateUpdate(csr, old, namespaced, subresource);
    },
  };
}
