
export { applyDefaults } from './object-defaulter';
export { podQosClass } from './pod-qos-class';
export type { PodQosClass } from './pod-qos-class';
export { applySeccompVersionSkew } from './pod-seccomp-skew';
export { initServiceIpFamilies, patchAllocatedServiceValues } from './service-allocation-fields';
export { defaultJob } from './batch-v1-defaults';
export { semanticallyEqual } from './semantic-equality';
export { childObject, ensureObject, isEmptyCollection, isUnset } from './json-value';
