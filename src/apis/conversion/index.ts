/**
 * Conversion between the served versions of v1.25's multi-version resources.
 * @example
 *   const stored = convertVersion(v1Autoscaler, 'autoscaling/v2');
 *   // { ..., spec: { ..., metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }] } }
 *   needsConversion('events.k8s.io/v1', 'Event', 'v1'); // true
 */

export { convertVersion, needsConversion } from './version-converter';
