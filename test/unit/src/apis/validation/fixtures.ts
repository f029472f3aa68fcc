/** Valid, defaulted v1.25 objects that tests break one field at a time. */
import { fieldErrorMessage, type FieldError } from '../../../../../src/apis/validation';
import type { JsonObject } from '../../../../../src/apis/object';

export function messages(errors: FieldError[]): string[] {
  return errors.map(fieldErrorMessage);
}

/** A deep copy with `edit` applied, so each table row starts from the pristine fixture. */
export function edited<T extends JsonObject>(object: T, edit: (copy: T) => void): T {
  const copy = structuredClone(object);
  edit(copy);
  return copy;
}

export const podSpec = (): JsonObject => ({
  containers: [{ name: 'app', image: 'nginx:1.25', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', terminationMessagePath: '/dev/termination-log' }],
  restartPolicy: 'Always',
  dnsPolicy: 'ClusterFirst',
  terminationGracePeriodSeconds: 30,
  schedulerName: 'default-scheduler',
  securityContext: {},
});

export const pod = (): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', uid: 'u-1', resourceVersion: '5', creationTimestamp: '2024-01-02T03:04:05Z' },
  spec: podSpec(),
});

export const deployment = (): JsonObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', uid: 'u-2', resourceVersion: '7', generation: 1 },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: podSpec() },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
    revisionHistoryLimit: 10,
    progressDeadlineSeconds: 600,
  },
});

export const job = (): JsonObject => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'pi', namespace: 'default', uid: 'j-1', resourceVersion: '3' },
  spec: {
    selector: { matchLabels: { 'controller-uid': 'j-1' } },
    template: { metadata: { labels: { 'controller-uid': 'j-1', 'job-name': 'pi' } }, spec: { ...podSpec(), restartPolicy: 'Never' } },
    backoffLimit: 6,
    completionMode: 'NonIndexed',
    suspend: false,
  },
});

export const cronJob = (): JsonObject => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name: 'nightly', namespace: 'default', resourceVersion: '4' },
  spec: {
    schedule: '0 3 * * *',
    concurrencyPolicy: 'Allow',
    jobTemplate: { spec: { template: { spec: { ...podSpec(), restartPolicy: 'OnFailure' } } } },
    successfulJobsHistoryLimit: 3,
    failedJobsHistoryLimit: 1,
  },
});

export const service = (): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'default', resourceVersion: '9' },
  spec: {
    type: 'ClusterIP',
    selector: { app: 'web' },
    ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }],
    clusterIP: '10.96.0.10',
    clusterIPs: ['10.96.0.10'],
    sessionAffinity: 'None',
  },
});
