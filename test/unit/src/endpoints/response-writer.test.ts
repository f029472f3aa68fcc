import { expect } from 'chai';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { BodyCodec } from '../../../../src/endpoints';
import { ResponseWriter, chunkFrame, type HttpResponse } from '../../../../src/endpoints/response-writer';
import { errors } from '../../../../src/util';
import { until } from '../../../support/until';

class CapturedResponse implements HttpResponse {
  headersSent = false;
  writableEnded = false;
  status = 0;
  headers: Record<string, string | string[]> = {};
  body = '';
  writeHead(status: number, headers: Record<string, string | string[]>): void {
    this.status = status;
    this.headers = headers;
    this.headersSent = true;
  }
  write(chunk: Buffer): boolean {
    this.body += chunk.toString();
    return true;
  }
  end(chunk?: Buffer | string): void {
    if (chunk !== undefined) this.body += chunk.toString();
    this.writableEnded = true;
  }
  on(): void {}
  once(): void {}
}

function writer() {
  const res = new CapturedResponse();
  return { res, writer: new ResponseWriter(res, 'application/json', new URLSearchParams(), new BodyCodec()) };
}

function warnings(res: CapturedResponse): string[] {
  const value = res.headers.Warning;
  return value === undefined ? [] : (Array.isArray(value) ? value : [value]);
}

describe('endpoints: the response writer\'s warnings (v1.25 truncation) and audit capture', () => {
  it('sends each warning once, quoted as Go quotes it', () => {
    const { res, writer: w } = writer();
    w.warn('say "hi" \\ there');
    w.warn('say "hi" \\ there');
    w.warn('');
    w.writeObject(200, { kind: 'ConfigMap', apiVersion: 'v1' });
    expect(warnings(res)).to.deep.equal(['299 - "say \\"hi\\" \\\\ there"']);
  });

  it('sends UTF-8 text as bytes and control characters as spaces', () => {
    const { res, writer: w } = writer();
    w.warn('a → b\nc');
    w.writeObject(200, { kind: 'ConfigMap', apiVersion: 'v1' });
    expect(Buffer.from(warnings(res)[0], 'latin1').toString('utf8')).to.equal('299 - "a → b c"');
  });

  it('past 4096 characters, cuts every warning to 256, and drops those past 4096 cut ones', () => {
    const { res, writer: w } = writer();
    const long = (c: string) => c.repeat(1000);
    for (const c of ['a', 'b', 'c', 'd']) w.warn(long(c));
    expect(warnings((w.writeObject(200, { kind: 'X', apiVersion: 'v1' }), res))).to.have.length(4);
    const second = writer();
    for (const c of ['a', 'b', 'c', 'd', 'e']) second.writer.warn(long(c));
    second.writer.writeObject(200, { kind: 'X', apiVersion: 'v1' });
    const cut = warnings(second.res);
    expect(cut).to.have.length(5);
    expect(cut.every((h) => h.length === '299 - ""'.length + 256)).to.equal(true);
    const third = writer();
    for (let i = 0; i < 40; i++) third.writer.warn(`${i}`.padEnd(300, 'x'));
    third.writer.writeObject(200, { kind: 'X', apiVersion: 'v1' });
    expect(warnings(third.res)).to.have.length(16);
  });

  it('remembers what it wrote for the audit log, and carries the Audit-Id header on every response', () => {
    const { res, writer: w } = writer();
    w.setHeader('Audit-Id', 'abc');
    w.writeStatus(errors.notFound({ group: '', resource: 'pods' }, 'p'));
    expect(res.headers['Audit-Id']).to.equal('abc');
    expect(w.written?.kind).to.equal('status');
    expect((w.written?.value as { reason: string }).reason).to.equal('NotFound');
    const other = writer();
    other.writer.writeObject(201, { kind: 'Pod', apiVersion: 'v1' });
    expect(other.writer.written).to.deep.equal({ kind: 'object', value: { kind: 'Pod', apiVersion: 'v1' } });
  });
});

describe('endpoints: a streamed response waits for the client when the socket is full', () => {
  /** Like node:http2's compatibility response: write answers false when full, 'drain' follows, and there is no writableNeedDrain. */
  class Http2LikeResponse extends CapturedResponse {
    private readonly listeners = new Map<string, Array<() => void>>();
    full = false;
    override write(chunk: Buffer): boolean {
      super.write(chunk);
      return !this.full;
    }
    override on(event?: string, listener?: () => void): void {
      if (event !== undefined && listener !== undefined) this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    }
    override once(event?: string, listener?: () => void): void {
      if (event === undefined || listener === undefined) return;
      const wrapped = () => {
        this.listeners.set(event, (this.listeners.get(event) ?? []).filter((l) => l !== wrapped));
        listener();
      };
      this.on(event, wrapped);
    }
    emit(event: string): void {
      for (const listener of this.listeners.get(event) ?? []) listener();
    }
  }

  it('drained() waits for the drain after a refused write, even without writableNeedDrain', async () => {
    const res = new Http2LikeResponse();
    const sink = new ResponseWriter(res, 'application/json', new URLSearchParams(), new BodyCodec()).stream();
    sink.start('application/json');
    res.full = true;
    expect(sink.write(Buffer.from('x'))).to.equal(false);
    let drained = false;
    const waiting = sink.drained().then(() => (drained = true));
    await new Promise((r) => setImmediate(r));
    expect(drained).to.equal(false);
    res.full = false;
    res.emit('drain');
    await waiting;
    expect(drained).to.equal(true);
  });

  it('drained() does not wait for a drain that came before it was asked', async () => {
    const res = new Http2LikeResponse();
    const sink = new ResponseWriter(res, 'application/json', new URLSearchParams(), new BodyCodec()).stream();
    sink.start('application/json');
    res.full = true;
    sink.write(Buffer.from('x'));
    res.emit('drain');
    await sink.drained();
  });
});

describe('endpoints: a JSON body written as slices', () => {
  it('is sent as the slices joined, with their length, each slice written as it is, and the audit log can still read the object it carries', () => {
    const captured = new CapturedResponse();
    const writes: Buffer[] = [];
    const write = captured.write.bind(captured);
    captured.write = (chunk: Buffer) => {
      writes.push(chunk);
      return write(chunk);
    };
    const writer = new ResponseWriter(captured, 'application/json', new URLSearchParams(), new BodyCodec());
    const stored = Buffer.from('{"metadata":{"name":"a"}}');
    const slices = [Buffer.from('{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":['), stored.subarray(0, 12), stored.subarray(12), Buffer.from(']}\n')];
    writer.writeJsonSlices(200, slices);
    const body = Buffer.concat(slices).toString();
    expect(captured.status).to.equal(200);
    expect(captured.headers['Content-Type']).to.equal('application/json');
    expect(captured.headers['Content-Length']).to.equal(String(Buffer.byteLength(body)));
    expect(captured.body).to.equal(body);
    // The stored bytes go out as the views they are, not copied into a page.
    expect(writes[1].buffer).to.equal(stored.buffer);
    expect(writer.written?.kind).to.equal('object');
    expect(writer.written?.value).to.deep.equal({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '5' }, items: [{ metadata: { name: 'a' } }] });
  });
});

describe('endpoints: a stream\'s several buffers written as one write', () => {
  /** Records cork, each write (the buffer itself) and uncork, in order. */
  function recording(): { res: CapturedResponse; calls: Array<string | Buffer> } {
    const res = new CapturedResponse();
    const calls: Array<string | Buffer> = [];
    const write = res.write.bind(res);
    res.write = (chunk: Buffer) => {
      calls.push(chunk);
      return write(chunk);
    };
    return { res, calls };
  }

  it('holds the writes in node:http2\'s stream between cork and uncork, each buffer as it is', () => {
    const { res, calls } = recording();
    Object.assign(res, { stream: { cork: () => calls.push('cork'), uncork: () => calls.push('uncork') } });
    const sink = new ResponseWriter(res, 'application/json', new URLSearchParams(), new BodyCodec()).stream();
    sink.start('application/json');
    const shared = [Buffer.from('{"type":"ADDED"}\n'), Buffer.from('{"type":"MODIFIED"}\n')];
    expect(sink.writeAll(shared)).to.equal(true);
    expect(calls).to.deep.equal(['cork', shared[0], shared[1], 'uncork']);
    expect(calls[1]).to.equal(shared[0]);
    expect(res.body).to.equal('{"type":"ADDED"}\n{"type":"MODIFIED"}\n');
  });

  it('corks node:http\'s response itself, which has no stream', () => {
    const { res, calls } = recording();
    Object.assign(res, { cork: () => calls.push('cork'), uncork: () => calls.push('uncork') });
    const sink = new ResponseWriter(res, 'application/json', new URLSearchParams(), new BodyCodec()).stream();
    sink.start('application/json');
    const shared = [Buffer.from('a\n'), Buffer.from('b\n')];
    sink.writeAll(shared);
    expect(calls).to.deep.equal(['cork', shared[0], shared[1], 'uncork']);
  });
});

describe('endpoints: writeAll on real node:http and node:http2 responses (loopback)', () => {
  const parts = [Buffer.from('{"type":"ADDED"}\n'), Buffer.from('{"type":"MODIFIED"}\n'), Buffer.from('{"type":"DELETED"}\n')];
  const expected = Buffer.concat(parts).toString();

  /** Answers every request with `parts` through writeAll. */
  function answerWithParts(req: unknown, res: unknown): void {
    const sink = new ResponseWriter(res as HttpResponse, 'application/json', new URLSearchParams(), new BodyCodec()).stream();
    sink.start('application/json');
    sink.writeAll(parts);
    sink.end();
  }

  /** The body of a response as text, once it has ended. */
  function bodyOf(stream: NodeJS.ReadableStream): Promise<string> {
    return new Promise((resolve, reject) => {
      let text = '';
      stream.on('data', (d: Buffer) => (text += d.toString()));
      stream.on('end', () => resolve(text));
      stream.on('error', reject);
    });
  }

  async function listening(server: http.Server | http2.Http2Server): Promise<number> {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return (server.address() as AddressInfo).port;
  }

  it('node:http: the parts arrive in order, as one body', async () => {
    const server = http.createServer(answerWithParts);
    const port = await listening(server);
    try {
      const response = await new Promise<http.IncomingMessage>((resolve, reject) => http.get({ host: '127.0.0.1', port, path: '/' }, resolve).on('error', reject));
      expect(await bodyOf(response)).to.equal(expected);
    } finally {
      server.close();
    }
  });

  it('node:http2: the parts arrive in order, as one body', async () => {
    const server = http2.createServer(answerWithParts);
    const client = http2.connect(`http://127.0.0.1:${await listening(server)}`);
    try {
      const request = client.request({ ':path': '/' });
      request.end();
      expect(await bodyOf(request)).to.equal(expected);
    } finally {
      client.close();
      server.close();
    }
  });
});

describe('endpoints: a watch\'s HTTP/1.1 chunks framed once by the caller (frameChunks, writeFramed)', () => {
  const events = [Buffer.from('{"type":"ADDED"}\n'), Buffer.from('{"type":"MODIFIED"}\n')];

  /** Frames when the connection allows it; reports what frameChunks answered in a header-less way (the body's first line). */
  function answerFramed(_req: unknown, res: unknown): void {
    const sink = new ResponseWriter(res as HttpResponse, 'application/json', new URLSearchParams(), new BodyCodec()).stream();
    sink.start('application/json');
    const framed = sink.frameChunks();
    const own = Buffer.from(`framed=${framed}\n`);
    sink.write(own);
    sink.writeFramed(framed ? events.map(chunkFrame) : events, () => {
      sink.writeFramed(framed ? [chunkFrame(events[0])] : [events[0]], () => sink.end());
    });
  }

  function bodyOf(stream: NodeJS.ReadableStream): Promise<string> {
    return new Promise((resolve, reject) => {
      let text = '';
      stream.on('data', (d: Buffer) => (text += d.toString()));
      stream.on('end', () => resolve(text));
      stream.on('error', reject);
    });
  }

  it('node:http (HTTP/1.1): the caller\'s chunks, the stream\'s own writes and the last chunk make a valid chunked body, and the connection is kept', async () => {
    const server = http.createServer(answerFramed);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 2; i++) {
        const response = await new Promise<http.IncomingMessage>((resolve, reject) => http.get({ host: '127.0.0.1', port, path: '/', agent }, resolve).on('error', reject));
        expect(response.headers['transfer-encoding']).to.equal('chunked');
        expect(await bodyOf(response)).to.equal('framed=true\n{"type":"ADDED"}\n{"type":"MODIFIED"}\n{"type":"ADDED"}\n');
      }
    } finally {
      agent.destroy();
      server.close();
    }
  });

  it('node:http (HTTP/1.1): a watch\'s framed chunks go to the connection itself, not through the response, and the body and the per-event sizes stay as they were', async () => {
    const throughResponse: number[] = [];
    const sizes: number[] = [];
    const payloads = [Buffer.from('{"type":"ADDED"}\n'), Buffer.alloc(300, 'x'), Buffer.alloc(5000, 'y')];
    const server = http.createServer((_req, res) => {
      const writer = new ResponseWriter(res as unknown as HttpResponse, 'application/json', new URLSearchParams(), new BodyCodec());
      writer.onStreamChunk = (bytes) => sizes.push(bytes);
      const sink = writer.stream();
      sink.start('application/json');
      expect(sink.frameChunks()).to.equal(true);
      const write = res.write.bind(res) as (chunk: Buffer, written?: () => void) => boolean;
      (res as unknown as { write: typeof write }).write = (chunk, written) => {
        throughResponse.push(chunk.length);
        return write(chunk, written);
      };
      sink.writeFramed([chunkFrame(payloads[0])], () => sink.writeFramed(payloads.slice(1).map(chunkFrame), () => sink.end()));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const response = await new Promise<http.IncomingMessage>((resolve, reject) => http.get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/' }, resolve).on('error', reject));
      expect(response.headers['transfer-encoding']).to.equal('chunked');
      expect(await bodyOf(response)).to.equal(Buffer.concat(payloads).toString());
      // Only the stream's last chunk went through the response.
      expect(throughResponse).to.deep.equal([5]);
      expect(sizes).to.deep.equal(payloads.map((p) => p.length));
    } finally {
      server.close();
    }
  });

  it('node:http2: the session frames (frameChunks is false) and the events arrive as they are', async () => {
    const server = http2.createServer(answerFramed);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      const request = client.request({ ':path': '/' });
      request.end();
      expect(await bodyOf(request)).to.equal('framed=false\n{"type":"ADDED"}\n{"type":"MODIFIED"}\n{"type":"ADDED"}\n');
    } finally {
      client.close();
      server.close();
    }
  });
});

describe('endpoints: indented JSON as v1.25 decides it (isPrettyPrint)', () => {
  function written(query: string, userAgent: string | undefined, accept = 'application/json'): string {
    const res = new CapturedResponse();
    new ResponseWriter(res, accept, new URLSearchParams(query), new BodyCodec(), undefined, userAgent).writeObject(200, { kind: 'ConfigMap', apiVersion: 'v1', metadata: {} });
    return res.body;
  }
  const PRETTY = '{\n  "kind": "ConfigMap",\n  "apiVersion": "v1",\n  "metadata": {}\n}';
  const COMPACT = '{"kind":"ConfigMap","apiVersion":"v1","metadata":{}}\n';

  it('indents for curl, Wget and browsers, without a final newline (json.MarshalIndent), and not for other clients', () => {
    for (const agent of ['curl/8.5.0', 'Wget/1.21.4', 'Mozilla/5.0 (X11; Linux x86_64)']) expect(written('', agent), agent).to.equal(PRETTY);
    for (const agent of [undefined, '', 'kubectl/v1.32.0 (linux/amd64) kubernetes/unknown', 'Go-http-client/2.0', 'Mozilla/4.0']) expect(written('', agent), String(agent)).to.equal(COMPACT);
  });

  it('lets a non-empty pretty parameter decide as strconv.ParseBool reads it, for any client', () => {
    for (const value of ['1', 't', 'T', 'true', 'TRUE', 'True']) expect(written(`pretty=${value}`, 'kubectl'), value).to.equal(PRETTY);
    for (const value of ['0', 'f', 'false', 'FALSE', 'yes', 'on']) expect(written(`pretty=${value}`, 'curl/8.5.0'), value).to.equal(COMPACT);
    expect(written('pretty=', 'curl/8.5.0')).to.equal(PRETTY);
    expect(written('pretty=', 'kubectl')).to.equal(COMPACT);
  });

  it('takes the media type\'s pretty=1 (that value only), and indents Status bodies the same way', () => {
    expect(written('', 'kubectl', 'application/json;pretty=1')).to.equal(PRETTY);
    expect(written('', 'kubectl', 'application/json;pretty=true')).to.equal(COMPACT);
    const res = new CapturedResponse();
    new ResponseWriter(res, 'application/json', new URLSearchParams(), new BodyCodec(), undefined, 'curl/8.5.0').writeStatus(errors.notFound({ group: '', resource: 'pods' }, 'p'));
    expect(res.body).to.equal(JSON.stringify(JSON.parse(res.body), null, 2));
    expect(res.body.startsWith('{\n  "kind": "Status",')).to.equal(true);
  });
});

describe('endpoints: a request past its deadline (the timeout parameter)', () => {
  it('answers 504 as v1.25\'s timeout filter does when nothing was written, and drops what the handler writes later', async () => {
    const res = new CapturedResponse();
    const writer = new ResponseWriter(res, 'application/json', new URLSearchParams(), new BodyCodec());
    writer.setHeader('Audit-Id', 'abc');
    writer.deadlineIn(0);
    await until('the deadline to pass', async () => res.writableEnded);
    expect(res.status).to.equal(504);
    expect(res.headers['Content-Type']).to.equal('text/plain; charset=utf-8');
    expect(res.headers['Audit-Id']).to.equal('abc');
    expect(res.body).to.equal('{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}\n');
    writer.writeObject(200, { kind: 'ConfigMap', apiVersion: 'v1' });
    writer.writeStatus(errors.notFound({ group: '', resource: 'pods' }, 'p'));
    expect(res.status).to.equal(504);
    expect(writer.status).to.equal(504);
  });

  it('cuts a response already started, and leaves one that finished in time alone', async () => {
    const started = new CapturedResponse() as CapturedResponse & { destroyed?: boolean; destroy(): void };
    started.destroy = () => {
      started.destroyed = true;
    };
    const writer = new ResponseWriter(started, 'application/json', new URLSearchParams(), new BodyCodec());
    const sink = writer.stream();
    sink.start('application/json');
    writer.deadlineIn(0);
    await until('the stream to be cut', async () => started.destroyed === true);
    expect(sink.write(Buffer.from('more'))).to.equal(false);
    const done = new CapturedResponse();
    const inTime = new ResponseWriter(done, 'application/json', new URLSearchParams(), new BodyCodec());
    inTime.writeObject(200, { kind: 'ConfigMap', apiVersion: 'v1' });
    inTime.deadlineIn(0);
    // Fixed sleep: nothing happens when the deadline of a finished response passes, so there is
    // no event to await; a timer of the same delay, set after the deadline's, fires after it.
    await new Promise((r) => setTimeout(r, 0));
    expect(done.status).to.equal(200);
    expect(inTime.status).to.equal(200);
  });
});
