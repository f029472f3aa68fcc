/**
 * GrpcTransport over real sockets on 127.0.0.1: ordering, batching, chunked snapshots,
 * reconnection after a peer comes back, removal of a peer, refusal of malformed streams, and a
 * stop() that leaves nothing running.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { emptyMessage, type Message, type NodeId } from '../../../raft/core/types';
import { sendSnapshotMethod, type SnapshotAck, type SnapshotChunk } from '../../../raft/transport/codec';
import { GrpcTransport, type GrpcTransportOptions } from '../../../raft/transport';
import { until } from '../../support/until';

interface Node {
  transport: GrpcTransport;
  address: string;
  received: Message[];
  snapshots: Message[];
  unreachable: NodeId[];
  snapshotStatus: { peer: NodeId; ok: boolean }[];
}

/** Fast backoff so that reconnection tests finish in well under a second of waiting. */
const FAST_BACKOFF = { initialMs: 20, maxMs: 200 };

const running: GrpcTransport[] = [];

async function startNode(id: NodeId, listenAddress = '127.0.0.1:0', extra: Partial<GrpcTransportOptions> = {}): Promise<Node> {
  const node: Omit<Node, 'transport' | 'address'> = { received: [], snapshots: [], unreachable: [], snapshotStatus: [] };
  const transport = new GrpcTransport({
    id,
    listenAddress,
    onMessage: (m) => node.received.push(m),
    onSnapshot: (m) => node.snapshots.push(m),
    onUnreachable: (peer) => node.unreachable.push(peer),
    onSnapshotStatus: (peer, ok) => node.snapshotStatus.push({ peer, ok }),
    reconnectBackoff: FAST_BACKOFF,
    ...extra,
  });
  running.push(transport);
  const address = await transport.start();
  return { ...node, transport, address };
}

function waitFor(condition: () => boolean, what: string, timeoutMs = 4000): Promise<unknown> {
  return until(what, condition, timeoutMs);
}

function app(from: NodeId, to: NodeId, index: number, payload = `entry ${index}`): Message {
  return emptyMessage({
    type: 'app',
    from,
    to,
    term: 3,
    logTerm: 3,
    index: index - 1,
    commit: index - 1,
    entries: [{ term: 3, index, type: 'normal', data: new TextEncoder().encode(payload) }],
  });
}

describe('raft/transport GrpcTransport', function () {
  this.timeout(10_000);

  afterEach(async () => {
    await Promise.all(running.splice(0).map((t) => t.stop()));
  });

  it('delivers messages in order, both ways', async () => {
    const a = await startNode(1);
    const b = await startNode(2);
    a.transport.addPeer(2, b.address);
    b.transport.addPeer(1, a.address);
    const toB = Array.from({ length: 50 }, (_, i) => app(1, 2, i + 1));
    for (const m of toB) a.transport.send([m]);
    b.transport.send([emptyMessage({ type: 'heartbeatResp', from: 2, to: 1, term: 3, context: new Uint8Array([7, 7]) })]);
    await waitFor(() => b.received.length === 50 && a.received.length === 1, 'delivery');
    expect(b.received).to.deep.equal(toB);
    expect(a.received[0]).to.deep.include({ type: 'heartbeatResp', from: 2, to: 1, term: 3 });
    expect(Array.from(a.received[0]!.context)).to.deep.equal([7, 7]);
    expect(a.unreachable).to.deep.equal([]);
  });

  it('coalesces many messages into few batches, within maxBatchBytes', async () => {
    const b = await startNode(2);
    const a = await startNode(1, '127.0.0.1:0', { maxBatchBytes: 16 * 1024 });
    a.transport.addPeer(2, b.address);
    // Open the stream first so that the batching below is the transport's, not the connect's.
    a.transport.send([app(1, 2, 1)]);
    await waitFor(() => b.received.length === 1, 'the first message');
    const messages = Array.from({ length: 2000 }, (_, i) => app(1, 2, i + 2, 'x'.repeat(100)));
    for (let i = 0; i < messages.length; i += 10) a.transport.send(messages.slice(i, i + 10));
    await waitFor(() => b.received.length === 2001, 'all messages');
    expect(b.received.slice(1)).to.deep.equal(messages);
    const s = a.transport.stats;
    expect(s.messagesSent).to.equal(2001);
    // 2000 messages of ~130 bytes in 16 KiB batches: at least 16 batches, far fewer than 2000.
    expect(s.batchesSent).to.be.lessThan(100);
    expect(s.batchesSent - 1).to.be.at.least(Math.ceil((s.bytesSent - 200) / (16 * 1024)));
    expect(b.transport.stats.batchesReceived).to.equal(s.batchesSent);
    expect(b.transport.stats.messagesReceived).to.equal(2001);
  });

  it('sends a 5 MiB snapshot in chunks that arrive intact, and reports success', async () => {
    const a = await startNode(1);
    const b = await startNode(2);
    a.transport.addPeer(2, b.address);
    const data = new Uint8Array(5 * 1024 * 1024);
    for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24;
    const snap = emptyMessage({
      type: 'snap',
      from: 1,
      to: 2,
      term: 4,
      snapshot: { metadata: { index: 1000, term: 4, confState: { voters: [1, 2, 3], learners: [4] } }, data },
    });
    a.transport.send([snap, app(1, 2, 1001)]);
    await waitFor(() => a.snapshotStatus.length === 1, 'the snapshot status');
    expect(a.snapshotStatus).to.deep.equal([{ peer: 2, ok: true }]);
    expect(b.snapshots).to.have.length(1);
    const got = b.snapshots[0]!;
    expect(got.snapshot!.metadata).to.deep.equal(snap.snapshot!.metadata);
    expect(got.snapshot!.data.length).to.equal(data.length);
    expect(Buffer.compare(Buffer.from(got.snapshot!.data), Buffer.from(data))).to.equal(0);
    expect({ ...got, snapshot: null }).to.deep.equal({ ...snap, snapshot: null });
    expect(a.transport.stats.snapshotsSent).to.equal(1);
    expect(a.transport.stats.snapshotChunksSent).to.equal(10);
    // The snapshot does not travel on the message stream, and does not hold it up.
    await waitFor(() => b.received.length === 1, 'the message sent after the snapshot');
    expect(b.received[0]!.type).to.equal('app');
  });

  it('waits for the stream to drain when a snapshot outpaces it', async () => {
    const a = await startNode(1, '127.0.0.1:0', { snapshotChunkBytes: 8 * 1024 });
    const b = await startNode(2);
    a.transport.addPeer(2, b.address);
    const data = new Uint8Array(3 * 1024 * 1024 + 5);
    for (let i = 0; i < data.length; i++) data[i] = i % 251;
    a.transport.send([
      emptyMessage({
        type: 'snap',
        from: 1,
        to: 2,
        snapshot: { metadata: { index: 7, term: 2, confState: { voters: [1, 2], learners: [] } }, data },
      }),
    ]);
    await waitFor(() => a.snapshotStatus.length === 1, 'the snapshot status');
    expect(a.snapshotStatus).to.deep.equal([{ peer: 2, ok: true }]);
    expect(a.transport.stats.snapshotChunksSent).to.equal(Math.ceil(data.length / (8 * 1024)));
    expect(a.transport.stats.snapshotDrainWaits).to.be.greaterThan(0);
    expect(Buffer.compare(Buffer.from(b.snapshots[0]!.snapshot!.data), Buffer.from(data))).to.equal(0);
  });

  it('reports a snap message that cannot be sent as a failed snapshot', async () => {
    const a = await startNode(1);
    const b = await startNode(2);
    a.transport.addPeer(2, b.address);
    a.transport.send([emptyMessage({ type: 'snap', from: 1, to: 2 })]); // no snapshot
    a.transport.send([emptyMessage({ type: 'snap', from: 1, to: 7, snapshot: { metadata: { index: 1, term: 1, confState: { voters: [1], learners: [] } }, data: new Uint8Array(1) } })]);
    await waitFor(() => a.snapshotStatus.length === 2, 'two snapshot statuses');
    expect(a.snapshotStatus).to.deep.equal([{ peer: 2, ok: false }, { peer: 7, ok: false }]);
    expect(a.unreachable).to.deep.equal([7]);
  });

  it('sends a message larger than maxBatchBytes in a batch of its own', async () => {
    const a = await startNode(1, '127.0.0.1:0', { maxBatchBytes: 1024 });
    const b = await startNode(2);
    a.transport.addPeer(2, b.address);
    const messages = [app(1, 2, 1, 'small'), app(1, 2, 2, 'y'.repeat(10_000)), app(1, 2, 3, 'small')];
    a.transport.send(messages);
    await waitFor(() => b.received.length === 3, 'all three messages');
    expect(b.received).to.deep.equal(messages);
    // The big one cannot share a 1 KiB batch with either neighbour.
    expect(a.transport.stats.batchesSent).to.equal(3);
  });

  it('reports a snapshot to an unreachable peer as failed', async () => {
    const gone = await startNode(2);
    await gone.transport.stop();
    const a = await startNode(1);
    a.transport.addPeer(2, gone.address);
    a.transport.send([
      emptyMessage({
        type: 'snap',
        from: 1,
        to: 2,
        snapshot: { metadata: { index: 5, term: 1, confState: { voters: [1, 2], learners: [] } }, data: new Uint8Array(100_000) },
      }),
    ]);
    await waitFor(() => a.snapshotStatus.length === 1, 'the snapshot status');
    expect(a.snapshotStatus).to.deep.equal([{ peer: 2, ok: false }]);
    expect(a.transport.stats.snapshotsFailed).to.equal(1);
    expect(a.unreachable).to.include(2);
  });

  it('reports a down peer unreachable, then reconnects when it listens again', async () => {
    // Learn a free port, then free it: the peer is "down" at a known address.
    const first = await startNode(2);
    const address = first.address;
    await first.transport.stop();

    const a = await startNode(1, '127.0.0.1:0', { maxQueueMessages: 8 });
    a.transport.addPeer(2, address);
    a.transport.send([app(1, 2, 1)]);
    await waitFor(() => a.unreachable.includes(2), 'onUnreachable');
    // Beyond the bound, messages are dropped (and reported) rather than queued without end.
    a.transport.send(Array.from({ length: 20 }, (_, i) => app(1, 2, i + 2)));
    expect(a.transport.stats.messagesDropped).to.be.at.least(12);

    const b = await startNode(2, address);
    expect(b.address).to.equal(address);
    // Raft retransmits on its heartbeat; so does this probe, until the link is back.
    let index = 100;
    const retransmitUntilArrived = () => {
      if (b.received.some((m) => m.index >= 99)) return true;
      a.transport.send([app(1, 2, index++)]);
      return false;
    };
    await waitFor(retransmitUntilArrived, 'a message sent after the restart to arrive', 5000);
    // What arrives, arrives in order: the queue is FIFO and one stream carries it.
    const indexes = b.received.map((m) => m.index);
    expect(indexes).to.deep.equal([...indexes].sort((x, y) => x - y));
    expect(a.transport.stats.streamsOpened).to.be.at.least(1);

    const before = b.received.length;
    a.transport.send([app(1, 2, 10_000)]);
    await waitFor(() => b.received.length === before + 1, 'steady delivery after the reconnect');
  });

  it('reconnects after the receiver restarts on the same port', async () => {
    const a = await startNode(1);
    const b1 = await startNode(2);
    a.transport.addPeer(2, b1.address);
    a.transport.send([app(1, 2, 1)]);
    await waitFor(() => b1.received.length === 1, 'the first message');
    await b1.transport.stop();
    await waitFor(() => a.unreachable.includes(2), 'onUnreachable after the receiver stopped');

    const b2 = await startNode(2, b1.address);
    let index = 2;
    const retransmitUntilArrived = () => {
      if (b2.received.length > 0) return true;
      a.transport.send([app(1, 2, index++)]);
      return false;
    };
    await waitFor(retransmitUntilArrived, 'a message to reach the restarted receiver', 5000);
    expect(a.transport.stats.streamsOpened).to.be.at.least(2);
  });

  it('stops delivering to a removed peer, and reports sends to it unreachable', async () => {
    const a = await startNode(1);
    const b = await startNode(2);
    a.transport.addPeer(2, b.address);
    a.transport.send([app(1, 2, 1)]);
    await waitFor(() => b.received.length === 1, 'the first message');
    a.transport.removePeer(2);
    a.transport.send([app(1, 2, 2)]);
    expect(a.unreachable).to.deep.equal([]); // never from inside send()
    await waitFor(() => a.unreachable.includes(2), 'onUnreachable for the removed peer');
    // Dropped in send(), so never written to any stream: what went out is the first message alone.
    expect(a.transport.stats.messagesDropped).to.equal(1);
    expect(a.transport.stats.messagesSent).to.equal(1);

    // Adding it back works like adding any peer.
    a.transport.addPeer(2, b.address);
    a.transport.send([app(1, 2, 3)]);
    await waitFor(() => b.received.length === 2, 'delivery after adding the peer back');
    expect(b.received.map((m) => m.index)).to.deep.equal([0, 2]);
    expect(a.transport.stats.messagesSent).to.equal(2);
  });

  it('drops local message types and messages for unknown peers without throwing', async () => {
    const a = await startNode(1);
    const b = await startNode(2);
    a.transport.addPeer(2, b.address);
    a.transport.send([
      emptyMessage({ type: 'hup', from: 1, to: 2 }),
      emptyMessage({ type: 'beat', from: 1, to: 2 }),
      emptyMessage({ type: 'unreachable', from: 1, to: 2 }),
      emptyMessage({ type: 'snapStatus', from: 1, to: 2 }),
      emptyMessage({ type: 'checkQuorum', from: 1, to: 2 }),
      emptyMessage({ type: 'app', from: 1, to: 2, term: 2 ** 60 }), // unencodable
      emptyMessage({ type: 'vote', from: 1, to: 9 }),
      emptyMessage({ type: 'vote', from: 1, to: 2, term: 5 }),
    ]);
    await waitFor(() => b.received.some((m) => m.type === 'vote'), 'the one sendable message');
    // It was sent last, and one stream carries node 2's messages in order: anything else sent
    // to node 2 would have arrived before it.
    expect(b.received.map((m) => m.type)).to.deep.equal(['vote']);
    expect(a.transport.stats.messagesDropped).to.equal(7);
    expect(a.unreachable).to.deep.equal([9]);
  });

  it('drops received messages addressed to another node', async () => {
    const a = await startNode(1);
    const b = await startNode(2);
    // Node 3's address now belongs to node 2, as after a membership change.
    a.transport.addPeer(3, b.address);
    a.transport.send([app(1, 3, 1)]);
    await waitFor(() => b.transport.stats.messagesMisrouted === 1, 'the misrouted message');
    expect(b.received).to.deep.equal([]);
  });

  it('refuses a malformed snapshot stream without delivering it', async () => {
    const b = await startNode(2);
    const client = new grpc.Client(b.address, grpc.credentials.createInsecure());
    try {
      const header = emptyMessage({
        type: 'snap',
        from: 1,
        to: 2,
        snapshot: { metadata: { index: 5, term: 1, confState: { voters: [1, 2], learners: [] } }, data: new Uint8Array(0) },
      });
      const result = new Promise<{ err: grpc.ServiceError | null; ack: SnapshotAck | undefined }>((resolve) => {
        const call = client.makeClientStreamRequest<SnapshotChunk, SnapshotAck>(
          sendSnapshotMethod.path,
          sendSnapshotMethod.requestSerialize,
          sendSnapshotMethod.responseDeserialize,
          (err, ack) => resolve({ err, ack }),
        );
        call.on('error', () => undefined);
        call.write({ header, offset: 0, data: new Uint8Array(10), last: false, totalBytes: 30 });
        // A gap: 10..20 never sent.
        call.write({ header: null, offset: 20, data: new Uint8Array(10), last: true, totalBytes: 30 });
        call.end();
      });
      const { err } = await result;
      expect(err?.code).to.equal(grpc.status.INVALID_ARGUMENT);
      expect(b.snapshots).to.deep.equal([]);
      expect(b.transport.stats.snapshotsRejected).to.equal(1);
    } finally {
      client.close();
    }
  });

  it('stop() closes everything, so that a process using the transport exits on its own', async function () {
    const distTransport = path.resolve(__dirname, '../../../raft/transport');
    const distTypes = path.resolve(__dirname, '../../../raft/core/types');
    // A separate process: mocha runs with --exit, which would hide a leaked handle here.
    const script = `
      const { GrpcTransport } = require(${JSON.stringify(distTransport)});
      const { emptyMessage } = require(${JSON.stringify(distTypes)});
      (async () => {
        let received = 0;
        let bothArrived;
        const arrived = new Promise((resolve) => (bothArrived = resolve));
        const count = () => { if (++received === 2) bothArrived(); };
        const mk = (id) => new GrpcTransport({ id, listenAddress: '127.0.0.1:0', onMessage: count, onSnapshot: count,
          reconnectBackoff: { initialMs: 20, maxMs: 100 } });
        const a = mk(1), b = mk(2);
        const addrA = await a.start(), addrB = await b.start();
        a.addPeer(2, addrB); b.addPeer(1, addrA);
        a.addPeer(3, '127.0.0.1:1'); // never answers: leaves a retry timer behind
        a.send([emptyMessage({ type: 'heartbeat', from: 1, to: 2 }), emptyMessage({ type: 'heartbeat', from: 1, to: 3 })]);
        b.send([emptyMessage({ type: 'snap', from: 2, to: 1, snapshot: { metadata: { index: 1, term: 1, confState: { voters: [1, 2], learners: [] } }, data: new Uint8Array(2e6) } })]);
        await arrived;
        await a.stop(); await b.stop();
        a.send([emptyMessage({ type: 'heartbeat', from: 1, to: 2 })]);
        console.log('stopped');
      })().catch((err) => { console.error(err); process.exit(2); });
    `;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 8000);
    const code = await exited;
    clearTimeout(timer);
    expect(output.trim(), output).to.equal('stopped');
    expect(code, 'the child exited by itself (killed after 8 s otherwise)').to.equal(0);
  });
});
