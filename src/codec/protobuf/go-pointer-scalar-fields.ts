/**
 * Scalar fields that Go declares as pointers (`*int32`, `*int64`, `*bool`, `*string` and named
 * string types such as `*PersistentVolumeMode`), per API group.
 *
 * Why it matters: Go's generated marshaller writes every non-pointer scalar, zero or not, and
 * kube-apiserver's JSON leaves those zeros out (`omitempty`), so the decoder drops zero scalars.
 * A pointer field, though, is on the wire only when set, and its zero is a real value that
 * kube-apiserver keeps: `replicas: 0`, `gracePeriodSeconds: 0`, `immutable: false`. The
 * descriptor cannot tell the two apart (proto2 `optional` for both), so they are listed here.
 *
 * Source: the pointer fields (`*out = new(int32)` ... `**out = **in`) of zz_generated.deepcopy.go
 * in k8s.io/api and k8s.io/apimachinery, and the Go types of the other groups, kept to the fields
 * that exist in the v1.25 descriptor (a unit test checks every entry against it).
 *
 * Keys leave out the version: `k8s.io.api.apps.DeploymentSpec.replicas` covers apps/v1, v1beta1
 * and v1beta2, whose Go structs declare the field alike.
 */

const byGroupPackage: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  'k8s.io.api.core': {
    AzureDiskVolumeSource: ['cachingMode', 'fsType', 'readOnly', 'kind'],
    AzureFilePersistentVolumeSource: ['secretNamespace'],
    CSIVolumeSource: ['readOnly', 'fsType'],
    ClientIPConfig: ['timeoutSeconds'],
    ConfigMap: ['immutable'],
    ConfigMapEnvSource: ['optional'],
    ConfigMapKeySelector: ['optional'],
    ConfigMapProjection: ['optional'],
    ConfigMapVolumeSource: ['defaultMode', 'optional'],
    ContainerStatus: ['started'],
    DownwardAPIVolumeFile: ['mode'],
    DownwardAPIVolumeSource: ['defaultMode'],
    EndpointAddress: ['nodeName'],
    EndpointPort: ['appProtocol'],
    FCVolumeSource: ['lun'],
    GRPCAction: ['service'],
    GlusterfsPersistentVolumeSource: ['endpointsNamespace'],
    HostPathVolumeSource: ['type'],
    ISCSIPersistentVolumeSource: ['initiatorName'],
    ISCSIVolumeSource: ['initiatorName'],
    KeyToPath: ['mode'],
    LocalVolumeSource: ['fsType'],
    PersistentVolumeClaimSpec: ['storageClassName', 'volumeMode'],
    PersistentVolumeClaimStatus: ['resizeStatus'],
    PersistentVolumeSpec: ['volumeMode'],
    PodDNSConfigOption: ['value'],
    PodLogOptions: ['sinceSeconds', 'tailLines', 'limitBytes'],
    PodSecurityContext: ['runAsUser', 'runAsGroup', 'runAsNonRoot', 'fsGroup', 'fsGroupChangePolicy'],
    PortStatus: ['error'],
    PodSpec: [
      'terminationGracePeriodSeconds',
      'activeDeadlineSeconds',
      'automountServiceAccountToken',
      'shareProcessNamespace',
      'priority',
      'runtimeClassName',
      'enableServiceLinks',
      'preemptionPolicy',
      'setHostnameAsFQDN',
      'hostUsers',
    ],
    Preconditions: ['uid'],
    Probe: ['terminationGracePeriodSeconds'],
    ProjectedVolumeSource: ['defaultMode'],
    ReplicationControllerSpec: ['replicas'],
    SeccompProfile: ['localhostProfile'],
    Secret: ['immutable'],
    SecretEnvSource: ['optional'],
    SecretKeySelector: ['optional'],
    SecretProjection: ['optional'],
    SecretVolumeSource: ['defaultMode', 'optional'],
    SecurityContext: ['privileged', 'runAsUser', 'runAsGroup', 'runAsNonRoot', 'readOnlyRootFilesystem', 'allowPrivilegeEscalation', 'procMount'],
    ServiceAccount: ['automountServiceAccountToken'],
    ServiceAccountTokenProjection: ['expirationSeconds'],
    ServicePort: ['appProtocol'],
    ServiceSpec: ['ipFamilyPolicy', 'allocateLoadBalancerNodePorts', 'loadBalancerClass', 'internalTrafficPolicy'],
    Toleration: ['tolerationSeconds'],
    TopologySpreadConstraint: ['minDomains', 'nodeAffinityPolicy', 'nodeTaintsPolicy'],
    TypedLocalObjectReference: ['apiGroup'],
    VolumeMount: ['mountPropagation'],
    WindowsSecurityContextOptions: ['gmsaCredentialSpecName', 'gmsaCredentialSpec', 'runAsUserName', 'hostProcess'],
  },
  'k8s.io.apimachinery.pkg.apis.meta': {
    DeleteOptions: ['gracePeriodSeconds', 'orphanDependents', 'propagationPolicy'],
    ListMeta: ['remainingItemCount'],
    ListOptions: ['timeoutSeconds'],
    ObjectMeta: ['deletionGracePeriodSeconds'],
    OwnerReference: ['controller', 'blockOwnerDeletion'],
    PatchOptions: ['force'],
    Preconditions: ['uid', 'resourceVersion'],
  },
  'k8s.io.api.admission': {
    AdmissionRequest: ['dryRun'],
    AdmissionResponse: ['patchType'],
  },
  'k8s.io.api.admissionregistration': {
    MutatingWebhook: ['failurePolicy', 'matchPolicy', 'sideEffects', 'timeoutSeconds', 'reinvocationPolicy'],
    ValidatingWebhook: ['failurePolicy', 'matchPolicy', 'sideEffects', 'timeoutSeconds'],
    WebhookClientConfig: ['url'],
    ServiceReference: ['path', 'port'],
    Rule: ['scope'],
  },
  'k8s.io.api.apiserverinternal': {
    StorageVersionStatus: ['commonEncodingVersion'],
  },
  'k8s.io.api.apps': {
    DaemonSetSpec: ['revisionHistoryLimit'],
    DaemonSetStatus: ['collisionCount'],
    DeploymentSpec: ['replicas', 'revisionHistoryLimit', 'progressDeadlineSeconds'],
    DeploymentStatus: ['collisionCount'],
    ReplicaSetSpec: ['replicas'],
    RollingUpdateStatefulSetStrategy: ['partition'],
    StatefulSetSpec: ['replicas', 'revisionHistoryLimit'],
    StatefulSetStatus: ['collisionCount'],
  },
  'k8s.io.api.extensions': {
    DaemonSetSpec: ['revisionHistoryLimit'],
    DaemonSetStatus: ['collisionCount'],
    DeploymentSpec: ['replicas', 'revisionHistoryLimit', 'progressDeadlineSeconds'],
    DeploymentStatus: ['collisionCount'],
    ReplicaSetSpec: ['replicas'],
    HTTPIngressPath: ['pathType'],
    IngressSpec: ['ingressClassName'],
    NetworkPolicyPort: ['protocol', 'endPort'],
    PodSecurityPolicySpec: ['defaultAllowPrivilegeEscalation', 'allowPrivilegeEscalation'],
  },
  'k8s.io.api.authentication': {
    TokenRequestSpec: ['expirationSeconds'],
  },
  'k8s.io.api.autoscaling': {
    HorizontalPodAutoscalerSpec: ['minReplicas', 'targetCPUUtilizationPercentage'],
    HorizontalPodAutoscalerStatus: ['observedGeneration', 'currentCPUUtilizationPercentage'],
    MetricTarget: ['averageUtilization'],
    MetricValueStatus: ['averageUtilization'],
    HPAScalingRules: ['stabilizationWindowSeconds', 'selectPolicy'],
    ResourceMetricSource: ['targetAverageUtilization'],
    ResourceMetricStatus: ['currentAverageUtilization'],
    ContainerResourceMetricSource: ['targetAverageUtilization'],
    ContainerResourceMetricStatus: ['currentAverageUtilization'],
  },
  'k8s.io.api.batch': {
    CronJobSpec: ['startingDeadlineSeconds', 'suspend', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', 'timeZone'],
    JobSpec: ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'manualSelector', 'ttlSecondsAfterFinished', 'completionMode', 'suspend'],
    JobStatus: ['ready'],
    PodFailurePolicyOnExitCodesRequirement: ['containerName'],
  },
  'k8s.io.api.certificates': {
    CertificateSigningRequestSpec: ['expirationSeconds'],
  },
  'k8s.io.api.coordination': {
    LeaseSpec: ['holderIdentity', 'leaseDurationSeconds', 'leaseTransitions'],
  },
  'k8s.io.api.discovery': {
    Endpoint: ['hostname', 'nodeName', 'zone'],
    EndpointConditions: ['ready', 'serving', 'terminating'],
    EndpointPort: ['name', 'protocol', 'port', 'appProtocol'],
  },
  'k8s.io.api.networking': {
    HTTPIngressPath: ['pathType'],
    IngressClassParametersReference: ['aPIGroup', 'scope', 'namespace'],
    IngressSpec: ['ingressClassName'],
    NetworkPolicyPort: ['protocol', 'endPort'],
  },
  'k8s.io.api.policy': {
    PodSecurityPolicySpec: ['defaultAllowPrivilegeEscalation', 'allowPrivilegeEscalation'],
  },
  'k8s.io.api.scheduling': {
    PriorityClass: ['preemptionPolicy'],
  },
  'k8s.io.api.storage': {
    CSIDriverSpec: ['attachRequired', 'podInfoOnMount', 'storageCapacity', 'fsGroupPolicy', 'requiresRepublish', 'seLinuxMount'],
    StorageClass: ['reclaimPolicy', 'allowVolumeExpansion', 'volumeBindingMode'],
    TokenRequest: ['expirationSeconds'],
    VolumeAttachmentSource: ['persistentVolumeName'],
    VolumeNodeResources: ['count'],
  },
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions': {
    CustomResourceDefinitionVersion: ['deprecationWarning'],
    CustomResourceSubresourceScale: ['labelSelectorPath'],
    JSONSchemaProps: [
      'maximum',
      'minimum',
      'maxLength',
      'minLength',
      'maxItems',
      'minItems',
      'multipleOf',
      'maxProperties',
      'minProperties',
      'xKubernetesPreserveUnknownFields',
      'xKubernetesListType',
      'xKubernetesMapType',
    ],
    ServiceReference: ['path', 'port'],
    WebhookClientConfig: ['url'],
  },
  'k8s.io.kube_aggregator.pkg.apis.apiregistration': {
    ServiceReference: ['port'],
  },
};

/** `group package.Message.field` keys, as built by `pointerFieldKey`. */
export const goPointerScalarFields: ReadonlySet<string> = new Set(
  Object.entries(byGroupPackage).flatMap(([groupPackage, messages]) =>
    Object.entries(messages).flatMap(([message, fields]) => fields.map((field) => `${groupPackage}.${message}.${field}`)),
  ),
);

const versionSegment = /^v\d+(?:(?:alpha|beta)\d+)?$/;

/** The lookup key of a field: its message's package-qualified name without the version segment. */
export function pointerFieldKey(messageFullName: string, protoFieldName: string): string {
  const unversioned = messageFullName
    .split('.')
    .filter((segment) => !versionSegment.test(segment))
    .join('.');
  return `${unversioned}.${protoFieldName}`;
}
