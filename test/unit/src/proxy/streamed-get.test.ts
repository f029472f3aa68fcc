import { expect } from 'chai';
import net from 'node:net';
import { once } from 'node:events';
import { Http1BodyDecoder, streamedGet, type StreamedBodySink } from '../../../../src/proxy';
import { until } from '../../../support/until';

/** Payload of every piece pushed through a decoder, joined. */
function decodeAll(decoder: Http1BodyDecoder, pieces: Buffer[]): string {
  const out: Buffer[] = [];
  for (const piece of pieces) decoder.push(piece, out);
  return Buffer.concat(out).toString('latin1');
}

/** A client's view of a sink: HTTP/1.1 chunked (it frames the chunks) or not (HTTP/2), and a back-pressure switch. */
function recordingSink(frames: boolean): StreamedBodySink & {
  status: number; contentType: string; writes: Buffer[][]; ended: boolean; full: boolean; drains: number; release(): void; leave(): void; payload(): string;
} {
  const closers: Array<() => void> = [];
  let waiting: Array<() => void> = [];
  const sink = {
    status: 0,
    contentType: '',
    writes: [] as Buffer[][],
    ended: false,
    full: false,
    drains: 0,
    start(contentType: string, status: number) {
      sink.contentType = contentType;
      sink.status = status;
    },
    frameChunks: () => frames,
    writeAll(chunks: readonly Buffer[]) {
      sink.writes.push([...chunks]);
      return !sink.full;
    },
    writeFramed(chunks: readonly Buffer[]) {
      sink.writes.push([...chunks]);
    },
    drained: () => {
      if (!sink.full) return Promise.resolve();
      sink.drains += 1;
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    release() {
      sink.full = false;
      const resolvers = waiting;
      waiting = [];
      for (const resolve of resolvers) resolve();
    },
    end() {
      sink.ended = true;
    },
    onClose(cb: () => void) {
      closers.push(cb);
    },
    leave() {
      for (const cb of closers) cb();
    },
    /** What the client read: for a framing sink, the chunks it was sent, parsed. */
    payload(): string {
      const bytes = Buffer.concat(sink.writes.flat());
      return frames ? decodeAll(new Http1BodyDecoder(true, undefined), [bytes, Buffer.from('0\r\n\r\n')]) : bytes.toString('latin1');
    },
  };
  return sink;
}

async function listen(handler: (socket: net.Socket) => void): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port };
}

/** A backend that answers every request with `answer` as raw bytes, then closes unless `keepOpen`. */
function rawBackend(answer: string | Buffer, keepOpen = false): Promise<{ server: net.Server; port: number; requests: string[] }> {
  const requests: string[] = [];
  return listen((socket) => {
    let request = '';
    socket.on('data', (d: Buffer) => {
      request += d.toString('latin1');
      if (!request.includes('\r\n\r\n')) return;
      requests.push(request);
      if (keepOpen) socket.write(answer);
      else socket.end(answer);
    });
    socket.on('error', () => socket.destroy());
  }).then((listening) => ({ ...listening, requests }));
}

describe('proxy: a streamed GET (pods/log)', () => {
  describe('the HTTP/1.1 body decoder', () => {
    const chunked = '5\r\nhello\r\n1;ext=1\r\n \r\n6\r\nworld!\r\n0\r\nX-Trailer: t\r\n\r\n';

    it('takes the payload out of chunked framing, whatever the pieces it arrives in (extensions and trailer dropped)', () => {
      const bytes = Buffer.from(chunked, 'latin1');
      expect(decodeAll(new Http1BodyDecoder(true, undefined), [bytes])).to.equal('hello world!');
      for (let cut = 1; cut < bytes.length; cut++) {
        const decoder = new Http1BodyDecoder(true, undefined);
        expect(decodeAll(decoder, [bytes.subarray(0, cut), bytes.subarray(cut)]), `cut at ${cut}`).to.equal('hello world!');
        expect(decoder.done, `cut at ${cut}`).to.equal(true);
      }
      const byteByByte = new Http1BodyDecoder(true, undefined);
      expect(decodeAll(byteByByte, [...bytes].map((b) => Buffer.from([b])))).to.equal('hello world!');
      expect(byteByByte.done).to.equal(true);
    });

    it('hands over slices of the pieces it was given, not copies', () => {
      const piece = Buffer.from('b\r\nhello world\r\n', 'latin1');
      const out: Buffer[] = [];
      new Http1BodyDecoder(true, undefined).push(piece, out);
      expect(out).to.have.length(1);
      expect(out[0].buffer).to.equal(piece.buffer);
      expect(out[0].byteOffset).to.equal(piece.byteOffset + 3);
    });

    it('stops at Content-Length, reads until close without one, and refuses malformed chunks', () => {
      const limited = new Http1BodyDecoder(false, 5);
      expect(decodeAll(limited, [Buffer.from('hel'), Buffer.from('lo and more')])).to.equal('hello');
      expect(limited.done).to.equal(true);
      const untilClose = new Http1BodyDecoder(false, undefined);
      expect(decodeAll(untilClose, [Buffer.from('any'), Buffer.from('thing')])).to.equal('anything');
      expect(untilClose.done).to.equal(false);
      expect(new Http1BodyDecoder(false, 0).done).to.equal(true);
      for (const bad of ['zz\r\nhello\r\n', '5\r\nhelloXY', `${'1'.repeat(5000)}`]) {
        expect(() => decodeAll(new Http1BodyDecoder(true, undefined), [Buffer.from(bad)]), bad.slice(0, 20)).to.throw('malformed chunked encoding');
      }
    });
  });

  it('sends GET with Host and Connection: close, and copies a chunked body to an HTTP/1.1 client as its own chunks', async () => {
    const backend = await rawBackend('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nline 1\r\n7\r\n\nline 2\r\n1\r\n\n\r\n0\r\n\r\n');
    try {
      const response = await streamedGet(new URL(`http://127.0.0.1:${backend.port}/containerLogs/ns/pod/c?tailLines=2`), { timeoutMs: 2000 });
      expect(response.status).to.equal(200);
      const sink = recordingSink(true);
      await response.copyTo(sink, 'text/plain');
      expect(backend.requests).to.deep.equal([`GET /containerLogs/ns/pod/c?tailLines=2 HTTP/1.1\r\nHost: 127.0.0.1:${backend.port}\r\nConnection: close\r\n\r\n`]);
      expect(sink).to.deep.include({ status: 200, contentType: 'text/plain', ended: true });
      expect(sink.payload()).to.equal('line 1\nline 2\n');
      // Framed here: each write is one chunk (size line, the payload's slices, CRLF).
      for (const write of sink.writes) expect(write[0].toString('latin1')).to.match(/^[0-9a-f]+\r\n$/);
    } finally {
      backend.server.close();
    }
  });

  it('copies a body with Content-Length, or one that runs until the connection closes, to an HTTP/2 client as it is', async () => {
    for (const answer of ['HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world', 'HTTP/1.0 200 OK\r\n\r\nhello world']) {
      const backend = await rawBackend(answer);
      try {
        const sink = recordingSink(false);
        await (await streamedGet(new URL(`http://127.0.0.1:${backend.port}/log`), { timeoutMs: 2000 })).copyTo(sink, 'text/plain');
        expect(sink.payload(), answer).to.equal('hello world');
        expect(sink.ended).to.equal(true);
      } finally {
        backend.server.close();
      }
    }
  });

  it('reads an error answer\'s body up to a limit', async () => {
    const backend = await rawBackend('HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n9\r\nprevious \r\n9\r\nnot found\r\n0\r\n\r\n');
    try {
      const response = await streamedGet(new URL(`http://127.0.0.1:${backend.port}/log`), { timeoutMs: 2000 });
      expect(response.status).to.equal(400);
      expect(await response.readText(50_000)).to.equal('previous not found');
      const again = await streamedGet(new URL(`http://127.0.0.1:${backend.port}/log`), { timeoutMs: 2000 });
      expect(await again.readText(8)).to.equal('previous');
    } finally {
      backend.server.close();
    }
  });

  it('stops reading the backend while the client is full, and goes on once it drained', async () => {
    let written = 0;
    const { server, port } = await listen((socket) => {
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
        const chunk = Buffer.from(`4000\r\n${'x'.repeat(0x4000)}\r\n`);
        // The backend writes as fast as its socket takes it, 64 MiB at most.
        const pump = () => {
          while (written < 64 * 1024 * 1024) {
            written += 0x4000;
            if (!socket.write(chunk)) return void socket.once('drain', pump);
          }
          socket.end('0\r\n\r\n');
        };
        pump();
      });
      socket.on('error', () => socket.destroy());
    });
    try {
      const sink = recordingSink(true);
      sink.full = true;
      const response = await streamedGet(new URL(`http://127.0.0.1:${port}/log`), { timeoutMs: 2000 });
      const copied = response.copyTo(sink, 'text/plain');
      await until('the copy to wait for the client', () => sink.drains > 0, 5_000);
      // Paused: what the backend wrote stops at what the sockets' buffers hold, far from the 64 MiB.
      await until('the backend to be held back', async () => {
        const before = written;
        await new Promise((r) => setImmediate(r));
        return written === before;
      }, 5_000);
      expect(written).to.be.below(32 * 1024 * 1024);
      expect(sink.writes).to.have.length(1);
      sink.release();
      await copied;
      expect(sink.payload().length).to.equal(64 * 1024 * 1024);
      expect(sink.ended).to.equal(true);
    } finally {
      server.close();
    }
  });

  it('closes the backend connection when the client leaves, and ends the client\'s stream when the backend cuts it', async () => {
    let backendClosed = false;
    const backend = await listen((socket) => {
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
        const timer = setInterval(() => socket.write('5\r\nline\n\r\n'), 5);
        socket.on('close', () => {
          clearInterval(timer);
          backendClosed = true;
        });
      });
      socket.on('error', () => socket.destroy());
    });
    const cutting = await rawBackend('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nline\n\r\n3\r\nhal');
    try {
      const sink = recordingSink(true);
      const copied = (await streamedGet(new URL(`http://127.0.0.1:${backend.port}/log`), { timeoutMs: 2000 })).copyTo(sink, 'text/plain');
      await until('three lines of the stream', () => sink.payload().length >= 15, 5_000);
      sink.leave();
      await copied;
      await until('the backend connection to be closed', () => backendClosed, 5_000);
      const cut = recordingSink(true);
      await (await streamedGet(new URL(`http://127.0.0.1:${cutting.port}/log`), { timeoutMs: 2000 })).copyTo(cut, 'text/plain');
      expect(cut.ended).to.equal(true);
      expect(cut.payload()).to.equal('line\nhal');
    } finally {
      backend.server.close();
      cutting.server.close();
    }
  });

  it('a backend that does not answer: Go\'s dial text, within the transport\'s timeout', async () => {
    const probe = net.createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const refused = await streamedGet(new URL(`http://127.0.0.1:${port}/log`), { timeoutMs: 2000 }).then(() => undefined, (err: Error) => err.message);
    expect(refused).to.equal(`dial tcp 127.0.0.1:${port}: connect: connection refused`);
    const silent = await listen(() => undefined);
    try {
      const timedOut = await streamedGet(new URL(`http://127.0.0.1:${silent.port}/log`), { timeoutMs: 200 }).then(() => undefined, (err: Error) => err.message);
      expect(timedOut).to.equal(`read tcp 127.0.0.1:${silent.port}: i/o timeout`);
    } finally {
      silent.server.close();
    }
  });

  it('an answer with both Transfer-Encoding: chunked and Content-Length is read as chunked, as Go reads it', async () => {
    // Transfer-Encoding chunked wins over Content-Length (RFC 9112 §6.3).
    const backend = await rawBackend('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
    try {
      const sink = recordingSink(false);
      await (await streamedGet(new URL(`http://127.0.0.1:${backend.port}/log`), { timeoutMs: 2000 })).copyTo(sink, 'text/plain');
      expect(sink.payload()).to.equal('hello');
    } finally {
      backend.server.close();
    }
  });
});
