/**
 * The v1.25 resource catalogue: which group-versions Carina serves, and for each resource its
 * kind, scope, verbs, subresources, short names, categories and storage version. It is read from
 * the generated `src/apis/data/catalogue-v1.25.json` (see generate-catalogue.ts) and is immutable;
 * a Catalogue differs from another only in which group-versions `--runtime-config` switched on or off.
 *
 * Runtime-config keys follow kube-apiserver's `--runtime-config`: `<group>/<version>` (`api/v1` or
 * `v1` for the core group), `<group>/<version>/<resource>` for one resource (a group-version that
 * is off serves only the resources switched on this way), or `api/all`, `api/ga`, `api/beta`,
 * `api/alpha` for every version of that level. Specific keys win over level keys, as in
 * k8s.io/apiserver pkg/server/resourceconfig/helpers.go `MergeAPIResourceConfigs`.
 */
import { readFileSync } from 'node:fs';
import { assert, packagePath } from '../../util';

export interface SubresourceInfo {
  /** e.g. 'status', 'scale', 'log', 'exec', 'eviction'. */
  name: string;
  kind: string;
  /** Set only when the subresource's kind lives in another group-version (scale, eviction, token). */
  group?: string;
  version?: string;
  verbs: string[];
}

export interface StorageLocation {
  group: string;
  version: string;
  resource: string;
}

export interface ResourceInfo {
  group: string;
  version: string;
  /** Plural, lower case: the path segment. */
  resource: string;
  kind: string;
  listKind: string;
  /** Lower-cased kind. kube-apiserver v1.25 does not publish it in discovery (see api-resource-list.ts). */
  singularName: string;
  namespaced: boolean;
  /** Sorted, as discovery lists them. */
  verbs: string[];
  shortNames: string[];
  categories: string[];
  subresources: SubresourceInfo[];
  /** Empty for resources without etcd storage (reviews, bindings, componentstatuses). */
  storageVersionHash: string;
  /** Virtual resources whose only verb is create: tokenreviews, subjectaccessreviews, bindings, ... */
  createOnly: boolean;
  /** Where the objects live: events.k8s.io/v1 events are core v1 events; autoscaling/v1 HPAs are stored as v2. */
  storage: StorageLocation;
}

export interface GroupInfo {
  name: string;
  /** Served versions, preferred first. */
  versions: string[];
  preferredVersion: string;
}

/** One group-version as stored in the catalogue file. */
export interface CatalogueGroupVersion {
  group: string;
  version: string;
  groupPriority: number;
  versionPriority: number;
  enabledByDefault: boolean;
  /** File name under src/apis/data holding the OpenAPI v3 document, relative to that folder. */
  openApiDocument: string;
  /** True when a v1.25 kube-apiserver serves the document at /openapi/v3 (apiregistration.k8s.io did not until 1.27). */
  openApiServed: boolean;
  resources: ResourceInfo[];
}

export interface CatalogueData {
  kubernetesVersion: string;
  groupVersions: CatalogueGroupVersion[];
}

export interface CatalogueOptions {
  /** `--runtime-config` entries: key → enabled. */
  runtimeConfig?: Map<string, boolean>;
}

export const CATALOGUE_DATA_PATH = ['src', 'apis', 'data', 'catalogue-v1.25.json'] as const;

let cachedData: CatalogueData | undefined;

function catalogueData(): CatalogueData {
  cachedData ??= JSON.parse(readFileSync(packagePath(...CATALOGUE_DATA_PATH), 'utf8')) as CatalogueData;
  return cachedData;
}

type Stability = 'ga' | 'beta' | 'alpha';

function stabilityOf(version: string): Stability {
  if (/^v\d+alpha\d+$/.test(version)) return 'alpha';
  if (/^v\d+beta\d+$/.test(version)) return 'beta';
  return 'ga';
}

/**
 * kube-aware version order (k8s.io/apimachinery pkg/version/helpers.go CompareKubeAwareVersionStrings):
 * GA before beta before alpha, then higher major, then higher minor; non-kube versions last, by name.
 */
function compareKubeAwareVersions(a: string, b: string): number {
  const parse = (v: string): [number, number, number] | undefined => {
    const match = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (match === null) return undefined;
    const level = match[2] === undefined ? 2 : match[2] === 'beta' ? 1 : 0;
    return [level, Number(match[1]), Number(match[3] ?? 0)];
  };
  const pa = parse(a);
  const pb = parse(b);
  if (pa === undefined || pb === undefined) {
    if (pa !== undefined) return -1;
    if (pb !== undefined) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  for (let i = 0; i < 3; i++) {
    if (pa[i] !== pb[i]) return (pb[i] ?? 0) - (pa[i] ?? 0);
  }
  return 0;
}

function groupVersionKey(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

let builtInResources: Array<{ group: string; resource: string }> | undefined;
let builtInNames: Set<string> | undefined;

export class Catalogue {
  private readonly served: CatalogueGroupVersion[];
  private readonly byGroupVersion: Map<string, CatalogueGroupVersion>;

  private constructor(data: CatalogueData, runtimeConfig: Map<string, boolean>) {
    this.served = data.groupVersions.flatMap((entry) => {
      const key = groupVersionKey(entry.group, entry.version);
      const enabled = Catalogue.isEnabled(entry, runtimeConfig);
      const resources = entry.resources.filter((resource) => runtimeConfig.get(`${key}/${resource.resource}`) ?? enabled);
      return resources.length === 0 ? [] : [resources.length === entry.resources.length ? entry : { ...entry, resources }];
    });
    this.byGroupVersion = new Map(this.served.map((entry) => [groupVersionKey(entry.group, entry.version), entry]));
  }

  /**
   * The catalogue of a kube-apiserver v1.25 started with the given `--runtime-config`.
   * @example Catalogue.load({ runtimeConfig: new Map([['networking.k8s.io/v1alpha1', true]]) })
   */
  static load(options: CatalogueOptions = {}): Catalogue {
    const runtimeConfig = options.runtimeConfig ?? new Map<string, boolean>();
    for (const key of runtimeConfig.keys()) {
      assert(Catalogue.isKnownRuntimeConfigKey(key), `unknown runtime-config key: "${key}"`);
    }
    return new Catalogue(catalogueData(), runtimeConfig);
  }

  /** True when `key` names a group-version or one of its resources in the catalogue, or a level (`api/all`, `api/ga`, ...). */
  static isKnownRuntimeConfigKey(key: string): boolean {
    if (['api/all', 'api/ga', 'api/beta', 'api/alpha', 'api/v1'].includes(key)) return true;
    return catalogueData().groupVersions.some((entry) => {
      const gv = groupVersionKey(entry.group, entry.version);
      return gv === key || (key.startsWith(`${gv}/`) && entry.resources.some((resource) => `${gv}/${resource.resource}` === key));
    });
  }

  /**
   * True when kube-apiserver v1.25 has `group`/`resource` among its built-in resources, in any
   * version, served or not: such resources keep their storage location whatever --runtime-config says.
   */
  static isBuiltIn(group: string, resource: string): boolean {
    builtInNames ??= new Set(Catalogue.builtInResources().map((r) => `${r.group}/${r.resource}`));
    return builtInNames.has(`${group}/${resource}`);
  }

  /** Every group-resource kube-apiserver v1.25 has built in, in any version, served or not; each once. */
  static builtInResources(): ReadonlyArray<{ group: string; resource: string }> {
    if (builtInResources === undefined) {
      const unique = new Map<string, { group: string; resource: string }>();
      for (const entry of catalogueData().groupVersions) {
        for (const r of entry.resources) unique.set(`${entry.group}/${r.resource}`, { group: entry.group, resource: r.resource });
      }
      builtInResources = [...unique.values()];
    }
    return builtInResources;
  }

  private static isEnabled(entry: CatalogueGroupVersion, runtimeConfig: Map<string, boolean>): boolean {
    const specific = runtimeConfig.get(groupVersionKey(entry.group, entry.version)) ??
      (entry.group === '' ? runtimeConfig.get(`api/${entry.version}`) : undefined);
    if (specific !== undefined) return specific;
    const level = runtimeConfig.get(`api/${stabilityOf(entry.version)}`) ?? runtimeConfig.get('api/all');
    return level ?? entry.enabledByDefault;
  }

  /**
   * Named groups with at least one served version, in kube-apiserver v1.25's /apis order: group
   * priority (highest first), ties by APIService name (`<version>.<group>`), as kube-aggregator's
   * `SortedByGroupAndVersion` does. The core group is not listed, as in /apis.
   */
  groups(): GroupInfo[] {
    const named = this.served.filter((entry) => entry.group !== '');
    const sorted = [...named].sort((a, b) => {
      if (a.groupPriority !== b.groupPriority) return b.groupPriority - a.groupPriority;
      const nameA = `${a.version}.${a.group}`;
      const nameB = `${b.version}.${b.group}`;
      return nameA < nameB ? -1 : nameA > nameB ? 1 : 0;
    });
    const order: string[] = [];
    const versions = new Map<string, CatalogueGroupVersion[]>();
    for (const entry of sorted) {
      if (!versions.has(entry.group)) {
        order.push(entry.group);
        versions.set(entry.group, []);
      }
      versions.get(entry.group)?.push(entry);
    }
    return order.map((name) => {
      const entries = versions.get(name) ?? [];
      entries.sort((a, b) =>
        a.versionPriority !== b.versionPriority ? b.versionPriority - a.versionPriority : compareKubeAwareVersions(a.version, b.version),
      );
      const ordered = entries.map((entry) => entry.version);
      assert(ordered.length > 0, `group "${name}" listed without versions`);
      return { name, versions: ordered, preferredVersion: ordered[0] as string };
    });
  }

  /** Every served group-version, core first, then in /apis order. */
  groupVersions(): { group: string; version: string }[] {
    const result: { group: string; version: string }[] = [];
    if (this.isServed('', 'v1')) result.push({ group: '', version: 'v1' });
    for (const group of this.groups()) {
      for (const version of group.versions) result.push({ group: group.name, version });
    }
    return result;
  }

  /** Resources of a served group-version, sorted by name; empty when it is not served. */
  resources(group: string, version: string): ResourceInfo[] {
    return this.byGroupVersion.get(groupVersionKey(group, version))?.resources ?? [];
  }

  lookup(group: string, version: string, resource: string): ResourceInfo | undefined {
    return this.resources(group, version).find((info) => info.resource === resource);
  }

  lookupKind(group: string, version: string, kind: string): ResourceInfo | undefined {
    return this.resources(group, version).find((info) => info.kind === kind);
  }

  isServed(group: string, version: string): boolean {
    return this.byGroupVersion.has(groupVersionKey(group, version));
  }

  /** The stored entry of a served group-version, for the OpenAPI builders. */
  groupVersionEntry(group: string, version: string): CatalogueGroupVersion | undefined {
    return this.byGroupVersion.get(groupVersionKey(group, version));
  }
}
