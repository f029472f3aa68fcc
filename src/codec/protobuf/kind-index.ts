/**
 * Which Protobuf message encodes a given apiVersion and kind.
 *
 * Each group/version is one proto package of the descriptor; the package's `go_package` option
 * names the Go import path (`k8s.io/api/apps/v1`), and the Go package's API group is in the table
 * below (the `GroupName` constant of each register.go in k8s.io/api v0.25.16, apiextensions-apiserver
 * and kube-aggregator). The meta.k8s.io/v1 types are shared: kube-apiserver registers
 * WatchEvent and the option kinds in every group/version (metav1.AddToGroupVersion), and Status,
 * APIVersions, APIGroupList, APIGroup and APIResourceList as unversioned types, labelled `v1`.
 * meta.v1.Table has no Protobuf message in v1.25, so Table is never encoded as Protobuf.
 *
 * The index reads the descriptor's JSON as it is, without protobufjs's Root: building the Root
 * costs about 0.12 s of CPU, which a server that only answers JSON never needs to spend, yet every
 * request asks whether its kind has a Protobuf form (issue 32).
 */
import type * as protobuf from 'protobufjs';

const apiGroupOfGoPackage: ReadonlyMap<string, string> = new Map([
  ['k8s.io/api/core', ''],
  ['k8s.io/api/admission', 'admission.k8s.io'],
  ['k8s.io/api/admissionregistration', 'admissionregistration.k8s.io'],
  ['k8s.io/api/apiserverinternal', 'internal.apiserver.k8s.io'],
  ['k8s.io/api/apps', 'apps'],
  ['k8s.io/api/authentication', 'authentication.k8s.io'],
  ['k8s.io/api/authorization', 'authorization.k8s.io'],
  ['k8s.io/api/autoscaling', 'autoscaling'],
  ['k8s.io/api/batch', 'batch'],
  ['k8s.io/api/certificates', 'certificates.k8s.io'],
  ['k8s.io/api/coordination', 'coordination.k8s.io'],
  ['k8s.io/api/discovery', 'discovery.k8s.io'],
  ['k8s.io/api/events', 'events.k8s.io'],
  ['k8s.io/api/extensions', 'extensions'],
  ['k8s.io/api/flowcontrol', 'flowcontrol.apiserver.k8s.io'],
  ['k8s.io/api/imagepolicy', 'imagepolicy.k8s.io'],
  ['k8s.io/api/networking', 'networking.k8s.io'],
  ['k8s.io/api/node', 'node.k8s.io'],
  ['k8s.io/api/policy', 'policy'],
  ['k8s.io/api/rbac', 'rbac.authorization.k8s.io'],
  ['k8s.io/api/scheduling', 'scheduling.k8s.io'],
  ['k8s.io/api/storage', 'storage.k8s.io'],
  ['k8s.io/apiextensions-apiserver/pkg/apis/apiextensions', 'apiextensions.k8s.io'],
  ['k8s.io/kube-aggregator/pkg/apis/apiregistration', 'apiregistration.k8s.io'],
]);

const metaPackage = 'k8s.io.apimachinery.pkg.apis.meta.v1';
/** Registered in every group/version by metav1.AddToGroupVersion. */
const perGroupVersionMetaKinds = ['WatchEvent', 'ListOptions', 'GetOptions', 'DeleteOptions', 'CreateOptions', 'UpdateOptions', 'PatchOptions'];
/** metav1 unversioned types: always `apiVersion: v1`. */
const unversionedMetaKinds = ['Status', 'APIVersions', 'APIGroupList', 'APIGroup', 'APIResourceList'];
/** Registered only in meta.k8s.io/v1 (metav1.AddMetaToScheme); Table has no Protobuf form. */
const metaGroupKinds = ['TableOptions', 'PartialObjectMetadata', 'PartialObjectMetadataList'];
/** Registered kinds of the group packages that carry no ObjectMeta or ListMeta. */
const kindsWithoutMetadata = new Set([
  'AdmissionReview',
  'ConversionReview',
  'DeploymentRollback',
  'NodeProxyOptions',
  'PodAttachOptions',
  'PodExecOptions',
  'PodLogOptions',
  'PodPortForwardOptions',
  'PodProxyOptions',
  'SerializedReference',
  'ServiceProxyOptions',
]);
/** Messages with an ObjectMeta that are parts of kinds, not kinds. */
const embeddedWithMetadata = /TemplateSpec$|^PersistentVolumeClaimTemplate$/;

/** A message, enum, service or namespace of the descriptor's JSON: a message has `fields`. */
type DescriptorNode = protobuf.INamespace & Partial<protobuf.IType>;

export class KindIndex {
  /** `apiVersion` -> proto package of that group/version, with its full name. */
  private readonly packageOfApiVersion = new Map<string, { name: string; namespace: protobuf.INamespace }>();
  private readonly resolved = new Map<string, string | undefined>();
  private readonly metaNamespace: protobuf.INamespace;

  constructor(descriptor: protobuf.INamespace) {
    const metaNamespace = metaPackage.split('.').reduce<DescriptorNode | undefined>((node, name) => node?.nested?.[name] as DescriptorNode | undefined, descriptor);
    if (metaNamespace === undefined || isMessage(metaNamespace)) throw new Error(`descriptor lacks package ${metaPackage}`);
    this.metaNamespace = metaNamespace;
    collectPackages(descriptor, '', (namespace, name, goPackage) => {
      const slash = goPackage.lastIndexOf('/');
      const group = apiGroupOfGoPackage.get(goPackage.slice(0, slash));
      if (group === undefined) return;
      const version = goPackage.slice(slash + 1);
      this.packageOfApiVersion.set(group === '' ? version : `${group}/${version}`, { name, namespace });
    });
  }

  /** Every apiVersion with a proto package, e.g. 'v1', 'apps/v1', 'apiextensions.k8s.io/v1'. */
  apiVersions(): string[] {
    return [...this.packageOfApiVersion.keys()];
  }

  /** Package-qualified message name of the kind apiVersion/kind, or undefined when it has none. */
  messageFor(apiVersion: string, kind: string): string | undefined {
    const key = `${apiVersion}\u0000${kind}`;
    if (this.resolved.has(key)) return this.resolved.get(key);
    const found = this.find(apiVersion, kind);
    this.resolved.set(key, found);
    return found;
  }

  private find(apiVersion: string, kind: string): string | undefined {
    const owner = this.packageOfApiVersion.get(apiVersion);
    const own = nestedOf(owner?.namespace, kind);
    if (owner !== undefined && own !== undefined && isMessage(own) && isKind(kind, own)) return `${owner.name}.${kind}`;
    const isMetaKind =
      (perGroupVersionMetaKinds.includes(kind) && (owner !== undefined || apiVersion === 'meta.k8s.io/v1')) ||
      (unversionedMetaKinds.includes(kind) && apiVersion === 'v1') ||
      (metaGroupKinds.includes(kind) && apiVersion === 'meta.k8s.io/v1');
    const meta = nestedOf(this.metaNamespace, kind);
    return isMetaKind && meta !== undefined && isMessage(meta) ? `${metaPackage}.${kind}` : undefined;
  }
}

/** The child `name` of a namespace (own properties only: a kind may be called `constructor`). */
function nestedOf(namespace: protobuf.INamespace | undefined, name: string): DescriptorNode | undefined {
  const nested = namespace?.nested;
  return nested !== undefined && Object.hasOwn(nested, name) ? (nested[name] as DescriptorNode) : undefined;
}

function isMessage(node: DescriptorNode): node is DescriptorNode & protobuf.IType {
  return node.fields !== undefined;
}

/** A top-level object type rather than a part of one (PodSpec is a message but not a kind). */
function isKind(name: string, type: protobuf.IType): boolean {
  if (kindsWithoutMetadata.has(name)) return true;
  const metadata = Object.hasOwn(type.fields, 'metadata') ? type.fields['metadata'] : undefined;
  const metadataType = metadata?.type.split('.').pop();
  return (metadataType === 'ObjectMeta' || metadataType === 'ListMeta') && !embeddedWithMetadata.test(name);
}

/** Every package (a namespace that is no message) with a go_package option, and its full name. */
function collectPackages(namespace: DescriptorNode, name: string, visit: (namespace: protobuf.INamespace, name: string, goPackage: string) => void): void {
  const goPackage = namespace.options?.['go_package'];
  if (typeof goPackage === 'string') visit(namespace, name, goPackage);
  for (const [childName, child] of Object.entries(namespace.nested ?? {}) as Array<[string, DescriptorNode]>) {
    if (!isMessage(child) && (child as { values?: unknown }).values === undefined) collectPackages(child, name === '' ? childName : `${name}.${childName}`, visit);
  }
}
