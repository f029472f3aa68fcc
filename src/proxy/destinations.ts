/**
 * Which addresses the proxy may reach for pods/proxy and nodes/proxy: kube-apiserver v1.25
 * refuses any address that is not global unicast (Go's net.IP.IsGlobalUnicast), so that the
 * API server cannot be made to call its own loopback services or link-local metadata
 * endpoints ("address not allowed").
 */
import net from 'node:net';

function ipv4Octets(address: string): number[] {
  return address.split('.').map(Number);
}

/** Go's IsGlobalUnicast: not unspecified, loopback, link-local, multicast or (IPv4) broadcast. */
export function isProxyableAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) {
    const [a, b] = ipv4Octets(address);
    if (a === 0 || a === 127 || (a >= 224 && a <= 239) || address === '255.255.255.255') return false;
    if (a === 169 && b === 254) return false;
    return true;
  }
  if (family === 6) {
    const lower = address.toLowerCase();
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
    if (mapped !== null) return isProxyableAddress(mapped[1]);
    if (lower === '::' || lower === '::1') return false;
    if (/^fe[89ab]/.test(lower) || lower.startsWith('ff')) return false;
    return true;
  }
  return false;
}
