import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { isProxyableAddress, proxyRequest, reachFailure, type ProxyResponseSink } from '../../../../src/proxy';
import { until } from '../../../support/until';

/** A sink that records what the client would get; `full` makes its writes refuse until drained. */
function recordingSink(): ProxyResponseSink & { status: number; headers: Record<string, string | string[]>; contentType: string; body: Buffer[]; ended: boolean; close(): void } {
  const closers: Array<() => void> = [];
  const sink = {
    status: 0,
    headers: {} as Record<string, string | string[]>,
    contentType: '',
    body: [] as Buffer[],
    ended: false,
    start(contentType: string, status: number, headers: Record<string, string | string[]>) {
      sink.contentType = contentType;
      sink.status = status;
      sink.headers = headers;
    },
    write(chunk: Buffer) {
      sink.body.push(chunk);
      return true;
    },
    drained: async () => undefined,
    end() {
      sink.ended = true;
    },
    onClose(cb: () => void) {
      closers.push(cb);
    },
    close() {
      for (const cb of closers) cb();
    },
  };
  return sink;
}

async function listen(handler: http.RequestListener): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port };
}

describe('proxy: plain requests', () => {
  it('passes method, path, query, headers and body; returns status, headers and body without hop-by-hop or CORS headers', async () => {
    let seen: { method?: string; url?: string; headers?: http.IncomingHttpHeaders; body?: string } = {};
    const { server, port } = await listen(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      seen = { method: req.method, url: req.url, headers: req.headers, body };
      res.writeHead(418, { 'Content-Type': 'text/teapot', 'X-From-Backend': 'yes', 'Access-Control-Allow-Origin': '*', Connection: 'keep-alive' });
      res.end('short and stout');
    });
    try {
      const sink = recordingSink();
      await proxyRequest({
        method: 'PUT',
        target: new URL(`http://127.0.0.1:${port}/some/path/?a=1&b=2`),
        headers: { 'x-client': 'c', connection: 'close', 'proxy-authorization': 'secret', host: 'carina' },
        body: Readable.from([Buffer.from('payload')]),
        transport: { timeoutMs: 2000 },
      }, sink);
      expect(seen).to.deep.include({ method: 'PUT', url: '/some/path/?a=1&b=2', body: 'payload' });
      expect(seen.headers?.['x-client']).to.equal('c');
      expect(seen.headers?.host).to.equal(`127.0.0.1:${port}`);
      expect(seen.headers?.['proxy-authorization']).to.equal(undefined);
      expect(sink.status).to.equal(418);
      expect(sink.contentType).to.equal('text/teapot');
      expect(sink.headers['x-from-backend']).to.equal('yes');
      expect(sink.headers).to.not.have.property('access-control-allow-origin');
      expect(sink.headers).to.not.have.property('connection');
      expect(Buffer.concat(sink.body).toString()).to.equal('short and stout');
      expect(sink.ended).to.equal(true);
    } finally {
      server.close();
    }
  });

  it('ends the backend response when the client leaves mid-stream', async () => {
    let backendClosed = false;
    const { server, port } = await listen((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      const timer = setInterval(() => res.write('line\n'), 5);
      res.on('close', () => {
        clearInterval(timer);
        backendClosed = true;
      });
    });
    try {
      const sink = recordingSink();
      const done = proxyRequest({ method: 'GET', target: new URL(`http://127.0.0.1:${port}/logs`), headers: {}, transport: { timeoutMs: 2000 } }, sink);
      await until('three chunks of the stream', () => sink.body.length >= 3, 5_000);
      sink.close();
      await done;
      await until('the backend response to be closed', () => backendClosed, 5_000);
    } finally {
      server.close();
    }
  });

  it('an unreachable backend: 503 error trying to reach service, with Go\'s dial text', async () => {
    const probe = net.createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const failure = await proxyRequest({ method: 'GET', target: new URL(`http://127.0.0.1:${port}/`), headers: {}, transport: { timeoutMs: 2000 } }, recordingSink()).then(() => undefined, (err: unknown) => err);
    expect(reachFailure(failure).toStatus()).to.deep.include({ code: 503, reason: 'ServiceUnavailable', message: `error trying to reach service: dial tcp 127.0.0.1:${port}: connect: connection refused` });
  });
});

describe('proxy: destinations', () => {
  it('refuses what Go does not call global unicast', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '169.254.169.254', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1', 'not-an-ip']) {
      expect(isProxyableAddress(address), address).to.equal(false);
    }
    for (const address of ['10.0.0.2', '192.168.1.1', '8.8.8.8', '2001:db8::1', 'fd00::1']) {
      expect(isProxyableAddress(address), address).to.equal(true);
    }
  });
});
