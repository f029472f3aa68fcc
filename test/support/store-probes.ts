/**
 * What an outsider can try against a store's two ports, for the tests that prove it fails: a
 * TLS handshake with no certificate or one from another CA, etcd calls with such credentials or
 * in plaintext, and a rogue Raft peer that sends AppendEntries of a far higher term (which any
 * member that accepted it would adopt, deposing the leader). Each probe reports what happened;
 * the tests judge it.
 */
import * as tls from 'node:tls';
import type { Message } from '../../raft/core/types';
import { EtcdClient, type EtcdClientTls } from '../../raft/etcd/etcd-client';
import { GrpcTransport, type MutualTls } from '../../raft/transport';
import { createStoreCa, issueStoreClientCertificate, issueStorePeerCertificate } from '../../src/certificates';
import { until } from './until';

export type HandshakeOutcome = { accepted: true } | { accepted: false; reason: string };

/**
 * One TLS 1.2 handshake (in 1.2 the server judges the client's certificate before the
 * handshake completes, so a refusal is a failed handshake, not a later alert). The server's own
 * certificate is checked against `ca`.
 */
export function tlsHandshake(host: string, port: number, credentials: { ca: string; cert?: string; key?: string }, timeoutMs = 5000): Promise<HandshakeOutcome> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host, port, ca: credentials.ca, cert: credentials.cert, key: credentials.key, ALPNProtocols: ['h2'], maxVersion: 'TLSv1.2', checkServerIdentity: () => undefined });
    const timer = setTimeout(() => finish({ accepted: false, reason: 'timed out' }), timeoutMs);
    let done = false;
    function finish(outcome: HandshakeOutcome): void {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    }
    socket.once('secureConnect', () => finish({ accepted: true }));
    socket.once('error', (err) => finish({ accepted: false, reason: err.message }));
    socket.once('close', () => finish({ accepted: false, reason: 'closed during the handshake' }));
  });
}

/** Credentials from a CA the cluster has never seen: a client certificate and a peer certificate. */
export async function foreignCredentials(host: string): Promise<{ ca: string; client: EtcdClientTls & { cert: string; key: string }; peer: MutualTls }> {
  const ca = await createStoreCa();
  const [client, peer] = await Promise.all([issueStoreClientCertificate(ca, 'intruder'), issueStorePeerCertificate(ca, { ipAddresses: [host] })]);
  return { ca: ca.certPem, client: { ca: ca.certPem, cert: client.certPem, key: client.keyPem }, peer: { ca: ca.certPem, cert: peer.certPem, key: peer.keyPem } };
}

/** The outcome of one etcd call: 'ok', or the error's message. */
export async function etcdCall(endpoint: string, credentials: EtcdClientTls | undefined, call: (c: EtcdClient) => Promise<unknown>): Promise<string> {
  const client = new EtcdClient({ endpoints: [endpoint], tls: credentials, timeoutMs: 5000 });
  try {
    await call(client);
    return 'ok';
  } catch (err) {
    return (err as Error).message;
  } finally {
    await client.close();
  }
}

export const ROGUE_TERM = 1_000_000;
const ROGUE_ID = 0x7fff_0001;

/**
 * A peer that is not a member sends every member an AppendEntries of term ROGUE_TERM, over
 * `tls` (another CA's certificate) or in plaintext when undefined, and keeps trying until each
 * stream failed at least `attempts` times (the transport reconnects and resends). Returns the
 * messages the transport counted as sent, for the test to show it did try.
 */
export async function rogueAppendEntries(members: Array<{ id: number; peerAddress: string }>, tls: MutualTls | undefined, attempts = 2): Promise<{ streamFailures: number }> {
  const transport = new GrpcTransport({
    id: ROGUE_ID,
    listenAddress: '127.0.0.1:0',
    tls,
    onMessage: () => undefined,
    onSnapshot: () => undefined,
    reconnectBackoff: { initialMs: 50, maxMs: 200 },
    connectTimeoutMs: 2000,
  });
  try {
    for (const m of members) transport.addPeer(m.id, m.peerAddress);
    const message = (to: number): Message => ({ type: 'app', to, from: ROGUE_ID, term: ROGUE_TERM, logTerm: 0, index: 0, entries: [], commit: 0, snapshot: null, reject: false, rejectHint: 0, context: new Uint8Array(0) });
    await until(`the rogue peer's streams to fail ${attempts} times each`, async () => {
      transport.send(members.map((m) => message(m.id)));
      return transport.stats.streamFailures >= attempts * members.length ? true : undefined;
    }, 30_000);
    return { streamFailures: transport.stats.streamFailures };
  } finally {
    await transport.stop();
  }
}
