/**
 * The state of one request as it passes the filter chain and reaches a handler. The listener
 * creates it; each filter sets the fields it owns, in the chain's order (src/http/filters):
 *
 * | field            | set by                                     |
 * |------------------|--------------------------------------------|
 * | info             | request info (path checked and parsed once) |
 * | user, audiences  | authentication; replaced by impersonation  |
 * | requestingUser   | impersonation (the user who asked)         |
 * | annotations      | audit hook and later stages                |
 * | trace            | tracing, when the request is sampled       |
 * | upgrade          | the listener, for HTTP/1.1 Upgrade requests |
 *
 * Handlers read these fields and never parse the path or the credentials again. `headers` is
 * the request's headers with credentials removed once authentication has used them.
 */
import type { X509Certificate } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { errors } from '../util';
import type { UserInfo } from '../authn';
import { ANONYMOUS } from '../authn';
import type { TraceContext } from '../observability/spans';
import type { RequestInfo } from './request-info';
import type { ResponseWriter } from './response-writer';

export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

export type RequestHeaders = Record<string, string | readonly string[] | undefined>;

/** The request's body, read once on demand. */
export interface BodySource {
  readonly contentLength: number | undefined;
  [Symbol.asyncIterator](): AsyncIterator<Buffer>;
}

export class RequestContext {
  /** Set by the request-info filter; read only after it ran. */
  info!: RequestInfo;
  /** Who the request acts as: anonymous until authentication, the target after impersonation. */
  user: UserInfo = ANONYMOUS;
  /** Whose credentials the request carried, when it impersonates someone else. */
  requestingUser?: UserInfo;
  /** Audiences the credential was valid for (bound service-account tokens). */
  audiences: readonly string[] = [];
  /** Audit annotations (key → value) added by any stage. */
  readonly annotations: Record<string, string> = {};
  /** The peer's address, as the socket reports it (audit's sourceIPs). */
  remoteAddress = '';
  /** Refused by the overload stage (API Priority and Fairness or the in-flight limits) with its 429. */
  refusedForOverload = false;
  /**
   * The request's trace context (its server span's) when tracing samples it, undefined
   * otherwise; each stage passes it, or its own span's context, to what it calls
   * (src/observability/spans.ts: why it is explicit).
   */
  trace: TraceContext;
  /**
   * An HTTP/1.1 Upgrade request's connection, detached from the HTTP parser, and the bytes the
   * client sent after its request head: a handler that proxies the upgrade (src/proxy) takes it
   * and sets `taken`; otherwise the response is written on it as usual and it is closed.
   */
  upgrade?: { readonly socket: Duplex; readonly head: Buffer; taken: boolean };
  private body?: Promise<Buffer>;
  /**
   * A YAML body as JSON text, once a handler decoded it (on the YAML worker): the audit log's
   * requestObject, which is never decoded from YAML on the event loop.
   */
  yamlBodyAsJson?: string;

  constructor(
    readonly method: string,
    /** The raw path, still percent-encoded, as the client sent it. */
    readonly rawPath: string,
    readonly query: URLSearchParams,
    /** Replaced (not changed) by the filters that remove credentials. */
    public headers: RequestHeaders,
    readonly response: ResponseWriter,
    private readonly bodySource: BodySource,
    /** The client's certificate chain, leaf first; read lazily from the TLS socket. */
    private readonly peerCertificateSource: () => readonly X509Certificate[],
    readonly startedAt: bigint = process.hrtime.bigint(),
  ) {}

  get peerCertificates(): readonly X509Certificate[] {
    return this.peerCertificateSource();
  }

  header(name: string): string | undefined {
    const value = this.headers[name];
    return typeof value === 'string' || value === undefined ? value : value[0];
  }

  /** The body if a stage has started reading it (for the audit log, which never reads one itself). */
  readBodyIfStarted(): Promise<Buffer> | undefined {
    return this.body;
  }

  /** The body as it arrives, without a size limit, for a handler that passes it on (the proxy subresources). */
  bodyStream(): AsyncIterable<Buffer> {
    return this.bodySource;
  }

  /** The body, at most MAX_REQUEST_BODY_BYTES (413 beyond); empty for GET and HEAD. */
  readBody(): Promise<Buffer> {
    if (this.method === 'GET' || this.method === 'HEAD') return Promise.resolve(Buffer.alloc(0));
    this.body ??= readLimited(this.bodySource);
    return this.body;
  }
}

async function readLimited(source: BodySource): Promise<Buffer> {
  if ((source.contentLength ?? 0) > MAX_REQUEST_BODY_BYTES) throw errors.requestEntityTooLarge(MAX_REQUEST_BODY_BYTES);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of source) {
    total += chunk.length;
    if (total > MAX_REQUEST_BODY_BYTES) throw errors.requestEntityTooLarge(MAX_REQUEST_BODY_BYTES);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}
