export { applyDefaults } from './object-defaulter';
export type { JsonObject } from './object-defaulter';
export { prepareForCreate, prepareForUpdate } from './object-preparation';
export type { UpdateSubresource } from './object-preparation';
export { podQosClass } from './pod-qos-class';
export type { PodQosClass } from './pod-qos-class';
