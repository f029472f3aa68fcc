/**
 * The built-in admission plugins of v1.25 (one file each), registered by name. The webhook
 * plugins (MutatingAdmissionWebhook, ValidatingAdmissionWebhook, ImagePolicyWebhook) are not
 * here: src/admission/webhook registers them on the same registry.
 */
import type { AdmissionPluginRegistry } from '../plugin-registry';
import { alwaysAdmitPlugin } from './always-admit';
import { alwaysDenyPlugin } from './always-deny';
import { alwaysPullImagesPlugin } from './always-pull-images';
import { certificateApprovalPlugin } from './certificate-approval';
import { certificateSigningPlugin } from './certificate-signing';
import { certificateSubjectRestrictionPlugin } from './certificate-subject-restriction';
import { defaultIngressClassPlugin } from './default-ingress-class';
import { defaultStorageClassPlugin } from './default-storage-class';
import { defaultTolerationSecondsPlugin } from './default-toleration-seconds';
import { denyServiceExternalIpsPlugin } from './deny-service-external-ips';
import { eventRateLimitPlugin } from './event-rate-limit';
import { extendedResourceTolerationPlugin } from './extended-resource-toleration';
import { limitPodHardAntiAffinityTopologyPlugin } from './limit-pod-hard-anti-affinity-topology';
import { limitRangerPlugin } from './limit-ranger';
import { namespaceAutoProvisionPlugin } from './namespace-auto-provision';
import { namespaceExistsPlugin } from './namespace-exists';
import { namespaceLifecyclePlugin } from './namespace-lifecycle';
import { nodeRestrictionPlugin } from './node-restriction';
import { ownerReferencesPermissionEnforcementPlugin } from './owner-references-permission-enforcement';
import { persistentVolumeClaimResizePlugin } from './persistent-volume-claim-resize';
import { persistentVolumeLabelPlugin } from './persistent-volume-label';
import { podNodeSelectorPlugin } from './pod-node-selector';
import { podSecurityPlugin } from './pod-security';
import { podTolerationRestrictionPlugin } from './pod-toleration-restriction';
import { priorityPlugin } from './priority';
import { resourceQuotaPlugin } from './resource-quota';
import { runtimeClassPlugin } from './runtime-class';
import { securityContextDenyPlugin } from './security-context-deny';
import { serviceAccountPlugin } from './service-account';
import { storageObjectInUseProtectionPlugin } from './storage-object-in-use-protection';
import { taintNodesByConditionPlugin } from './taint-nodes-by-condition';

/** Registers every built-in plugin on `registry`. */
export function registerBuiltinPlugins(registry: AdmissionPluginRegistry): void {
  registry.register('AlwaysAdmit', alwaysAdmitPlugin);
  registry.register('AlwaysDeny', alwaysDenyPlugin);
  registry.register('AlwaysPullImages', alwaysPullImagesPlugin);
  registry.register('CertificateApproval', certificateApprovalPlugin);
  registry.register('CertificateSigning', certificateSigningPlugin);
  registry.register('CertificateSubjectRestriction', certificateSubjectRestrictionPlugin);
  registry.register('DefaultIngressClass', defaultIngressClassPlugin);
  registry.register('DefaultStorageClass', defaultStorageClassPlugin);
  registry.register('DefaultTolerationSeconds', defaultTolerationSecondsPlugin);
  registry.register('DenyServiceExternalIPs', denyServiceExternalIpsPlugin);
  registry.register('EventRateLimit', eventRateLimitPlugin);
  registry.register('ExtendedResourceToleration', extendedResourceTolerationPlugin);
  registry.register('LimitPodHardAntiAffinityTopology', limitPodHardAntiAffinityTopologyPlugin);
  registry.register('LimitRanger', limitRangerPlugin);
  registry.register('NamespaceAutoProvision', namespaceAutoProvisionPlugin);
  registry.register('NamespaceExists', namespaceExistsPlugin);
  registry.register('NamespaceLifecycle', namespaceLifecyclePlugin);
  registry.register('NodeRestriction', nodeRestrictionPlugin);
  registry.register('OwnerReferencesPermissionEnforcement', ownerReferencesPermissionEnforcementPlugin);
  registry.register('PersistentVolumeClaimResize', persistentVolumeClaimResizePlugin);
  registry.register('PersistentVolumeLabel', persistentVolumeLabelPlugin);
  registry.register('PodNodeSelector', podNodeSelectorPlugin);
  registry.register('PodSecurity', podSecurityPlugin);
  registry.register('PodTolerationRestriction', podTolerationRestrictionPlugin);
  registry.register('Priority', priorityPlugin);
  registry.register('ResourceQuota', resourceQuotaPlugin);
  registry.register('RuntimeClass', runtimeClassPlugin);
  registry.register('SecurityContextDeny', securityContextDenyPlugin);
  registry.register('ServiceAccount', serviceAccountPlugin);
  registry.register('StorageObjectInUseProtection', storageObjectInUseProtectionPlugin);
  registry.register('TaintNodesByCondition', taintNodesByConditionPlugin);
}
