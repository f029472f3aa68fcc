/**
 * `carina members --endpoints host:port,...`: the members of a running cluster and the state of
 * each (role, term, last and applied log index, lag behind the leader), asked of each member's
 * etcd v3 API as `etcdctl endpoint status` does.
 */
import { EtcdClient } from '../../raft';

export interface MemberRow {
  id: string;
  name: string;
  endpoint: string;
  role: string;
  term: number | undefined;
  index: number | undefined;
  applied: number | undefined;
  lag: number | undefined;
  error?: string;
}

export async function memberStatus(endpoints: string[], timeoutMs = 3000): Promise<MemberRow[]> {
  const first = new EtcdClient({ endpoints, timeoutMs });
  let members;
  try {
    members = (await first.memberList()).members;
  } finally {
    await first.close();
  }
  const rows: MemberRow[] = [];
  for (const member of members) {
    const endpoint = (member.clientUrls[0] ?? '').replace(/^https?:\/\//, '');
    const client = new EtcdClient({ endpoints: [endpoint], timeoutMs });
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
      });
    } catch (err) {
      rows.push({ id: member.id.toString(), name: member.name, endpoint, role: 'unreachable', term: undefined, index: undefined, applied: undefined, lag: undefined, error: (err as Error).message });
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
  const header = ['ID', 'NAME', 'ENDPOINT', 'ROLE', 'TERM', 'INDEX', 'APPLIED', 'LAG'];
  const cells = rows.map((r) => [r.id, r.name, r.endpoint, r.role, String(r.term ?? '-'), String(r.index ?? '-'), String(r.applied ?? '-'), String(r.lag ?? '-')]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd();
  return [line(header), ...cells.map(line)].join('\n') + '\n';
}
