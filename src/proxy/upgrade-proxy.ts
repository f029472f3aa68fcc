/**
 * The HTTP/1.1 Upgrade half of the proxy (apimachinery pkg/util/proxy/upgradeaware.go in
 * v1.25): exec, attach and port-forward over SPDY/3.1 or WebSocket, and any upgrade a proxied
 * path asks for. The client's request goes to the backend with every header it offered
 * (Upgrade, Connection, Sec-WebSocket-Protocol with all its subprotocols, X-Stream-Protocol-Version),
 * so the backend, not Carina, picks the protocol. Then:
 *
 * - 101 Switching Protocols: the backend's answer goes to the client as it came, and the two
 *   connections are joined, each direction copied in batches (pumpBatched; a side that cannot
 *   take more pauses the other: nothing is buffered beyond the sockets' high-water marks). When either side ends or
 *   fails, both are closed, as v1.25 closes both once one copy returns.
 * - 400 and above: the backend's refusal goes to the client as it came, then both close.
 * - anything else: a 500 `invalid upgrade response: status code N`, before anything was sent.
 *
 * Until the backend answers, failures are thrown (the caller writes a Status); after that, the
 * client's socket belongs to this module.
 */
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import { dialBackend, goDialErrorText, type ProxyTransport } from './proxy-transport';
import { UpgradeProxyError } from './proxy-errors';

/** The backend's response head may be at most this long (Go's default MaxHeaderBytes is 1 MiB; kubelets send a few lines). */
const RESPONSE_HEAD_MAX_BYTES = 64 * 1024;
/** How long a refused upgrade's body may take to reach the client, as v1.25's 10 s deadline. */
const REFUSAL_DEADLINE_MS = 10_000;
/** Once one side ended, the other gets this long to flush before both are destroyed. */
const HALF_CLOSED_GRACE_MS = 5_000;

export interface UpgradeRequest {
  /** The client's connection (already detached from the HTTP parser) and what it sent after its request head. */
  client: Duplex;
  head: Buffer;
  method: string;
  /** Where the request goes: scheme, host, port, path and query. */
  target: URL;
  /** The headers to send (the caller has removed credentials and hop-by-hop headers it does not forward). */
  headers: Record<string, string | readonly string[] | undefined>;
  transport: ProxyTransport;
}

export interface UpgradeOutcome {
  /** The backend's status code (101, or the refusal's). */
  status: number;
  /** Resolves when both connections are closed. */
  closed: Promise<void>;
}

/** Headers never forwarded as the client sent them: the backend gets its own Host and framing. */
const NOT_FORWARDED = new Set(['host', 'content-length', 'transfer-encoding', 'keep-alive', 'proxy-connection', 'te', 'trailer']);

function requestHead(request: UpgradeRequest): string {
  const { target } = request;
  const lines = [`${request.method} ${target.pathname}${target.search} HTTP/1.1`, `Host: ${target.host}`];
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || NOT_FORWARDED.has(name.toLowerCase())) continue;
    for (const one of typeof value === 'string' ? [value] : value) {
      if (/[\r\n]/.test(one)) continue;
      lines.push(`${name}: ${one}`);
    }
  }
  return lines.join('\r\n') + '\r\n\r\n';
}

/** Reads the backend's response head; resolves with its status code and every byte read so far. */
export function readResponseHead(backend: net.Socket, timeoutMs: number, address: string): Promise<{ status: number; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const done = (err?: Error, result?: { status: number; bytes: Buffer }) => {
      clearTimeout(timer);
      backend.off('data', onData);
      backend.off('error', onError);
      backend.off('end', onEnd);
      backend.pause();
      if (err !== undefined) reject(err);
      else if (result !== undefined) resolve(result);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      const bytes = Buffer.concat(chunks);
      const end = bytes.indexOf('\r\n\r\n');
      if (end < 0) {
        if (length > RESPONSE_HEAD_MAX_BYTES) done(new UpgradeProxyError('error reading the backend response: header too long'));
        return;
      }
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(bytes.subarray(0, Math.min(end, 64)).toString('latin1'));
      if (status === null) done(new UpgradeProxyError('malformed HTTP response from the backend'));
      else done(undefined, { status: Number(status[1]), bytes });
    };
    const onError = (err: Error) => done(new UpgradeProxyError(goDialErrorText(err, address)));
    const onEnd = () => done(new UpgradeProxyError('unexpected EOF'));
    const timer = setTimeout(() => done(new UpgradeProxyError(`read tcp ${address}: i/o timeout`)), timeoutMs);
    backend.on('data', onData);
    backend.on('error', onError);
    backend.on('end', onEnd);
  });
}

/**
 * Dials the backend, sends the upgrade request and waits for its answer. Throws (BackendDialError,
 * UpgradeProxyError) while the client's socket is still the caller's to answer on.
 */
export async function proxyUpgrade(request: UpgradeRequest): Promise<UpgradeOutcome> {
  const { client, transport } = request;
  const backend = await dialBackend(request.target, transport);
  const address = `${request.target.hostname}:${request.target.port}`;
  backend.on('error', () => backend.destroy());
  let response: { status: number; bytes: Buffer };
  try {
    backend.write(requestHead(request));
    if (request.head.length > 0) backend.write(request.head);
    response = await readResponseHead(backend, transport.timeoutMs, address);
  } catch (err) {
    backend.destroy();
    throw err;
  }
  if (response.status !== 101 && response.status < 400) {
    backend.destroy();
    throw new UpgradeProxyError(`invalid upgrade response: status code ${response.status}`);
  }
  const closed = new Promise<void>((resolve) => {
    let open = 2;
    const closedOne = () => {
      open -= 1;
      if (open === 0) resolve();
    };
    client.once('close', closedOne);
    backend.once('close', closedOne);
  });
  const closeBoth = () => {
    client.destroy();
    backend.destroy();
  };
  client.on('error', closeBoth);
  backend.on('error', closeBoth);
  client.once('close', closeBoth);
  backend.once('close', closeBoth);
  client.write(response.bytes);
  if (response.status !== 101) {
    // A refusal: its body follows the head it already sent, then both close.
    const deadline = setTimeout(closeBoth, REFUSAL_DEADLINE_MS);
    deadline.unref();
    backend.pipe(client);
    backend.resume();
    client.resume();
    client.once('close', () => clearTimeout(deadline));
    return { status: response.status, closed };
  }
  // Either direction ending ends the other side's writes; once that flushed (or the grace passed), both close.
  const endedBy = (reader: Duplex, writer: Duplex) => {
    reader.once('end', () => {
      writer.end();
      const grace = setTimeout(closeBoth, HALF_CLOSED_GRACE_MS);
      grace.unref();
      writer.once('finish', () => {
        clearTimeout(grace);
        closeBoth();
      });
    });
  };
  endedBy(backend, client);
  endedBy(client, backend);
  pumpBatched(backend, client);
  pumpBatched(client, backend);
  return { status: 101, closed };
}

/**
 * Copies what `reader` delivers to `writer` until either ends: the chunks of one turn of the
 * event loop are written as one batch (the writer is corked until the turn's check phase), and
 * the reader is paused while the writer is over its high-water mark. Against a pipe, which
 * writes each TLS record it decrypted on its own, this took a fifth to a third off Carina's CPU
 * per byte carried in paired runs (bench/RESULTS.md, the proxy phase), mostly garbage
 * collection.
 */
export function pumpBatched(reader: Duplex, writer: Duplex): void {
  let corked = false;
  let waitingForDrain = false;
  const uncork = () => {
    corked = false;
    writer.uncork();
  };
  reader.on('data', (chunk: Buffer) => {
    if (!corked) {
      corked = true;
      writer.cork();
      setImmediate(uncork);
    }
    if (writer.write(chunk) || waitingForDrain) return;
    waitingForDrain = true;
    reader.pause();
    writer.once('drain', () => {
      waitingForDrain = false;
      reader.resume();
    });
  });
  // The backend was paused while its answer was read.
  reader.resume();
}
