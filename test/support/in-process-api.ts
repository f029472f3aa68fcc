/**
 * The API server in this process, without sockets, for tests of the request pipeline at unit
 * speed (as fastify's `inject` or Go's httptest.NewRecorder serve a request): the composition
 * `carina server` runs (src/server/api-server.ts startApiServer: filter chain, handlers,
 * registry, admission, watch cache) over an in-memory store (memory-kv.ts), no listener.
 *
 * A request is real HTTP/1.1: node:http's client writes it into one end of an in-memory stream
 * pair and node:http's server parses it from the other end, then hands the pair to the API
 * server's `handle`, so headers, chunked bodies and status lines are what a network client
 * would get. A watch answers with a stream of its events (`watch`).
 *
 * What differs from a process: no TLS (so no client certificates: requests authenticate with
 * a bearer token from a token file, by default the admin's, in system:masters); the replica's
 * start-up writes (system namespaces, the default RBAC policy, the `kubernetes` Service) are
 * not made, so a test creates the namespaces it uses; API Priority and Fairness is off (its
 * configuration objects come from a controller), the max-in-flight limits in its place.
 */
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { DEFAULT_SERVICE_ACCOUNT_ISSUER } from '../../src/cli/security-flags';
import { prepareSharedPki } from '../../src/cli/store-flags';
import { startApiServer, type RunningApiServer } from '../../src/server/api-server';
import { buildApiServerParts, type DefaultParts } from '../../src/server/api-machinery';
import { memoryKv, type MemoryKvHooks } from './memory-kv';
import { until, untilSettled } from './until';

export const ADMIN_TOKEN = 'in-process-admin-token';
/** A user in no group with any rights (RBAC denies it everything). */
export const NOBODY_TOKEN = 'in-process-nobody-token';

export interface InjectRequest {
  method: string;
  /** Path and query, as sent on the request line. */
  path: string;
  headers?: Record<string, string>;
  /** An object is sent as JSON (Content-Type application/json unless headers say otherwise). */
  body?: unknown;
  /** The bearer token (default the admin's); null sends none (anonymous). */
  token?: string | null;
}

export interface InjectResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

/** One watch event as the JSON stream carries it. */
export interface WatchEvent {
  type: string;
  object: Record<string, unknown>;
}

export interface WatchStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The next event, waiting at most `timeoutMs`; undefined once the stream has ended. */
  next(timeoutMs?: number): Promise<WatchEvent | undefined>;
  /** Ends the watch from the client's side. */
  close(): void;
}

/**
 * Two Duplex ends joined back to back: what one writes the other reads. Node 20 has no
 * stream.duplexPair; this is the smallest one node:http's server and client accept.
 */
function streamPair(): [Duplex, Duplex] {
  const make = (): Duplex & { peer?: Duplex } => {
    const end: Duplex & { peer?: Duplex } = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        end.peer?.push(chunk);
        callback();
      },
      final(callback) {
        end.peer?.push(null);
        callback();
      },
      destroy(error, callback) {
        end.peer?.push(null);
        callback(error);
      },
    });
    return end;
  };
  const client = make();
  const server = make();
  client.peer = server;
  server.peer = client;
  // The API server's HTTP/1.1 path lingers on a closing connection through net.Socket's destroySoon.
  (server as unknown as { destroySoon: () => void }).destroySoon = () => server.end();
  return [client, server];
}

export class InProcessApi {
  private readonly httpServer: http.Server;
  private readonly connections = new Set<Duplex>();

  private constructor(
    readonly api: RunningApiServer,
    /** The in-memory store under the server, for a test that changes it behind the server's back. */
    readonly kv: ReturnType<typeof memoryKv>,
    readonly parts: DefaultParts,
    private readonly dataDir: string,
  ) {
    this.httpServer = http.createServer({ requestTimeout: 0, headersTimeout: 0, keepAliveTimeout: 0 }, (req, res) => {
      void api.handle(req, res);
    });
  }

  /**
   * Starts the server over a new in-memory store and waits until its watch cache and authorizers
   * are ready. `kvHooks` (memory-kv.ts) let a test act just before the store applies a transaction.
   */
  static async start(kvHooks: MemoryKvHooks = {}): Promise<InProcessApi> {
    const dataDir = mkdtempSync(join(tmpdir(), 'carina-in-process-'));
    const log = (): void => undefined;
    await prepareSharedPki(dataDir, true, log);
    const tokenFile = join(dataDir, 'tokens.csv');
    writeFileSync(tokenFile, `${ADMIN_TOKEN},admin,admin-uid,system:masters\n${NOBODY_TOKEN},nobody,nobody-uid\n`);
    const kv = memoryKv(kvHooks);
    const parts = buildApiServerParts(kv, { runtimeConfig: '', storeHealthy: async () => undefined });
    const api = await startApiServer({
      dataDir,
      bindAddress: '127.0.0.1',
      securePort: 0,
      listen: false,
      writeKubeconfig: false,
      replicaDuties: false,
      livezGracePeriodMs: 0,
      shutdownDelayMs: 0,
      minRequestTimeoutSeconds: 1800,
      serviceClusterIpRange: '10.0.0.0/24',
      serviceNodePortRange: '30000-32767',
      identity: 'in-process',
      watchCacheHistoryMs: 300_000,
      advertiseAddress: '127.0.0.1',
      security: { authentication: { anonymousAuth: true, tokenAuthFile: tokenFile, serviceAccountIssuers: [DEFAULT_SERVICE_ACCOUNT_ISSUER] }, authorization: { modes: ['Node', 'RBAC'] } },
      flowControl: { enabled: false, maxRequestsInFlight: 400, maxMutatingRequestsInFlight: 200 },
    }, parts, log);
    const harness = new InProcessApi(api, kv, parts, dataDir);
    await until('the in-process API server to be ready', async () => (await harness.request({ method: 'GET', path: '/readyz' })).status === 200, 15_000);
    return harness;
  }

  async stop(): Promise<void> {
    for (const connection of this.connections) connection.destroy();
    await this.api.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** A new connection to the server (one per request, as a client without keep-alive). */
  private connect(): Duplex {
    const [client, server] = streamPair();
    this.connections.add(client);
    client.once('close', () => this.connections.delete(client));
    this.httpServer.emit('connection', server);
    return client;
  }

  private send(request: InjectRequest): Promise<http.IncomingMessage> {
    const headers: Record<string, string> = { ...request.headers };
    const token = request.token === undefined ? ADMIN_TOKEN : request.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: Buffer | undefined;
    if (request.body !== undefined) {
      body = Buffer.isBuffer(request.body) ? request.body : Buffer.from(typeof request.body === 'string' ? request.body : JSON.stringify(request.body));
      if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
      headers['content-length'] = String(body.length);
    }
    return new Promise((resolve, reject) => {
      const outgoing = http.request({
        method: request.method,
        path: request.path,
        host: 'in-process',
        headers,
        // No agent: node:http then takes the connection from createConnection, one per request.
        createConnection: () => this.connect() as unknown as import('node:net').Socket,
      }, resolve);
      outgoing.once('error', reject);
      outgoing.end(body);
    });
  }

  /** Sends one request and reads the whole answer. */
  async request(request: InjectRequest): Promise<InjectResponse> {
    const response = await this.send(request);
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const text = body.toString('utf8');
    return { status: response.statusCode ?? 0, headers: response.headers, body, text, json: <T>() => JSON.parse(text) as T };
  }

  /**
   * Starts a watch (`path` should carry watch=true or be a /watch/ path) and hands its events
   * over one by one. A refused watch (no 200) ends at once, its Status in the first "event".
   */
  async watch(request: Omit<InjectRequest, 'method'>): Promise<WatchStream> {
    const response = await this.send({ ...request, method: 'GET' });
    const events: WatchEvent[] = [];
    let ended = false;
    let pending = '';
    let wake: (() => void) | undefined;
    const notify = (): void => {
      wake?.();
      wake = undefined;
    };
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      pending += chunk;
      for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
        const line = pending.slice(0, newline).trim();
        pending = pending.slice(newline + 1);
        if (line !== '') events.push(JSON.parse(line) as WatchEvent);
      }
      notify();
    });
    const finish = (): void => {
      if (pending.trim() !== '') events.push(JSON.parse(pending) as WatchEvent);
      pending = '';
      ended = true;
      notify();
    };
    response.once('end', finish);
    response.once('close', finish);
    return {
      status: response.statusCode ?? 0,
      headers: response.headers,
      async next(timeoutMs = 5000): Promise<WatchEvent | undefined> {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const event = events.shift();
          if (event !== undefined) return event;
          if (ended) return undefined;
          const left = deadline - Date.now();
          if (left <= 0) throw new Error(`no watch event within ${timeoutMs} ms`);
          await untilSettled(`a watch event within ${timeoutMs} ms`, new Promise<void>((resolve) => (wake = resolve)), left);
        }
      },
      close: () => response.destroy(),
    };
  }
}
