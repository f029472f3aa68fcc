/** The runtime that drives the core with real time, storage and network. */
export { RaftNode, type RaftNodeOptions, type RaftNodeMetrics } from './raft-node';
export type { AppliedEntry, DurableStorage, Proposed, StateMachine, Transport } from './contracts';
export { MetricsFile, type MetricsSample } from './metrics-file';
export { Histogram, exponentialBuckets, type HistogramSnapshot, type MetricFamily, type MetricLabels, type MetricType } from './metrics';
