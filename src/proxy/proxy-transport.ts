/**
 * How the proxy reaches a backend (a kubelet, a pod, a service's endpoint, an extension API
 * server): plain TCP or TLS, the client certificate it presents, the CAs it trusts, and how long
 * it waits for the connection. One value per kind of backend, built once by the server
 * (kube's kubelet transport, the aggregator's per-APIService transport); the proxy never builds
 * TLS settings of its own.
 *
 * Dial failures are translated into the text Go's net and crypto/tls packages give for the
 * same failure (`dial tcp 10.0.0.2:10250: connect: connection refused`), since kube-apiserver's
 * messages quote them and clients match on them.
 */
import net from 'node:net';
import tls from 'node:tls';

export interface ProxyTransport {
  /** PEM of the CAs that may sign the backend's serving certificate; absent: the system roots. */
  readonly ca?: string;
  /** The client certificate and key (PEM) presented to the backend. */
  readonly cert?: string;
  readonly key?: string;
  /** Accept any serving certificate (kube's kubelet transport without --kubelet-certificate-authority). */
  readonly insecureSkipTLSVerify?: boolean;
  /** The name the serving certificate must carry; absent: the URL's host. */
  readonly serverName?: string;
  /** Limit for the connection, the TLS handshake and the response head. */
  readonly timeoutMs: number;
}

/** A backend that could not be reached: `message` is Go's text for the failure. */
export class BackendDialError extends Error {
  override name = 'BackendDialError';
  constructor(message: string, readonly tlsFailure = false) {
    super(message);
  }
}

function hostPort(target: URL): { host: string; port: number } {
  const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
  const port = target.port !== '' ? Number(target.port) : target.protocol === 'https:' ? 443 : 80;
  return { host, port };
}

/** host:port as Go's net.JoinHostPort writes it. */
export function joinHostPort(host: string, port: number | string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

const TLS_VERIFY_CODES: Record<string, string> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'x509: certificate signed by unknown authority',
  SELF_SIGNED_CERT_IN_CHAIN: 'x509: certificate signed by unknown authority',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'x509: certificate signed by unknown authority',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'x509: certificate signed by unknown authority',
  UNABLE_TO_GET_ISSUER_CERT: 'x509: certificate signed by unknown authority',
  CERT_HAS_EXPIRED: 'x509: certificate has expired or is not yet valid',
  CERT_NOT_YET_VALID: 'x509: certificate has expired or is not yet valid',
};

/** Go's text for a failed dial, TLS handshake or verification (what kube-apiserver quotes). */
export function goDialErrorText(err: unknown, address: string): string {
  const e = err as NodeJS.ErrnoException & { reason?: string };
  const code = e.code ?? '';
  switch (code) {
    case 'ECONNREFUSED': return `dial tcp ${address}: connect: connection refused`;
    case 'EHOSTUNREACH': return `dial tcp ${address}: connect: no route to host`;
    case 'ENETUNREACH': return `dial tcp ${address}: connect: network is unreachable`;
    case 'ECONNRESET': return `read tcp ${address}: read: connection reset by peer`;
    case 'ETIMEDOUT': return `dial tcp ${address}: i/o timeout`;
    case 'ENOTFOUND': return `dial tcp: lookup ${address.slice(0, address.lastIndexOf(':'))}: no such host`;
    case 'ERR_TLS_CERT_ALTNAME_INVALID': return `x509: certificate is valid for ${e.reason ?? 'other names'}, not the requested name`;
    default:
      if (TLS_VERIFY_CODES[code] !== undefined) return TLS_VERIFY_CODES[code];
      if (/alert|handshake|certificate/i.test(e.message)) return `remote error: tls: ${e.message.replace(/^.*alert /i, '').toLowerCase()}`;
      return e.message;
  }
}

/**
 * The TLS settings of a connection to `host` (Node's defaults, checkServerIdentity among them,
 * hold only for keys that are absent, not undefined).
 */
export function tlsOptions(transport: ProxyTransport, host: string, port: number): tls.ConnectionOptions {
  const options: tls.ConnectionOptions = { host, port, rejectUnauthorized: transport.insecureSkipTLSVerify !== true, ALPNProtocols: ['http/1.1'] };
  if (transport.ca !== undefined) options.ca = transport.ca;
  if (transport.cert !== undefined) options.cert = transport.cert;
  if (transport.key !== undefined) options.key = transport.key;
  const name = transport.serverName ?? host;
  if (net.isIP(name) === 0) options.servername = name;
  const serverName = transport.serverName;
  if (serverName !== undefined) options.checkServerIdentity = (_host, cert) => tls.checkServerIdentity(serverName, cert);
  return options;
}

/**
 * Opens a connection to `target` (http: plain, https: TLS with the transport's settings) and
 * resolves once it can carry a request: connected, and for TLS handshaken and verified.
 */
export function dialBackend(target: URL, transport: ProxyTransport): Promise<net.Socket> {
  const { host, port } = hostPort(target);
  const address = joinHostPort(host, port);
  return new Promise((resolve, reject) => {
    let socket: net.Socket;
    const fail = (err: unknown, tlsFailure = false) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err instanceof BackendDialError ? err : new BackendDialError(goDialErrorText(err, address), tlsFailure));
    };
    // Connected but not handshaken in time reads as Go's transport says it; not connected, as its dialer does.
    const timer = setTimeout(() => (socket.connecting ? fail(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })) : fail(new BackendDialError('net/http: TLS handshake timeout'))), transport.timeoutMs);
    if (target.protocol === 'https:') {
      const secure = tls.connect(tlsOptions(transport, host, port));
      socket = secure;
      secure.once('secureConnect', () => {
        clearTimeout(timer);
        secure.removeAllListeners('error');
        resolve(secure);
      });
      secure.once('error', (err) => fail(err, (err as NodeJS.ErrnoException).code?.startsWith('E') !== true));
    } else {
      socket = net.connect({ host, port });
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        resolve(socket);
      });
      socket.once('error', (err) => fail(err));
    }
  });
}
