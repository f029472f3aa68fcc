/**
 * Where a node's kubelet listens (kube-apiserver v1.25 pkg/kubelet/client
 * NodeConnectionInfoGetter): the first of the Node's status.addresses in the order of
 * --kubelet-preferred-address-types (a missing Hostname address falls back to the
 * kubernetes.io/hostname label), on the port the kubelet reported in
 * status.daemonEndpoints.kubeletEndpoint, else the default port; always HTTPS.
 */
import { UnknownReasonError } from './proxy-errors';
import type { JsonObject } from '../apis/object';

/** v1.25's default --kubelet-preferred-address-types. */
export const DEFAULT_KUBELET_PREFERRED_ADDRESS_TYPES: readonly string[] = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];
/** The kubelet's port when its Node reports none (ports.KubeletPort). */
export const DEFAULT_KUBELET_PORT = 10250;

export interface KubeletEndpoint {
  scheme: 'https';
  hostname: string;
  port: number;
}

interface NodeAddress {
  type?: unknown;
  address?: unknown;
}

function addressesOf(node: JsonObject): NodeAddress[] {
  const status = node.status as { addresses?: unknown } | undefined;
  return Array.isArray(status?.addresses) ? (status.addresses as NodeAddress[]) : [];
}

/** nodeutil.GetPreferredNodeAddress; its NoMatchError text otherwise (Go's %v of the addresses). */
export function preferredNodeAddress(node: JsonObject, preferredTypes: readonly string[]): string {
  const addresses = addressesOf(node);
  for (const type of preferredTypes) {
    const found = addresses.find((a) => a.type === type && typeof a.address === 'string');
    if (found !== undefined) return found.address as string;
    if (type === 'Hostname') {
      const labels = (node.metadata as { labels?: Record<string, string> } | undefined)?.labels;
      const hostname = labels?.['kubernetes.io/hostname'];
      if (typeof hostname === 'string' && hostname !== '') return hostname;
    }
  }
  const known = addresses.map((a) => `{${String(a.type ?? '')} ${String(a.address ?? '')}}`).join(' ');
  throw new UnknownReasonError(`no preferred addresses found; known addresses: [${known}]`);
}

export function kubeletEndpoint(node: JsonObject, preferredTypes: readonly string[], defaultPort: number): KubeletEndpoint {
  const hostname = preferredNodeAddress(node, preferredTypes);
  const status = node.status as { daemonEndpoints?: { kubeletEndpoint?: { Port?: unknown } } } | undefined;
  const reported = status?.daemonEndpoints?.kubeletEndpoint?.Port;
  const port = typeof reported === 'number' && reported > 0 ? reported : defaultPort;
  return { scheme: 'https', hostname, port };
}
