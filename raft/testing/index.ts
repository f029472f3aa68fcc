/**
 * The public surface of raft/testing: a deterministic simulator for the consensus core (network,
 * disk and clock simulated in-process, everything driven by one seed) and the safety checkers
 * that run after every step. Used by test/sim/; production code never imports it.
 */
export { SafetyChecker, SimulationViolation, type CheckedNode, type CheckerStats } from './checkers';
export {
  SimCluster,
  SimNode,
  type CrashPoint,
  type RequestOutcome,
  type SimClusterOptions,
  type SimClusterStats,
} from './sim-cluster';
export { RELIABLE_NETWORK, SimNetwork, type Envelope, type NetworkFaults, type SendOutcome } from './sim-network';
export { SimStateMachine, encodePayload, entryKey, keyPayload, payloadText } from './sim-state-machine';
export {
  chooseParams,
  formatSummary,
  runSimulation,
  type SimulationOptions,
  type SimulationParams,
  type SimulationSummary,
} from './simulation';
export {
  checkLinearizable,
  type BlockedOperation,
  type CheckOptions,
  type CheckResult,
  type CheckStats,
  type LinearizabilityViolation,
  type Model,
  type Operation,
} from './linearizability';
export {
  kvModel,
  type KvCasOutput,
  type KvDeleteOutput,
  type KvGetOutput,
  type KvInput,
  type KvOperation,
  type KvOutput,
  type KvPutOutput,
  type KvState,
} from './kv-model';
