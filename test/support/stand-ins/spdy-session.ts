/**
 * The server side of a SPDY/3.1 session as Kubernetes streams use it (moby/spdystream, which
 * kubectl's exec, attach, cp and port-forward speak to a kubelet): the client opens streams with
 * SYN_STREAM and a header block, the server answers each with SYN_REPLY, data flows in DATA
 * frames, FIN half-closes a stream, PING is echoed, GOAWAY ends the session. Header blocks are
 * zlib-compressed with SPDY/3's dictionary, one compression context per direction. spdystream
 * does not enforce flow-control windows, and neither does this.
 *
 * SpdyClientSession at the end is the other side, reduced to what a port-forward client needs.
 *
 * For the test stand-ins and the benchmark only: Carina itself never parses SPDY, it passes the
 * bytes through.
 */
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import zlib from 'node:zlib';

/** SPDY/3's header-compression dictionary (draft-mbelshe-httpbis-spdy-00, 2.6.10.1): length-prefixed names, then raw text. */
function spdy3Dictionary(): Buffer {
  const words = [
    'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding', 'accept-language', 'accept-ranges', 'age', 'allow',
    'authorization', 'cache-control', 'connection', 'content-base', 'content-encoding', 'content-language', 'content-length', 'content-location', 'content-md5',
    'content-range', 'content-type', 'date', 'etag', 'expect', 'expires', 'from', 'host', 'if-match', 'if-modified-since', 'if-none-match', 'if-range',
    'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'pragma', 'proxy-authenticate', 'proxy-authorization', 'range', 'referer', 'retry-after',
    'server', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning', 'www-authenticate', 'method', 'get', 'status', '200 OK',
    'version', 'HTTP/1.1', 'url', 'public', 'set-cookie', 'keep-alive', 'origin',
  ];
  const parts: Buffer[] = [];
  for (const word of words) {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(word.length);
    parts.push(length, Buffer.from(word, 'latin1'));
  }
  parts.push(Buffer.from(
    '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
    '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized403 Forbidden404 Not Found' +
    '500 Internal Server Error501 Not Implemented503 Service Unavailable' +
    'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
    'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age=gzip,deflate,sdch' +
    'charset=utf-8charset=iso-8859-1,utf-,*,enq=0.',
    'latin1',
  ));
  return Buffer.concat(parts);
}

const DICTIONARY = spdy3Dictionary();
const FLAG_FIN = 0x01;
const TYPE_SYN_STREAM = 1;
const TYPE_SYN_REPLY = 2;
const TYPE_RST_STREAM = 3;
const TYPE_PING = 6;
const TYPE_GOAWAY = 7;

/** A SPDY/3 name/value header block before compression: the count, then each name (lower case) and value with its 32-bit length. */
function headerBlock(headers: Record<string, string>): Buffer {
  const entries = Object.entries(headers);
  const parts: Buffer[] = [Buffer.alloc(4)];
  parts[0].writeUInt32BE(entries.length);
  for (const [name, value] of entries) {
    for (const text of [name.toLowerCase(), value]) {
      const length = Buffer.alloc(4);
      length.writeUInt32BE(Buffer.byteLength(text));
      parts.push(length, Buffer.from(text));
    }
  }
  return Buffer.concat(parts);
}

/** One stream of the session: its headers, what the client sends (data events, end), and how to answer. */
export class SpdyStream extends EventEmitter {
  private remoteEnded = false;
  private localEnded = false;

  constructor(readonly id: number, readonly headers: Record<string, string>, private readonly session: SpdySession) {
    super();
  }

  write(data: Buffer | string): void {
    if (this.localEnded) return;
    this.session.sendData(this.id, Buffer.isBuffer(data) ? data : Buffer.from(data), false);
  }

  /** Half-closes the server's side (a DATA frame with FIN). */
  end(data?: Buffer | string): void {
    if (this.localEnded) return;
    this.localEnded = true;
    this.session.sendData(this.id, data === undefined ? Buffer.alloc(0) : Buffer.isBuffer(data) ? data : Buffer.from(data), true);
  }

  get ended(): boolean {
    return this.remoteEnded;
  }

  /** @internal */
  receive(data: Buffer, fin: boolean): void {
    if (data.length > 0) this.emit('data', data);
    if (fin && !this.remoteEnded) {
      this.remoteEnded = true;
      this.emit('end');
    }
  }

  /** @internal */
  reset(): void {
    this.localEnded = true;
    if (!this.remoteEnded) {
      this.remoteEnded = true;
      this.emit('end');
    }
    this.emit('reset');
  }
}

/** A SPDY/3.1 session on an upgraded connection; 'stream' is emitted (after its SYN_REPLY) for each stream the client opens. */
export class SpdySession extends EventEmitter {
  private buffered: Buffer = Buffer.alloc(0);
  private readonly inflate = zlib.createInflate({ dictionary: DICTIONARY });
  private readonly deflate = zlib.createDeflate({ dictionary: DICTIONARY });
  private readonly streams = new Map<number, SpdyStream>();
  /** Outgoing frames in order: a SYN_REPLY waits for its compressed headers, and frames after it wait for it. */
  private sending: Promise<void> = Promise.resolve();
  /** Incoming frames in order: a SYN_STREAM's headers are inflated before later frames of its stream are handled. */
  private receiving: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly socket: Duplex) {
    super();
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('close', () => this.shutDown());
    socket.on('error', () => socket.destroy());
  }

  close(): void {
    if (this.closed) return;
    const frame = Buffer.alloc(16);
    this.controlHeader(frame, TYPE_GOAWAY, 0, 8);
    frame.writeUInt32BE(this.lastStreamId, 8);
    frame.writeUInt32BE(0, 12);
    this.enqueue(async () => frame);
    void this.sending.then(() => this.socket.end());
    this.shutDown();
  }

  private lastStreamId = 0;

  private shutDown(): void {
    if (this.closed) return;
    this.closed = true;
    for (const stream of this.streams.values()) stream.reset();
    this.streams.clear();
    this.inflate.close();
    this.deflate.close();
    this.emit('close');
  }

  private enqueue(frame: () => Promise<Buffer>): void {
    this.sending = this.sending.then(async () => {
      const bytes = await frame();
      if (!this.socket.destroyed) this.socket.write(bytes);
    }).catch(() => undefined);
  }

  /** @internal */
  sendData(streamId: number, data: Buffer, fin: boolean): void {
    // Frames carry at most 16 MiB - 1 bytes; kubectl's copies send far less at a time.
    const header = Buffer.alloc(8);
    header.writeUInt32BE(streamId & 0x7fffffff, 0);
    header.writeUInt8(fin ? FLAG_FIN : 0, 4);
    header.writeUIntBE(data.length, 5, 3);
    this.enqueue(async () => Buffer.concat([header, data]));
  }

  private controlHeader(frame: Buffer, type: number, flags: number, length: number): void {
    frame.writeUInt16BE(0x8003, 0);
    frame.writeUInt16BE(type, 2);
    frame.writeUInt8(flags, 4);
    frame.writeUIntBE(length, 5, 3);
  }

  private compress(headers: Record<string, string>): Promise<Buffer> {
    return this.zlibRound(this.deflate, headerBlock(headers));
  }

  private zlibRound(stream: zlib.Inflate | zlib.Deflate, input: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const out: Buffer[] = [];
      const onData = (chunk: Buffer) => out.push(chunk);
      stream.on('data', onData);
      stream.once('error', reject);
      stream.write(input);
      stream.flush(zlib.constants.Z_SYNC_FLUSH, () => {
        stream.off('data', onData);
        stream.off('error', reject);
        resolve(Buffer.concat(out));
      });
    });
  }

  private async decompress(block: Buffer): Promise<Record<string, string>> {
    const plain = await this.zlibRound(this.inflate, block);
    const headers: Record<string, string> = {};
    let at = 4;
    const count = plain.readUInt32BE(0);
    for (let i = 0; i < count; i++) {
      const nameLength = plain.readUInt32BE(at);
      const name = plain.subarray(at + 4, at + 4 + nameLength).toString();
      at += 4 + nameLength;
      const valueLength = plain.readUInt32BE(at);
      headers[name.toLowerCase()] = plain.subarray(at + 4, at + 4 + valueLength).toString().split('\0')[0];
      at += 4 + valueLength;
    }
    return headers;
  }

  private onData(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= 8) {
      const length = this.buffered.readUIntBE(5, 3);
      if (this.buffered.length < 8 + length) break;
      const frame = this.buffered.subarray(0, 8 + length);
      this.buffered = this.buffered.subarray(8 + length);
      this.receiving = this.receiving.then(() => this.handleFrame(frame)).catch(() => { this.socket.destroy(); });
    }
  }

  private async handleFrame(frame: Buffer): Promise<void> {
    const flags = frame.readUInt8(4);
    const body = frame.subarray(8);
    if ((frame[0] & 0x80) === 0) {
      this.streams.get(frame.readUInt32BE(0) & 0x7fffffff)?.receive(body, (flags & FLAG_FIN) !== 0);
      return;
    }
    const type = frame.readUInt16BE(2);
    if (type === TYPE_SYN_STREAM) {
      const id = body.readUInt32BE(0) & 0x7fffffff;
      const headers = await this.decompress(body.subarray(10));
      this.lastStreamId = id;
      const stream = new SpdyStream(id, headers, this);
      this.streams.set(id, stream);
      const block = this.compress({});
      this.enqueue(async () => {
        const compressed = await block;
        const reply = Buffer.alloc(12);
        this.controlHeader(reply, TYPE_SYN_REPLY, 0, 4 + compressed.length);
        reply.writeUInt32BE(id, 8);
        return Buffer.concat([reply, compressed]);
      });
      this.emit('stream', stream);
      if ((flags & FLAG_FIN) !== 0) stream.receive(Buffer.alloc(0), true);
    } else if (type === TYPE_RST_STREAM) {
      const id = body.readUInt32BE(0) & 0x7fffffff;
      this.streams.get(id)?.reset();
      this.streams.delete(id);
    } else if (type === TYPE_PING) {
      this.enqueue(async () => frame);
    } else if (type === TYPE_GOAWAY) {
      this.socket.end();
    }
    // SETTINGS, WINDOW_UPDATE and HEADERS change nothing here.
  }
}

/**
 * The client side, as kubectl's port-forward uses it (bench/api's port-forward client): it opens
 * streams (SYN_STREAM with a header block; odd ids from 1), sends DATA, and hands the server's
 * DATA frames out as 'data' (stream id, bytes) and their FIN as 'end' (stream id). The server's
 * header blocks (SYN_REPLY) are not read: the client needs nothing from them. PINGs are echoed.
 */
export class SpdyClientSession extends EventEmitter {
  private buffered: Buffer = Buffer.alloc(0);
  private readonly deflate = zlib.createDeflate({ dictionary: DICTIONARY });
  private nextStreamId = 1;
  /** Outgoing frames in order: a SYN_STREAM waits for its compressed headers. */
  private sending: Promise<void> = Promise.resolve();

  constructor(private readonly socket: Duplex) {
    super();
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('close', () => {
      this.deflate.close();
      this.emit('close');
    });
    socket.on('error', () => socket.destroy());
  }

  /** Opens a stream with these headers; `fin` half-closes it at once (kubectl's error stream). Returns its id. */
  openStream(headers: Record<string, string>, fin = false): number {
    const id = this.nextStreamId;
    this.nextStreamId += 2;
    const block = headerBlock(headers);
    this.sending = this.sending.then(() => new Promise<void>((resolve) => {
      const out: Buffer[] = [];
      const onData = (chunk: Buffer) => out.push(chunk);
      this.deflate.on('data', onData);
      this.deflate.write(block);
      this.deflate.flush(zlib.constants.Z_SYNC_FLUSH, () => {
        this.deflate.off('data', onData);
        const compressed = Buffer.concat(out);
        const frame = Buffer.alloc(18);
        frame.writeUInt16BE(0x8003, 0);
        frame.writeUInt16BE(TYPE_SYN_STREAM, 2);
        frame.writeUInt8(fin ? FLAG_FIN : 0, 4);
        frame.writeUIntBE(10 + compressed.length, 5, 3);
        frame.writeUInt32BE(id, 8);
        frame.writeUInt32BE(0, 12);
        frame.writeUInt16BE(0, 16);
        if (!this.socket.destroyed) this.socket.write(Buffer.concat([frame, compressed]));
        resolve();
      });
    }));
    return id;
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    let at = 0;
    while (this.buffered.length - at >= 8) {
      const length = this.buffered.readUIntBE(at + 5, 3);
      if (this.buffered.length - at < 8 + length) break;
      const frame = this.buffered.subarray(at, at + 8 + length);
      at += 8 + length;
      if ((frame[0] & 0x80) === 0) {
        const id = frame.readUInt32BE(0) & 0x7fffffff;
        if (length > 0) this.emit('data', id, frame.subarray(8));
        if ((frame.readUInt8(4) & FLAG_FIN) !== 0) this.emit('end', id);
      } else if (frame.readUInt16BE(2) === TYPE_PING) {
        const reply = Buffer.from(frame);
        this.sending = this.sending.then(() => {
          if (!this.socket.destroyed) this.socket.write(reply);
        });
      }
    }
    this.buffered = this.buffered.subarray(at);
  }
}
