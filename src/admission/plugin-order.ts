/**
 * Which admission plugins run, and in which order: kube-apiserver v1.25's AllOrderedPlugins and
 * its default-on set (kubernetes pkg/kubeapiserver/options/plugins.go), and the meaning of
 * --enable-admission-plugins / --disable-admission-plugins (apiserver
 * pkg/server/options/admission.go: enabledPluginNames and Validate). The order of the flags'
 * values never matters: every enabled plugin runs at its place in ALL_ORDERED_PLUGINS, mutating
 * ones first, then validating ones (admission-chain.ts).
 */
import { AdmissionError, aggregateMessage } from './errors';

/**
 * v1.25's AllOrderedPlugins. "webhook, resourcequota, and deny plugins must go at the end":
 * validating webhooks see the object before quota is charged for it.
 */
export const ALL_ORDERED_PLUGINS = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'SecurityContextDeny',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'PersistentVolumeLabel',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
] as const;

export type AdmissionPluginName = (typeof ALL_ORDERED_PLUGINS)[number];

/** The plugins on unless --disable-admission-plugins names them (v1.25's defaultOnPlugins). */
export const DEFAULT_ON_PLUGINS: ReadonlySet<string> = new Set<AdmissionPluginName>([
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'DefaultStorageClass',
  'PersistentVolumeClaimResize',
  'DefaultTolerationSeconds',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'StorageObjectInUseProtection',
  'Priority',
  'TaintNodesByCondition',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'PodSecurity',
]);

/**
 * kube-apiserver's checks of the two flags, every failure collected: unknown names, and names in
 * both lists. Throws one AdmissionError whose message is the aggregate of all of them.
 */
export function validatePluginFlags(enable: readonly string[], disable: readonly string[], registered: ReadonlySet<string>): void {
  const failures: string[] = [];
  for (const name of enable) if (!registered.has(name)) failures.push(`enable-admission-plugins plugin "${name}" is unknown`);
  for (const name of disable) if (!registered.has(name)) failures.push(`disable-admission-plugins plugin "${name}" is unknown`);
  const overlap = [...new Set(enable.filter((name) => disable.includes(name)))].sort();
  // Go prints a []string with %v as [a b].
  if (overlap.length > 0) failures.push(`[${overlap.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
  if (failures.length > 0) throw new AdmissionError('InvalidPluginFlags', aggregateMessage(failures));
}

/** The enabled plugins in the order they run: the default-on set, plus `enable`, minus `disable`. */
export function enabledPluginNames(enable: readonly string[], disable: readonly string[]): string[] {
  const enabled = new Set(enable);
  const off = new Set([...ALL_ORDERED_PLUGINS.filter((name) => !DEFAULT_ON_PLUGINS.has(name)), ...disable].filter((name) => !enabled.has(name)));
  return ALL_ORDERED_PLUGINS.filter((name) => !off.has(name));
}
