/**
 * The server side of a WebSocket connection (RFC 6455) for the kubelet stand-in: the opening
 * handshake (Sec-WebSocket-Accept, the chosen subprotocol), and messages in and out, masked
 * from the client, unmasked from the server; ping is answered with pong, close with close.
 * Kubernetes' channel protocols (v5, v4, channel.k8s.io, base64.channel.k8s.io) are built on it
 * by the stand-in.
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** The 101 answer to a WebSocket upgrade request choosing `protocol` ('' for none). */
export function websocketAccept(key: string, protocol: string): string {
  const accept = createHash('sha1').update(key + GUID).digest('base64');
  return `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n${protocol === '' ? '' : `Sec-WebSocket-Protocol: ${protocol}\r\n`}\r\n`;
}

/** 'message' (payload, isBinary) for each message, 'close' once. */
export class WebSocketSession extends EventEmitter {
  private buffered: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private fragmentBinary = true;
  private closed = false;

  constructor(private readonly socket: Duplex) {
    super();
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('close', () => this.finish());
    socket.on('error', () => socket.destroy());
  }

  send(payload: Buffer, binary = true): void {
    this.frame(binary ? 0x2 : 0x1, payload);
  }

  close(code = 1000): void {
    if (this.closed) return;
    const body = Buffer.alloc(2);
    body.writeUInt16BE(code);
    this.frame(0x8, body);
    this.socket.end();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('close');
  }

  private frame(opcode: number, payload: Buffer): void {
    if (this.socket.destroyed || this.socket.writableEnded) return;
    let header: Buffer;
    if (payload.length < 126) {
      header = Buffer.from([0x80 | opcode, payload.length]);
    } else if (payload.length < 65536) {
      header = Buffer.alloc(4);
      header[0] = 0x80 | opcode;
      header[1] = 126;
      header.writeUInt16BE(payload.length, 2);
    } else {
      header = Buffer.alloc(10);
      header[0] = 0x80 | opcode;
      header[1] = 127;
      header.writeBigUInt64BE(BigInt(payload.length), 2);
    }
    this.socket.write(Buffer.concat([header, payload]));
  }

  private onData(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      if (this.buffered.length < 2) return;
      const fin = (this.buffered[0] & 0x80) !== 0;
      const opcode = this.buffered[0] & 0x0f;
      const masked = (this.buffered[1] & 0x80) !== 0;
      let length = this.buffered[1] & 0x7f;
      let at = 2;
      if (length === 126) {
        if (this.buffered.length < 4) return;
        length = this.buffered.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        if (this.buffered.length < 10) return;
        length = Number(this.buffered.readBigUInt64BE(2));
        at = 10;
      }
      const maskAt = at;
      if (masked) at += 4;
      if (this.buffered.length < at + length) return;
      const payload = Buffer.from(this.buffered.subarray(at, at + length));
      if (masked) for (let i = 0; i < payload.length; i++) payload[i] ^= this.buffered[maskAt + (i % 4)];
      this.buffered = this.buffered.subarray(at + length);
      this.onFrame(fin, opcode, payload);
    }
  }

  private onFrame(fin: boolean, opcode: number, payload: Buffer): void {
    if (opcode === 0x8) {
      this.close();
      return;
    }
    if (opcode === 0x9) {
      this.frame(0xa, payload);
      return;
    }
    if (opcode === 0xa) return;
    if (opcode !== 0) this.fragmentBinary = opcode === 0x2;
    this.fragments.push(payload);
    if (!fin) return;
    const message = Buffer.concat(this.fragments);
    this.fragments = [];
    this.emit('message', message, this.fragmentBinary);
  }
}
