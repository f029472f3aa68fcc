/**
 * The group-versions a v1.25 server still serves but has deprecated (spec 01 §7 rule 3 and
 * §9.4): a request to one gets a `Warning: 299 - "..."` header with kube-apiserver's text, and
 * sets the gauge apiserver_requested_deprecated_apis for its group, version and resource.
 */

export interface Deprecation {
  /** The release that no longer serves it ('' when no removal is planned). */
  removedRelease: string;
  warning: string;
}

interface Entry {
  group: string;
  version: string;
  resources: Record<string, string>;
  deprecatedIn: string;
  removedIn: string;
  replacement: string;
}

const ENTRIES: Entry[] = [
  { group: 'autoscaling', version: 'v2beta2', resources: { horizontalpodautoscalers: 'HorizontalPodAutoscaler' }, deprecatedIn: '1.23', removedIn: '1.26', replacement: 'autoscaling/v2' },
  { group: 'flowcontrol.apiserver.k8s.io', version: 'v1beta1', resources: { flowschemas: 'FlowSchema', prioritylevelconfigurations: 'PriorityLevelConfiguration' }, deprecatedIn: '1.23', removedIn: '1.26', replacement: 'flowcontrol.apiserver.k8s.io/v1beta2' },
  { group: 'storage.k8s.io', version: 'v1beta1', resources: { csistoragecapacities: 'CSIStorageCapacity' }, deprecatedIn: '1.24', removedIn: '1.27', replacement: 'storage.k8s.io/v1' },
  { group: '', version: 'v1', resources: { componentstatuses: 'ComponentStatus' }, deprecatedIn: '1.19', removedIn: '', replacement: '' },
];

export function deprecationOf(group: string, version: string, resource: string): Deprecation | undefined {
  for (const entry of ENTRIES) {
    if (entry.group !== group || entry.version !== version) continue;
    const kind = entry.resources[resource];
    if (kind === undefined) return undefined;
    const gv = group === '' ? version : `${group}/${version}`;
    let warning = `${gv} ${kind} is deprecated in v${entry.deprecatedIn}+`;
    if (entry.removedIn !== '') warning += `, unavailable in v${entry.removedIn}+`;
    if (entry.replacement !== '') warning += `; use ${entry.replacement} ${kind}`;
    return { removedRelease: entry.removedIn, warning };
  }
  return undefined;
}
