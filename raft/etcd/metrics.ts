/**
 * The store replica's metrics under etcd 3.4's names, meanings, labels, buckets and units
 * (etcd's Documentation/metrics/v3.4.x lists them; test/fixtures/metrics/definitions.json keeps
 * the ones Carina exports), as plain MetricFamily data (raft/node/metrics.ts): raft/ depends on
 * no metrics library and says nothing of who serves them.
 *
 * Where Carina's meaning differs from etcd's, the difference is said at the family:
 * - etcd_disk_wal_fsync_duration_seconds: each synced write of the log is one write on an
 *   O_DSYNC segment (the write and its fdatasync in one system call, raft/storage), timed whole;
 * - etcd_disk_backend_commit_duration_seconds: each batch committed to the LevelDB state (the
 *   journal value of raft/kv/level-mvcc.ts), where etcd times bbolt's commit;
 * - etcd_mvcc_db_total_size_in_bytes: the bytes of the LevelDB files; _in_use_: the retained
 *   records' keys and values, as the etcd API's Status dbSize reports them;
 * - etcd_network_peer_round_trip_time_seconds: on the leader, from a heartbeat to its answer
 *   (etcd probes its peers with HTTP requests of its own);
 * - etcd_server_slow_apply_total: apply batches over 100 ms (etcd's warnApplyDuration), where
 *   etcd counts single requests.
 * grpc_server_started_total and grpc_server_handled_total follow go-grpc-prometheus, which etcd
 * uses: started is pre-set to 0 for every method and handled for every method and code, as its
 * InitializeMetrics does.
 */
import type { NodeId } from '../core';
import { exponentialBuckets, type HistogramSnapshot, type MetricFamily, type MetricLabels } from '../node';
import type { RaftNodeMetrics } from '../node';
import { ETCD_METHODS, ETCD_PROTO_PACKAGE, type EtcdMethodName } from './codec';

/** gRPC status codes by number, as go-grpc-prometheus names them in grpc_code. */
const GRPC_CODE_NAMES = [
  'OK', 'Canceled', 'Unknown', 'InvalidArgument', 'DeadlineExceeded', 'NotFound', 'AlreadyExists', 'PermissionDenied',
  'ResourceExhausted', 'FailedPrecondition', 'Aborted', 'OutOfRange', 'Unimplemented', 'Internal', 'Unavailable', 'DataLoss', 'Unauthenticated',
];

/** go-grpc-prometheus' grpc_type of each method etcd serves (everything else is unary). */
const STREAM_TYPES: Partial<Record<EtcdMethodName, string>> = { watch: 'bidi_stream', leaseKeepAlive: 'bidi_stream', snapshot: 'server_stream' };

/** etcd's buckets for etcd_disk_backend_commit_duration_seconds: 1 ms to 8.192 s. */
export const BACKEND_COMMIT_BUCKETS = exponentialBuckets(0.001, 2, 14);

function methodLabels(name: EtcdMethodName): MetricLabels {
  const { service, method } = ETCD_METHODS[name];
  return { grpc_type: STREAM_TYPES[name] ?? 'unary', grpc_service: `${ETCD_PROTO_PACKAGE}.${service}`, grpc_method: method };
}

function labelKey(labels: MetricLabels): string {
  return JSON.stringify(labels);
}

/** The etcd API server's gRPC counters: calls started and handled, bytes in and out. */
export class GrpcServerMetrics {
  private readonly started = new Map<string, { labels: MetricLabels; value: number }>();
  private readonly handled = new Map<string, { labels: MetricLabels; value: number }>();
  receivedBytes = 0;
  sentBytes = 0;

  constructor() {
    // Every method's series exist from the start, at 0, as go-grpc-prometheus' InitializeMetrics
    // makes them for etcd: started per method, handled per method and code.
    for (const name of Object.keys(ETCD_METHODS) as EtcdMethodName[]) {
      const labels = methodLabels(name);
      this.started.set(labelKey(labels), { labels, value: 0 });
      for (const code of GRPC_CODE_NAMES) {
        const handled = { ...labels, grpc_code: code };
        this.handled.set(labelKey(handled), { labels: handled, value: 0 });
      }
    }
  }

  callStarted(name: EtcdMethodName): void {
    const entry = this.started.get(labelKey(methodLabels(name)));
    if (entry !== undefined) entry.value++;
  }

  callHandled(name: EtcdMethodName, code: number): void {
    const labels = { ...methodLabels(name), grpc_code: GRPC_CODE_NAMES[code] ?? 'Unknown' };
    const key = labelKey(labels);
    const entry = this.handled.get(key);
    if (entry === undefined) this.handled.set(key, { labels, value: 1 });
    else entry.value++;
  }

  families(): MetricFamily[] {
    return [
      { name: 'etcd_network_client_grpc_received_bytes_total', help: 'The total number of bytes received from grpc clients.', type: 'counter', values: [{ labels: {}, value: this.receivedBytes }] },
      { name: 'etcd_network_client_grpc_sent_bytes_total', help: 'The total number of bytes sent to grpc clients.', type: 'counter', values: [{ labels: {}, value: this.sentBytes }] },
      { name: 'grpc_server_started_total', help: 'Total number of RPCs started on the server.', type: 'counter', values: [...this.started.values()].map((e) => ({ ...e })) },
      { name: 'grpc_server_handled_total', help: 'Total number of RPCs completed on the server, regardless of success or failure.', type: 'counter', values: [...this.handled.values()].map((e) => ({ ...e })) },
    ];
  }
}

/** What the replica knows at scrape time. */
export interface StoreMetricsInput {
  memberId: NodeId;
  /** The etcd version the store's API reports (Maintenance.Status). */
  version: string;
  role: string;
  lead: NodeId;
  commit: number;
  applied: number;
  pendingProposals: number;
  node: RaftNodeMetrics;
  sendFailuresByPeer: ReadonlyMap<NodeId, number>;
  heartbeatSendFailures: number;
  backendCommit: HistogramSnapshot;
  dbTotalBytes: number;
  dbInUseBytes: number;
  keys: number;
  grpc: GrpcServerMetrics;
}

/**
 * What a status page shows of the replica, as plain data: the members, this replica's view of
 * the log, on the leader each follower's lag and heartbeat round trip, the recent leader changes
 * and what is wrong (the store found diverged, followers not answering).
 */
export interface StoreStatusReport {
  memberId: NodeId;
  role: string;
  term: number;
  leader: NodeId;
  commit: number;
  applied: number;
  lastIndex: number;
  revision: number;
  members: Array<{ id: NodeId; name: string; peerUrls: string[]; clientUrls: string[]; isLearner: boolean }>;
  /** On the leader only: per follower, entries behind the leader's last index, last round trip, and how long a heartbeat has gone unanswered. */
  followers: Array<{ id: NodeId; match: number; lagEntries: number; state: string; lastRoundTripMs: number | null; unansweredMs: number }>;
  leaderChanges: Array<{ atMs: number; leader: NodeId; term: number }>;
  /** On the leader: followers that answered a heartbeat only after more than a second (a fault now over). */
  peerSilences: Array<{ atMs: number; peer: NodeId; silentMs: number }>;
  corruption: string | null;
}

/** etcd writes member ids in hexadecimal (types.ID.String). */
export function memberIdLabel(id: NodeId): string {
  return id.toString(16);
}

function scalar(name: string, help: string, type: 'counter' | 'gauge', value: number): MetricFamily {
  return { name, help, type, values: [{ labels: {}, value }] };
}

export function storeMetricFamilies(input: StoreMetricsInput): MetricFamily[] {
  const peers = [...input.node.peerRoundTrip.entries()].sort(([a], [b]) => a - b);
  const failures = [...input.sendFailuresByPeer.entries()].sort(([a], [b]) => a - b);
  return [
    scalar('etcd_server_has_leader', 'Whether or not a leader exists. 1 is existence, 0 is not.', 'gauge', input.lead !== 0 ? 1 : 0),
    scalar('etcd_server_is_leader', 'Whether or not this member is a leader. 1 if is, 0 otherwise.', 'gauge', input.role === 'leader' ? 1 : 0),
    scalar('etcd_server_leader_changes_seen_total', 'The number of leader changes seen.', 'counter', input.node.leaderChanges),
    // Gauges in etcd 3.4 despite the _total: the committed and applied indexes.
    scalar('etcd_server_proposals_committed_total', 'The total number of consensus proposals committed.', 'gauge', input.commit),
    scalar('etcd_server_proposals_applied_total', 'The total number of consensus proposals applied.', 'gauge', input.applied),
    scalar('etcd_server_proposals_pending', 'The current number of pending proposals to commit.', 'gauge', input.pendingProposals),
    scalar('etcd_server_proposals_failed_total', 'The total number of failed proposals seen.', 'counter', input.node.proposalsFailed),
    scalar('etcd_server_slow_apply_total', 'The total number of slow apply requests (likely overloaded from slow disk).', 'counter', input.node.slowApplies),
    scalar('etcd_server_heartbeat_send_failures_total', 'The total number of leader heartbeat send failures (likely overloaded from slow disk).', 'counter', input.heartbeatSendFailures),
    { name: 'etcd_server_id', help: "Server or member ID in hexadecimal format. 1 for 'server_id' label with current ID.", type: 'gauge', values: [{ labels: { server_id: memberIdLabel(input.memberId) }, value: 1 }] },
    { name: 'etcd_server_version', help: "Which version is running. 1 for 'server_version' label with current version.", type: 'gauge', values: [{ labels: { server_version: input.version }, value: 1 }] },
    { name: 'etcd_disk_wal_fsync_duration_seconds', help: 'The latency distributions of fsync called by WAL.', type: 'histogram', histograms: [{ labels: {}, histogram: input.node.walFsync.snapshot() }] },
    { name: 'etcd_disk_backend_commit_duration_seconds', help: 'The latency distributions of commit called by backend.', type: 'histogram', histograms: [{ labels: {}, histogram: input.backendCommit }] },
    scalar('etcd_mvcc_db_total_size_in_bytes', 'Total size of the underlying database physically allocated in bytes.', 'gauge', input.dbTotalBytes),
    scalar('etcd_mvcc_db_total_size_in_use_in_bytes', 'Total size of the underlying database logically in use in bytes.', 'gauge', input.dbInUseBytes),
    scalar('etcd_debugging_mvcc_keys_total', 'Total number of keys.', 'gauge', input.keys),
    {
      name: 'etcd_network_peer_round_trip_time_seconds',
      help: 'Round-Trip-Time histogram between peers',
      type: 'histogram',
      histograms: peers.map(([peer, histogram]) => ({ labels: { To: memberIdLabel(peer) }, histogram: histogram.snapshot() })),
    },
    {
      name: 'etcd_network_peer_sent_failures_total',
      help: 'The total number of send failures from peers.',
      type: 'counter',
      values: failures.map(([peer, value]) => ({ labels: { To: memberIdLabel(peer) }, value })),
    },
    ...input.grpc.families(),
  ];
}

