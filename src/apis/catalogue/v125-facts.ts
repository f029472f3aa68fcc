/**
 * Facts about a default kube-apiserver v1.25 that its OpenAPI documents do not carry: short names,
 * categories, discovery priorities, storage versions and which group-versions are on by default.
 * The generator merges these with what it derives from the OpenAPI paths; nothing here is read at
 * request time except through the generated catalogue.
 *
 * Sources (kubernetes/kubernetes, release-1.25 unless said otherwise):
 * - shortNames / categories: `ShortNames()` and `Categories()` of each REST storage in
 *   pkg/registry/<group>/<resource>/storage/storage.go, staging apiextensions-apiserver
 *   pkg/registry/customresourcedefinition/etcd.go and kube-aggregator pkg/registry/apiservice/etcd/etcd.go.
 * - priorities: `apiVersionPriorities` in cmd/kube-apiserver/app/aggregator.go; the aggregator sorts
 *   /apis by group priority (highest first), then APIService name, and versions by version priority.
 * - storage versions: the first version of each group's `SetVersionPriority` in pkg/apis/<group>/install,
 *   cohabitating resources in pkg/kubeapiserver/default_storage_factory_builder.go (core events store
 *   events.k8s.io events), and test/integration/etcd/data.go `ExpectedGVK`.
 * - defaults: pkg/controlplane/instance.go `DefaultAPIResourceConfigSource` (alpha versions off).
 */

export interface GroupVersionFacts {
  group: string;
  version: string;
  /** APIService spec.groupPriorityMinimum: orders groups in /apis. */
  groupPriority: number;
  /** APIService spec.versionPriority: orders versions inside a group. */
  versionPriority: number;
  enabledByDefault: boolean;
}

export interface StorageFacts {
  group: string;
  version: string;
  resource: string;
}

export interface V125Facts {
  groupVersions: GroupVersionFacts[];
  /** Keyed by `<group>/<resource>` ("" group for core). */
  shortNames: Record<string, string[]>;
  /** Keyed by `<group>/<resource>`. */
  categories: Record<string, string[]>;
  /** Keyed by `<group>/<resource>`: where a resource's objects live when not in the group's first served version. */
  storage: Record<string, StorageFacts>;
  /** Keyed by group: the version a group stores its resources in (its highest-priority scheme version). */
  groupStorageVersion: Record<string, string>;
  /**
   * Keyed by `<group>/<resource>`: resources with no etcd storage. kube-apiserver gives them no
   * storageVersionHash in discovery (their REST storage is not a StorageVersionProvider).
   */
  unstored: string[];
}

function gv(group: string, version: string, groupPriority: number, versionPriority: number, enabledByDefault = true): GroupVersionFacts {
  return { group, version, groupPriority, versionPriority, enabledByDefault };
}

export const v125Facts: V125Facts = {
  groupVersions: [
    gv('', 'v1', 18000, 1),
    // kube-aggregator lists its own group first, whatever the priorities ("it's good to be king").
    gv('apiregistration.k8s.io', 'v1', Number.MAX_SAFE_INTEGER, 15),
    gv('apps', 'v1', 17800, 15),
    gv('events.k8s.io', 'v1', 17750, 15),
    gv('authentication.k8s.io', 'v1', 17700, 15),
    gv('authorization.k8s.io', 'v1', 17600, 15),
    gv('autoscaling', 'v2', 17500, 30),
    gv('autoscaling', 'v1', 17500, 15),
    gv('autoscaling', 'v2beta2', 17500, 1),
    gv('batch', 'v1', 17400, 15),
    gv('certificates.k8s.io', 'v1', 17300, 15),
    gv('networking.k8s.io', 'v1', 17200, 15),
    gv('networking.k8s.io', 'v1alpha1', 17200, 1, false),
    gv('policy', 'v1', 17100, 15),
    gv('rbac.authorization.k8s.io', 'v1', 17000, 15),
    gv('storage.k8s.io', 'v1', 16800, 15),
    gv('storage.k8s.io', 'v1beta1', 16800, 9),
    gv('admissionregistration.k8s.io', 'v1', 16700, 15),
    gv('apiextensions.k8s.io', 'v1', 16700, 15),
    gv('scheduling.k8s.io', 'v1', 16600, 15),
    gv('coordination.k8s.io', 'v1', 16500, 15),
    gv('node.k8s.io', 'v1', 16300, 15),
    gv('discovery.k8s.io', 'v1', 16200, 15),
    gv('flowcontrol.apiserver.k8s.io', 'v1beta2', 16100, 15),
    gv('flowcontrol.apiserver.k8s.io', 'v1beta1', 16100, 12),
    gv('internal.apiserver.k8s.io', 'v1alpha1', 16000, 9, false),
  ],
  shortNames: {
    '/componentstatuses': ['cs'],
    '/configmaps': ['cm'],
    '/endpoints': ['ep'],
    '/events': ['ev'],
    '/limitranges': ['limits'],
    '/namespaces': ['ns'],
    '/nodes': ['no'],
    '/persistentvolumeclaims': ['pvc'],
    '/persistentvolumes': ['pv'],
    '/pods': ['po'],
    '/replicationcontrollers': ['rc'],
    '/resourcequotas': ['quota'],
    '/serviceaccounts': ['sa'],
    '/services': ['svc'],
    'apiextensions.k8s.io/customresourcedefinitions': ['crd', 'crds'],
    'apps/daemonsets': ['ds'],
    'apps/deployments': ['deploy'],
    'apps/replicasets': ['rs'],
    'apps/statefulsets': ['sts'],
    'autoscaling/horizontalpodautoscalers': ['hpa'],
    'batch/cronjobs': ['cj'],
    'certificates.k8s.io/certificatesigningrequests': ['csr'],
    // events.k8s.io serves the core event storage, which names the short name.
    'events.k8s.io/events': ['ev'],
    'networking.k8s.io/ingresses': ['ing'],
    'networking.k8s.io/networkpolicies': ['netpol'],
    'policy/poddisruptionbudgets': ['pdb'],
    'scheduling.k8s.io/priorityclasses': ['pc'],
    'storage.k8s.io/storageclasses': ['sc'],
  },
  categories: {
    '/pods': ['all'],
    '/replicationcontrollers': ['all'],
    '/services': ['all'],
    'apps/daemonsets': ['all'],
    'apps/deployments': ['all'],
    'apps/replicasets': ['all'],
    'apps/statefulsets': ['all'],
    'autoscaling/horizontalpodautoscalers': ['all'],
    'batch/cronjobs': ['all'],
    'batch/jobs': ['all'],
    'admissionregistration.k8s.io/mutatingwebhookconfigurations': ['api-extensions'],
    'admissionregistration.k8s.io/validatingwebhookconfigurations': ['api-extensions'],
    'apiextensions.k8s.io/customresourcedefinitions': ['api-extensions'],
    'apiregistration.k8s.io/apiservices': ['api-extensions'],
  },
  storage: {
    // Cohabitating resources: the core group is listed first, so it holds events.k8s.io events.
    'events.k8s.io/events': { group: '', version: 'v1', resource: 'events' },
  },
  groupStorageVersion: {
    '': 'v1',
    'admissionregistration.k8s.io': 'v1',
    'apiextensions.k8s.io': 'v1',
    'apiregistration.k8s.io': 'v1',
    apps: 'v1',
    'authentication.k8s.io': 'v1',
    'authorization.k8s.io': 'v1',
    // autoscaling/install in 1.23 carried "TODO: move v2 to the front of the list in 1.24"; from
    // 1.24 on HorizontalPodAutoscalers are stored as autoscaling/v2 whichever version served them.
    autoscaling: 'v2',
    batch: 'v1',
    'certificates.k8s.io': 'v1',
    'coordination.k8s.io': 'v1',
    'discovery.k8s.io': 'v1',
    'events.k8s.io': 'v1',
    'flowcontrol.apiserver.k8s.io': 'v1beta2',
    'internal.apiserver.k8s.io': 'v1alpha1',
    'networking.k8s.io': 'v1',
    'node.k8s.io': 'v1',
    policy: 'v1',
    'rbac.authorization.k8s.io': 'v1',
    'scheduling.k8s.io': 'v1',
    'storage.k8s.io': 'v1',
  },
  unstored: [
    '/bindings',
    '/componentstatuses',
    'authentication.k8s.io/tokenreviews',
    'authorization.k8s.io/localsubjectaccessreviews',
    'authorization.k8s.io/selfsubjectaccessreviews',
    'authorization.k8s.io/selfsubjectrulesreviews',
    'authorization.k8s.io/subjectaccessreviews',
  ],
};
