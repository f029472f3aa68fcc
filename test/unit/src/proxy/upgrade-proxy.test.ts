import { expect } from 'chai';
import net from 'node:net';
import { once } from 'node:events';
import { Duplex, PassThrough } from 'node:stream';
import { BackendDialError, UpgradeProxyError, proxyUpgrade, upgradeFailure, type ProxyTransport } from '../../../../src/proxy';
import { pumpBatched } from '../../../../src/proxy/upgrade-proxy';
import { until } from '../../../support/until';

const TRANSPORT: ProxyTransport = { timeoutMs: 2000 };

/** A backend that answers each upgrade with `answer` and then runs `session` on the socket. */
async function backendServer(answer: (head: string) => string, session: (socket: net.Socket) => void = (s) => s.pipe(s)): Promise<{ server: net.Server; port: number; heads: string[]; open: Set<net.Socket> }> {
  const heads: string[] = [];
  const open = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const head = buffered.subarray(0, end).toString('latin1');
      heads.push(head);
      socket.write(answer(head));
      const rest = buffered.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      session(socket);
    };
    socket.on('data', onData);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port, heads, open };
}

/** A connected pair of sockets: `proxySide` is what the API server holds, `user` the client program. */
async function socketPair(): Promise<{ proxySide: net.Socket; user: net.Socket; close(): void }> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const accepted = once(server, 'connection');
  const user = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  const [proxySide] = (await accepted) as [net.Socket];
  await once(user, 'connect');
  user.on('error', () => user.destroy());
  proxySide.on('error', () => proxySide.destroy());
  return { proxySide, user, close: () => server.close() };
}

const SWITCHING = (head: string) => {
  const protocol = /sec-websocket-protocol: ([^\r\n]+)/i.exec(head)?.[1].split(',')[0].trim() ?? '';
  return `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: ${protocol}\r\n\r\n`;
};

function readUntil(socket: net.Socket, text: string): Promise<string> {
  return new Promise((resolve) => {
    let seen = '';
    const onData = (d: Buffer) => {
      seen += d.toString('latin1');
      if (seen.includes(text)) {
        socket.off('data', onData);
        resolve(seen);
      }
    };
    socket.on('data', onData);
  });
}

describe('proxy: HTTP/1.1 upgrades', () => {
  it('passes every offered subprotocol to the backend, returns its 101 and carries bytes both ways', async () => {
    const backend = await backendServer(SWITCHING);
    const pair = await socketPair();
    try {
      const offered = 'v5.channel.k8s.io, v4.channel.k8s.io, channel.k8s.io, base64.channel.k8s.io';
      const outcome = await proxyUpgrade({
        client: pair.proxySide,
        head: Buffer.from('early'),
        method: 'GET',
        target: new URL(`http://127.0.0.1:${backend.port}/exec/ns/pod/c?command=sh&stdin=1`),
        headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-protocol': offered, 'sec-websocket-version': '13', 'sec-websocket-key': 'abc' },
        transport: TRANSPORT,
      });
      expect(outcome.status).to.equal(101);
      const answer = readUntil(pair.user, 'early');
      expect(await answer).to.match(/^HTTP\/1\.1 101 Switching Protocols\r\n[\s\S]*Sec-WebSocket-Protocol: v5\.channel\.k8s\.io\r\n\r\nearly$/);
      expect(backend.heads[0]).to.match(/^GET \/exec\/ns\/pod\/c\?command=sh&stdin=1 HTTP\/1\.1\r\n/);
      expect(backend.heads[0]).to.include(`sec-websocket-protocol: ${offered}`);
      expect(backend.heads[0]).to.include(`Host: 127.0.0.1:${backend.port}`);
      const echoed = readUntil(pair.user, 'ping');
      pair.user.write('ping');
      expect(await echoed).to.include('ping');
      pair.user.destroy();
      await outcome.closed;
      await until('the backend connection to close', async () => backend.open.size === 0, 5000);
    } finally {
      pair.close();
      backend.server.close();
    }
  });

  it('passes a SPDY/3.1 upgrade with its port-forward protocol versions', async () => {
    const backend = await backendServer(() => 'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io\r\n\r\n');
    const pair = await socketPair();
    try {
      const outcome = await proxyUpgrade({
        client: pair.proxySide,
        head: Buffer.alloc(0),
        method: 'POST',
        target: new URL(`http://127.0.0.1:${backend.port}/portForward/ns/pod`),
        headers: { connection: 'Upgrade', upgrade: 'SPDY/3.1', 'x-stream-protocol-version': ['portforward.k8s.io'] },
        transport: TRANSPORT,
      });
      expect(outcome.status).to.equal(101);
      expect(backend.heads[0]).to.match(/^POST \/portForward\/ns\/pod HTTP\/1\.1\r\n/);
      expect(backend.heads[0]).to.include('x-stream-protocol-version: portforward.k8s.io');
      expect(await readUntil(pair.user, '\r\n\r\n')).to.include('X-Stream-Protocol-Version: portforward.k8s.io');
      pair.user.destroy();
      await outcome.closed;
    } finally {
      pair.close();
      backend.server.close();
    }
  });

  it('closes the client when the backend ends, and the backend when the client ends', async () => {
    const backend = await backendServer(SWITCHING, (socket) => socket.on('data', (d) => { if (d.toString().includes('bye')) socket.end('last words'); }));
    const pair = await socketPair();
    try {
      const outcome = await proxyUpgrade({ client: pair.proxySide, head: Buffer.alloc(0), method: 'GET', target: new URL(`http://127.0.0.1:${backend.port}/attach/ns/p/c`), headers: { connection: 'Upgrade', upgrade: 'websocket' }, transport: TRANSPORT });
      const received = readUntil(pair.user, 'last words');
      pair.user.write('bye');
      expect(await received).to.include('last words');
      await once(pair.user, 'close');
      await outcome.closed;
    } finally {
      pair.close();
      backend.server.close();
    }
  });

  it('echoes a refusal (403 and its body) to the client and closes both', async () => {
    const body = '{"kind":"Status","code":403}';
    const backend = await backendServer(() => `HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`, (s) => s.end());
    const pair = await socketPair();
    try {
      const outcome = await proxyUpgrade({ client: pair.proxySide, head: Buffer.alloc(0), method: 'GET', target: new URL(`http://127.0.0.1:${backend.port}/exec/ns/p/c`), headers: { connection: 'Upgrade', upgrade: 'websocket' }, transport: TRANSPORT });
      expect(outcome.status).to.equal(403);
      const seen = await readUntil(pair.user, body);
      expect(seen).to.match(/^HTTP\/1\.1 403 Forbidden\r\n/);
      await outcome.closed;
    } finally {
      pair.close();
      backend.server.close();
    }
  });

  it('refuses a backend that answers without upgrading: invalid upgrade response, as a 500 without a reason', async () => {
    const backend = await backendServer(() => 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', () => undefined);
    const pair = await socketPair();
    try {
      const failure = await proxyUpgrade({ client: pair.proxySide, head: Buffer.alloc(0), method: 'GET', target: new URL(`http://127.0.0.1:${backend.port}/exec/ns/p/c`), headers: { connection: 'Upgrade', upgrade: 'websocket' }, transport: TRANSPORT }).then(() => undefined, (err: unknown) => err);
      expect(failure).to.be.instanceOf(UpgradeProxyError);
      const status = upgradeFailure(failure).toStatus();
      expect(status).to.deep.include({ code: 500, message: 'invalid upgrade response: status code 200' });
      expect(status).to.not.have.property('reason');
    } finally {
      pair.close();
      backend.server.close();
    }
  });

  it('a backend nobody listens on: error dialing backend with Go\'s text', async () => {
    const probe = net.createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const pair = await socketPair();
    try {
      const failure = await proxyUpgrade({ client: pair.proxySide, head: Buffer.alloc(0), method: 'POST', target: new URL(`http://127.0.0.1:${port}/exec/ns/p/c`), headers: {}, transport: TRANSPORT }).then(() => undefined, (err: unknown) => err);
      expect(failure).to.be.instanceOf(BackendDialError);
      expect(upgradeFailure(failure).message).to.equal(`error dialing backend: dial tcp 127.0.0.1:${port}: connect: connection refused`);
    } finally {
      pair.close();
    }
  });

  it('buffers no more than the sockets hold when the client stops reading (back-pressure)', async () => {
    let backendWritesRefused = 0;
    const chunk = Buffer.alloc(64 * 1024, 1);
    const backend = await backendServer(SWITCHING, (socket) => {
      const pump = () => {
        for (let i = 0; i < 4096; i++) {
          if (!socket.write(chunk)) {
            backendWritesRefused += 1;
            socket.once('drain', pump);
            return;
          }
        }
        socket.end();
      };
      pump();
    });
    const pair = await socketPair();
    try {
      pair.user.pause();
      const outcome = await proxyUpgrade({ client: pair.proxySide, head: Buffer.alloc(0), method: 'GET', target: new URL(`http://127.0.0.1:${backend.port}/`), headers: { connection: 'Upgrade', upgrade: 'websocket' }, transport: TRANSPORT });
      await until('the backend to be held back', async () => backendWritesRefused > 0, 5000);
      // The client reads nothing: what the proxy holds stays at the pipe's high-water mark, not the 256 MiB the backend offers.
      await new Promise((r) => setImmediate(r));
      expect(pair.proxySide.writableLength).to.be.below(1024 * 1024);
      pair.user.destroy();
      await outcome.closed;
    } finally {
      pair.close();
      backend.server.close();
    }
  });

  it('100 sessions cut by their clients mid-stream leave no backend connection open', async () => {
    const backend = await backendServer(SWITCHING, (socket) => {
      const timer = setInterval(() => socket.write('tick'), 5);
      socket.on('close', () => clearInterval(timer));
    });
    try {
      for (let i = 0; i < 100; i++) {
        const pair = await socketPair();
        const outcome = await proxyUpgrade({ client: pair.proxySide, head: Buffer.alloc(0), method: 'GET', target: new URL(`http://127.0.0.1:${backend.port}/`), headers: { connection: 'Upgrade', upgrade: 'websocket' }, transport: TRANSPORT });
        await readUntil(pair.user, 'tick');
        pair.user.destroy();
        await outcome.closed;
        pair.close();
      }
      await until('every backend connection to close', async () => backend.open.size === 0, 5000, () => `${backend.open.size} open`);
    } finally {
      backend.server.close();
    }
  });
});

describe('proxy: the upgraded connection\'s copy loop', () => {
  it('writes what arrives in one turn of the event loop as one batch, in order', async () => {
    const batches: string[][] = [];
    const writer = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, done) {
        batches.push([chunk.toString()]);
        done();
      },
      writev(chunks, done) {
        batches.push(chunks.map((c) => (c.chunk as Buffer).toString()));
        done();
      },
    });
    const reader = new PassThrough();
    pumpBatched(reader, writer);
    for (const text of ['a', 'b', 'c']) reader.write(text);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    reader.write('d');
    await until('the second turn\'s write', async () => batches.length === 2, 2000);
    expect(batches).to.deep.equal([['a', 'b', 'c'], ['d']]);
  });
});
