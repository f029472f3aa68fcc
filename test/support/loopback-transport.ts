/**
 * An in-process Transport for RaftNode tests: delivers each message to the target node on a
 * later turn of the event loop, as a network would, and can cut a node off. Snapshots are
 * reported delivered (or failed, when the link is cut) to the sender, as GrpcTransport does.
 */
import type { Message, NodeId } from '../../raft/core';
import type { Transport } from '../../raft/node';

export interface LoopbackEndpoint {
  step(message: Message): void;
  reportUnreachable(id: NodeId): void;
  reportSnapshot(id: NodeId, ok: boolean): void;
}

export class LoopbackNetwork {
  private readonly endpoints = new Map<NodeId, LoopbackEndpoint>();
  private readonly isolated = new Set<NodeId>();
  delivered = 0;
  snapshotsDelivered = 0;

  attach(id: NodeId, endpoint: LoopbackEndpoint): void {
    this.endpoints.set(id, endpoint);
  }

  detach(id: NodeId): void {
    this.endpoints.delete(id);
  }

  isolate(id: NodeId): void {
    this.isolated.add(id);
  }

  heal(): void {
    this.isolated.clear();
  }

  transportFor(id: NodeId): Transport {
    return {
      send: (messages) => {
        for (const m of messages) setImmediate(() => this.deliver(id, m));
      },
      addPeer: () => {},
      removePeer: () => {},
    };
  }

  private deliver(from: NodeId, m: Message): void {
    const sender = this.endpoints.get(from);
    const target = this.endpoints.get(m.to);
    const cut = this.isolated.has(from) || this.isolated.has(m.to);
    if (target === undefined || cut) {
      if (m.type === 'snap') sender?.reportSnapshot(m.to, false);
      else sender?.reportUnreachable(m.to);
      return;
    }
    target.step(m);
    this.delivered++;
    if (m.type === 'snap') {
      this.snapshotsDelivered++;
      sender?.reportSnapshot(m.to, true);
    }
  }
}
