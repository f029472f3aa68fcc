import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GrpcCode, KvError, kvErrorFromGrpc } from '../../../../raft/kv/errors';
import {
  MemberRegistry,
  decodeMemberAttributes,
  decodeMemberContext,
  encodeMemberAttributes,
  encodeMemberContext,
  unwrapSnapshotImage,
  wrapSnapshotImage,
  type MemberRecord,
} from '../../../../raft/etcd/member-registry';
import { MEMBERSHIP_ERROR_CODES, isMembershipError } from '../../../../raft/etcd/membership-errors';

const SEED: MemberRecord[] = [
  { id: 1, name: 'a', raftAddress: '127.0.0.1:1001', clientUrls: ['http://127.0.0.1:1002'] },
  { id: 2, name: 'b', raftAddress: '127.0.0.1:2001', clientUrls: ['http://127.0.0.1:2002'] },
];

const EMPTY = new Uint8Array(0);

describe('raft/etcd member registry', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'member-registry-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('adds a member from its conf change context and removes it on removal', () => {
    const registry = MemberRegistry.open(null, { clusterId: 7n, members: SEED });
    const context = encodeMemberContext({ name: '', raftAddress: '127.0.0.1:3001', clientUrls: [], clusterId: 7n });
    expect(registry.applyConfChange({ type: 'addLearnerNode', nodeId: 3, context }, 10)).to.equal(true);
    expect(registry.get(3)).to.deep.equal({ id: 3, name: '', raftAddress: '127.0.0.1:3001', clientUrls: [] });
    expect(registry.findByRaftAddress('127.0.0.1:3001')?.id).to.equal(3);
    // Promotion carries no context: the record stays as it was.
    registry.applyConfChange({ type: 'addNode', nodeId: 3, context: EMPTY }, 11);
    expect(registry.get(3)?.raftAddress).to.equal('127.0.0.1:3001');
    registry.applyConfChange({ type: 'removeNode', nodeId: 1, context: EMPTY }, 12);
    expect(registry.list().map((m) => m.id)).to.deep.equal([2, 3]);
    expect(registry.index).to.equal(12);
  });

  it('skips entries it already reflects, so replaying the log after a restart changes nothing', () => {
    const file = join(dir, 'members.json');
    const registry = MemberRegistry.open(file, { clusterId: 7n, members: SEED });
    const add = { type: 'addNode' as const, nodeId: 3, context: encodeMemberContext({ name: 'c', raftAddress: 'h:3', clientUrls: [], clusterId: 7n }) };
    registry.applyConfChange(add, 5);
    registry.applyConfChange({ type: 'removeNode', nodeId: 3, context: EMPTY }, 6);
    const reopened = MemberRegistry.open(file, { clusterId: 99n, members: [] });
    expect(reopened.clusterId).to.equal(7n);
    expect(reopened.index).to.equal(6);
    // The replay from an older applied index brings the add back only if it is not skipped.
    expect(reopened.applyConfChange(add, 5)).to.equal(false);
    expect(reopened.list().map((m) => m.id)).to.deep.equal([1, 2]);
  });

  it('survives a restart: the file holds every member and the index', () => {
    const file = join(dir, 'members.json');
    const registry = MemberRegistry.open(file, { clusterId: 7n, members: SEED });
    registry.applyConfChange({ type: 'addLearnerNode', nodeId: 9, context: encodeMemberContext({ name: 'n', raftAddress: 'h:9', clientUrls: ['http://h:8'], clusterId: 7n }) }, 3);
    registry.applyAttributes({ id: 2, name: 'bee', clientUrls: ['http://h:2'] }, 4);
    const reopened = MemberRegistry.open(file, { clusterId: 0n, members: [] });
    expect(reopened.list()).to.deep.equal(registry.list());
    expect(reopened.get(2)).to.deep.equal({ id: 2, name: 'bee', raftAddress: '127.0.0.1:2001', clientUrls: ['http://h:2'] });
    expect(JSON.parse(readFileSync(file, 'utf8')).index).to.equal(4);
  });

  it('a joining member learns the cluster id from its own addition, and published attributes win over the context', () => {
    const registry = MemberRegistry.open(null, { clusterId: 0n, members: [] });
    registry.applyAttributes({ id: 5, name: 'ignored' }, 1);
    expect(registry.get(5)).to.equal(undefined);
    registry.applyConfChange({ type: 'addLearnerNode', nodeId: 5, context: encodeMemberContext({ name: '', raftAddress: 'h:5', clientUrls: [], clusterId: 42n }) }, 2);
    expect(registry.clusterId).to.equal(42n);
    registry.applyAttributes({ id: 5, name: 'five', clientUrls: ['http://h:6'] }, 3);
    registry.applyConfChange({ type: 'addNode', nodeId: 5, context: encodeMemberContext({ name: '', raftAddress: 'h:5', clientUrls: [], clusterId: 42n }) }, 4);
    expect(registry.get(5)).to.deep.equal({ id: 5, name: 'five', raftAddress: 'h:5', clientUrls: ['http://h:6'] });
  });

  it('travels in a snapshot: restore replaces the whole registry', () => {
    const source = MemberRegistry.open(null, { clusterId: 7n, members: SEED });
    source.applyConfChange({ type: 'addNode', nodeId: 3, context: encodeMemberContext({ name: 'c', raftAddress: 'h:3', clientUrls: ['http://h:4'], clusterId: 7n }) }, 20);
    const image = Buffer.from('CKV1 the store image');
    const payload = wrapSnapshotImage(source.encode(), image);
    const { registry, image: unwrapped } = unwrapSnapshotImage(payload);
    expect(Buffer.from(unwrapped).equals(image)).to.equal(true);
    const joiner = MemberRegistry.open(join(dir, 'members.json'), { clusterId: 0n, members: [{ id: 3, name: '', raftAddress: 'h:3', clientUrls: [] }] });
    joiner.restore(registry as Uint8Array, 30);
    expect(joiner.list()).to.deep.equal(source.list());
    expect(joiner.clusterId).to.equal(7n);
    expect(joiner.index).to.equal(30);
    expect(MemberRegistry.open(join(dir, 'members.json'), { clusterId: 0n, members: [] }).list()).to.deep.equal(source.list());
  });

  it('a snapshot written before the registry existed is the store image alone', () => {
    const legacy = Buffer.from('CKV1 an image with no registry');
    const { registry, image } = unwrapSnapshotImage(legacy);
    expect(registry).to.equal(null);
    expect(Buffer.from(image).equals(legacy)).to.equal(true);
  });

  it('decodes contexts: ours, empty (bootstrap entries) and a bare address (raft/node callers)', () => {
    const ours = decodeMemberContext(encodeMemberContext({ name: 'x', raftAddress: 'h:1', clientUrls: ['http://h:2'], clusterId: 12345678901234567n }));
    expect(ours).to.deep.equal({ name: 'x', raftAddress: 'h:1', clientUrls: ['http://h:2'], clusterId: 12345678901234567n });
    expect(decodeMemberContext(EMPTY)).to.equal(null);
    expect(decodeMemberContext(Buffer.from('127.0.0.1:7000'))?.raftAddress).to.equal('127.0.0.1:7000');
    expect(decodeMemberAttributes(encodeMemberAttributes({ id: 4, raftAddress: 'h:9' }))).to.deep.equal({ id: 4, raftAddress: 'h:9' });
    expect(() => decodeMemberAttributes(Buffer.from('{"name":"x"}'))).to.throw(/member id/);
  });

  it('refuses a damaged registry file rather than starting with the wrong members', () => {
    const file = join(dir, 'members.json');
    MemberRegistry.open(file, { clusterId: 7n, members: SEED }).applyAttributes({ id: 1, name: 'z' }, 1);
    writeFileSync(file, '{"clusterId":"7","index":1,"members":[{"id":1}]}');
    expect(() => MemberRegistry.open(file, { clusterId: 7n, members: SEED })).to.throw(/member registry .*malformed member/);
  });
});

describe('raft/etcd membership errors', () => {
  it('every error reaches a client typed, with etcd\'s gRPC code and message', () => {
    for (const code of MEMBERSHIP_ERROR_CODES) {
      const sent = new KvError(code);
      expect(sent.wireMessage).to.match(/^etcdserver: /);
      const received = kvErrorFromGrpc(sent.grpcCode, sent.wireMessage);
      expect(isMembershipError(received), code).to.equal(true);
      expect(received.code).to.equal(code);
    }
    expect(new KvError('LEARNER_NOT_READY').message).to.equal('etcdserver: can only promote a learner member which is in sync with leader');
    expect(new KvError('NOT_ENOUGH_STARTED').grpcCode).to.equal(GrpcCode.FAILED_PRECONDITION);
  });

  it('tells membership refusals from other store errors', () => {
    const other = kvErrorFromGrpc(GrpcCode.NOT_FOUND, 'etcdserver: member not found');
    expect(isMembershipError(other)).to.equal(false);
    expect(other.code).to.equal('MEMBER_NOT_FOUND');
  });
});
