/**
 * Cluster IPs (from --service-cluster-ip-range) and node ports (from --service-node-port-range)
 * for Services. Each allocation is a key under /registry/ranges/ written in the same transaction
 * as the Service itself, so two replicas can never hand out one IP or port twice, and a deleted
 * Service releases its allocations in the transaction that removes it.
 */
import { randomInt } from 'node:crypto';
import { errors } from '../util';
import type { ObjectStore, SideKeys } from '../storage';
import type { JsonObject } from '../apis/object';

export const SERVICE_IP_PREFIX = '/registry/ranges/serviceips/';
export const NODE_PORT_PREFIX = '/registry/ranges/servicenodeports/';

export interface ServiceRanges {
  /** IPv4 CIDR, e.g. 10.0.0.0/24 (kube-apiserver v1.25's default). */
  serviceCidr: string;
  nodePortMin: number;
  nodePortMax: number;
}

interface Ipv4Range {
  base: number;
  size: number;
  text: string;
}

function parseIpv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined;
    value = value * 256 + Number(part);
  }
  return value;
}

function formatIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

export function parseServiceCidr(cidr: string): Ipv4Range {
  const [ip, bitsText] = cidr.split('/');
  const address = parseIpv4(ip ?? '');
  const bits = Number(bitsText);
  if (address === undefined || !Number.isInteger(bits) || bits < 8 || bits > 30) throw new Error(`--service-cluster-ip-range ${cidr}: expected an IPv4 CIDR between /8 and /30`);
  const size = 2 ** (32 - bits);
  const base = Math.floor(address / size) * size;
  return { base, size, text: `${formatIpv4(base)}/${bits}` };
}

export function parseNodePortRange(text: string): { min: number; max: number } {
  const match = /^(\d+)-(\d+)$/.exec(text.trim());
  const min = Number(match?.[1]);
  const max = Number(match?.[2]);
  if (match === null || min < 1 || max > 65535 || min > max) throw new Error(`--service-node-port-range ${text}: expected <min>-<max>`);
  return { min, max };
}

type Service = JsonObject & { spec?: JsonObject };

function ports(service: Service): JsonObject[] {
  const p = service.spec?.ports;
  return Array.isArray(p) ? (p as JsonObject[]) : [];
}

function usesNodePorts(service: Service): boolean {
  const type = service.spec?.type;
  return type === 'NodePort' || type === 'LoadBalancer';
}

function needsClusterIp(service: Service): boolean {
  return service.spec?.type !== 'ExternalName';
}

export class ServiceAllocator {
  private readonly range: Ipv4Range;

  constructor(private readonly store: ObjectStore, private readonly ranges: ServiceRanges) {
    this.range = parseServiceCidr(ranges.serviceCidr);
  }

  /** The first usable address, kept for the `kubernetes` Service. */
  get kubernetesServiceIp(): string {
    return formatIpv4(this.range.base + 1);
  }

  private invalid(service: Service, field: string, value: string | number, detail: string): never {
    const name = String((service.metadata as JsonObject | undefined)?.name ?? '');
    const shown = typeof value === 'string' ? `"${value}"` : String(value);
    throw errors.invalid('', 'Service', name, `Service "${name}" is invalid: ${field}: Invalid value: ${shown}: ${detail}`, [{ reason: 'FieldValueInvalid', message: `Invalid value: ${shown}: ${detail}`, field }]);
  }

  private async taken(prefix: string): Promise<Set<string>> {
    const listed = await this.store.list(prefix, { serializable: false });
    return new Set(listed.items.map((i) => i.key.slice(prefix.length)));
  }

  private owner(service: Service): JsonObject {
    const m = (service.metadata ?? {}) as JsonObject;
    return { kind: 'ServiceAllocation', service: `${String(m.namespace ?? '')}/${String(m.name ?? '')}` };
  }

  /** Fills spec.clusterIP(s) and node ports of a new Service; the keys to claim with it. */
  async allocateForCreate(service: Service): Promise<SideKeys> {
    return this.allocate(service, undefined);
  }

  /** For an update: new allocations to claim, dropped ones to release. */
  async allocateForUpdate(service: Service, old: Service): Promise<SideKeys> {
    return this.allocate(service, old);
  }

  /** The keys a deleted Service gives back. */
  releaseFor(service: Service): string[] {
    return this.heldKeys(service);
  }

  private heldKeys(service: Service): string[] {
    const keys: string[] = [];
    const ip = service.spec?.clusterIP;
    if (typeof ip === 'string' && ip !== '' && ip !== 'None' && this.inRange(ip)) keys.push(SERVICE_IP_PREFIX + ip);
    for (const port of ports(service)) {
      if (typeof port.nodePort === 'number' && port.nodePort > 0) keys.push(NODE_PORT_PREFIX + port.nodePort);
    }
    const hc = service.spec?.healthCheckNodePort;
    if (typeof hc === 'number' && hc > 0) keys.push(NODE_PORT_PREFIX + hc);
    return keys;
  }

  private inRange(ip: string): boolean {
    const value = parseIpv4(ip);
    return value !== undefined && value >= this.range.base && value < this.range.base + this.range.size;
  }

  private async allocate(service: Service, old: Service | undefined): Promise<SideKeys> {
    const spec = (service.spec ??= {}) as JsonObject;
    const held = new Set(old === undefined ? [] : this.heldKeys(old));
    const claim: Array<{ key: string; value: JsonObject }> = [];
    const value = this.owner(service);
    if (needsClusterIp(service)) {
      let ip = typeof spec.clusterIP === 'string' && spec.clusterIP !== '' ? spec.clusterIP : undefined;
      if (ip === undefined && Array.isArray(spec.clusterIPs) && typeof spec.clusterIPs[0] === 'string' && spec.clusterIPs[0] !== '') ip = spec.clusterIPs[0] as string;
      if (ip === undefined && old !== undefined && typeof old.spec?.clusterIP === 'string' && old.spec.clusterIP !== '') ip = old.spec.clusterIP;
      if (ip === undefined) {
        const taken = await this.taken(SERVICE_IP_PREFIX);
        // The first address belongs to the `kubernetes` Service; the network address and broadcast are never used.
        const free = this.range.size - 3 - taken.size;
        if (free <= 0) this.invalid(service, 'spec.clusterIPs', '', 'failed to allocate a serviceIP: range is full');
        for (;;) {
          const candidate = formatIpv4(this.range.base + 2 + randomInt(this.range.size - 3));
          if (!taken.has(candidate)) {
            ip = candidate;
            break;
          }
        }
      } else if (ip !== 'None') {
        if (parseIpv4(ip) === undefined) this.invalid(service, 'spec.clusterIPs[0]', ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)');
        if (!this.inRange(ip)) this.invalid(service, 'spec.clusterIPs[0]', ip, `provided IP is not in the valid range. The range of valid IPs is ${this.range.text}`);
      }
      spec.clusterIP = ip;
      spec.clusterIPs = [ip];
      if (ip !== 'None') {
        spec.ipFamilies ??= ['IPv4'];
        spec.ipFamilyPolicy ??= 'SingleStack';
        const key = SERVICE_IP_PREFIX + ip;
        if (!held.has(key)) claim.push({ key, value });
      } else {
        spec.ipFamilies ??= ['IPv4'];
        spec.ipFamilyPolicy ??= 'SingleStack';
      }
    } else {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    const wanted = new Set<number>();
    if (usesNodePorts(service)) {
      let taken: Set<string> | undefined;
      for (let i = 0; i < ports(service).length; i++) {
        const port = ports(service)[i];
        let nodePort = typeof port.nodePort === 'number' && port.nodePort > 0 ? port.nodePort : undefined;
        if (nodePort === undefined && old !== undefined) {
          // An update that omits the node port keeps the one the same port had.
          const before = ports(old).find((p) => p.port === port.port && (p.protocol ?? 'TCP') === (port.protocol ?? 'TCP'));
          if (typeof before?.nodePort === 'number' && before.nodePort > 0) nodePort = before.nodePort;
        }
        if (nodePort === undefined) {
          taken ??= await this.taken(NODE_PORT_PREFIX);
          const span = this.ranges.nodePortMax - this.ranges.nodePortMin + 1;
          if (taken.size + wanted.size >= span) this.invalid(service, `spec.ports[${i}].nodePort`, 0, 'failed to allocate a nodePort: range is full');
          for (;;) {
            const candidate = this.ranges.nodePortMin + randomInt(span);
            if (!taken.has(String(candidate)) && !wanted.has(candidate)) {
              nodePort = candidate;
              break;
            }
          }
        } else if (nodePort < this.ranges.nodePortMin || nodePort > this.ranges.nodePortMax) {
          this.invalid(service, `spec.ports[${i}].nodePort`, nodePort, `provided port is not in the valid range. The range of valid ports is ${this.ranges.nodePortMin}-${this.ranges.nodePortMax}`);
        }
        port.nodePort = nodePort;
        // The same node port may serve one port number over two protocols.
        if (!wanted.has(nodePort)) {
          wanted.add(nodePort);
          const key = NODE_PORT_PREFIX + nodePort;
          if (!held.has(key)) claim.push({ key, value });
        }
      }
    } else {
      for (const port of ports(service)) delete port.nodePort;
    }
    const keep = new Set([...claim.map((c) => c.key), ...this.heldKeys(service)]);
    const release = [...held].filter((k) => !keep.has(k));
    return { claim, release };
  }

  /** The 422 for a requested IP or port that another Service holds. */
  claimConflict(service: Service, key: string): never {
    const first = key;
    if (first.startsWith(SERVICE_IP_PREFIX)) this.invalid(service, 'spec.clusterIPs[0]', first.slice(SERVICE_IP_PREFIX.length), 'provided IP is already allocated');
    const port = Number(first.slice(NODE_PORT_PREFIX.length));
    const index = ports(service).findIndex((p) => p.nodePort === port);
    this.invalid(service, `spec.ports[${Math.max(0, index)}].nodePort`, port, 'provided port is already allocated');
  }

  /** The claims a client asked for by value: taken ones are the client's error, not a reason to retry. */
  explicitKeys(requested: Service): Set<string> {
    const keys = new Set<string>();
    const ip = requested.spec?.clusterIP;
    if (typeof ip === 'string' && ip !== '' && ip !== 'None') keys.add(SERVICE_IP_PREFIX + ip);
    for (const port of ports(requested)) if (typeof port.nodePort === 'number' && port.nodePort > 0) keys.add(NODE_PORT_PREFIX + port.nodePort);
    return keys;
  }

}
