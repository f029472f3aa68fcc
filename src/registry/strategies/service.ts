/**
 * Services (pkg/registry/core/service/strategy.go): an empty load-balancer status; IP families
 * and allocated values (cluster IPs, node ports) carried over on update. The addresses
 * themselves are allocated by the registry's Service allocator, in the write's transaction.
 */
import { initServiceIpFamilies, patchAllocatedServiceValues } from '../../apis/defaulting';
import { withStatus, type KindRules } from './kind-rules';

export const serviceRules: KindRules = withStatus(() => ({ loadBalancer: {} }), {
  prepareForCreate: (service) => initServiceIpFamilies(service, undefined),
  prepareForUpdate: (service, old) => {
    patchAllocatedServiceValues(service, old);
    initServiceIpFamilies(service, old);
  },
  returnsDeletedObject: true,
});
