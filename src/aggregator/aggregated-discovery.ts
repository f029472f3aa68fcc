/**
 * Discovery with the aggregated groups (kube-aggregator's /apis and /apis/<group> handlers):
 * the groups Carina serves itself, then each group that only APIServices with a service
 * provide, ordered by groupPriorityMinimum (highest first) then name, its versions by
 * versionPriority (highest first) then version; the first version is the preferred one.
 * /apis/<group>/<version> of such a group is proxied to the extension server (aggregator-proxy.ts).
 * The OpenAPI documents get the extension servers' specs (aggregated-openapi.ts).
 */
import type { DiscoveryDocuments } from '../http';
import { allApiServices, specOf, type ApiServiceLookup, type ApiServiceSpec } from './api-services';
import type { AggregatedOpenApi } from './aggregated-openapi';
import type { JsonObject } from '../apis/object';

function remoteGroups(lookup: ApiServiceLookup, builtIn: ReadonlySet<string>): JsonObject[] {
  const byGroup = new Map<string, ApiServiceSpec[]>();
  for (const apiService of allApiServices(lookup)) {
    const spec = specOf(apiService);
    if (spec.service === undefined || spec.service === null || spec.group === undefined || builtIn.has(spec.group)) continue;
    byGroup.set(spec.group, [...(byGroup.get(spec.group) ?? []), spec]);
  }
  const groups = [...byGroup.entries()].map(([name, specs]) => {
    specs.sort((a, b) => (b.versionPriority ?? 0) - (a.versionPriority ?? 0) || String(a.version).localeCompare(String(b.version)));
    const versions = specs.map((s) => ({ groupVersion: `${name}/${s.version ?? ''}`, version: s.version ?? '' }));
    return { priority: Math.max(...specs.map((s) => s.groupPriorityMinimum ?? 0)), group: { name, versions, preferredVersion: versions[0] } };
  });
  groups.sort((a, b) => b.priority - a.priority || a.group.name.localeCompare(b.group.name));
  return groups.map((g) => g.group);
}

export function aggregatedDiscovery(base: DiscoveryDocuments, lookup: ApiServiceLookup, openApi: AggregatedOpenApi): DiscoveryDocuments {
  const builtInGroups = () => new Set(((base.apiGroupList().groups ?? []) as Array<{ name: string }>).map((g) => g.name));
  return {
    version: () => base.version(),
    apiVersions: (serverAddress) => base.apiVersions(serverAddress),
    apiResourceList: (group, version) => base.apiResourceList(group, version),
    openApiV2: () => openApi.v2(base.openApiV2()),
    openApiV2Protobuf: () => openApi.v2AsProtobuf(base.openApiV2(), () => base.openApiV2Protobuf()),
    openApiV2ProtobufMediaTypes: base.openApiV2ProtobufMediaTypes,
    openApiV3Index: () => openApi.v3Index(base.openApiV3Index()),
    openApiV3Document: (path) => base.openApiV3Document(path) ?? openApi.v3Document(path),
    apiGroupList: () => {
      const list = base.apiGroupList();
      return { ...list, groups: [...((list.groups ?? []) as JsonObject[]), ...remoteGroups(lookup, builtInGroups())] };
    },
    apiGroup: (group: string) => {
      const served = base.apiGroup(group);
      if (served !== undefined) return served;
      const remote = remoteGroups(lookup, builtInGroups()).find((g) => g.name === group);
      return remote === undefined ? undefined : { kind: 'APIGroup', apiVersion: 'v1', ...remote };
    },
  };
}
