/**
 * Go type names as reflect's Type.String() prints them in encoding/json's UnmarshalTypeError
 * ("... of type v1.DeploymentSpec"). The OpenAPI documents name struct types but not the named
 * string, slice and map types (`type PullPolicy string`, `type ResourceList map[...]`) that the Go
 * structs use for some fields, so those are listed here per field.
 */

/** `io.k8s.api.apps.v1.DeploymentSpec` -> `DeploymentSpec`: the bare name Struct.Name() gives. */
export function goStructName(schemaName: string): string {
  return schemaName.slice(schemaName.lastIndexOf('.') + 1);
}

/** `io.k8s.api.apps.v1.DeploymentSpec` -> `v1.DeploymentSpec` (package short name + type name). */
export function goTypeName(schemaName: string): string {
  const last = schemaName.lastIndexOf('.');
  const previous = schemaName.lastIndexOf('.', last - 1);
  return schemaName.slice(previous + 1);
}

const CORE = 'io.k8s.api.core.v1.';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';

/**
 * Fields whose Go type is a named non-struct type (source: the v1.25 Go structs in k8s.io/api and
 * k8s.io/apimachinery types.go). Slices and maps of named types are written out in full.
 */
const NAMED_FIELD_TYPES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  [`${META}ObjectMeta`]: { uid: 'types.UID' },
  [`${META}OwnerReference`]: { uid: 'types.UID' },
  [`${META}LabelSelectorRequirement`]: { operator: 'v1.LabelSelectorOperator' },
  [`${META}ManagedFieldsEntry`]: { operation: 'v1.ManagedFieldsOperationType' },
  [`${META}Condition`]: { status: 'v1.ConditionStatus' },
  [`${CORE}Container`]: { imagePullPolicy: 'v1.PullPolicy', terminationMessagePolicy: 'v1.TerminationMessagePolicy' },
  [`${CORE}EphemeralContainer`]: { imagePullPolicy: 'v1.PullPolicy', terminationMessagePolicy: 'v1.TerminationMessagePolicy' },
  [`${CORE}ContainerPort`]: { protocol: 'v1.Protocol' },
  [`${CORE}ServicePort`]: { protocol: 'v1.Protocol' },
  [`${CORE}EndpointPort`]: { protocol: 'v1.Protocol' },
  [`${CORE}PodSpec`]: { restartPolicy: 'v1.RestartPolicy', dnsPolicy: 'v1.DNSPolicy', preemptionPolicy: 'v1.PreemptionPolicy', overhead: 'v1.ResourceList' },
  [`${CORE}PodStatus`]: { phase: 'v1.PodPhase', qosClass: 'v1.PodQOSClass' },
  [`${CORE}PodCondition`]: { type: 'v1.PodConditionType', status: 'v1.ConditionStatus' },
  [`${CORE}NodeCondition`]: { type: 'v1.NodeConditionType', status: 'v1.ConditionStatus' },
  [`${CORE}ServiceSpec`]: { type: 'v1.ServiceType', sessionAffinity: 'v1.ServiceAffinity', ipFamilies: '[]v1.IPFamily' },
  [`${CORE}Secret`]: { type: 'v1.SecretType', data: 'map[string][]uint8' },
  [`${CORE}ConfigMap`]: { binaryData: 'map[string][]uint8' },
  [`${CORE}NamespaceSpec`]: { finalizers: '[]v1.FinalizerName' },
  [`${CORE}NamespaceStatus`]: { phase: 'v1.NamespacePhase' },
  [`${CORE}PersistentVolumeClaimSpec`]: { accessModes: '[]v1.PersistentVolumeAccessMode', volumeMode: 'v1.PersistentVolumeMode' },
  [`${CORE}PersistentVolumeSpec`]: {
    accessModes: '[]v1.PersistentVolumeAccessMode', volumeMode: 'v1.PersistentVolumeMode',
    persistentVolumeReclaimPolicy: 'v1.PersistentVolumeReclaimPolicy', capacity: 'v1.ResourceList',
  },
  [`${CORE}PersistentVolumeClaimStatus`]: { phase: 'v1.PersistentVolumeClaimPhase', accessModes: '[]v1.PersistentVolumeAccessMode', capacity: 'v1.ResourceList' },
  [`${CORE}PersistentVolumeStatus`]: { phase: 'v1.PersistentVolumePhase' },
  [`${CORE}Toleration`]: { operator: 'v1.TolerationOperator', effect: 'v1.TaintEffect' },
  [`${CORE}Taint`]: { effect: 'v1.TaintEffect' },
  [`${CORE}NodeSelectorRequirement`]: { operator: 'v1.NodeSelectorOperator' },
  [`${CORE}Capabilities`]: { add: '[]v1.Capability', drop: '[]v1.Capability' },
  [`${CORE}ResourceRequirements`]: { limits: 'v1.ResourceList', requests: 'v1.ResourceList' },
  [`${CORE}ResourceQuotaSpec`]: { hard: 'v1.ResourceList' },
  [`${CORE}ResourceQuotaStatus`]: { hard: 'v1.ResourceList', used: 'v1.ResourceList' },
  [`${CORE}LimitRangeItem`]: {
    type: 'v1.LimitType', max: 'v1.ResourceList', min: 'v1.ResourceList', default: 'v1.ResourceList',
    defaultRequest: 'v1.ResourceList', maxLimitRequestRatio: 'v1.ResourceList',
  },
  [`${CORE}NodeStatus`]: { capacity: 'v1.ResourceList', allocatable: 'v1.ResourceList', phase: 'v1.NodePhase' },
  [`${CORE}EmptyDirVolumeSource`]: { medium: 'v1.StorageMedium' },
  [`${CORE}SeccompProfile`]: { type: 'v1.SeccompProfileType' },
  [`${CORE}SecurityContext`]: { procMount: 'v1.ProcMountType' },
  [`${CORE}HostPathVolumeSource`]: { type: 'v1.HostPathType' },
  'io.k8s.api.node.v1.Overhead': { podFixed: 'v1.ResourceList' },
  'io.k8s.api.discovery.v1.EndpointPort': { protocol: 'v1.Protocol' },
  'io.k8s.api.networking.v1.NetworkPolicyPort': { protocol: 'v1.Protocol' },
  'io.k8s.api.apps.v1.DeploymentStrategy': { type: 'v1.DeploymentStrategyType' },
  'io.k8s.api.apps.v1.DeploymentCondition': { type: 'v1.DeploymentConditionType', status: 'v1.ConditionStatus' },
  'io.k8s.api.apps.v1.StatefulSetSpec': { podManagementPolicy: 'v1.PodManagementPolicyType' },
  'io.k8s.api.apps.v1.StatefulSetUpdateStrategy': { type: 'v1.StatefulSetUpdateStrategyType' },
  'io.k8s.api.apps.v1.DaemonSetUpdateStrategy': { type: 'v1.DaemonSetUpdateStrategyType' },
  'io.k8s.api.batch.v1.JobSpec': { completionMode: 'v1.CompletionMode' },
  'io.k8s.api.batch.v1.CronJobSpec': { concurrencyPolicy: 'v1.ConcurrencyPolicy' },
  'io.k8s.api.authentication.v1.UserInfo': { extra: 'map[string]v1.ExtraValue' },
  'io.k8s.api.authorization.v1.SubjectAccessReviewSpec': { extra: 'map[string]v1.ExtraValue' },
  'io.k8s.api.certificates.v1.CertificateSigningRequestSpec': { extra: 'map[string]v1.ExtraValue', usages: '[]v1.KeyUsage' },
};

/** The Go type of a field when the Go struct gives it a named non-struct type; undefined otherwise. */
export function namedFieldType(structSchemaName: string, field: string): string | undefined {
  const fields = NAMED_FIELD_TYPES[structSchemaName];
  if (fields === undefined || !Object.prototype.hasOwnProperty.call(fields, field)) return undefined;
  return fields[field];
}

/** `[]v1.Capability` -> `v1.Capability`, `map[string]v1.ExtraValue` -> `v1.ExtraValue`; named types have no known element name. */
export function elementTypeName(goType: string): string | undefined {
  if (goType.startsWith('[]')) return goType.slice(2);
  if (goType.startsWith('map[string]')) return goType.slice('map[string]'.length);
  return undefined;
}
