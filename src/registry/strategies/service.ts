/**
 * Services (pkg/registry/core/service/strategy.go and storage/storage.go): an empty load-balancer
 * status; on update, allocated values (cluster IPs, node ports) carried over, clusterIPs kept in
 * step with a changed clusterIP, and IP families initialised, in v1.25's order (beginUpdate:
 * patchAllocatedValues, normalizeClusterIPs, then the allocator's initIPFamilyFields). The
 * addresses themselves are allocated by the registry's Service allocator, in the write's
 * transaction.
 */
import { childObject, initServiceIpFamilies, patchAllocatedServiceValues } from '../../apis/defaulting';
import { withStatus, type KindRules } from './kind-rules';
import { deepCopy, type JsonObject } from '../../apis/object';

function clusterIpOf(spec: JsonObject): string {
  return typeof spec.clusterIP === 'string' ? spec.clusterIP : '';
}

function clusterIpsOf(spec: JsonObject): unknown[] {
  return Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [];
}

function sameClusterIps(a: JsonObject, b: JsonObject): boolean {
  const left = clusterIpsOf(a);
  const right = clusterIpsOf(b);
  return left.length === right.length && left.every((ip, i) => ip === right[i]);
}

/**
 * v1.25's normalizeClusterIPs on update: clients that only know the singular clusterIP (kubectl's
 * three-way merge of an edited manifest, an old client's PUT) change it alone, and the plural
 * follows where the client left it as it was. Validation then judges the result: a clusterIP
 * change is "may not change once set" on spec.clusterIPs[0], not a mismatch of the two fields.
 */
export function normalizeClusterIps(service: JsonObject, old: JsonObject): void {
  const spec = childObject(service, 'spec');
  const oldSpec = childObject(old, 'spec');
  if (spec === undefined || oldSpec === undefined) return;
  const clusterIp = clusterIpOf(spec);
  const oldClusterIp = clusterIpOf(oldSpec);
  // A client that patched some other field and did not send clusterIPs keeps them.
  if (clusterIpsOf(oldSpec).length > 0 && clusterIpsOf(spec).length === 0 && oldClusterIp === clusterIp) spec.clusterIPs = deepCopy(oldSpec.clusterIPs);
  if (oldClusterIp === clusterIp || !sameClusterIps(oldSpec, spec)) return;
  if (oldClusterIp !== '' && clusterIp === '') delete spec.clusterIPs;
  else spec.clusterIPs = [clusterIp];
}

export const serviceRules: KindRules = withStatus(() => ({ loadBalancer: {} }), {
  prepareForCreate: (service) => initServiceIpFamilies(service, undefined),
  prepareForUpdate: (service, old) => {
    patchAllocatedServiceValues(service, old);
    normalizeClusterIps(service, old);
    initServiceIpFamilies(service, old);
  },
  returnsDeletedObject: true,
});
