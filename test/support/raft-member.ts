/**
 * One Raft member as a real process: WalStorage on disk, gRPC transport, RaftNode, and a tiny
 * replicated state machine (an append-only list of payloads). Driven by its parent over the
 * child-process IPC channel; used by integration tests and bench/raft.
 *
 * Config comes as JSON in argv[2]. Requests: { rid, cmd, ... }; replies: { rid, ok, ... }.
 */
import { createHash } from 'node:crypto';
import { GrpcTransport } from '../../raft/transport';
import { WalStorage } from '../../raft/storage';
import { RaftNode, type AppliedEntry, type StateMachine } from '../../raft/node';
import { isRaftError } from '../../raft/core';

export interface MemberConfig {
  id: number;
  dataDir: string;
  raftAddress: string;
  /** Every initial member including this one: id -> raft address. */
  peers: Record<string, string>;
  tickMs?: number;
  electionTicks?: number;
  snapshotEveryEntries?: number;
  keepEntriesAfterSnapshot?: number;
  requestTimeoutMs?: number;
  /** Keep every applied payload (tests); otherwise only count and hash (bench). */
  recordPayloads?: boolean;
}

/** The replicated state machine: applied payloads in order, with a running hash. */
class AppendOnlyList implements StateMachine {
  payloads: string[] = [];
  count = 0;
  private hash = '';
  private applied = 0;

  constructor(private readonly record: boolean) {}

  appliedIndex(): number {
    return this.applied;
  }

  apply(entries: AppliedEntry[], lastIndex: number): void {
    for (const entry of entries) {
      const text = Buffer.from(entry.data).toString('utf8');
      if (this.record) this.payloads.push(text);
      this.count++;
      this.hash = createHash('sha256').update(this.hash).update(text).digest('hex').slice(0, 16);
    }
    this.applied = lastIndex;
  }

  digest(): string {
    return `${this.count}:${this.hash}`;
  }

  async snapshot(): Promise<Uint8Array> {
    return Buffer.from(JSON.stringify({ payloads: this.payloads, count: this.count, hash: this.hash, applied: this.applied }));
  }

  async restore(data: Uint8Array, index: number): Promise<void> {
    const image = JSON.parse(Buffer.from(data).toString('utf8')) as { payloads: string[]; count: number; hash: string };
    this.payloads = image.payloads;
    this.count = image.count;
    this.hash = image.hash;
    this.applied = index;
  }
}

type Request =
  | { rid: number; cmd: 'propose'; data: string }
  | { rid: number; cmd: 'read' }
  | { rid: number; cmd: 'status' }
  | { rid: number; cmd: 'resetPeakMetrics' }
  | { rid: number; cmd: 'payloads' }
  | { rid: number; cmd: 'transfer'; to: number }
  | { rid: number; cmd: 'bench'; inflight: number; count: number; bytes: number };

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]) as MemberConfig;
  const fsm = new AppendOnlyList(config.recordPayloads ?? true);
  const voters = Object.keys(config.peers).map(Number);
  const storage = await WalStorage.open(config.dataDir, { bootstrap: { voters, learners: [] } });
  let node: RaftNode | null = null;
  const transport = new GrpcTransport({
    id: config.id,
    listenAddress: config.raftAddress,
    onMessage: (m) => node?.step(m),
    onSnapshot: (m) => node?.step(m),
    onUnreachable: (to) => node?.reportUnreachable(to),
    onSnapshotStatus: (to, ok) => node?.reportSnapshot(to, ok),
  });
  const address = await transport.start();
  for (const [id, peerAddress] of Object.entries(config.peers)) {
    if (Number(id) !== config.id) transport.addPeer(Number(id), peerAddress);
  }
  node = new RaftNode({
    id: config.id,
    storage,
    transport,
    stateMachine: fsm,
    tickMs: config.tickMs ?? 50,
    electionTicks: config.electionTicks ?? 10,
    heartbeatTicks: 1,
    snapshotEveryEntries: config.snapshotEveryEntries ?? 10_000,
    keepEntriesAfterSnapshot: config.keepEntriesAfterSnapshot ?? 5_000,
    requestTimeoutMs: config.requestTimeoutMs ?? 10_000,
  });
  await node.start();
  const raftNode = node;

  const reply = (message: object) => process.send?.(message);
  process.on('message', (raw) => {
    const request = raw as Request;
    void handle(request).then(
      (result) => reply({ rid: request.rid, ok: true, ...result }),
      (err: Error) => reply({ rid: request.rid, ok: false, code: isRaftError(err) ? err.code : 'ERROR', error: err.message }),
    );
  });

  async function handle(request: Request): Promise<object> {
    switch (request.cmd) {
      case 'propose':
        return { index: (await raftNode.propose(Buffer.from(request.data))).index };
      case 'read':
        return { index: await raftNode.readIndex(), digest: fsm.digest() };
      case 'status':
        return { status: raftNode.status(), metrics: raftNode.metrics, digest: fsm.digest(), count: fsm.count };
      case 'resetPeakMetrics':
        raftNode.resetPeakMetrics();
        return {};
      case 'payloads':
        return { payloads: fsm.payloads };
      case 'transfer':
        await raftNode.transferLeadership(request.to);
        return {};
      case 'bench':
        return runLoad(raftNode, request.inflight, request.count, request.bytes);
    }
  }

  const shutdown = () => {
    void raftNode.stop().then(() => transport.stop()).then(() => storage.close()).finally(() => process.exit(0));
  };
  process.on('SIGTERM', shutdown);
  process.on('disconnect', shutdown);
  reply({ event: 'started', address });
}

/** Keeps `inflight` proposals outstanding until `count` have committed; commit latency per proposal. */
async function runLoad(node: RaftNode, inflight: number, count: number, bytes: number): Promise<object> {
  const latencies: number[] = [];
  const payload = Buffer.alloc(bytes, 0x61);
  let issued = 0;
  let failed = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (issued < count) {
      issued++;
      const t0 = process.hrtime.bigint();
      try {
        await node.propose(payload);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: inflight }, worker));
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
  latencies.sort((a, b) => a - b);
  const pick = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { committed: latencies.length, failed, elapsedMs, p50: pick(0.5), p99: pick(0.99), metrics: node.metrics };
}

main().catch((err) => {
  process.stderr.write(`raft member failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
