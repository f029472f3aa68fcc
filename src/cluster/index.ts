/**
 * A cluster of Carina replicas on this machine and its membership, operated from outside: the
 * local cluster behind HAProxy (`carina local-cluster`), the member table and online membership
 * changes (`carina members`), and the flags every replica's Node is started with. The command
 * line (src/cli) and the chaos suite (src/chaos) both drive clusters through this folder, which
 * imports neither.
 */
export { distributeSharedPki, haproxyConfig, localClusterDown, localClusterUp, readyz, waitReady, type LocalCluster, type LocalClusterOptions } from './local-cluster';
export {
  addMember,
  formatMemberTable,
  memberStatus,
  parseMemberId,
  promoteAttemptFailure,
  promoteMember,
  removeMember,
  transferLeadership,
  type AddMemberRequest,
  type MemberRow,
  type PromoteOptions,
  type StoreAccess,
} from './members';
export { SERVER_NODE_FLAGS } from './node-flags';
