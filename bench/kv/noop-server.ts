/**
 * A no-op etcd v3 endpoint, for calibrating bench/kv's load generator: a node:http2 gRPC server
 * that answers KV Put and Range at once with a valid, empty response (no store, no Raft, no
 * disk). Whatever the generator reaches against it is the ceiling of the generator itself on
 * this machine; every other method gets UNIMPLEMENTED.
 *
 * Run as a child process forked by kv-bench (an IPC channel is required): it listens on a free
 * loopback port, sends `{ port }` to its parent, and exits when the parent disconnects or sends
 * `'stop'`, so that it cannot outlive the benchmark.
 */
import * as http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { codecFor } from '../../raft/etcd/codec';
import { FRAME_HEADER_BYTES, GrpcDeframer, isGrpcContentType, readUnaryRequest, responseHeaders, Status, statusTrailers, writeFrameHeader } from '../../raft/etcd/grpc-framing';

const HEADER = { clusterId: 0n, memberId: 0n, revision: 0, raftTerm: 0 };

/** Each answer is one framed message, encoded once and reused (it is never modified). */
function framed(encode: () => Uint8Array): Uint8Array {
  return writeFrameHeader(Uint8Array.from(encode()));
}

const ANSWERS = new Map<string, Uint8Array>([
  ['/etcdserverpb.KV/Put', framed(() => codecFor('PutResponse').encodeWithPrefix({ header: HEADER }, FRAME_HEADER_BYTES))],
  ['/etcdserverpb.KV/Range', framed(() => codecFor('RangeResponse').encodeWithPrefix({ header: HEADER, kvs: [], more: false, count: 0 }, FRAME_HEADER_BYTES))],
]);

function onStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
  stream.on('error', () => undefined);
  if (headers[':method'] !== 'POST' || !isGrpcContentType(headers['content-type'])) {
    stream.respond({ ':status': 415 }, { endStream: true });
    return;
  }
  const path = headers[':path'] ?? '';
  const answer = ANSWERS.get(path);
  if (answer === undefined) {
    stream.respond({ ...responseHeaders(), ...statusTrailers(Status.UNIMPLEMENTED, `the no-op server does not serve ${path}`) }, { endStream: true });
    return;
  }
  // As a unary call is answered: once the request's one message has arrived (it is not decoded).
  readUnaryRequest(stream, new GrpcDeframer(), () => {
    if (stream.closed || stream.destroyed) return;
    stream.respond(responseHeaders(), { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers(statusTrailers(Status.OK)));
    stream.end(answer);
  }, (code, message) => {
    if (stream.closed || stream.destroyed) return;
    stream.respond({ ...responseHeaders(), ...statusTrailers(code, message) }, { endStream: true });
  });
}

function main(): void {
  if (process.send === undefined) {
    process.stderr.write('noop-server: run it through kv-bench (it needs an IPC channel to its parent)\n');
    process.exit(2);
  }
  const server = http2.createServer({ settings: { initialWindowSize: 4 * 1024 * 1024 } });
  server.on('session', (session) => session.on('error', () => undefined));
  server.on('connection', (socket: Socket) => socket.setNoDelay(true));
  server.on('stream', onStream);
  server.listen(0, '127.0.0.1', () => {
    process.send!({ port: (server.address() as AddressInfo).port });
  });
  process.on('disconnect', () => process.exit(0));
  process.on('message', (m) => {
    if (m === 'stop') process.exit(0);
  });
}

main();
