/**
 * bench/kv/transport-floor: what a cheaper peer transport could save. One Raft round trip (an
 * AppendEntries with one 300-byte entry, and its answer) between two peers in this process, over
 * the GrpcTransport with mutual TLS as the replicas use it, and over the least a TLS transport
 * could do: length-prefixed frames on one TLS socket each way, the same message codec, no
 * HTTP/2 and no gRPC. Both ends run on this thread, so the CPU per round trip is the sum of what
 * a leader and a follower each spend on one message out and one in.
 *
 *     node dist/bench/kv/transport-floor.js          # ROUND_TRIPS=5000 ROUNDS=3
 *
 * The framed socket here is a measuring stick, not a transport: it has no reconnection, no
 * queue bound and no snapshots.
 */
import * as tls from 'node:tls';
import { performance } from 'node:perf_hooks';
import type { Message } from '../../raft/core/types';
import { decodeMessage, encodeMessage } from '../../raft/transport/codec';
import { GrpcTransport } from '../../raft/transport/grpc-transport';
import type { MutualTls } from '../../raft/transport/mutual-tls';
import { createTestCa, issueTestCertificate } from '../../test/support/test-pki';
import { median } from '../support/latency';

const ROUND_TRIPS = Number(process.env.ROUND_TRIPS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);

interface PerRoundTrip {
  cpuUs: number;
  wallUs: number;
}

function append(to: number, from: number, index: number): Message {
  return { type: 'app', to, from, term: 2, logTerm: 2, index, entries: [{ term: 2, index: index + 1, type: 'normal', data: new Uint8Array(300) }], commit: index, snapshot: null, reject: false, rejectHint: 0, context: new Uint8Array(0) };
}

function answer(to: number, from: number, index: number): Message {
  return { type: 'appResp', to, from, term: 2, logTerm: 0, index: index + 1, entries: [], commit: 0, snapshot: null, reject: false, rejectHint: 0, context: new Uint8Array(0) };
}

async function grpcRoundTrips(material: MutualTls, trips: number): Promise<PerRoundTrip> {
  let onAnswer: (m: Message) => void = () => undefined;
  const leader = new GrpcTransport({ id: 1, listenAddress: '127.0.0.1:0', tls: material, onMessage: (m) => onAnswer(m), onSnapshot: () => undefined });
  const follower: GrpcTransport = new GrpcTransport({ id: 2, listenAddress: '127.0.0.1:0', tls: material, onMessage: (m) => follower.send([answer(1, 2, m.index)]), onSnapshot: () => undefined });
  try {
    const leaderAddress = await leader.start();
    const followerAddress = await follower.start();
    leader.addPeer(2, followerAddress);
    follower.addPeer(1, leaderAddress);
    const run = (n: number): Promise<void> => new Promise((resolve) => {
      let i = 0;
      onAnswer = () => {
        if (++i >= n) resolve();
        else leader.send([append(2, 1, i)]);
      };
      leader.send([append(2, 1, 0)]);
    });
    await run(200); // connections up, code warm
    return await measure(() => run(trips), trips);
  } finally {
    await leader.stop();
    await follower.stop();
  }
}

/** Calls `onFrame` with each length-prefixed frame that arrives on `socket`. */
function readFrames(socket: tls.TLSSocket, onFrame: (frame: Buffer) => void): void {
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (data: Buffer) => {
    pending = pending.length === 0 ? data : Buffer.concat([pending, data]);
    let at = 0;
    while (pending.length - at >= 4) {
      const length = pending.readUInt32BE(at);
      if (pending.length - at - 4 < length) break;
      onFrame(pending.subarray(at + 4, at + 4 + length));
      at += 4 + length;
    }
    pending = at === pending.length ? Buffer.alloc(0) : pending.subarray(at);
  });
}

function writeFrame(socket: tls.TLSSocket, m: Message): void {
  const body = encodeMessage(m);
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32BE(body.length);
  socket.cork();
  socket.write(header);
  socket.write(body);
  socket.uncork();
}

async function framedRoundTrips(material: MutualTls, trips: number): Promise<PerRoundTrip> {
  const server = tls.createServer({ ca: material.ca, cert: material.cert, key: material.key, requestCert: true, rejectUnauthorized: true }, (socket) => {
    socket.setNoDelay(true);
    readFrames(socket, (frame) => writeFrame(socket, answer(1, 2, decodeMessage(frame).index)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: material.ca, cert: material.cert, key: material.key });
  try {
    socket.setNoDelay(true);
    await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
    let onAnswer: () => void = () => undefined;
    readFrames(socket, (frame) => {
      decodeMessage(frame);
      onAnswer();
    });
    const run = (n: number): Promise<void> => new Promise((resolve) => {
      let i = 0;
      onAnswer = () => {
        if (++i >= n) resolve();
        else writeFrame(socket, append(2, 1, i));
      };
      writeFrame(socket, append(2, 1, 0));
    });
    await run(200);
    return await measure(() => run(trips), trips);
  } finally {
    socket.destroy();
    server.close();
  }
}

async function measure(run: () => Promise<void>, trips: number): Promise<PerRoundTrip> {
  const cpu = process.cpuUsage();
  const began = performance.now();
  await run();
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / trips, wallUs: ((performance.now() - began) * 1000) / trips };
}

async function main(): Promise<void> {
  const ca = createTestCa();
  const peer = issueTestCertificate(ca, { commonName: 'peer', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], extKeyUsages: ['clientAuth', 'serverAuth'] });
  const material: MutualTls = { ca: ca.certPem, cert: peer.certPem, key: peer.keyPem };
  const grpc: PerRoundTrip[] = [];
  const framed: PerRoundTrip[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    grpc.push(await grpcRoundTrips(material, ROUND_TRIPS));
    framed.push(await framedRoundTrips(material, ROUND_TRIPS));
    process.stderr.write(`round ${round + 1}: gRPC ${grpc[round].cpuUs.toFixed(1)} us, framed TLS ${framed[round].cpuUs.toFixed(1)} us of CPU per round trip\n`);
  }
  const row = (name: string, r: PerRoundTrip[]) => `| ${name} | ${median(r.map((x) => x.cpuUs)).toFixed(1)} | ${median(r.map((x) => x.wallUs)).toFixed(1)} |`;
  process.stdout.write([
    `bench/kv transport-floor: ${ROUND_TRIPS} round trips x ${ROUNDS} rounds (medians), Node ${process.version}`,
    '',
    '| peer transport, mutual TLS | CPU per round trip (us, both ends) | wall time per round trip (us) |',
    '|---|---:|---:|',
    row('GrpcTransport (HTTP/2, @grpc/grpc-js)', grpc),
    row('length-prefixed frames on a TLS socket', framed),
    '',
  ].join('\n'));
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
