/**
 * Builds `src/apis/data/catalogue-v1.25.json` from the v1.25 OpenAPI v3 documents and the fact
 * table in v125-facts.ts. Run by hand after changing either, and commit the result:
 *
 *   node dist-h/src/apis/catalogue/generate-catalogue.js
 *
 * The output is deterministic (group-versions in fact-table order, resources and subresources by
 * name, two-space JSON), so a test can compare the committed file with a fresh build.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { assert, packagePath } from '../../util';
import { CATALOGUE_DATA_PATH, type CatalogueData, type CatalogueGroupVersion, type ResourceInfo, type StorageLocation } from './catalogue';
import { deriveResources, type DerivedResource, type OpenApiV3Document } from './openapi-resources';
import { storageVersionHash } from './storage-version-hash';
import { v125Facts, type GroupVersionFacts } from './v125-facts';

export const KUBERNETES_VERSION = 'v1.25.16';

/** Group-versions whose OpenAPI v3 document kube-apiserver v1.25 did not serve (see openapi-extra/README). */
const OPENAPI_EXTRA_GROUPS = new Set(['apiregistration.k8s.io']);

export function openApiDocumentFile(group: string, version: string): string {
  const name = group === '' ? `api__${version}_openapi.json` : `apis__${group}__${version}_openapi.json`;
  return OPENAPI_EXTRA_GROUPS.has(group) ? `openapi-extra/${name}` : `openapi-v3/${name}`;
}

export function groupVersionPathPrefix(group: string, version: string): string {
  return group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
}

function factKey(group: string, resource: string): string {
  return `${group}/${resource}`;
}

function readDocument(file: string): OpenApiV3Document {
  return JSON.parse(readFileSync(packagePath('src', 'apis', 'data', file), 'utf8')) as OpenApiV3Document;
}

export function buildCatalogueData(): CatalogueData {
  const derived = new Map<GroupVersionFacts, DerivedResource[]>();
  for (const facts of v125Facts.groupVersions) {
    const document = readDocument(openApiDocumentFile(facts.group, facts.version));
    derived.set(facts, deriveResources(document, groupVersionPathPrefix(facts.group, facts.version)));
  }

  const derivedIn = (group: string, version: string, resource: string): DerivedResource | undefined => {
    for (const [facts, resources] of derived) {
      if (facts.group === group && facts.version === version) return resources.find((r) => r.resource === resource);
    }
    return undefined;
  };

  const storageOf = (group: string, resource: string): StorageLocation => {
    const override = v125Facts.storage[factKey(group, resource)];
    if (override !== undefined) return override;
    const groupVersion = v125Facts.groupStorageVersion[group];
    assert(groupVersion !== undefined, `no storage version known for group "${group}"`);
    if (derivedIn(group, groupVersion, resource) !== undefined) return { group, version: groupVersion, resource };
    // A resource that is not in the group's storage version (clustercidrs, storageversions) is stored in its highest-priority version.
    const candidates = v125Facts.groupVersions
      .filter((facts) => facts.group === group && derivedIn(group, facts.version, resource) !== undefined)
      .sort((a, b) => b.versionPriority - a.versionPriority);
    const chosen = candidates[0];
    assert(chosen !== undefined, `no version of "${group}" serves "${resource}"`);
    return { group, version: chosen.version, resource };
  };

  const groupVersions: CatalogueGroupVersion[] = [];
  for (const [facts, resources] of derived) {
    const infos: ResourceInfo[] = resources.map((resource) => {
      const key = factKey(facts.group, resource.resource);
      const isUnstored = v125Facts.unstored.includes(key);
      const storage = isUnstored ? { group: facts.group, version: facts.version, resource: resource.resource } : storageOf(facts.group, resource.resource);
      let hash = '';
      if (!isUnstored) {
        const stored = derivedIn(storage.group, storage.version, storage.resource);
        assert(stored !== undefined, `storage ${storage.group}/${storage.version}/${storage.resource} of ${key} is not in the catalogue`);
        hash = storageVersionHash(storage.group, storage.version, stored.kind);
      }
      return {
        group: facts.group,
        version: facts.version,
        resource: resource.resource,
        kind: resource.kind,
        listKind: resource.listKind,
        singularName: resource.kind.toLowerCase(),
        namespaced: resource.namespaced,
        verbs: resource.verbs,
        shortNames: v125Facts.shortNames[key] ?? [],
        categories: v125Facts.categories[key] ?? [],
        subresources: resource.subresources.map((sub) => {
          const isForeign = sub.group !== facts.group || sub.version !== facts.version;
          return isForeign
            ? { name: sub.name, kind: sub.kind, group: sub.group, version: sub.version, verbs: sub.verbs }
            : { name: sub.name, kind: sub.kind, verbs: sub.verbs };
        }),
        storageVersionHash: hash,
        createOnly: resource.verbs.length === 1 && resource.verbs[0] === 'create',
        storage,
      };
    });
    groupVersions.push({
      group: facts.group,
      version: facts.version,
      groupPriority: facts.groupPriority,
      versionPriority: facts.versionPriority,
      enabledByDefault: facts.enabledByDefault,
      openApiDocument: openApiDocumentFile(facts.group, facts.version),
      openApiServed: !OPENAPI_EXTRA_GROUPS.has(facts.group),
      resources: infos,
    });
  }

  for (const key of [...Object.keys(v125Facts.shortNames), ...Object.keys(v125Facts.categories), ...v125Facts.unstored]) {
    const known = groupVersions.some((entry) => entry.resources.some((info) => factKey(info.group, info.resource) === key));
    assert(known, `fact table names a resource the OpenAPI documents do not serve: "${key}"`);
  }
  return { kubernetesVersion: KUBERNETES_VERSION, groupVersions };
}

export function renderCatalogueData(data: CatalogueData): string {
  return `${JSON.stringify(data, null, 2)}\n`;
}

if (require.main === module) {
  const target = packagePath(...CATALOGUE_DATA_PATH);
  writeFileSync(target, renderCatalogueData(buildCatalogueData()));
  process.stdout.write(`wrote ${target}\n`);
}
