/**
 * API Priority and Fairness and the in-flight limits of kube-apiserver v1.25: classification
 * by FlowSchemas, the concurrency split over priority levels, shuffle-sharded fair queues with
 * seat accounting, the work estimate, the bootstrap configuration objects and the debug dumps.
 * Pure of I/O: the server composition feeds it the stored objects and the object counts, the
 * filter (src/http/filters/priority-and-fairness.ts) calls it per request.
 */
export { Classifier, compareFlowSchemas, flowDistinguisher, flowSchemaMatches } from './classifier';
export { FlowController, type Admission, type Classification, type QueuedAdmission, type FlowControlObserver, type FlowControllerOptions } from './flow-controller';
export { QueueSet, SYSTEM_CLOCK, type Clock, type Decision, type QueueSetConfig, type SeatRequest } from './queue-set';
export { dealHand, hashFlowId } from './shuffle-sharding';
export { estimateWork, type WorkEstimatorSources } from './work-estimator';
export { MaxInFlightLimiter, requestKind, type RequestKind } from './max-in-flight';
export { dumpPriorityLevels, dumpQueues, dumpRequests } from './debug-dump';
export { MANDATORY_FLOW_SCHEMA_NAMES, MANDATORY_PRIORITY_LEVEL_NAMES, mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas, suggestedPriorityLevels } from './bootstrap-configuration';
export { AUTO_UPDATE_ANNOTATION, FLOWCONTROL_GROUP, ONE_SEAT, maxSeats, type FlowSchema, type PriorityLevelConfiguration, type RejectReason, type RequestDigest, type WorkEstimate } from './types';
