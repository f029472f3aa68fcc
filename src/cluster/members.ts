/**
 * `carina members --endpoints host:port,...`: the members of a running cluster and the state of
 * each (role, term, last and applied log index, lag behind the leader), asked of each member's
 * etcd v3 API as `etcdctl endpoint status` does; and the online membership changes, through
 * etcd's Cluster service: add (a learner or a voter), promote (optionally waiting, with
 * progress, until the learner has caught up), remove, and transfer-leader (etcd's MoveLeader).
 * Every call goes over TLS with the caller's client certificate (StoreAccess).
 */
import { EtcdClient, isKvError, isMembershipError, isStoreUnavailable, type EtcdClientTls } from '../../raft';

/** Where the store is and how to reach it: its etcd API requires a client certificate from the store CA. */
export interface StoreAccess {
  endpoints: string[];
  tls?: EtcdClientTls;
}

export interface MemberRow {
  id: string;
  name: string;
  endpoint: string;
  role: string;
  term: number | undefined;
  index: number | undefined;
  applied: number | undefined;
  lag: number | undefined;
  /** 'ok', or what the member's Status reports as wrong (a store found corrupt); '-' when unknown. */
  health: string;
  error?: string;
}

export async function memberStatus(store: StoreAccess, timeoutMs = 3000): Promise<MemberRow[]> {
  const first = new EtcdClient({ endpoints: store.endpoints, tls: store.tls, timeoutMs });
  let members;
  try {
    members = (await first.memberList()).members;
  } finally {
    await first.close();
  }
  const rows: MemberRow[] = [];
  for (const member of members) {
    const endpoint = (member.clientUrls[0] ?? '').replace(/^https?:\/\//, '');
    if (endpoint === '') {
      // Added, but not yet started: it has not published its name and client URLs.
      rows.push({ id: member.id.toString(), name: member.name, endpoint, role: member.isLearner ? 'learner (unstarted)' : 'unstarted', term: undefined, index: undefined, applied: undefined, lag: undefined, health: '-' });
      continue;
    }
    const client = new EtcdClient({ endpoints: [member.clientUrls[0]], tls: store.tls, timeoutMs });
    try {
      const status = await client.status();
      rows.push({
        id: member.id.toString(),
        name: member.name,
        endpoint,
        role: member.isLearner ? 'learner' : status.leader === member.id ? 'leader' : 'follower',
        term: status.raftTerm,
        index: status.raftIndex,
        applied: status.raftAppliedIndex,
        lag: undefined,
        // A replica whose consistency check failed says so in Status.errors (etcd's alarms do too).
        health: status.errors.length === 0 ? 'ok' : status.errors.some((e) => /corrupt|diverged/i.test(e)) ? 'corrupt' : 'error',
      });
    } catch (err) {
      rows.push({ id: member.id.toString(), name: member.name, endpoint, role: 'unreachable', term: undefined, index: undefined, applied: undefined, lag: undefined, health: '-', error: (err as Error).message });
    } finally {
      await client.close();
    }
  }
  const leader = rows.find((r) => r.role === 'leader');
  for (const row of rows) {
    if (leader?.index !== undefined && row.applied !== undefined) row.lag = Math.max(0, leader.index - row.applied);
  }
  return rows;
}

export function formatMemberTable(rows: MemberRow[]): string {
  const header = ['ID', 'NAME', 'ENDPOINT', 'ROLE', 'TERM', 'INDEX', 'APPLIED', 'LAG', 'HEALTH'];
  const cells = rows.map((r) => [r.id, r.name, r.endpoint, r.role, String(r.term ?? '-'), String(r.index ?? '-'), String(r.applied ?? '-'), String(r.lag ?? '-'), r.health]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd();
  return [line(header), ...cells.map(line)].join('\n') + '\n';
}

export interface AddMemberRequest {
  name: string;
  /** host:port of the new member's Raft transport. */
  peerAddress: string;
  /** URL of the new member's etcd v3 API (https://host:port). */
  clientUrl: string;
  learner: boolean;
}

/**
 * Adds a member and returns what to print: as `etcdctl member add`, the settings the new member
 * must start with (the cluster as it is now, itself included, and --initial-cluster-state existing).
 */
export async function addMember(store: StoreAccess, request: AddMemberRequest, timeoutMs = 10_000): Promise<{ id: bigint; text: string }> {
  const client = new EtcdClient({ endpoints: store.endpoints, tls: store.tls, timeoutMs });
  try {
    const response = await client.memberAdd([`https://${request.peerAddress}`], request.learner);
    const newId = response.member.id;
    const clientAddress = request.clientUrl.replace(/^https?:\/\//, '').replace(/\/+$/, '');
    const initialCluster = response.members
      .map((m) => (m.id === newId ? { ...m, clientUrls: [request.clientUrl] } : m))
      .filter((m) => m.peerUrls.length > 0 && m.clientUrls.length > 0)
      .map((m) => `${m.id}@${hostPort(m.peerUrls[0])}@${hostPort(m.clientUrls[0])}`)
      .join(',');
    const text =
      `Member ${newId} added to cluster ${response.header.clusterId}${request.learner ? ' as a learner' : ''}\n\n` +
      'Give it the certificates first: its store ports accept only peers and clients whose certificates come from the\n' +
      'cluster\'s store CA, so it needs the shared PKI (ca.crt ca.key sa.key sa.pub etcd/ca.crt etcd/ca.key) of any member:\n' +
      '  carina pki copy --from <a member\'s data-dir>/pki --to <its data-dir>/pki    (or copy those six files with scp, keys mode 0600)\n' +
      'It issues its own server, peer and client certificates from them when it starts.\n\n' +
      'Start the new member with:\n' +
      `  carina server --name ${request.name} --member-id ${newId} --initial-cluster-state existing --initial-cluster ${initialCluster} --listen-etcd-address ${clientAddress}\n` +
      (request.learner ? `then, once it has caught up: carina members promote ${newId} --wait\n` : '');
    return { id: newId, text };
  } finally {
    await client.close();
  }
}

export async function removeMember(store: StoreAccess, id: bigint, timeoutMs = 10_000): Promise<string> {
  const client = new EtcdClient({ endpoints: store.endpoints, tls: store.tls, timeoutMs });
  try {
    const response = await client.memberRemove(id);
    return `Member ${id} removed from cluster ${response.header.clusterId}\n`;
  } finally {
    await client.close();
  }
}

export interface PromoteOptions {
  /** Wait until the learner has caught up, printing progress, then promote it. */
  wait: boolean;
  waitTimeoutMs: number;
  pollMs?: number;
  progress?: (line: string) => void;
}

/**
 * Promotes a learner. With `wait`, polls the learner's applied index against the leader's last
 * index, printing a line whenever it moves, and promotes once the leader agrees it is in sync.
 * Waiting also rides out a cluster that cannot answer for a moment (an election, a member
 * stopping); if such an attempt was applied after all, the next one finds the member a voter.
 */
export async function promoteMember(store: StoreAccess, id: bigint, options: PromoteOptions, timeoutMs = 10_000): Promise<string> {
  const client = new EtcdClient({ endpoints: store.endpoints, tls: store.tls, timeoutMs });
  const deadline = Date.now() + options.waitTimeoutMs;
  const say = options.progress ?? (() => undefined);
  let lastLine = '';
  let outcomeUnknown = false;
  try {
    for (;;) {
      try {
        const response = await client.memberPromote(id);
        return `Member ${id} promoted in cluster ${response.header.clusterId}\n`;
      } catch (err) {
        if (outcomeUnknown && isMembershipError(err) && err.code === 'NOT_LEARNER') {
          const listed = await client.memberList().catch(() => undefined);
          if (listed?.members.some((m) => m.id === id && !m.isLearner)) return `Member ${id} promoted in cluster ${listed.header.clusterId}\n`;
        }
        const failure = promoteAttemptFailure(err);
        outcomeUnknown ||= failure.mayHaveApplied;
        if (!options.wait || !failure.retry) throw err;
        if (Date.now() > deadline) {
          say(`member ${id}: not promoted within ${Math.round(options.waitTimeoutMs / 1000)} s; last: ${lastLine || 'no progress known'}; the leader answered: ${(err as Error).message}`);
          throw err;
        }
      }
      const line = await learnerProgress(store, id, timeoutMs);
      if (line !== lastLine) say(line);
      lastLine = line;
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500));
    }
  } finally {
    await client.close();
  }
}

/**
 * How `promote --wait` treats a failed attempt. Worth another try: the learner is not in sync
 * yet, too few voters are started, or the cluster could not answer (no leader, an election, a
 * member stopping or unreachable, a member that no longer leads). Of these, an attempt that
 * timed out or lost its connection may still have been applied. Anything else (an unknown
 * member, a member that is no voter-to-be) is the answer.
 */
export function promoteAttemptFailure(err: unknown): { retry: boolean; mayHaveApplied: boolean } {
  if (isStoreUnavailable(err)) return { retry: true, mayHaveApplied: !(isKvError(err) && err.code === 'NO_LEADER') };
  if (isKvError(err) && err.code === 'NOT_LEADER') return { retry: true, mayHaveApplied: false };
  if (isMembershipError(err) && (err.code === 'LEARNER_NOT_READY' || err.code === 'NOT_ENOUGH_STARTED')) return { retry: true, mayHaveApplied: false };
  return { retry: false, mayHaveApplied: false };
}

async function learnerProgress(store: StoreAccess, id: bigint, timeoutMs: number): Promise<string> {
  const rows = await memberStatus(store, timeoutMs).catch(() => []);
  const learner = rows.find((r) => r.id === id.toString());
  const leader = rows.find((r) => r.role === 'leader');
  if (learner === undefined) return `member ${id}: not listed yet`;
  if (learner.applied === undefined) return `member ${id}: waiting for it to start (${learner.role})`;
  if (leader?.index === undefined) return `member ${id}: applied ${learner.applied}; no leader known`;
  const percent = leader.index === 0 ? 100 : Math.min(100, Math.floor((100 * learner.applied) / leader.index));
  return `member ${id}: applied index ${learner.applied} of the leader's ${leader.index} (${percent}%)`;
}

/** etcd's MoveLeader, sent to the current leader (only it can hand over). */
export async function transferLeadership(store: StoreAccess, target: bigint, timeoutMs = 10_000): Promise<string> {
  const rows = await memberStatus(store, timeoutMs);
  const leader = rows.find((r) => r.role === 'leader');
  if (leader === undefined) throw new Error('no member reports itself as the leader');
  if (leader.id === target.toString()) return `Member ${target} already leads\n`;
  if (!rows.some((r) => r.id === target.toString())) throw new Error(`member ${target} is not in the cluster`);
  const client = new EtcdClient({ endpoints: [leader.endpoint], tls: store.tls, timeoutMs });
  try {
    await client.moveLeader(target);
    return `Leadership transferred from ${leader.id} to ${target}\n`;
  } finally {
    await client.close();
  }
}

/** A member id as printed by carina (decimal) or by etcdctl (hex, 0x-prefixed or with a-f digits). */
export function parseMemberId(text: string): bigint {
  const t = text.trim().toLowerCase();
  if (/^\d+$/.test(t)) return BigInt(t);
  if (/^(0x)?[0-9a-f]+$/.test(t)) return BigInt(t.startsWith('0x') ? t : `0x${t}`);
  throw new Error(`"${text}" is not a member id`);
}

function hostPort(url: string): string {
  return url.replace(/^https?:\/\//, '').replace(/\/+$/, '');
}
