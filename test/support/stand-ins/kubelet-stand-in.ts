/**
 * A kubelet stand-in for the connect subresources' tests, run as its own process (usually inside
 * a network namespace the test made, since Carina refuses loopback destinations as v1.25 does):
 *
 *     node dist/test/support/stand-ins/kubelet-stand-in.js CONFIG.json
 *
 * It serves, on each configured kubelet port over TLS with its own serving certificate and
 * requiring a client certificate from the cluster CA (CN kube-apiserver-kubelet-client, as
 * Carina's kubelet client presents):
 * - GET /containerLogs/NS/POD/CONTAINER with the kubelet's log options (follow, previous,
 *   timestamps, sinceSeconds, sinceTime, tailLines, limitBytes); container `firehose` streams
 *   `firehoseBytes` as fast as it can;
 * - /exec/NS/POD/CONTAINER and /attach/...: the command runs as a real process (absolute paths
 *   moved under a directory of its own per pod, so `kubectl cp`'s tar works), over SPDY/3.1
 *   (v4.channel.k8s.io) or WebSocket (v5 and v4.channel.k8s.io, channel.k8s.io,
 *   base64.channel.k8s.io); a port marked `legacy` refuses v5 WebSockets with a 400, as a v1.25
 *   kubelet does, so that kubectl falls back to SPDY; attach echoes stdin;
 * - /portForward/NS/POD over SPDY/3.1 (portforward.k8s.io) to ports of this namespace;
 *   WebSocket port forwarding is refused with a 400 (kubectl falls back to SPDY);
 * - any other path: a JSON echo of the request (nodes/proxy).
 * Beside it: the pod's HTTP server (`podHttpPort`, a JSON echo; /bytes?n=N streams N bytes;
 * /page.html an HTML page with links), a TCP echo server (`echoPort`) and a TCP source of
 * `sourceBytes` bytes (`sourcePort`).
 * Every kubelet request is logged on stdout as `request <CN> <METHOD> <PATH>`; `ready` once all listen.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { SpdySession, type SpdyStream } from './spdy-session';
import { WebSocketSession, websocketAccept } from './websocket-session';

export interface KubeletStandInConfig {
  address: string;
  /** Kubelet ports; `legacy` ones speak no v5 WebSocket (as v1.25's kubelet); a port may serve another certificate than the others. */
  kubeletPorts: Array<{ port: number; legacy?: boolean; servingCertPem?: string; servingKeyPem?: string }>;
  servingCertPem: string;
  servingKeyPem: string;
  /** The cluster CA: the kubelet's client certificates must come from it. */
  clientCaPem: string;
  podHttpPort: number;
  /** The pod's HTTPS server (the serving certificate above, no client certificate asked): the `https:` proxies. */
  podHttpsPort?: number;
  echoPort: number;
  sourcePort: number;
  sourceBytes: number;
  firehoseBytes: number;
  /** A port that takes connections and never answers (a kubelet that hangs). */
  silentPort: number;
  /** Where each pod's files live (exec's absolute paths are moved under it). */
  rootDir: string;
}

const KUBELET_CLIENT_CN = 'kube-apiserver-kubelet-client';
const LOG_LINES = 10;
const startedAt = Date.now();

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

// ---------------------------------------------------------------------------------------------
// Logs

/** The container's log: LOG_LINES lines a minute apart, the last one a minute before the start. */
function logLines(container: string, previous: boolean): Array<{ time: Date; text: string }> {
  return Array.from({ length: LOG_LINES }, (_, i) => ({ time: new Date(startedAt - (LOG_LINES - i) * 60_000), text: `${container}${previous ? ' previous' : ''} line ${i + 1}` }));
}

function serveLogs(config: KubeletStandInConfig, req: http.IncomingMessage, res: http.ServerResponse, pod: string, container: string): void {
  const q = new URL(req.url ?? '/', 'https://x').searchParams;
  if (container === 'firehose') {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let left = config.firehoseBytes;
    const pump = () => {
      while (left > 0) {
        const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= piece.length;
        if (!res.write(piece)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    pump();
    return;
  }
  const previous = q.get('previous') === 'true';
  if (previous && container !== 'restarted') {
    res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(`previous terminated container "${container}" in pod "${pod}" not found`);
    return;
  }
  let lines = logLines(container, previous);
  const sinceSeconds = q.get('sinceSeconds');
  const sinceTime = q.get('sinceTime');
  if (sinceSeconds !== null) lines = lines.filter((l) => l.time.getTime() >= Date.now() - Number(sinceSeconds) * 1000);
  if (sinceTime !== null) lines = lines.filter((l) => l.time.getTime() >= Date.parse(sinceTime));
  const tail = q.get('tailLines');
  if (tail !== null) lines = lines.slice(Math.max(0, lines.length - Number(tail)));
  const timestamps = q.get('timestamps') === 'true';
  const format = (l: { time: Date; text: string }) => `${timestamps ? `${l.time.toISOString()} ` : ''}${l.text}\n`;
  let limit = q.get('limitBytes') === null ? Infinity : Number(q.get('limitBytes'));
  res.writeHead(200, { 'Content-Type': 'text/plain' });
  const write = (text: string): boolean => {
    if (limit <= 0) return false;
    const bytes = Buffer.from(text);
    const piece = bytes.length > limit ? bytes.subarray(0, limit) : bytes;
    limit -= piece.length;
    res.write(piece);
    return limit > 0;
  };
  for (const line of lines) if (!write(format(line))) return void res.end();
  if (q.get('follow') !== 'true') return void res.end();
  let n = 0;
  const timer = setInterval(() => {
    n += 1;
    if (!write(format({ time: new Date(), text: `${container} follow ${n}` }))) {
      clearInterval(timer);
      res.end();
    }
  }, 50);
  res.on('close', () => clearInterval(timer));
}

// ---------------------------------------------------------------------------------------------
// Streams: exec and attach over SPDY or WebSocket, one shape for both

/** The channels of one exec or attach session, whichever protocol carries them. */
interface StreamChannels {
  stdin?: { on(event: 'data', cb: (d: Buffer) => void): void; on(event: 'end', cb: () => void): void };
  stdout?: (data: Buffer) => void;
  stderr?: (data: Buffer) => void;
  /** Sends the v4 status (exit code) and ends the session. */
  finish(exitCode: number, message?: string): void;
}

function statusFor(exitCode: number, message?: string): string {
  if (exitCode === 0) return JSON.stringify({ metadata: {}, status: 'Success' });
  return JSON.stringify({
    metadata: {},
    status: 'Failure',
    message: message ?? `command terminated with non-zero exit code: exit status ${exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  });
}

function runExec(config: KubeletStandInConfig, pod: string, command: string[], channels: StreamChannels, tty: boolean): void {
  const root = join(config.rootDir, pod);
  mkdirSync(join(root, 'tmp'), { recursive: true });
  // Absolute paths live under the pod's root (made relative to it, the working directory, so that
  // tar names entries as it would in the container); a bare `tty` answers as the tty program would.
  const args = command.slice(1).map((a) => (a.startsWith('/') ? (a === '/' ? '.' : a.slice(1)) : a));
  if (command[0] === 'tty') {
    channels.stdout?.(Buffer.from(tty ? '/dev/pts/0\n' : 'not a tty\n'));
    channels.finish(tty ? 0 : 1);
    return;
  }
  const child = spawn(command[0], args, { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  child.on('error', () => {
    channels.stderr?.(Buffer.from(`exec: "${command[0]}": executable file not found in $PATH\n`));
    channels.finish(126, `failed to exec in container: executable file not found: ${command[0]}`);
  });
  channels.stdin?.on('data', (d) => child.stdin.write(d));
  channels.stdin?.on('end', () => child.stdin.end());
  child.stdin.on('error', () => undefined);
  if (channels.stdin === undefined) child.stdin.end();
  child.stdout.on('data', (d: Buffer) => channels.stdout?.(d));
  child.stderr.on('data', (d: Buffer) => (tty ? channels.stdout : channels.stderr)?.(d));
  child.on('close', (code) => channels.finish(code ?? 1));
}

function runAttach(channels: StreamChannels): void {
  // The container's main process echoes what it is given, until stdin closes.
  channels.stdout?.(Buffer.from('attached\n'));
  if (channels.stdin === undefined) {
    channels.finish(0);
    return;
  }
  channels.stdin.on('data', (d) => channels.stdout?.(d));
  channels.stdin.on('end', () => channels.finish(0));
}

function spdyStreams(config: KubeletStandInConfig, session: SpdySession, kind: 'exec' | 'attach', pod: string, q: URLSearchParams): void {
  const expected = new Set(['error']);
  const tty = q.get('tty') === '1';
  if (q.get('input') === '1') expected.add('stdin');
  if (q.get('output') === '1') expected.add('stdout');
  if (q.get('error') === '1' && !tty) expected.add('stderr');
  if (tty) expected.add('resize');
  const streams = new Map<string, SpdyStream>();
  const timer = setTimeout(() => session.close(), 10_000);
  session.on('stream', (stream: SpdyStream) => {
    streams.set(stream.headers.streamtype, stream);
    if (![...expected].every((t) => streams.has(t))) return;
    clearTimeout(timer);
    const error = streams.get('error') as SpdyStream;
    let finished = false;
    const channels: StreamChannels = {
      stdin: streams.get('stdin'),
      stdout: streams.has('stdout') ? (d) => streams.get('stdout')?.write(d) : undefined,
      stderr: streams.has('stderr') ? (d) => streams.get('stderr')?.write(d) : undefined,
      finish: (code, message) => {
        if (finished) return;
        finished = true;
        if (code !== 0) error.write(statusFor(code, message));
        for (const s of streams.values()) s.end();
        setTimeout(() => session.close(), 50);
      },
    };
    if (kind === 'exec') runExec(config, pod, q.getAll('command'), channels, tty);
    else runAttach(channels);
  });
}

const WS_CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 };

function websocketStreams(config: KubeletStandInConfig, ws: WebSocketSession, protocol: string, kind: 'exec' | 'attach', pod: string, q: URLSearchParams): void {
  const base64 = protocol === 'base64.channel.k8s.io';
  const send = (channel: number, data: Buffer) => {
    if (base64) ws.send(Buffer.from(`${channel}${data.toString('base64')}`), false);
    else ws.send(Buffer.concat([Buffer.from([channel]), data]));
  };
  const stdinListeners: { data: Array<(d: Buffer) => void>; end: Array<() => void> } = { data: [], end: [] };
  let stdinEnded = false;
  const endStdin = () => {
    if (stdinEnded) return;
    stdinEnded = true;
    for (const cb of stdinListeners.end) cb();
  };
  ws.on('message', (message: Buffer) => {
    let channel: number;
    let data: Buffer;
    if (base64) {
      channel = Number(String.fromCharCode(message[0]));
      data = Buffer.from(message.subarray(1).toString(), 'base64');
    } else {
      channel = message[0];
      data = message.subarray(1);
    }
    if (channel === WS_CHANNEL.stdin) for (const cb of stdinListeners.data) cb(data);
    else if (channel === WS_CHANNEL.close && data[0] === WS_CHANNEL.stdin) endStdin();
  });
  ws.on('close', endStdin);
  const tty = q.get('tty') === '1';
  let finished = false;
  const channels: StreamChannels = {
    stdin: q.get('input') === '1' ? { on: (event: 'data' | 'end', cb: ((d: Buffer) => void) | (() => void)) => { (stdinListeners[event] as Array<typeof cb>).push(cb); } } as StreamChannels['stdin'] : undefined,
    stdout: q.get('output') === '1' ? (d) => send(WS_CHANNEL.stdout, d) : undefined,
    stderr: q.get('error') === '1' ? (d) => send(WS_CHANNEL.stderr, d) : undefined,
    finish: (code, message) => {
      if (finished) return;
      finished = true;
      const versioned = protocol !== 'channel.k8s.io' && protocol !== 'base64.channel.k8s.io';
      if (versioned) send(WS_CHANNEL.error, Buffer.from(statusFor(code, message)));
      else if (code !== 0) send(WS_CHANNEL.error, Buffer.from(message ?? `command terminated with non-zero exit code: exit status ${code}`));
      setTimeout(() => ws.close(), 20);
    },
  };
  if (kind === 'exec') runExec(config, pod, q.getAll('command'), channels, tty);
  else runAttach(channels);
}

// ---------------------------------------------------------------------------------------------
// Port forwarding over SPDY

function portForward(session: SpdySession): void {
  const pairs = new Map<string, { error?: SpdyStream; data?: SpdyStream }>();
  session.on('stream', (stream: SpdyStream) => {
    const id = stream.headers.requestid ?? '';
    const pair = pairs.get(id) ?? {};
    pairs.set(id, pair);
    if (stream.headers.streamtype === 'error') pair.error = stream;
    else pair.data = stream;
    if (pair.error === undefined || pair.data === undefined) return;
    const data = pair.data;
    const error = pair.error;
    const port = Number(stream.headers.port);
    const target = net.connect(port, '127.0.0.1');
    target.on('error', (err) => {
      error.end(`error forwarding port ${port} to pod: ${err.message}`);
      data.end();
    });
    data.on('data', (d: Buffer) => { if (!target.write(d)) undefined; });
    data.on('end', () => target.end());
    data.on('reset', () => target.destroy());
    target.on('data', (d: Buffer) => data.write(d));
    target.on('end', () => {
      data.end();
      error.end();
      pairs.delete(id);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The kubelet server

function upgradeRefused(socket: Duplex, message: string): void {
  socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(message)}\r\nConnection: close\r\n\r\n${message}`);
}

function offered(req: http.IncomingMessage, header: string): string[] {
  const raw = req.headersDistinct[header] ?? [];
  return raw.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
}

function clientName(req: http.IncomingMessage): string {
  const cn: string | string[] | undefined = (req.socket as TLSSocket).getPeerCertificate?.()?.subject?.CN;
  return Array.isArray(cn) ? cn.join(',') : cn ?? '';
}

function onUpgrade(config: KubeletStandInConfig, legacy: boolean, req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
  const url = new URL(req.url ?? '/', 'https://x');
  const parts = url.pathname.split('/').filter((p) => p !== '');
  log(`request ${clientName(req)} ${req.method ?? ''} ${url.pathname} upgrade=${req.headers.upgrade ?? ''}`);
  if (clientName(req) !== KUBELET_CLIENT_CN) return upgradeRefused(socket, 'Forbidden');
  if (head.length > 0) socket.unshift(head);
  const upgrade = (req.headers.upgrade ?? '').toLowerCase();
  const kind = parts[0];
  if (upgrade === 'websocket') {
    if (kind === 'portForward') return upgradeRefused(socket, 'unable to upgrade: port forwarding over WebSocket is not supported');
    const supported = legacy ? ['v4.channel.k8s.io', 'channel.k8s.io', 'base64.channel.k8s.io'] : ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'channel.k8s.io', 'base64.channel.k8s.io'];
    const protocols = offered(req, 'sec-websocket-protocol');
    const chosen = protocols.find((p) => supported.includes(p));
    if (chosen === undefined) return upgradeRefused(socket, `requested protocol(s) are not supported: [${protocols.join(' ')}]; supports [${supported.join(' ')}]`);
    socket.write(websocketAccept(String(req.headers['sec-websocket-key'] ?? ''), chosen));
    const ws = new WebSocketSession(socket);
    if (kind === 'exec' || kind === 'attach') websocketStreams(config, ws, chosen, kind, parts[2] ?? '', url.searchParams);
    else ws.close();
    return;
  }
  if (upgrade !== 'spdy/3.1') return upgradeRefused(socket, `unsupported upgrade ${upgrade}`);
  const versions = offered(req, 'x-stream-protocol-version');
  const wanted = kind === 'portForward' ? ['portforward.k8s.io'] : ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];
  const version = wanted.find((v) => versions.includes(v));
  if (version === undefined) return upgradeRefused(socket, `unable to upgrade: unable to negotiate protocol: client supports [${versions.join(' ')}], server supports [${wanted.join(' ')}]`);
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${version}\r\n\r\n`);
  const session = new SpdySession(socket);
  if (kind === 'portForward') portForward(session);
  else if (kind === 'exec' || kind === 'attach') spdyStreams(config, session, kind, parts[2] ?? '', url.searchParams);
  else session.close();
}

function echoRequest(req: http.IncomingMessage, res: http.ServerResponse, who: string): void {
  const chunks: Buffer[] = [];
  req.on('data', (d: Buffer) => chunks.push(d));
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ server: who, method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() }));
  });
}

function kubeletServer(config: KubeletStandInConfig, port: KubeletStandInConfig['kubeletPorts'][number]): https.Server {
  const legacy = port.legacy === true;
  const tls = { cert: port.servingCertPem ?? config.servingCertPem, key: port.servingKeyPem ?? config.servingKeyPem, ca: config.clientCaPem, requestCert: true, rejectUnauthorized: true };
  const server = https.createServer(tls, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://x');
    log(`request ${clientName(req)} ${req.method ?? ''} ${url.pathname}${url.search}`);
    if (clientName(req) !== KUBELET_CLIENT_CN) {
      res.writeHead(403, { 'Content-Type': 'text/plain' });
      res.end(`Forbidden (user=${clientName(req)}, verb=get, resource=nodes, subresource=proxy)`);
      return;
    }
    const parts = url.pathname.split('/').filter((p) => p !== '');
    if (parts[0] === 'containerLogs' && parts.length === 4) return serveLogs(config, req, res, parts[2], parts[3]);
    if (parts[0] === 'exec' || parts[0] === 'attach' || parts[0] === 'portForward') {
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      res.end('Upgrade request required');
      return;
    }
    echoRequest(req, res, 'kubelet');
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => onUpgrade(config, legacy, req, socket, head));
  return server;
}

function podHttpServer(): http.Server {
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/page.html') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      return void res.end('<html><head><link href="/style.css" rel="stylesheet"></head><body><a href="/next?x=1&amp;y=2">next</a><img src="other.png"></body></html>');
    }
    if (url.pathname === '/redirect') {
      res.writeHead(302, { Location: '/landing?from=redirect' });
      return void res.end();
    }
    if (url.pathname === '/bytes') {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      let left = Number(url.searchParams.get('n') ?? '0');
      const chunk = Buffer.alloc(64 * 1024, 'y');
      const pump = () => {
        while (left > 0) {
          const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
          left -= piece.length;
          if (!res.write(piece)) return void res.once('drain', pump);
        }
        res.end();
      };
      return pump();
    }
    echoRequest(req, res, 'pod');
  });
}

async function listen(server: net.Server, port: number, address: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => resolve());
  });
}

async function main(): Promise<void> {
  const config = JSON.parse(readFileSync(process.argv[2], 'utf8')) as KubeletStandInConfig;
  for (const port of config.kubeletPorts) await listen(kubeletServer(config, port), port.port, '0.0.0.0');
  await listen(podHttpServer(), config.podHttpPort, '0.0.0.0');
  if (config.podHttpsPort !== undefined) {
    await listen(https.createServer({ cert: config.servingCertPem, key: config.servingKeyPem }, (req, res) => echoRequest(req, res, 'pod-tls')), config.podHttpsPort, '0.0.0.0');
  }
  await listen(net.createServer((s) => { s.on('error', () => s.destroy()); s.pipe(s); }), config.echoPort, '0.0.0.0');
  await listen(net.createServer((s) => {
    s.on('error', () => s.destroy());
    let left = config.sourceBytes;
    const chunk = Buffer.alloc(64 * 1024, 'z');
    const pump = () => {
      while (left > 0) {
        const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= piece.length;
        if (!s.write(piece)) return void s.once('drain', pump);
      }
      s.end();
    };
    pump();
  }), config.sourcePort, '0.0.0.0');
  const held = new Set<net.Socket>();
  await listen(net.createServer((s) => {
    held.add(s);
    s.on('error', () => s.destroy());
    s.on('close', () => held.delete(s));
  }), config.silentPort, '0.0.0.0');
  log('ready');
  process.on('SIGTERM', () => process.exit(0));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`kubelet stand-in: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
