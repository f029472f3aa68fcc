/**
 * What `kubeadm init` publishes for nodes to join with bootstrap tokens (kubeadm v1.25 phases
 * `bootstrap-token`: clusterinfo.go and node/tlsbootstrap.go), which a cluster with the bootstrap
 * signer needs and v1.25's default RBAC policy does not hold:
 *
 * - ConfigMap kube-public/cluster-info, `kubeconfig`: a client configuration with one unnamed
 *   cluster (the cluster CA as certificate-authority-data, the server URL), as clientcmd.Write
 *   prints it; the bootstrap signer adds the signatures;
 * - Role and RoleBinding kube-public/kubeadm:bootstrap-signer-clusterinfo: `get` on that
 *   ConfigMap for User system:anonymous, so a joining node reads it before it has credentials;
 * - ClusterRoleBindings for the group of kubeadm's tokens (system:bootstrappers:kubeadm:default-node-token):
 *   kubeadm:kubelet-bootstrap (system:node-bootstrapper: create and read CSRs),
 *   kubeadm:node-autoapprove-bootstrap (…:certificatesigningrequests:nodeclient, so the
 *   approver approves their node client CSRs), kubeadm:get-nodes (a ClusterRole of that name:
 *   get nodes); and kubeadm:node-autoapprove-certificate-rotation for group system:nodes
 *   (…:selfnodeclient: nodes renew their own client certificates).
 *
 * Each object is created when missing and never overwritten: an operator's edit stands.
 */
import type { GenericRegistry } from '../registry';
import type { ServedResource } from '../registry';
import { ApiError } from '../util';
import { CLUSTER_INFO_NAME, CLUSTER_INFO_NAMESPACE, KUBECONFIG_KEY } from './bootstrap-signer';
import { type JsonObject, deepCopy } from '../apis/object';

/** The group kubeadm's bootstrap tokens carry in auth-extra-groups. */
export const KUBEADM_NODE_TOKEN_GROUP = 'system:bootstrappers:kubeadm:default-node-token';
const RBAC = 'rbac.authorization.k8s.io';

export interface ClusterInfoResources {
  readonly configMaps: ServedResource;
  readonly roles: ServedResource;
  readonly roleBindings: ServedResource;
  readonly clusterRoles: ServedResource;
  readonly clusterRoleBindings: ServedResource;
}

export interface ClusterInfoOptions {
  readonly registry: Pick<GenericRegistry, 'create'>;
  readonly resources: ClusterInfoResources;
  /** The cluster CA's certificate (PEM). */
  readonly caPem: string;
  /** The URL joining nodes reach the API at. */
  readonly server: string;
  readonly log?: (line: string) => void;
}

/** A plain YAML scalar where one reads back the same (a URL is), else a quoted one. */
function yamlScalar(value: string): string {
  return value === '' || /^[\s\-?:,[\]{}#&*!|>'"%@`]|: | #|\s$/.test(value) ? JSON.stringify(value) : value;
}

/** cluster-info's kubeconfig, as clientcmd.Write prints kubeadm's one-cluster Config. */
export function clusterInfoKubeconfig(caPem: string, server: string): string {
  return [
    'apiVersion: v1',
    'clusters:',
    '- cluster:',
    `    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}`,
    `    server: ${yamlScalar(server)}`,
    '  name: ""',
    'contexts: null',
    'current-context: ""',
    'kind: Config',
    'preferences: {}',
    'users: null',
    '',
  ].join('\n');
}

function clusterRoleBinding(name: string, roleName: string, group: string): JsonObject {
  return {
    apiVersion: `${RBAC}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: roleName },
    subjects: [{ apiGroup: RBAC, kind: 'Group', name: group }],
  };
}

/** Every object to publish, with the resource it is created through. */
export function clusterInfoObjects(options: Pick<ClusterInfoOptions, 'caPem' | 'server' | 'resources'>): Array<{ resource: ServedResource; namespace: string; object: JsonObject }> {
  const { resources } = options;
  const clusterInfoRole = 'kubeadm:bootstrap-signer-clusterinfo';
  return [
    {
      resource: resources.configMaps,
      namespace: CLUSTER_INFO_NAMESPACE,
      object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: CLUSTER_INFO_NAME, namespace: CLUSTER_INFO_NAMESPACE }, data: { [KUBECONFIG_KEY]: clusterInfoKubeconfig(options.caPem, options.server) } },
    },
    {
      resource: resources.roles,
      namespace: CLUSTER_INFO_NAMESPACE,
      object: {
        apiVersion: `${RBAC}/v1`,
        kind: 'Role',
        metadata: { name: clusterInfoRole, namespace: CLUSTER_INFO_NAMESPACE },
        rules: [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: [CLUSTER_INFO_NAME] }],
      },
    },
    {
      resource: resources.roleBindings,
      namespace: CLUSTER_INFO_NAMESPACE,
      object: {
        apiVersion: `${RBAC}/v1`,
        kind: 'RoleBinding',
        metadata: { name: clusterInfoRole, namespace: CLUSTER_INFO_NAMESPACE },
        roleRef: { apiGroup: RBAC, kind: 'Role', name: clusterInfoRole },
        subjects: [{ apiGroup: RBAC, kind: 'User', name: 'system:anonymous' }],
      },
    },
    { resource: resources.clusterRoleBindings, namespace: '', object: clusterRoleBinding('kubeadm:kubelet-bootstrap', 'system:node-bootstrapper', KUBEADM_NODE_TOKEN_GROUP) },
    { resource: resources.clusterRoleBindings, namespace: '', object: clusterRoleBinding('kubeadm:node-autoapprove-bootstrap', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', KUBEADM_NODE_TOKEN_GROUP) },
    { resource: resources.clusterRoleBindings, namespace: '', object: clusterRoleBinding('kubeadm:node-autoapprove-certificate-rotation', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', 'system:nodes') },
    {
      resource: resources.clusterRoles,
      namespace: '',
      object: { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: { name: 'kubeadm:get-nodes' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['nodes'] }] },
    },
    { resource: resources.clusterRoleBindings, namespace: '', object: clusterRoleBinding('kubeadm:get-nodes', 'kubeadm:get-nodes', KUBEADM_NODE_TOKEN_GROUP) },
  ];
}

/** Creates what is missing; the names it created. Throws (to be retried) when the store cannot take the writes. */
export async function publishClusterInfo(options: ClusterInfoOptions): Promise<string[]> {
  const created: string[] = [];
  for (const { resource, namespace, object } of clusterInfoObjects(options)) {
    const name = `${resource.resource}/${namespace === '' ? '' : `${namespace}/`}${String((object.metadata as JsonObject).name)}`;
    try {
      await options.registry.create(resource, namespace, deepCopy(object), { dryRun: false, subresource: '' });
      created.push(name);
    } catch (err) {
      if (err instanceof ApiError && err.code === 409) continue;
      throw err;
    }
  }
  if (created.length > 0) options.log?.(`bootstrapsigner: created ${created.join(', ')}`);
  return created;
}
