/**
 * The Service fields kube-apiserver v1.25's service registry fills besides defaulting, for a
 * single-stack IPv4 cluster (k8s.io/kubernetes pkg/registry/core/service/storage/alloc.go
 * initIPFamilyFields, and rest.go patchAllocatedValues). Allocating clusterIP and nodePorts
 * themselves is left to the caller's allocators.
 */
import { childObject, isEmptyCollection, isUnset, isZero, objectItems } from './json-value';
import { deepCopy, type JsonObject } from '../object';

const CLUSTER_DEFAULT_FAMILY = 'IPv4';

function familyOf(ip: string): 'IPv4' | 'IPv6' {
  return ip.includes(':') ? 'IPv6' : 'IPv4';
}

function stringItems(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/**
 * ipFamilyPolicy and ipFamilies for a created or updated Service: the policy is taken from the old
 * object on update, else SingleStack, except that a headless Service without selector asks for
 * RequireDualStack; families follow any given clusterIPs, then the cluster's default family.
 */
export function initServiceIpFamilies(service: JsonObject, old: JsonObject | undefined): void {
  const spec = childObject(service, 'spec');
  if (spec === undefined || spec.type === 'ExternalName') return;
  const oldSpec = old === undefined ? undefined : childObject(old, 'spec');
  const headlessWithoutSelector = spec.clusterIP === 'None' && isEmptyCollection(spec.selector);
  if (isUnset(spec.ipFamilyPolicy)) {
    if (oldSpec !== undefined && !isUnset(oldSpec.ipFamilyPolicy)) spec.ipFamilyPolicy = oldSpec.ipFamilyPolicy;
    else spec.ipFamilyPolicy = headlessWithoutSelector ? 'RequireDualStack' : 'SingleStack';
  }
  const families = stringItems(spec.ipFamilies);
  const clusterIps = stringItems(spec.clusterIPs);
  for (let index = families.length; index < clusterIps.length; index++) {
    if (clusterIps[index] === 'None') break;
    families.push(familyOf(clusterIps[index]));
  }
  if (families.length === 0) families.push(CLUSTER_DEFAULT_FAMILY);
  // Headless selectorless Services may name both families even on a single-stack cluster.
  if (headlessWithoutSelector && families.length < 2 && spec.ipFamilyPolicy !== 'SingleStack') {
    families.push(families[0] === 'IPv4' ? 'IPv6' : 'IPv4');
  }
  spec.ipFamilies = families;
}

function needsClusterIp(spec: JsonObject): boolean {
  return spec.type !== 'ExternalName';
}

function needsNodePort(spec: JsonObject): boolean {
  return spec.type === 'NodePort' || spec.type === 'LoadBalancer';
}

function needsHealthCheckNodePort(spec: JsonObject): boolean {
  return spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';
}

/** On update, allocated values the client left out (e.g. a PUT of an edited manifest) are kept. */
export function patchAllocatedServiceValues(service: JsonObject, old: JsonObject): void {
  const spec = childObject(service, 'spec');
  const oldSpec = childObject(old, 'spec');
  if (spec === undefined || oldSpec === undefined) return;
  if (needsClusterIp(spec) && needsClusterIp(oldSpec)) {
    if (isZero(spec.clusterIP) && !isUnset(oldSpec.clusterIP)) spec.clusterIP = oldSpec.clusterIP;
    if (isEmptyCollection(spec.clusterIPs) && !isEmptyCollection(oldSpec.clusterIPs)) spec.clusterIPs = deepCopy(oldSpec.clusterIPs);
  }
  if (needsNodePort(spec) && needsNodePort(oldSpec)) {
    const nodePortsOf = (ports: JsonObject[]): Set<unknown> => new Set(ports.map((port) => port.nodePort).filter((port) => !isZero(port)));
    const newPorts = objectItems(spec, 'ports');
    const oldPorts = objectItems(oldSpec, 'ports');
    const usedByBoth = new Set([...nodePortsOf(oldPorts)].filter((port) => nodePortsOf(newPorts).has(port)));
    // Ports are matched by name: the client may have changed anything else about them.
    const oldNodePortByName = new Map(oldPorts.map((port) => [port.name ?? '', port.nodePort]));
    for (const port of newPorts) {
      if (!isZero(port.nodePort)) continue;
      const oldNodePort = oldNodePortByName.get(port.name ?? '');
      if (!isZero(oldNodePort) && !usedByBoth.has(oldNodePort)) port.nodePort = oldNodePort;
    }
  }
  if (needsHealthCheckNodePort(spec) && needsHealthCheckNodePort(oldSpec) && isZero(spec.healthCheckNodePort)) {
    if (!isZero(oldSpec.healthCheckNodePort)) spec.healthCheckNodePort = oldSpec.healthCheckNodePort;
  }
}
