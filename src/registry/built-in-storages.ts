/**
 * The storages of the built-in resources, made from the catalogue (src/apis/catalogue) once per
 * resource, when first resolved: the key prefix kube-apiserver v1.25 uses in etcd (the rule is
 * src/apis/catalogue/key-layout.ts, which every reader of the store by key asks), the kind's
 * strategy, typed decoding, version conversion, deprecation, the Services' allocator, the scale
 * rules of the scalable kinds, the pods' binding and eviction, and which storages hold secrets.
 */
import { resourceKeyPrefix } from '../apis/catalogue';
import { convertVersion } from '../apis/conversion';
import { deprecationOf } from '../apis/deprecations';
import { TypedDecoder } from '../apis/schema';
import type { WriteAllocator } from './generic-registry';
import type { ResourceStorageParts, ScaleRules, SubresourceCreater, TypedDecode, VersionConverter } from './resource-storage';
import { bindingCreater } from './virtual/pod-binding';
import { evictionCreater } from './virtual/pod-eviction';
import { errors } from '../util';
import { apiVersionOf, type ServedResource } from './served-resource';
import { topologyForKind } from '../apply';
import { strategyFor } from './strategies';
import type { ResourceStrategy } from './strategy';

/** The pods' and the bindings' subresources that store nothing of their own (kube's BindingREST, EvictionREST). */
const PODS = '/pods';
const BINDINGS = '/bindings';

/** The resource whose storage holds the Service allocator's side keys. */
const SERVICES = '/services';
/** The resource whose objects hold secrets. */
const SECRETS = '/secrets';
/** The scalable kind whose selector is a plain label map (v1.25's ReplicationControllerSpec.Selector). */
const LABEL_MAP_SELECTOR_KIND = 'ReplicationController';



export interface BuiltInStoragesOptions {
  /** The served built-in resources (absent: none is resolved by path; `partsFor` still makes storages). */
  catalogue?: {
    lookup(group: string, version: string, resource: string): ServedResource | undefined;
    lookupKind(group: string, version: string, kind: string): ServedResource | undefined;
  };
  /** Allocates the Services' cluster IPs and node ports in their writes' transactions. */
  serviceAllocator?: WriteAllocator;
  /**
   * Strategies of built-in resources defined outside src/registry, by "<group>/<resource>" (the
   * apiextensions server's customresourcedefinitions).
   */
  strategies?: ReadonlyMap<string, ResourceStrategy>;
  /**
   * Creates of built-in resources whose logic lives outside src/registry, by "<group>/<resource>"
   * and then subresource ('' for the resource itself): the review APIs and serviceaccounts/token,
   * which the server's security stages answer (kube's authentication and authorization REST
   * storage providers).
   */
  creates?: ReadonlyMap<string, ReadonlyMap<string, SubresourceCreater>>;
}

export class BuiltInStorages {
  private readonly made = new WeakMap<ServedResource, ResourceStorageParts>();

  constructor(private readonly options: BuiltInStoragesOptions = {}) {}

  /** The key prefixes of the storages whose objects hold secrets: their strings are never shared in a process-wide table. */
  static prefixesHoldingSecrets(): string[] {
    return [resourceKeyPrefix({ group: '', resource: SECRETS.slice(1) })];
  }

  /** The storage parts of a built-in resource the catalogue serves at this path. */
  storageParts(group: string, version: string, resource: string): ResourceStorageParts | undefined {
    const served = this.options.catalogue?.lookup(group, version, resource);
    return served === undefined ? undefined : this.partsFor(served);
  }

  /** The storage parts of the built-in resource serving this kind in this group-version. */
  storagePartsOfKind(group: string, version: string, kind: string): ResourceStorageParts | undefined {
    const served = this.options.catalogue?.lookupKind(group, version, kind);
    return served === undefined ? undefined : this.partsFor(served);
  }

  /** Decoding into a built-in kind's type (by the object's apiVersion and kind). */
  readonly decode: TypedDecode = (object, level, rawJson, source) => TypedDecoder.shared().decode(object, level, rawJson, source);

  /** Conversion between a built-in kind's versions. */
  readonly convert: VersionConverter = convertVersion;

  /**
   * The storage parts of `resource` by the built-in rules, whether the catalogue serves it or not
   * (a resource of a CRD gone meanwhile keeps being stored where custom resources are).
   */
  partsFor(resource: ServedResource): ResourceStorageParts {
    let parts = this.made.get(resource);
    if (parts === undefined) {
      parts = this.make(resource);
      this.made.set(resource, parts);
    }
    return parts;
  }

  private make(resource: ServedResource): ResourceStorageParts {
    const groupResource = `${resource.group}/${resource.resource}`;
    return {
      resource,
      keyPrefix: resourceKeyPrefix(resource),
      strategy: this.options.strategies?.get(groupResource) ?? strategyFor(resource),
      decode: this.decode,
      convert: this.convert,
      servedAsStored: true,
      deprecation: deprecationOf(resource.group, resource.version, resource.resource),
      allocator: groupResource === SERVICES ? this.options.serviceAllocator : undefined,
      scale: scaleRulesOf(resource),
      topology: () => topologyForKind(apiVersionOf(resource), resource.kind),
      creates: this.createsOf(groupResource),
    };
  }

  private createsOf(groupResource: string): ReadonlyMap<string, SubresourceCreater> | undefined {
    const pods = () => this.served('', 'v1', 'pods');
    if (groupResource === PODS) {
      return new Map([
        ['binding', bindingCreater('path', pods)],
        ['eviction', evictionCreater(() => ({ pods: pods(), budgets: this.served('policy', 'v1', 'poddisruptionbudgets') }))],
      ]);
    }
    if (groupResource === BINDINGS) return new Map([['', bindingCreater('body', pods)]]);
    return this.options.creates?.get(groupResource);
  }

  /** A resource the catalogue must serve (the pods a binding or an eviction acts on). */
  private served(group: string, version: string, resource: string): ServedResource {
    const found = this.options.catalogue?.lookup(group, version, resource);
    if (found === undefined) throw errors.internal(new Error(`the catalogue has no ${resource}`));
    return found;
  }
}

/** The scale rules of a scalable resource: a CRD's paths when it names them, else spec.replicas, status.replicas and spec.selector. */
function scaleRulesOf(resource: ServedResource): ScaleRules | undefined {
  if (resource.scale !== undefined) return scaleRulesFromPaths(resource.scale);
  if (!resource.subresources.some((s) => s.name === 'scale')) return undefined;
  const shape = resource.kind === LABEL_MAP_SELECTOR_KIND ? 'labelMap' : 'labelSelector';
  return { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', selector: { path: '.spec.selector', shape } };
}

/** A CRD's scale subresource (its JSONPaths) as scale rules: the selector, when named, is a string. */
export function scaleRulesFromPaths(paths: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string }): ScaleRules {
  const rules: ScaleRules = { specReplicasPath: paths.specReplicasPath, statusReplicasPath: paths.statusReplicasPath };
  if (paths.labelSelectorPath !== undefined) rules.selector = { path: paths.labelSelectorPath, shape: 'string' };
  return rules;
}
