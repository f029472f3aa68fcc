/**
 * The Node authorizer of kube-apiserver v1.25 (plugin/pkg/auth/authorizer/node/node_authorizer.go)
 * for kubelets: users named `system:node:<name>` in group `system:nodes`.
 *
 * - secrets, configmaps: get/list/watch of one named object in a namespace, related to the node;
 * - persistentvolumeclaims: get, related; `status` subresource: update/patch, related;
 * - persistentvolumes, volumeattachments: get, related;
 * - serviceaccounts: create of the `token` subresource for a service account used by a pod of
 *   the node;
 * - leases in `kube-node-lease` and csinodes: get/create/update/patch/delete of the node's own;
 * - anything else: the static rules of the `system:node` role.
 * Otherwise, and for every other user, no opinion, with v1.25's reason texts. The relations come
 * from NodeGraph, kept from the feed's pods, persistentvolumes and volumeattachments.
 */
import { NODES_GROUP, NODE_USER_PREFIX, type UserInfo } from '../../authn';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer, RuleResolver, RulesForUser } from '../authorizer';
import { FeedMirror, type ObjectFeed } from '../object-feed';
import { nodeRules } from '../rbac/bootstrap-policy';
import { goQuote } from '../rbac/go-text';
import { rulesAllow } from '../rbac/rule-matching';
import type { NormalizedRule } from '../rbac/types';
import { NodeGraph, podEdges, pvEdges, volumeAttachmentEdges, type Edge, type VertexType } from './node-graph';
import { resourceKeyPrefix } from '../../apis/catalogue';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** nodeidentifier: the node name, or undefined when the user is no node. */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.name.startsWith(NODE_USER_PREFIX)) return undefined;
  if (!user.groups.includes(NODES_GROUP)) return undefined;
  return user.name.slice(NODE_USER_PREFIX.length);
}

const noOpinion = (reason = ''): AuthorizationResult => ({ decision: 'no-opinion', reason });
const ALLOW: AuthorizationResult = { decision: 'allow', reason: '' };

export interface NodeAuthorizerOptions {
  /** The static rules; v1.25's system:node role by default. */
  rules?: readonly NormalizedRule[];
  log?: (line: string) => void;
}

export class NodeAuthorizer implements Authorizer, RuleResolver {
  readonly name = 'Node';
  readonly graph = new NodeGraph();
  private readonly rules: readonly NormalizedRule[];
  private readonly mirrors: Array<FeedMirror<readonly Edge[]>>;

  constructor(feed: ObjectFeed, options: NodeAuthorizerOptions = {}) {
    this.rules = options.rules ?? nodeRules();
    const follow = (prefix: string, edges: (object: Record<string, unknown>) => Edge[]): FeedMirror<readonly Edge[]> =>
      new FeedMirror<readonly Edge[]>(feed, prefix, {
        convert: edges,
        log: options.log,
        onChange: (changes) => {
          for (const change of changes) this.graph.replace(change.previous, change.current);
        },
      });
    this.mirrors = [
      follow(resourceKeyPrefix({ group: '', resource: 'pods' }), podEdges),
      follow(resourceKeyPrefix({ group: '', resource: 'persistentvolumes' }), pvEdges),
      follow(resourceKeyPrefix({ group: 'storage.k8s.io', resource: 'volumeattachments' }), volumeAttachmentEdges),
    ];
  }

  start(): void {
    for (const m of this.mirrors) m.start();
  }

  stop(): void {
    for (const m of this.mirrors) m.stop();
  }

  get isSynced(): boolean {
    return this.mirrors.every((m) => m.isSynced);
  }

  async authorize(attributes: AuthorizationAttributes): Promise<AuthorizationResult> {
    return this.authorizeSync(attributes);
  }

  authorizeSync(attributes: AuthorizationAttributes): AuthorizationResult {
    const nodeName = nodeIdentity(attributes.user);
    if (nodeName === undefined) return noOpinion();
    if (nodeName === '') return noOpinion(`unknown node for user ${goQuote(attributes.user.name)}`);
    if (attributes.isResourceRequest) {
      const { apiGroup, resource } = attributes;
      if (apiGroup === '') {
        switch (resource) {
          case 'secrets':
            return this.readNamespaced(nodeName, 'secret', attributes);
          case 'configmaps':
            return this.readNamespaced(nodeName, 'configmap', attributes);
          case 'persistentvolumeclaims':
            return attributes.subresource === 'status' ? this.statusUpdate(nodeName, 'pvc', attributes) : this.get(nodeName, 'pvc', attributes);
          case 'persistentvolumes':
            return this.get(nodeName, 'pv', attributes);
          case 'serviceaccounts':
            return this.createToken(nodeName, attributes);
          default:
            break;
        }
      } else if (apiGroup === 'storage.k8s.io' && resource === 'volumeattachments') {
        return this.get(nodeName, 'volumeattachment', attributes);
      } else if (apiGroup === 'coordination.k8s.io' && resource === 'leases') {
        return this.lease(nodeName, attributes);
      } else if (apiGroup === 'storage.k8s.io' && resource === 'csinodes') {
        return this.csiNode(nodeName, attributes);
      }
    }
    return rulesAllow(attributes, this.rules) ? ALLOW : noOpinion();
  }

  private related(nodeName: string, type: VertexType, attributes: AuthorizationAttributes): AuthorizationResult {
    if (attributes.name === '') return noOpinion('No Object name found');
    if (!this.graph.hasPathFrom(nodeName, type, attributes.namespace, attributes.name)) {
      return noOpinion(`no relationship found between node '${nodeName}' and this object`);
    }
    return ALLOW;
  }

  private statusUpdate(nodeName: string, type: VertexType, a: AuthorizationAttributes): AuthorizationResult {
    if (a.verb !== 'update' && a.verb !== 'patch') return noOpinion('can only get/update/patch this type');
    if (a.subresource !== 'status') return noOpinion('can only update status subresource');
    return this.related(nodeName, type, a);
  }

  private get(nodeName: string, type: VertexType, a: AuthorizationAttributes): AuthorizationResult {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (a.subresource !== '') return noOpinion('cannot get subresource');
    return this.related(nodeName, type, a);
  }

  private readNamespaced(nodeName: string, type: VertexType, a: AuthorizationAttributes): AuthorizationResult {
    if (a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'watch') return noOpinion('can only read resources of this type');
    if (a.subresource !== '') return noOpinion('cannot read subresource');
    if (a.namespace === '') return noOpinion('can only read namespaced object of this type');
    return this.related(nodeName, type, a);
  }

  private createToken(nodeName: string, a: AuthorizationAttributes): AuthorizationResult {
    if (a.verb !== 'create' || a.name === '') return noOpinion('can only create tokens for individual service accounts');
    if (a.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
    if (!this.graph.hasPathFrom(nodeName, 'serviceaccount', a.namespace, a.name)) {
      return noOpinion(`no relationship found between node '${nodeName}' and this object`);
    }
    return ALLOW;
  }

  private lease(nodeName: string, a: AuthorizationAttributes): AuthorizationResult {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion('can only get, create, update, patch, or delete a node lease');
    if (a.namespace !== NODE_LEASE_NAMESPACE) return noOpinion(`can only access leases in the ${goQuote(NODE_LEASE_NAMESPACE)} system namespace`);
    // The name of a create is unknown here; the NodeRestriction admission plugin checks it.
    if (a.verb !== 'create' && a.name !== nodeName) return noOpinion('can only access node lease with the same name as the requesting node');
    return ALLOW;
  }

  private csiNode(nodeName: string, a: AuthorizationAttributes): AuthorizationResult {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion('can only get, create, update, patch, or delete a CSINode');
    if (a.subresource !== '') return noOpinion('cannot authorize CSINode subresources');
    if (a.verb !== 'create' && a.name !== nodeName) return noOpinion('can only access CSINode with the same name as the requesting node');
    return ALLOW;
  }

  /** Nodes' permissions are not enumerable: incomplete, with v1.25's error text. */
  async rulesFor(user: UserInfo): Promise<RulesForUser> {
    if (nodeIdentity(user) !== undefined) {
      return { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'node authorizer does not support user rule resolution' };
    }
    return { resourceRules: [], nonResourceRules: [], incomplete: false, evaluationError: '' };
  }
}
