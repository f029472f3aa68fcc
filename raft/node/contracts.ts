/**
 * What the runtime needs from its collaborators. The concrete classes are LevelStorage
 * (raft/storage) and GrpcTransport (raft/transport); tests substitute their own.
 */
import type { SpanContext } from '@opentelemetry/api';
import type { ConfState, Entry, HardState, Message, NodeId, Snapshot } from '../core';
import type { LogStorage } from '../core';

/**
 * A LogStorage whose writes are durable once their promise resolves. Calls may overlap (RaftNode
 * takes a snapshot while Readys go on being saved); they take effect in call order.
 */
export interface DurableStorage extends LogStorage {
  save(update: { hardState: HardState | null; entries: Entry[]; snapshot: Snapshot | null }, options: { sync: boolean }): Promise<void>;
  saveConfState(confState: ConfState, appliedIndex: number): Promise<void>;
  createSnapshot(index: number, confState: ConfState, data: Uint8Array): Promise<Snapshot>;
  compact(index: number): Promise<void>;
}

/** Sends never block and never throw: Raft tolerates loss, and retransmits. */
export interface Transport {
  send(messages: Message[]): void;
  addPeer(id: NodeId, address: string): void;
  removePeer(id: NodeId): void;
}

/** A committed proposal of this node: its log index and the state machine's result for it. */
export interface Proposed {
  index: number;
  /** What StateMachine.apply returned for the entry; undefined when it returned nothing. */
  result: unknown;
}

/** One committed, non-empty normal entry, with the runtime's proposal envelope removed. */
export interface AppliedEntry {
  index: number;
  term: number;
  data: Uint8Array;
  /**
   * The proposal's trace context, when it was proposed under a recording span and appended
   * during this process's life (trace-context.ts): the state machine's spans for the entry join
   * the proposer's trace.
   */
  traceContext?: SpanContext;
}

/**
 * The replicated state machine. apply() sees every committed entry exactly once per process
 * lifetime, in index order; after a restart the runtime replays from `appliedIndex()`.
 * Applying must be deterministic: it may read nothing but the entries and its own state.
 */
export interface StateMachine {
  /** The index of the last entry whose effects are durable in the state machine (0 if none). */
  appliedIndex(): number;
  /**
   * Applies `entries`, then records `lastIndex` as applied. May return one result per entry, in
   * the same order: an entry's result is what this node's propose() of it resolves with, so a
   * caller learns the outcome of its own proposal without keeping bookkeeping of its own.
   */
  apply(entries: AppliedEntry[], lastIndex: number): Promise<readonly unknown[] | void> | readonly unknown[] | void;
  /**
   * An image of the state at the last applied index, captured when called: entries applied
   * while the promise is pending must not change it (the encoding may let the event loop run).
   */
  snapshot(): Promise<Uint8Array>;
  /** Replaces the whole state with a snapshot image taken at `index`. */
  restore(data: Uint8Array, index: number): Promise<void>;
}
