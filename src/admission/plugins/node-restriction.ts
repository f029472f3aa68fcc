/**
 * NodeRestriction (off by default, kubeadm turns it on; kubernetes
 * plugin/pkg/admission/noderestriction, spec 02 §4.5): what a node's kubelet
 * (`system:node:<name>` in group `system:nodes`) may write:
 * - pods: create only mirror pods bound to itself, owned by its Node (controller, no
 *   blockOwnerDeletion, the Node's uid) and referring to no service account, secret, config map
 *   or claim; delete only pods bound to itself; pods/status only of pods bound to itself;
 * - its own Node only: no configSource, no taint changes, no labels under
 *   node-restriction.kubernetes.io/ nor unknown kubernetes.io / k8s.io labels (the kubelet's own
 *   set: hostname, os, arch, instance type, zone, region, kubelet.kubernetes.io/ and
 *   node.kubernetes.io/ are allowed);
 * - PVCs: only status.capacity and status.conditions; leases in kube-node-lease and CSINodes:
 *   only its own; tokens: only bound to a pod on itself.
 * Other users are not restricted here.
 */
import type { UserInfo } from '../../authn';
import type { AdmissionAttributes } from '../admission-chain';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, arrayField, KEY_PREFIX, namespacedKey, objectField, stringField, stringMap } from '../plugin-support';
import { podConfigMapNames, podSecretNames } from '../pod-spec';
import { MIRROR_POD_ANNOTATION } from './service-account';
import { type JsonObject, deepCopy, metadataOf, nameOf } from '../../apis/object';

const NODE_USER_PREFIX = 'system:node:';
const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** kubeletapis.IsKubeletLabel's fixed labels. */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'kubernetes.io/os',
  'kubernetes.io/arch',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

/** The node name of a kubelet's user, '' for a node user without one, undefined for anyone else. */
export function nodeIdentity(user: UserInfo | undefined): string | undefined {
  if (user === undefined || !user.name.startsWith(NODE_USER_PREFIX) || !user.groups.includes('system:nodes')) return undefined;
  return user.name.slice(NODE_USER_PREFIX.length);
}

function labelNamespace(label: string): string {
  const slash = label.indexOf('/');
  return slash < 0 ? '' : label.slice(0, slash);
}

function inDomain(namespace: string, domain: string): boolean {
  return namespace === domain || namespace.endsWith(`.${domain}`);
}

function isKubeletLabel(label: string): boolean {
  return KUBELET_LABELS.has(label) || KUBELET_LABEL_NAMESPACES.some((domain) => inDomain(labelNamespace(label), domain));
}

/** Labels added, removed or changed. */
function modifiedLabels(now: Record<string, string>, before: Record<string, string>): Set<string> {
  const changed = new Set<string>();
  for (const [key, value] of Object.entries(now)) if (before[key] !== value) changed.add(key);
  for (const key of Object.keys(before)) if (!(key in now)) changed.add(key);
  return changed;
}

export function forbiddenNodeLabels(labels: Set<string>): string[] {
  const forbidden: string[] = [];
  for (const label of labels) {
    const namespace = labelNamespace(label);
    if (inDomain(namespace, 'node-restriction.kubernetes.io')) forbidden.push(label);
    else if ((inDomain(namespace, 'kubernetes.io') || inDomain(namespace, 'k8s.io')) && !isKubeletLabel(label)) forbidden.push(label);
  }
  return forbidden.sort();
}

/** Semantic equality of JSON values with map keys in any order. */
function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as JsonObject).filter(([, v]) => v !== undefined && v !== null).sort(([x], [y]) => (x < y ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export const nodeRestrictionPlugin: AdmissionPluginFactory = (_config, deps) => {
  async function admitPod(node: string, a: AdmissionAttributes): Promise<void> {
    if (a.subresource === 'status') {
      if (a.operation !== 'UPDATE') throw admissionForbidden(a, `unexpected operation "${a.operation}"`);
      if (stringField(objectField(a.oldObject, 'spec'), 'nodeName') !== node) throw admissionForbidden(a, `node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
      return;
    }
    if (a.subresource !== '' && a.subresource !== 'eviction') throw admissionForbidden(a, `unexpected pod subresource "${a.subresource}", only 'status' and 'eviction' are allowed`);
    if (a.subresource === 'eviction') return;
    if (a.operation === 'DELETE') {
      if (stringField(objectField(a.oldObject, 'spec'), 'nodeName') !== node) throw admissionForbidden(a, `node "${node}" can only delete pods with spec.nodeName set to itself`);
      return;
    }
    if (a.operation !== 'CREATE') throw admissionForbidden(a, `unexpected operation "${a.operation}", node "${node}" can only create and delete mirror pods`);
    const pod = a.object as JsonObject;
    const spec = objectField(pod, 'spec') ?? {};
    if (!(MIRROR_POD_ANNOTATION in stringMap(metadataOf(pod), 'annotations'))) throw admissionForbidden(a, `pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`);
    if (stringField(spec, 'nodeName') !== node) throw admissionForbidden(a, `node "${node}" can only create pods with spec.nodeName set to itself`);
    const owners = arrayField(metadataOf(pod), 'ownerReferences');
    if (owners.length > 1) throw admissionForbidden(a, `node "${node}" can only create pods with a single owner reference set to itself`);
    if (owners.length === 0) throw admissionForbidden(a, `node "${node}" can only create pods with an owner reference set to itself`);
    const owner = owners[0];
    if (stringField(owner, 'apiVersion') !== 'v1' || stringField(owner, 'kind') !== 'Node' || stringField(owner, 'name') !== node) {
      throw admissionForbidden(a, `node "${node}" can only create pods with an owner reference set to itself`);
    }
    if (owner.controller !== true) throw admissionForbidden(a, `node "${node}" can only create pods with a controller owner reference set to itself`);
    if (owner.blockOwnerDeletion === true) throw admissionForbidden(a, `node "${node}" must not set blockOwnerDeletion on an owner reference`);
    const nodeObject = deps.objects.get(KEY_PREFIX.nodes + node) ?? (await deps.objects.getFresh(KEY_PREFIX.nodes + node));
    if (nodeObject === undefined) throw admissionForbidden(a, `error looking up node ${node} to verify uid: nodes "${node}" not found`);
    const uid = stringField(metadataOf(nodeObject), 'uid');
    if (stringField(owner, 'uid') !== uid) throw admissionForbidden(a, `node ${node} UID mismatch: expected ${stringField(owner, 'uid')} got ${uid}`);
    if (stringField(spec, 'serviceAccountName') !== '') throw admissionForbidden(a, `node "${node}" can not create pods that reference a service account`);
    if (podSecretNames(spec).length > 0) throw admissionForbidden(a, `node "${node}" can not create pods that reference secrets`);
    if (podConfigMapNames(spec).length > 0) throw admissionForbidden(a, `node "${node}" can not create pods that reference configmaps`);
    if (arrayField(spec, 'volumes').some((v) => objectField(v, 'persistentVolumeClaim') !== undefined)) throw admissionForbidden(a, `node "${node}" can not create pods that reference persistentvolumeclaims`);
  }

  function admitNode(node: string, a: AdmissionAttributes): void {
    const requested = a.name !== '' ? a.name : nameOf(a.object);
    if (requested !== node) throw admissionForbidden(a, `node "${node}" is not allowed to modify node "${requested}"`);
    const spec = objectField(a.object, 'spec') ?? {};
    if (a.operation === 'CREATE') {
      if (spec.configSource !== undefined && spec.configSource !== null) throw admissionForbidden(a, `node "${node}" is not allowed to create pods with a non-nil configSource`);
      const forbidden = forbiddenNodeLabels(modifiedLabels(stringMap(metadataOf(a.object), 'labels'), {}));
      if (forbidden.length > 0) throw admissionForbidden(a, `node "${node}" is not allowed to set the following labels: ${forbidden.join(', ')}`);
    }
    if (a.operation === 'UPDATE') {
      const oldSpec = objectField(a.oldObject, 'spec') ?? {};
      if (spec.configSource !== undefined && spec.configSource !== null && !sameJson(spec.configSource, oldSpec.configSource)) {
        throw admissionForbidden(a, `node "${node}" is not allowed to update configSource to a new non-nil configSource`);
      }
      if (!sameJson(spec.taints ?? [], oldSpec.taints ?? [])) throw admissionForbidden(a, `node "${node}" is not allowed to modify taints`);
      const forbidden = forbiddenNodeLabels(modifiedLabels(stringMap(metadataOf(a.object), 'labels'), stringMap(metadataOf(a.oldObject), 'labels')));
      if (forbidden.length > 0) throw admissionForbidden(a, `is not allowed to modify labels: ${forbidden.join(', ')}`);
    }
  }

  function admitClaimStatus(node: string, a: AdmissionAttributes): void {
    if (a.operation !== 'UPDATE') throw admissionForbidden(a, `unexpected operation "${a.operation}"`);
    const strip = (claim: JsonObject | undefined) => {
      const copy = deepCopy(claim ?? {});
      const metadata = (copy.metadata ?? {}) as JsonObject;
      delete metadata.resourceVersion;
      delete metadata.managedFields;
      const status = (copy.status ?? {}) as JsonObject;
      delete status.capacity;
      delete status.conditions;
      return copy;
    };
    if (!sameJson(strip(a.oldObject), strip(a.object))) throw admissionForbidden(a, `node "${node}" is not allowed to update fields other than status.capacity and status.conditions`);
  }

  async function admitToken(node: string, a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.subresource !== 'token') return;
    const ref = objectField(objectField(a.object, 'spec'), 'boundObjectRef');
    if (ref === undefined || stringField(ref, 'apiVersion') !== 'v1' || stringField(ref, 'kind') !== 'Pod' || stringField(ref, 'name') === '') {
      throw admissionForbidden(a, 'node requested token not bound to a pod');
    }
    if (stringField(ref, 'uid') === '') throw admissionForbidden(a, 'node requested token with a pod binding without a uid');
    const pod = await deps.objects.getFresh(namespacedKey(KEY_PREFIX.pods, a.namespace, stringField(ref, 'name')));
    if (pod === undefined) throw admissionForbidden(a, `pods "${stringField(ref, 'name')}" not found`);
    if (stringField(metadataOf(pod), 'uid') !== stringField(ref, 'uid')) {
      throw admissionForbidden(a, `the UID in the bound object reference (${stringField(ref, 'uid')}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    if (stringField(objectField(pod, 'spec'), 'nodeName') !== node) throw admissionForbidden(a, 'node requested token bound to a pod scheduled on a different node');
  }

  return {
    name: 'NodeRestriction',
    sideEffects: 'None',
    handles: (a) => nodeIdentity(a.userInfo) !== undefined,
    async mutate(a) {
      const node = nodeIdentity(a.userInfo) as string;
      if (node === '') throw admissionForbidden(a, `could not determine node from user "${a.userInfo?.name ?? ''}"`);
      const object = a.operation === 'CREATE' ? a.object : undefined;
      if (a.group === '' && a.resource === 'pods') await admitPod(node, a);
      else if (a.group === '' && a.resource === 'nodes') admitNode(node, a);
      else if (a.group === '' && a.resource === 'persistentvolumeclaims') {
        if (a.subresource !== 'status') throw admissionForbidden(a, 'may only update PVC status');
        admitClaimStatus(node, a);
      } else if (a.group === '' && a.resource === 'serviceaccounts') await admitToken(node, a);
      else if (a.group === 'coordination.k8s.io' && a.resource === 'leases') {
        if (a.namespace !== NODE_LEASE_NAMESPACE) throw admissionForbidden(a, `can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
        const name = a.operation === 'CREATE' ? nameOf(object) : a.name;
        if (name !== node) throw admissionForbidden(a, 'can only access node lease with the same name as the requesting node');
      } else if (a.group === 'storage.k8s.io' && a.resource === 'csinodes') {
        const name = a.operation === 'CREATE' ? nameOf(object) : a.name;
        if (name !== node) throw admissionForbidden(a, 'can only access CSINode with the same name as the requesting node');
      }
      return undefined;
    },
  };
};
