/**
 * Starting and stopping the small HTTP(S) servers tests stand up (webhooks, an OIDC provider, an
 * OTLP collector), on 127.0.0.1 unless told otherwise: one way for all of them.
 */
import type * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens at `port` (0: a free one) on `host` and resolves with the port listened on. */
export async function listenOn(server: http.Server, port = 0, host = '127.0.0.1'): Promise<number> {
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return (server.address() as AddressInfo).port;
}

/**
 * Closes the server and ends its connections at once: a client's idle keep-alive connection
 * would otherwise hold the close until it times out.
 */
export async function closeWithConnections(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
