/**
 * DenyServiceExternalIPs (off by default; kubernetes
 * plugin/pkg/admission/network/denyserviceexternalips): no Service may gain externalIPs;
 * keeping or removing ones it already has stays allowed.
 */
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, objectField } from '../plugin-support';

function externalIps(service: unknown): string[] {
  const raw = (objectField(service, 'spec') ?? {}).externalIPs;
  return Array.isArray(raw) ? raw.filter((ip): ip is string => typeof ip === 'string') : [];
}

export const denyServiceExternalIpsPlugin: AdmissionPluginFactory = () => ({
  name: 'DenyServiceExternalIPs',
  sideEffects: 'None',
  handles: (a) => a.group === '' && a.resource === 'services' && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.object !== undefined,
  async validate(a) {
    const wanted = externalIps(a.object);
    if (wanted.length === 0) return;
    const had = new Set(a.oldObject === undefined ? [] : externalIps(a.oldObject));
    if (a.oldObject !== undefined && wanted.every((ip) => had.has(ip))) return;
    throw admissionForbidden(a, 'Use of external IPs is denied by admission control');
  },
});
