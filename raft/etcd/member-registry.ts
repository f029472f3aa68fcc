/**
 * MemberRegistry: the replicated list of the store's members (id, name, Raft address, client
 * URLs) and the cluster id, as etcd's membership store keeps them.
 *
 * Raft's own configuration knows only ids (voters, learners). Everything else about a member
 * travels in the log: a conf change's context carries the member's record (encodeMemberContext),
 * and a member's later attribute changes (its name and client URLs once it starts, a new peer
 * address) travel as ordinary entries. Every replica applies them in log order, so every
 * replica's registry is the same at the same index.
 *
 * Durability: the registry is written to its own file (atomically: temporary file, fsync,
 * rename) whenever it changes, with the log index it reflects; entries at or below that index
 * are skipped when the log is replayed after a restart. It also travels inside Raft snapshots
 * (wrapSnapshotImage), so a member that joins after the log was compacted learns the members
 * from the snapshot.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import type { ConfChange, NodeId } from '../core';
import { PRIVATE_FILE_MODE } from '../storage';

export interface MemberRecord {
  id: NodeId;
  /** Empty until the member has started and published its name (etcd: "unstarted"). */
  name: string;
  /** host:port of the member's Raft transport. */
  raftAddress: string;
  /** URLs of the member's etcd v3 API; empty until the member has started. */
  clientUrls: string[];
}

/** What a conf change adding (or promoting) a member carries in its context. */
export interface MemberContext {
  name: string;
  raftAddress: string;
  clientUrls: string[];
  /** The cluster's id, so a member that joins learns it from its own addition. */
  clusterId: bigint;
}

/** A change of a member's attributes, applied from an ordinary log entry. */
export interface MemberAttributes {
  id: NodeId;
  name?: string;
  clientUrls?: string[];
  raftAddress?: string;
}

interface RegistryImage {
  clusterId: string;
  index: number;
  members: MemberRecord[];
}

const CONTEXT_VERSION = 1;
const SNAPSHOT_MAGIC = Buffer.from('CMB1', 'latin1');

export class MemberRegistry {
  private readonly members = new Map<NodeId, MemberRecord>();
  private clusterIdValue: bigint;
  /** The log index this registry reflects. */
  private indexValue: number;

  private constructor(private readonly file: string | null, image: RegistryImage) {
    this.clusterIdValue = BigInt(image.clusterId);
    this.indexValue = image.index;
    for (const m of image.members) this.members.set(m.id, cloneRecord(m));
  }

  /**
   * Loads the registry from `file`; when the file does not exist yet, starts from `seed` (the
   * members named on the command line) at index 0. `file` null keeps it in memory only.
   */
  static open(file: string | null, seed: { clusterId: bigint; members: MemberRecord[] }): MemberRegistry {
    if (file !== null && existsSync(file)) {
      let image: RegistryImage;
      try {
        image = parseImage(readFileSync(file, 'utf8'));
      } catch (err) {
        throw new Error(`member registry ${file}: ${(err as Error).message}`, { cause: err });
      }
      return new MemberRegistry(file, image);
    }
    return new MemberRegistry(file, { clusterId: seed.clusterId.toString(), index: 0, members: seed.members });
  }

  get clusterId(): bigint {
    return this.clusterIdValue;
  }

  get index(): number {
    return this.indexValue;
  }

  get(id: NodeId): MemberRecord | undefined {
    const m = this.members.get(id);
    return m === undefined ? undefined : cloneRecord(m);
  }

  /** Every member, by id. */
  list(): MemberRecord[] {
    return [...this.members.values()].sort((a, b) => a.id - b.id).map(cloneRecord);
  }

  /** The member whose Raft transport is at `raftAddress`, if any. */
  findByRaftAddress(raftAddress: string): MemberRecord | undefined {
    for (const m of this.members.values()) if (m.raftAddress === raftAddress) return cloneRecord(m);
    return undefined;
  }

  /** Applies a committed conf change at `index`; false when the registry already reflects it. */
  applyConfChange(change: ConfChange, index: number): boolean {
    if (index <= this.indexValue) return false;
    if (change.type === 'removeNode') {
      this.members.delete(change.nodeId);
    } else {
      const context = decodeMemberContext(change.context);
      const known = this.members.get(change.nodeId);
      this.members.set(change.nodeId, {
        id: change.nodeId,
        // What the member published about itself wins over what the change was proposed with.
        name: known?.name || context?.name || '',
        raftAddress: context?.raftAddress || known?.raftAddress || '',
        clientUrls: known?.clientUrls.length ? known.clientUrls : context?.clientUrls ?? [],
      });
      if (this.clusterIdValue === 0n && context !== null && context.clusterId !== 0n) this.clusterIdValue = context.clusterId;
    }
    this.indexValue = index;
    this.save();
    return true;
  }

  /** Applies a member's attribute change at `index`; false when already reflected or unknown member. */
  applyAttributes(update: MemberAttributes, index: number): boolean {
    if (index <= this.indexValue) return false;
    this.indexValue = index;
    const m = this.members.get(update.id);
    if (m !== undefined) {
      if (update.name !== undefined) m.name = update.name;
      if (update.clientUrls !== undefined) m.clientUrls = [...update.clientUrls];
      if (update.raftAddress !== undefined) m.raftAddress = update.raftAddress;
    }
    this.save();
    return m !== undefined;
  }

  /** The registry as a snapshot carries it. */
  encode(): Uint8Array {
    return Buffer.from(JSON.stringify(this.image()), 'utf8');
  }

  /** Replaces the whole registry with one carried by a snapshot taken at `index`. */
  restore(encoded: Uint8Array, index: number): void {
    const image = parseImage(Buffer.from(encoded).toString('utf8'));
    this.members.clear();
    for (const m of image.members) this.members.set(m.id, cloneRecord(m));
    if (BigInt(image.clusterId) !== 0n) this.clusterIdValue = BigInt(image.clusterId);
    this.indexValue = index;
    this.save();
  }

  private image(): RegistryImage {
    return { clusterId: this.clusterIdValue.toString(), index: this.indexValue, members: this.list() };
  }

  /** Atomic replacement: a crash leaves the old file or the new one, never a torn one. */
  private save(): void {
    if (this.file === null) return;
    const temporary = `${this.file}.tmp`;
    const fd = openSync(temporary, 'w', PRIVATE_FILE_MODE);
    try {
      writeSync(fd, JSON.stringify(this.image(), null, 1));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.file);
  }
}

export function encodeMemberContext(context: MemberContext): Uint8Array {
  const json = JSON.stringify({ name: context.name, raftAddress: context.raftAddress, clientUrls: context.clientUrls, clusterId: context.clusterId.toString() });
  return Buffer.concat([Buffer.from([CONTEXT_VERSION]), Buffer.from(json, 'utf8')]);
}

/**
 * Null for an empty context (the bootstrap entries of a new cluster carry none). A context that
 * is not ours is taken as a bare Raft address, the convention of raft/node's own callers.
 */
export function decodeMemberContext(data: Uint8Array): MemberContext | null {
  if (data.length === 0) return null;
  if (data[0] !== CONTEXT_VERSION) return { name: '', raftAddress: Buffer.from(data).toString('utf8'), clientUrls: [], clusterId: 0n };
  const parsed = JSON.parse(Buffer.from(data.subarray(1)).toString('utf8')) as Record<string, unknown>;
  return {
    name: typeof parsed.name === 'string' ? parsed.name : '',
    raftAddress: typeof parsed.raftAddress === 'string' ? parsed.raftAddress : '',
    clientUrls: Array.isArray(parsed.clientUrls) ? parsed.clientUrls.filter((u): u is string => typeof u === 'string') : [],
    clusterId: typeof parsed.clusterId === 'string' && /^\d+$/.test(parsed.clusterId) ? BigInt(parsed.clusterId) : 0n,
  };
}

export function encodeMemberAttributes(update: MemberAttributes): Uint8Array {
  return Buffer.from(JSON.stringify(update), 'utf8');
}

export function decodeMemberAttributes(data: Uint8Array): MemberAttributes {
  const parsed = JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>;
  if (typeof parsed.id !== 'number' || !Number.isSafeInteger(parsed.id)) throw new Error('member attributes without a member id');
  const update: MemberAttributes = { id: parsed.id };
  if (typeof parsed.name === 'string') update.name = parsed.name;
  if (Array.isArray(parsed.clientUrls)) update.clientUrls = parsed.clientUrls.filter((u): u is string => typeof u === 'string');
  if (typeof parsed.raftAddress === 'string') update.raftAddress = parsed.raftAddress;
  return update;
}

/** A Raft snapshot's payload: the registry, then the store's image (magic, length, registry, image). */
export function wrapSnapshotImage(registry: Uint8Array, image: Uint8Array): Uint8Array {
  const length = Buffer.allocUnsafe(4);
  length.writeUInt32BE(registry.length);
  return Buffer.concat([SNAPSHOT_MAGIC, length, registry, image]);
}

/** Splits a snapshot payload; one written before the registry existed is the image alone. */
export function unwrapSnapshotImage(data: Uint8Array): { registry: Uint8Array | null; image: Uint8Array } {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (b.length < 8 || !b.subarray(0, 4).equals(SNAPSHOT_MAGIC)) return { registry: null, image: data };
  const length = b.readUInt32BE(4);
  if (8 + length > b.length) throw new Error(`snapshot: member registry of ${length} bytes overruns the payload`);
  return { registry: b.subarray(8, 8 + length), image: b.subarray(8 + length) };
}

function parseImage(text: string): RegistryImage {
  const parsed = JSON.parse(text) as Partial<RegistryImage>;
  if (typeof parsed.clusterId !== 'string' || !/^\d+$/.test(parsed.clusterId)) throw new Error('no cluster id');
  if (typeof parsed.index !== 'number' || !Array.isArray(parsed.members)) throw new Error('no index or members');
  for (const m of parsed.members) {
    if (typeof m.id !== 'number' || typeof m.name !== 'string' || typeof m.raftAddress !== 'string' || !Array.isArray(m.clientUrls)) {
      throw new Error(`malformed member ${JSON.stringify(m)}`);
    }
  }
  return { clusterId: parsed.clusterId, index: parsed.index, members: parsed.members };
}

function cloneRecord(m: MemberRecord): MemberRecord {
  return { id: m.id, name: m.name, raftAddress: m.raftAddress, clientUrls: [...m.clientUrls] };
}
