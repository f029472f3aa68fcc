/**
 * `GET /apis` and `GET /apis/<group>`, as kube-aggregator writes them (k8s.io/kube-aggregator
 * pkg/apiserver/handler_apis.go): groups and versions in APIService priority order, no
 * serverAddressByClientCIDRs. Inside the list the groups carry no kind/apiVersion of their own.
 */
import type { Catalogue, GroupInfo } from '../catalogue';
import type { APIGroup, APIGroupList } from './types';

function groupBody(group: GroupInfo): Pick<APIGroup, 'name' | 'versions' | 'preferredVersion'> {
  return {
    name: group.name,
    versions: group.versions.map((version) => ({ groupVersion: `${group.name}/${version}`, version })),
    preferredVersion: { groupVersion: `${group.name}/${group.preferredVersion}`, version: group.preferredVersion },
  };
}

export function apiGroupList(catalogue: Catalogue): APIGroupList {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: catalogue.groups().map(groupBody) };
}

/** `undefined` when the group has no served version: the caller answers 404. */
export function apiGroup(catalogue: Catalogue, groupName: string): APIGroup | undefined {
  const group = catalogue.groups().find((candidate) => candidate.name === groupName);
  if (group === undefined) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupBody(group) };
}
