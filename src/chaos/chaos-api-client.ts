/**
 * HTTPS to the Kubernetes API with the admin certificate, and the classification of answers a
 * history needs: what the client can know about whether its request took effect.
 */
import https from 'node:https';
import type { KubeconfigCredentials } from '../certificates';

export type ApiAnswer =
  | { kind: 'response'; status: number; body: Record<string, unknown> | undefined; text: string }
  /** No answer: a timeout, a reset, a refused connection. */
  | { kind: 'no-answer'; error: string };

export class ChaosApiClient {
  private readonly agent: https.Agent;

  constructor(private readonly url: URL, private readonly credentials: KubeconfigCredentials, private readonly timeoutMs = 5000) {
    this.agent = new https.Agent({ keepAlive: true, maxSockets: 4, ca: credentials.caCertPem, cert: credentials.clientCertPem, key: credentials.clientKeyPem });
  }

  request(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve) => {
      let settled = false;
      const settle = (answer: ApiAnswer) => {
        if (settled) return;
        settled = true;
        resolve(answer);
      };
      const req = https.request({
        host: this.url.hostname,
        port: this.url.port,
        method,
        path,
        agent: this.agent,
        timeout: this.timeoutMs,
        headers: { Accept: 'application/json', ...(payload !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) } : {}) },
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: Record<string, unknown> | undefined;
          try {
            parsed = JSON.parse(text) as Record<string, unknown>;
          } catch {
            parsed = undefined;
          }
          settle({ kind: 'response', status: res.statusCode ?? 0, body: parsed, text });
        });
        res.on('error', (err) => settle({ kind: 'no-answer', error: err.message }));
        res.on('aborted', () => settle({ kind: 'no-answer', error: 'response aborted' }));
      });
      // A timed-out request may still have reached the server: the caller records it indefinite.
      const timer = setTimeout(() => {
        req.destroy(new Error(`no answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      req.on('close', () => clearTimeout(timer));
      req.on('timeout', () => req.destroy(new Error(`socket idle for ${this.timeoutMs} ms`)));
      req.on('error', (err) => settle({ kind: 'no-answer', error: (err as NodeJS.ErrnoException).code ?? err.message }));
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /** A streaming GET (a watch): lines go to onLine until the stream ends or is aborted. */
  stream(path: string, onStatus: (status: number) => void, onLine: (line: string) => void, onEnd: (error: string | undefined) => void): () => void {
    let ended = false;
    const end = (error: string | undefined) => {
      if (ended) return;
      ended = true;
      onEnd(error);
    };
    // A watch has its own connection: a lingering stream must not hold a pooled socket.
    const req = https.request({
      host: this.url.hostname,
      port: this.url.port,
      method: 'GET',
      path,
      agent: false,
      ca: this.credentials.caCertPem,
      cert: this.credentials.clientCertPem,
      key: this.credentials.clientKeyPem,
      headers: { Accept: 'application/json' },
    }, (res) => {
      onStatus(res.statusCode ?? 0);
      let buffered = '';
      res.on('data', (c: Buffer) => {
        buffered += c.toString('utf8');
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line !== '') onLine(line);
        }
      });
      res.on('end', () => end(undefined));
      res.on('error', (err) => end(err.message));
      res.on('aborted', () => end('aborted'));
    });
    req.on('error', (err) => end((err as NodeJS.ErrnoException).code ?? err.message));
    req.end();
    return () => {
      req.destroy();
      end('closed by the client');
    };
  }

  close(): void {
    this.agent.destroy();
  }
}
