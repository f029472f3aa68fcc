/**
 * The graph behind v1.25's Node authorizer (plugin/pkg/auth/authorizer/node/graph.go,
 * graph_populator.go), kept from the feed. Vertices are `type/namespace/name`; an edge points
 * from an object toward the node that may read it:
 *
 *   secret, configmap, pvc, serviceaccount ──▶ pod ──▶ node      (pods bound to a node only)
 *   secret (kubelet-visible PV secret refs) ──▶ pv ──▶ pvc         (PVs with a claimRef)
 *   volumeattachment ──▶ node
 *
 * Each pod, PV and VolumeAttachment owns the edges it contributes; a change replaces exactly its
 * own edges, a delete removes them. `hasPathFrom` walks edges from an object until it reaches the
 * node (paths are at most four edges long).
 */
import { type JsonObject, objectOrEmpty } from '../../apis/object';

export type VertexType = 'configmap' | 'node' | 'pod' | 'pv' | 'pvc' | 'secret' | 'serviceaccount' | 'volumeattachment';

export type Edge = readonly [from: string, to: string];

export function vertex(type: VertexType, namespace: string, name: string): string {
  return `${type}/${namespace}/${name}`;
}

const arr = (v: unknown): JsonObject[] => (Array.isArray(v) ? (v.map(objectOrEmpty)) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function containersOf(spec: JsonObject): JsonObject[] {
  return [...arr(spec.initContainers), ...arr(spec.containers), ...arr(spec.ephemeralContainers)];
}

/** podutil.VisitPodSecretNames. */
export function podSecretNames(spec: JsonObject): Set<string> {
  const names = new Set<string>();
  const add = (n: string): void => {
    if (n !== '') names.add(n);
  };
  for (const ref of arr(spec.imagePullSecrets)) add(str(ref.name));
  for (const c of containersOf(spec)) {
    for (const e of arr(c.envFrom)) add(str(objectOrEmpty(e.secretRef).name));
    for (const e of arr(c.env)) add(str(objectOrEmpty(objectOrEmpty(e.valueFrom).secretKeyRef).name));
  }
  for (const v of arr(spec.volumes)) {
    add(str(objectOrEmpty(v.azureFile).secretName));
    for (const kind of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos']) add(str(objectOrEmpty(objectOrEmpty(v[kind]).secretRef).name));
    for (const source of arr(objectOrEmpty(v.projected).sources)) add(str(objectOrEmpty(source.secret).name));
    add(str(objectOrEmpty(v.secret).secretName));
    add(str(objectOrEmpty(objectOrEmpty(v.csi).nodePublishSecretRef).name));
  }
  return names;
}

/** podutil.VisitPodConfigmapNames. */
export function podConfigMapNames(spec: JsonObject): Set<string> {
  const names = new Set<string>();
  const add = (n: string): void => {
    if (n !== '') names.add(n);
  };
  for (const c of containersOf(spec)) {
    for (const e of arr(c.envFrom)) add(str(objectOrEmpty(e.configMapRef).name));
    for (const e of arr(c.env)) add(str(objectOrEmpty(objectOrEmpty(e.valueFrom).configMapKeyRef).name));
  }
  for (const v of arr(spec.volumes)) {
    for (const source of arr(objectOrEmpty(v.projected).sources)) add(str(objectOrEmpty(source.configMap).name));
    add(str(objectOrEmpty(v.configMap).name));
  }
  return names;
}

/** The edges a pod contributes; none until it is bound to a node. */
export function podEdges(pod: JsonObject): Edge[] {
  const metadata = objectOrEmpty(pod.metadata);
  const spec = objectOrEmpty(pod.spec);
  const nodeName = str(spec.nodeName);
  if (nodeName === '') return [];
  const ns = str(metadata.namespace);
  const name = str(metadata.name);
  const p = vertex('pod', ns, name);
  const edges: Edge[] = [[p, vertex('node', '', nodeName)]];
  const sa = str(spec.serviceAccountName);
  if (sa !== '') edges.push([vertex('serviceaccount', ns, sa), p]);
  for (const s of podSecretNames(spec)) edges.push([vertex('secret', ns, s), p]);
  for (const c of podConfigMapNames(spec)) edges.push([vertex('configmap', ns, c), p]);
  for (const v of arr(spec.volumes)) {
    const claim = str(objectOrEmpty(v.persistentVolumeClaim).claimName);
    if (claim !== '') edges.push([vertex('pvc', ns, claim), p]);
    // A generic ephemeral volume's claim is named <pod>-<volume>.
    if (v.ephemeral !== undefined && v.ephemeral !== null) edges.push([vertex('pvc', ns, `${name}-${str(v.name)}`), p]);
  }
  return edges;
}

/** pvutil.VisitPVSecretNames, kubelet-visible references only: [namespace, name] pairs. */
export function pvKubeletSecrets(pv: JsonObject): Array<[string, string]> {
  const spec = objectOrEmpty(pv.spec);
  const claimNamespace = str(objectOrEmpty(spec.claimRef).namespace);
  const out: Array<[string, string]> = [];
  const add = (ns: string, name: string): void => {
    if (name !== '') out.push([ns === '' ? claimNamespace : ns, name]);
  };
  const azure = objectOrEmpty(spec.azureFile);
  if (str(azure.secretName) !== '') add(str(azure.secretNamespace), str(azure.secretName));
  for (const kind of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos']) {
    const ref = objectOrEmpty(objectOrEmpty(spec[kind]).secretRef);
    // storageos and the ObjectReference forms carry a namespace; the others default to the claim's.
    add(str(ref.namespace), str(ref.name));
  }
  const csi = objectOrEmpty(spec.csi);
  for (const key of ['nodePublishSecretRef', 'nodeStageSecretRef']) {
    const ref = objectOrEmpty(csi[key]);
    add(str(ref.namespace), str(ref.name));
  }
  return out;
}

export function pvEdges(pv: JsonObject): Edge[] {
  const spec = objectOrEmpty(pv.spec);
  const claim = objectOrEmpty(spec.claimRef);
  if (spec.claimRef === undefined || spec.claimRef === null) return [];
  const p = vertex('pv', '', str(objectOrEmpty(pv.metadata).name));
  const edges: Edge[] = [[p, vertex('pvc', str(claim.namespace), str(claim.name))]];
  for (const [ns, name] of pvKubeletSecrets(pv)) edges.push([vertex('secret', ns, name), p]);
  return edges;
}

export function volumeAttachmentEdges(va: JsonObject): Edge[] {
  const nodeName = str(objectOrEmpty(va.spec).nodeName);
  if (nodeName === '') return [];
  return [[vertex('volumeattachment', '', str(objectOrEmpty(va.metadata).name)), vertex('node', '', nodeName)]];
}

export class NodeGraph {
  private readonly out = new Map<string, Map<string, number>>();

  private addEdge(from: string, to: string): void {
    let targets = this.out.get(from);
    if (targets === undefined) {
      targets = new Map();
      this.out.set(from, targets);
    }
    targets.set(to, (targets.get(to) ?? 0) + 1);
  }

  private removeEdge(from: string, to: string): void {
    const targets = this.out.get(from);
    const count = targets?.get(to);
    if (targets === undefined || count === undefined) return;
    if (count > 1) targets.set(to, count - 1);
    else targets.delete(to);
    if (targets.size === 0) this.out.delete(from);
  }

  /** Replaces the edges one object contributed (`previous`) with its new ones. */
  replace(previous: readonly Edge[] | undefined, current: readonly Edge[] | undefined): void {
    for (const [from, to] of previous ?? []) this.removeEdge(from, to);
    for (const [from, to] of current ?? []) this.addEdge(from, to);
  }

  get edgeCount(): number {
    let n = 0;
    for (const targets of this.out.values()) n += targets.size;
    return n;
  }

  /** Whether the object `type/namespace/name` leads to node `nodeName`. */
  hasPathFrom(nodeName: string, type: VertexType, namespace: string, name: string): boolean {
    const goal = vertex('node', '', nodeName);
    const start = vertex(type, namespace, name);
    const seen = new Set<string>([start]);
    const queue = [start];
    while (queue.length > 0) {
      const at = queue.shift() as string;
      for (const next of this.out.get(at)?.keys() ?? []) {
        if (next === goal) return true;
        if (!seen.has(next)) {
          seen.add(next);
          queue.push(next);
        }
      }
    }
    return false;
  }
}
