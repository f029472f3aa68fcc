/**
 * Defaulting of core/v1 objects as kube-apiserver v1.25 does it on decode: the hand-written
 * SetDefaults_* functions of k8s.io/kubernetes pkg/apis/core/v1/defaults.go, the `+default=` markers
 * of k8s.io/api core/v1 types.go, walked into nested types the way zz_generated.defaults.go does.
 */
import { defaultImagePullPolicy } from './image-pull-policy';
import { formatQuantityField, formatResourceList, formatResourceRequirements } from './quantity-fields';
import {
  childObject,
  ensureObject,
  fillIfUnset,
  fillIfZero,
  isEmptyCollection,
  isUnset,
  isZero,
  objectItems,
} from './json-value';
import { deepCopy, isJsonObject, type JsonObject } from '../object';

/** Octal 0644, the mode secret, configMap, downwardAPI and projected volumes default to. */
const DEFAULT_VOLUME_MODE = 0o644;
const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;
const DEFAULT_CLIENT_IP_AFFINITY_SECONDS = 10800;
const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;

/**
 * An embedded ObjectMeta (pod templates, claim templates) is a Go value struct whose
 * creationTimestamp is a non-pointer metav1.Time, so kube-apiserver always prints it as null.
 */
export function defaultEmbeddedMetadata(holder: JsonObject): void {
  const metadata = ensureObject(holder, 'metadata');
  if (!('creationTimestamp' in metadata)) metadata.creationTimestamp = null;
}

function defaultObjectFieldSelector(holder: JsonObject | undefined): void {
  const fieldRef = holder === undefined ? undefined : childObject(holder, 'fieldRef');
  if (fieldRef !== undefined) fillIfZero(fieldRef, 'apiVersion', 'v1');
}

function defaultHttpGetAction(handler: JsonObject | undefined): void {
  const httpGet = handler === undefined ? undefined : childObject(handler, 'httpGet');
  if (httpGet === undefined) return;
  fillIfZero(httpGet, 'path', '/');
  fillIfZero(httpGet, 'scheme', 'HTTP');
}

function defaultProbe(container: JsonObject, key: string): void {
  const probe = childObject(container, key);
  if (probe === undefined) return;
  defaultHttpGetAction(probe);
  const grpc = childObject(probe, 'grpc');
  if (grpc !== undefined) fillIfUnset(grpc, 'service', '');
  fillIfZero(probe, 'timeoutSeconds', 1);
  fillIfZero(probe, 'periodSeconds', 10);
  fillIfZero(probe, 'successThreshold', 1);
  fillIfZero(probe, 'failureThreshold', 3);
}

/** Container and EphemeralContainer (the latter shares the former's layout). */
function defaultContainer(container: JsonObject): void {
  for (const port of objectItems(container, 'ports')) fillIfZero(port, 'protocol', 'TCP');
  for (const env of objectItems(container, 'env')) defaultObjectFieldSelector(childObject(env, 'valueFrom'));
  // ResourceRequirements is a value struct: present as {} even when the client sent nothing.
  ensureObject(container, 'resources');
  formatResourceRequirements(container, 'resources');
  defaultProbe(container, 'livenessProbe');
  defaultProbe(container, 'readinessProbe');
  defaultProbe(container, 'startupProbe');
  const lifecycle = childObject(container, 'lifecycle');
  if (lifecycle !== undefined) {
    defaultHttpGetAction(childObject(lifecycle, 'postStart'));
    defaultHttpGetAction(childObject(lifecycle, 'preStop'));
  }
  fillIfZero(container, 'terminationMessagePath', '/dev/termination-log');
  fillIfZero(container, 'terminationMessagePolicy', 'File');
  fillIfZero(container, 'imagePullPolicy', defaultImagePullPolicy(container.image));
}

/** Every key of VolumeSource in v1.25; a volume naming none of them becomes an emptyDir. */
const VOLUME_SOURCE_KEYS = [
  'hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs',
  'iscsi', 'glusterfs', 'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker',
  'downwardAPI', 'fc', 'azureFile', 'configMap', 'vsphereVolume', 'quobyte', 'azureDisk',
  'photonPersistentDisk', 'projected', 'portworxVolume', 'scaleIO', 'storageos', 'csi', 'ephemeral',
];

/** The `+default=` markers on volume sources shared by Volume and PersistentVolumeSpec. */
function defaultSharedVolumeSources(source: JsonObject): void {
  const iscsi = childObject(source, 'iscsi');
  if (iscsi !== undefined) fillIfZero(iscsi, 'iscsiInterface', 'default');
  const rbd = childObject(source, 'rbd');
  if (rbd !== undefined) {
    fillIfZero(rbd, 'pool', 'rbd');
    fillIfZero(rbd, 'user', 'admin');
    fillIfZero(rbd, 'keyring', '/etc/ceph/keyring');
  }
  const azureDisk = childObject(source, 'azureDisk');
  if (azureDisk !== undefined) {
    fillIfUnset(azureDisk, 'cachingMode', 'ReadWrite');
    fillIfUnset(azureDisk, 'fsType', 'ext4');
    fillIfUnset(azureDisk, 'readOnly', false);
    fillIfUnset(azureDisk, 'kind', 'Shared');
  }
  const scaleIO = childObject(source, 'scaleIO');
  if (scaleIO !== undefined) {
    fillIfZero(scaleIO, 'storageMode', 'ThinProvisioned');
    fillIfZero(scaleIO, 'fsType', 'xfs');
  }
  const hostPath = childObject(source, 'hostPath');
  if (hostPath !== undefined) fillIfUnset(hostPath, 'type', '');
}

function defaultDownwardApiItems(holder: JsonObject): void {
  for (const item of objectItems(holder, 'items')) defaultObjectFieldSelector(item);
}

function defaultVolume(volume: JsonObject): void {
  if (VOLUME_SOURCE_KEYS.every((key) => isUnset(volume[key]))) volume.emptyDir = {};
  formatQuantityField(childObject(volume, 'emptyDir'), 'sizeLimit');
  defaultSharedVolumeSources(volume);
  for (const key of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const source = childObject(volume, key);
    if (source !== undefined) fillIfUnset(source, 'defaultMode', DEFAULT_VOLUME_MODE);
  }
  const downwardApi = childObject(volume, 'downwardAPI');
  if (downwardApi !== undefined) defaultDownwardApiItems(downwardApi);
  const projected = childObject(volume, 'projected');
  for (const projection of projected === undefined ? [] : objectItems(projected, 'sources')) {
    const projectedDownwardApi = childObject(projection, 'downwardAPI');
    if (projectedDownwardApi !== undefined) defaultDownwardApiItems(projectedDownwardApi);
    const token = childObject(projection, 'serviceAccountToken');
    if (token !== undefined) fillIfUnset(token, 'expirationSeconds', DEFAULT_TOKEN_EXPIRATION_SECONDS);
  }
  const ephemeral = childObject(volume, 'ephemeral');
  const claimTemplate = ephemeral === undefined ? undefined : childObject(ephemeral, 'volumeClaimTemplate');
  if (claimTemplate !== undefined) {
    defaultEmbeddedMetadata(claimTemplate);
    defaultPersistentVolumeClaimSpec(ensureObject(claimTemplate, 'spec'));
  }
}

export function defaultPersistentVolumeClaimSpec(spec: JsonObject): void {
  fillIfUnset(spec, 'volumeMode', 'Filesystem');
  // ResourceRequirements is a value struct in PersistentVolumeClaimSpec too.
  ensureObject(spec, 'resources');
  formatResourceRequirements(spec, 'resources');
}

/** With host networking a container port is also the host port. */
function defaultHostNetworkPorts(containers: JsonObject[]): void {
  for (const container of containers) {
    for (const port of objectItems(container, 'ports')) fillIfZero(port, 'hostPort', port.containerPort);
  }
}

/** PodSpec wherever it appears: in Pods and in every pod template. */
export function defaultPodSpec(spec: JsonObject): void {
  for (const volume of objectItems(spec, 'volumes')) defaultVolume(volume);
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const container of objectItems(spec, key)) defaultContainer(container);
  }
  fillIfZero(spec, 'restartPolicy', 'Always');
  fillIfUnset(spec, 'terminationGracePeriodSeconds', DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
  fillIfZero(spec, 'dnsPolicy', 'ClusterFirst');
  if (spec.hostNetwork === true) {
    defaultHostNetworkPorts(objectItems(spec, 'containers'));
    defaultHostNetworkPorts(objectItems(spec, 'initContainers'));
  }
  fillIfUnset(spec, 'securityContext', {});
  fillIfZero(spec, 'schedulerName', 'default-scheduler');
  formatResourceList(spec, 'overhead');
}

/** PodTemplateSpec: metadata printed with creationTimestamp null, spec as any PodSpec (not as a Pod). */
export function defaultPodTemplateSpec(template: JsonObject): void {
  defaultEmbeddedMetadata(template);
  defaultPodSpec(ensureObject(template, 'spec'));
}

/** A PersistentVolumeClaim held as a template (StatefulSet volumeClaimTemplates): defaulted as a claim. */
export function defaultPersistentVolumeClaimTemplate(claim: JsonObject): void {
  defaultEmbeddedMetadata(claim);
  defaultPersistentVolumeClaim(claim);
}

/** If limits are given but requests are not, requests take the limits (Pods only, not templates). */
function defaultRequestsFromLimits(container: JsonObject): void {
  const resources = childObject(container, 'resources');
  const limits = resources === undefined ? undefined : childObject(resources, 'limits');
  if (resources === undefined || limits === undefined) return;
  const requests = ensureObject(resources, 'requests');
  for (const [name, quantity] of Object.entries(limits)) {
    if (!(name in requests)) requests[name] = quantity;
  }
}

function defaultPod(pod: JsonObject): void {
  const spec = ensureObject(pod, 'spec');
  defaultPodSpec(spec);
  for (const key of ['containers', 'initContainers']) {
    for (const container of objectItems(spec, key)) {
      defaultRequestsFromLimits(container);
      formatResourceRequirements(container, 'resources');
    }
  }
  fillIfUnset(spec, 'enableServiceLinks', true);
  // v1 conversion keeps the legacy single podIP and the podIPs list in step.
  const status = childObject(pod, 'status');
  if (status !== undefined && typeof status.podIP === 'string' && status.podIP !== '' && isEmptyCollection(status.podIPs)) {
    status.podIPs = [{ ip: status.podIP }];
  }
}

function defaultPodTemplate(podTemplate: JsonObject): void {
  defaultPodTemplateSpec(ensureObject(podTemplate, 'template'));
}

function defaultReplicationController(controller: JsonObject): void {
  const spec = ensureObject(controller, 'spec');
  const template = childObject(spec, 'template');
  const templateLabels = template === undefined ? undefined : childObject(ensureObject(template, 'metadata'), 'labels');
  if (templateLabels !== undefined) {
    if (isEmptyCollection(spec.selector)) spec.selector = deepCopy(templateLabels);
    const metadata = ensureObject(controller, 'metadata');
    if (isEmptyCollection(metadata.labels)) metadata.labels = deepCopy(templateLabels);
  }
  fillIfUnset(spec, 'replicas', 1);
  if (template !== undefined) defaultPodTemplateSpec(template);
}

function defaultService(service: JsonObject): void {
  const spec = ensureObject(service, 'spec');
  fillIfZero(spec, 'sessionAffinity', 'None');
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP') {
    const config = childObject(spec, 'sessionAffinityConfig');
    const clientIp = config === undefined ? undefined : childObject(config, 'clientIP');
    if (clientIp === undefined || isUnset(clientIp.timeoutSeconds)) {
      spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: DEFAULT_CLIENT_IP_AFFINITY_SECONDS } };
    }
  }
  fillIfZero(spec, 'type', 'ClusterIP');
  for (const port of objectItems(spec, 'ports')) {
    fillIfZero(port, 'protocol', 'TCP');
    if (port.targetPort === undefined || port.targetPort === null || port.targetPort === 0 || port.targetPort === '') {
      port.targetPort = port.port;
    }
  }
  const type = spec.type;
  if ((type === 'NodePort' || type === 'LoadBalancer') && isZero(spec.externalTrafficPolicy)) {
    spec.externalTrafficPolicy = 'Cluster';
  }
  if (type === 'NodePort' || type === 'LoadBalancer' || type === 'ClusterIP') {
    fillIfUnset(spec, 'internalTrafficPolicy', 'Cluster');
  }
  if (type === 'LoadBalancer') fillIfUnset(spec, 'allocateLoadBalancerNodePorts', true);
  // v1 conversion keeps the legacy clusterIP and the clusterIPs list in step.
  if (typeof spec.clusterIP === 'string' && spec.clusterIP !== '' && isEmptyCollection(spec.clusterIPs)) {
    spec.clusterIPs = [spec.clusterIP];
  }
}

function defaultSecret(secret: JsonObject): void {
  fillIfZero(secret, 'type', 'Opaque');
}

function defaultPersistentVolume(volume: JsonObject): void {
  const spec = ensureObject(volume, 'spec');
  defaultSharedVolumeSources(spec);
  fillIfZero(spec, 'persistentVolumeReclaimPolicy', 'Retain');
  formatResourceList(spec, 'capacity');
  fillIfUnset(spec, 'volumeMode', 'Filesystem');
  fillIfZero(ensureObject(volume, 'status'), 'phase', 'Pending');
}

function defaultPersistentVolumeClaim(claim: JsonObject): void {
  defaultPersistentVolumeClaimSpec(ensureObject(claim, 'spec'));
  const status = ensureObject(claim, 'status');
  fillIfZero(status, 'phase', 'Pending');
  formatResourceList(status, 'capacity');
  formatResourceList(status, 'allocatedResources');
}

function defaultEndpoints(endpoints: JsonObject): void {
  for (const subset of objectItems(endpoints, 'subsets')) {
    for (const port of objectItems(subset, 'ports')) fillIfZero(port, 'protocol', 'TCP');
  }
}

function defaultNamespace(namespace: JsonObject): void {
  const metadata = ensureObject(namespace, 'metadata');
  // generateName namespaces have no name yet; the registry's Canonicalize labels them later.
  if (typeof metadata.name === 'string' && metadata.name !== '') {
    ensureObject(metadata, 'labels')['kubernetes.io/metadata.name'] = metadata.name;
  }
  fillIfZero(ensureObject(namespace, 'status'), 'phase', 'Active');
}

/** NodeSystemInfo fields carry no omitempty, so an unreported one prints as "". */
const NODE_INFO_FIELDS = [
  'machineID', 'systemUUID', 'bootID', 'kernelVersion', 'osImage', 'containerRuntimeVersion',
  'kubeletVersion', 'kubeProxyVersion', 'operatingSystem', 'architecture',
];

function defaultNode(node: JsonObject): void {
  const spec = ensureObject(node, 'spec');
  if (typeof spec.podCIDR === 'string' && spec.podCIDR !== '' && isEmptyCollection(spec.podCIDRs)) {
    spec.podCIDRs = [spec.podCIDR];
  }
  const status = ensureObject(node, 'status');
  if (isUnset(status.allocatable) && isJsonObject(status.capacity)) status.allocatable = deepCopy(status.capacity);
  formatResourceList(status, 'capacity');
  formatResourceList(status, 'allocatable');
  // Value structs all the way down: Go prints the kubelet endpoint port ("Port", capitalised) and node info.
  fillIfUnset(ensureObject(ensureObject(status, 'daemonEndpoints'), 'kubeletEndpoint'), 'Port', 0);
  const nodeInfo = ensureObject(status, 'nodeInfo');
  for (const field of NODE_INFO_FIELDS) fillIfUnset(nodeInfo, field, '');
}

function defaultLimitRange(limitRange: JsonObject): void {
  const spec = childObject(limitRange, 'spec');
  for (const item of spec === undefined ? [] : objectItems(spec, 'limits')) {
    for (const key of ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio']) formatResourceList(item, key);
    if (item.type !== 'Container') continue;
    const defaults = ensureObject(item, 'default');
    const defaultRequests = ensureObject(item, 'defaultRequest');
    const copyMissing = (from: unknown, to: JsonObject): void => {
      if (!isJsonObject(from)) return;
      for (const [name, quantity] of Object.entries(from)) if (!(name in to)) to[name] = quantity;
    };
    copyMissing(item.max, defaults);
    copyMissing(defaults, defaultRequests);
    copyMissing(item.min, defaultRequests);
    // Empty Go maps are omitted from the encoding, so an empty result must not appear.
    if (Object.keys(defaults).length === 0) delete item.default;
    if (Object.keys(defaultRequests).length === 0) delete item.defaultRequest;
  }
}

function defaultResourceQuota(quota: JsonObject): void {
  formatResourceList(childObject(quota, 'spec'), 'hard');
  const status = childObject(quota, 'status');
  formatResourceList(status, 'hard');
  formatResourceList(status, 'used');
}

/** Kinds of apiVersion v1 with defaults; other v1 kinds (ConfigMap, ServiceAccount, Event, ...) have none visible. */
export const coreV1Defaulters: Readonly<Record<string, (object: JsonObject) => void>> = {
  Pod: defaultPod,
  PodTemplate: defaultPodTemplate,
  ReplicationController: defaultReplicationController,
  Service: defaultService,
  Secret: defaultSecret,
  PersistentVolume: defaultPersistentVolume,
  PersistentVolumeClaim: defaultPersistentVolumeClaim,
  Endpoints: defaultEndpoints,
  Namespace: defaultNamespace,
  Node: defaultNode,
  LimitRange: defaultLimitRange,
  ResourceQuota: defaultResourceQuota,
};
