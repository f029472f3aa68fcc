/**
 * An HTTP/2 client of the Kubernetes API with the admin client certificate, as client-go talks
 * to kube-apiserver: one TLS connection, every request a stream on it, JSON bodies.
 */
import http2 from 'node:http2';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ApiCredentials {
  ca: Buffer;
  /** A client certificate and key; absent for a client that sends a bearer token instead. */
  cert?: Buffer | string;
  key?: Buffer | string;
  /** Sent as `Authorization: Bearer <token>` on every request. */
  token?: string;
}

export interface ApiResponse {
  status: number;
  body: string;
}

export interface RequestOptions {
  body?: string;
  /** Content-Type of the body; JSON unless told. */
  contentType?: string;
  /** Reject and reset the stream after this many ms. */
  timeoutMs?: number;
}

/** The admin credentials a replica writes under its data directory (pki/). */
export function credentialsFromDataDir(dataDir: string): ApiCredentials {
  const pki = join(dataDir, 'pki');
  return { ca: readFileSync(join(pki, 'ca.crt')), cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')) };
}

export class ApiError extends Error {
  constructor(readonly method: string, readonly path: string, readonly status: number, readonly body: string) {
    super(`${method} ${path}: ${status} ${body.slice(0, 300)}`);
  }
}

/** client-go's HTTP/2 windows (golang.org/x/net/http2's transport): 4 MiB per stream, 1 GiB per connection. */
export const CLIENT_GO_WINDOWS = { stream: 4 << 20, connection: 1 << 30 };

export class ApiClient {
  private readonly session: http2.ClientHttp2Session;
  private readonly authorization: http2.OutgoingHttpHeaders;

  /**
   * `windowBytes`: HTTP/2 flow-control windows as client-go's (golang.org/x/net/http2 transport:
   * 4 MiB per stream, 1 GiB per connection) instead of the protocol's 64 KiB, for clients that
   * receive much (watch load generators); Node's defaults would make the client the limit.
   */
  constructor(readonly url: string, credentials: ApiCredentials, options: { windowBytes?: { stream: number; connection: number } } = {}) {
    const window = options.windowBytes;
    this.session = http2.connect(url, { ca: credentials.ca, cert: credentials.cert, key: credentials.key, ...(window === undefined ? {} : { settings: { initialWindowSize: window.stream } }) });
    if (window !== undefined) this.session.once('connect', () => this.session.setLocalWindowSize(window.connection));
    this.authorization = credentials.token === undefined ? {} : { authorization: `Bearer ${credentials.token}` };
    // A dead session fails its streams; the error is reported through them, not here.
    this.session.on('error', () => {});
  }

  /** One request; rejects with ApiError on a status >= 300. */
  request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    return new Promise((resolve, reject) => {
      const headers: http2.OutgoingHttpHeaders = { ':method': method, ':path': path, accept: 'application/json', ...this.authorization };
      if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
      let stream: http2.ClientHttp2Stream;
      try {
        stream = this.session.request(headers);
      } catch (err) {
        reject(err as Error);
        return;
      }
      let status = 0;
      const chunks: Buffer[] = [];
      let timer: NodeJS.Timeout | undefined;
      if (options.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          stream.close(http2.constants.NGHTTP2_CANCEL);
          reject(new Error(`${method} ${path}: no answer in ${options.timeoutMs} ms`));
        }, options.timeoutMs);
      }
      stream.on('response', (h) => (status = Number(h[':status'])));
      stream.on('data', (d: Buffer) => chunks.push(d));
      stream.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        if (status >= 300 || status === 0) reject(new ApiError(method, path, status, text));
        else resolve({ status, body: text });
      });
      stream.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      stream.end(options.body);
    });
  }

  /**
   * Opens a long-running GET (a watch) and hands over its raw bytes; `onStatus` is told the
   * response status (the server sends it once the watch is subscribed). Returns a closer.
   */
  stream(path: string, onData: (chunk: Buffer) => void, onStatus: (status: number) => void = () => {}, onEnd: () => void = () => {}): () => void {
    const stream = this.session.request({ ':path': path, accept: 'application/json', ...this.authorization });
    stream.on('response', (h) => onStatus(Number(h[':status'])));
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onEnd);
    return () => stream.close();
  }

  /** Opens a JSON watch; `onEvent` gets each parsed event. */
  watch(path: string, onEvent: (event: { type: string; object: { metadata: { name: string } } }) => void): () => void {
    let buffered = '';
    return this.stream(path, (d) => {
      buffered += d.toString('utf8');
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.trim() !== '') onEvent(JSON.parse(line));
      }
    });
  }

  close(): void {
    this.session.close();
  }

  destroy(): void {
    this.session.destroy();
  }
}
