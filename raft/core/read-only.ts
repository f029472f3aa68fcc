/**
 * Pending ReadIndex requests on the leader (§6.4). Each request records the commit index at the
 * time it arrived; it is answered once a quorum has acknowledged a heartbeat carrying its
 * context, which proves that no newer leader existed when the read started. Answering a request
 * answers every older one too, since heartbeats are acknowledged in order of being sent.
 */
import type { Message, NodeId } from './types';

interface ReadIndexStatus {
  request: Message;
  index: number;
  acks: Set<NodeId>;
}

export class ReadOnly {
  private readonly pending = new Map<string, ReadIndexStatus>();
  private queue: string[] = [];

  constructor(readonly maxPending: number) {}

  get size(): number {
    return this.queue.length;
  }

  /** Returns false when the queue is full or the context is already pending. */
  addRequest(index: number, request: Message): boolean {
    const key = contextKey(request.context);
    if (this.pending.has(key) || this.queue.length >= this.maxPending) return false;
    this.pending.set(key, { request, index, acks: new Set() });
    this.queue.push(key);
    return true;
  }

  /** Records an acknowledgement; returns who has acknowledged the request so far, or null if unknown. */
  recvAck(id: NodeId, context: Uint8Array): Set<NodeId> | null {
    const status = this.pending.get(contextKey(context));
    if (!status) return null;
    status.acks.add(id);
    return status.acks;
  }

  /** Releases the request with this context and every one queued before it. */
  advance(context: Uint8Array): Array<{ request: Message; index: number }> {
    const key = contextKey(context);
    const position = this.queue.indexOf(key);
    if (position < 0) return [];
    const released = this.queue.slice(0, position + 1);
    this.queue = this.queue.slice(position + 1);
    return released.map((k) => {
      const status = this.pending.get(k)!;
      this.pending.delete(k);
      return { request: status.request, index: status.index };
    });
  }

  lastPendingContext(): Uint8Array | null {
    if (this.queue.length === 0) return null;
    return this.pending.get(this.queue[this.queue.length - 1])!.request.context;
  }

  /** Drops everything: on losing leadership, the requesters retry elsewhere. */
  reset(): void {
    this.pending.clear();
    this.queue = [];
  }
}

/** A map key for a byte string; the core stays free of Node's Buffer. */
function contextKey(context: Uint8Array): string {
  let key = '';
  for (let i = 0; i < context.length; i++) key += String.fromCharCode(context[i]);
  return key;
}
