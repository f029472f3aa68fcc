import { expect } from 'chai';
import { createdAsServer } from './create-as-server';

// Facts: k8s.io/kubernetes v1.25 pkg/apis/batch/v1/defaults.go, pkg/registry/batch/job/strategy.go
// (status reset, generation, job-tracking annotation, generateSelector) and cronjob/strategy.go.
const podSpec = { containers: [{ name: 'pi', image: 'perl:5.34', command: ['perl'] }], restartPolicy: 'Never' };
const defaultedPodSpec = {
  containers: [
    {
      name: 'pi',
      image: 'perl:5.34',
      command: ['perl'],
      imagePullPolicy: 'IfNotPresent',
      resources: {},
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    },
  ],
  dnsPolicy: 'ClusterFirst',
  restartPolicy: 'Never',
  schedulerName: 'default-scheduler',
  securityContext: {},
  terminationGracePeriodSeconds: 30,
};

describe('apis/defaulting: batch/v1', () => {
  it('Job, with the selector generated from its uid and labels read back from the template', () => {
    const uid = '3f1c9a2e-0d7b-4f7e-9a0c-2b8e6f1d4c11';
    expect(
      createdAsServer({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'pi', namespace: 'default', uid },
        spec: { template: { spec: podSpec } },
      }),
    ).to.deep.equal({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'pi',
        namespace: 'default',
        uid,
        generation: 1,
        annotations: { 'batch.kubernetes.io/job-tracking': '' },
        labels: { 'controller-uid': uid, 'job-name': 'pi' },
      },
      spec: {
        backoffLimit: 6,
        completionMode: 'NonIndexed',
        completions: 1,
        parallelism: 1,
        selector: { matchLabels: { 'controller-uid': uid } },
        suspend: false,
        template: { metadata: { creationTimestamp: null, labels: { 'controller-uid': uid, 'job-name': 'pi' } }, spec: defaultedPodSpec },
      },
      status: {},
    });
  });

  it('Job keeps its own labels, leaves completions unset when only parallelism is given and drops podFailurePolicy', () => {
    const job = createdAsServer({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'w', labels: { team: 'a' } },
      spec: { parallelism: 3, podFailurePolicy: { rules: [] }, template: { metadata: { labels: { app: 'w' } }, spec: podSpec } },
    });
    expect((job.metadata as Record<string, unknown>).labels).to.deep.equal({ team: 'a' });
    const spec = job.spec as Record<string, unknown>;
    expect(spec).not.to.have.property('completions');
    expect(spec.parallelism).to.equal(3);
    // JobPodFailurePolicy is alpha, off by default, in v1.25 (pkg/features/kube_features.go).
    expect(spec).not.to.have.property('podFailurePolicy');
  });

  it('CronJob defaults its own fields and the pod template, but not the job template as a Job', () => {
    expect(
      createdAsServer({
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'hourly' },
        spec: { schedule: '0 * * * *', jobTemplate: { spec: { template: { spec: podSpec } } } },
      }),
    ).to.deep.equal({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'hourly', generation: 1 },
      spec: {
        concurrencyPolicy: 'Allow',
        failedJobsHistoryLimit: 1,
        jobTemplate: {
          metadata: { creationTimestamp: null },
          spec: { template: { metadata: { creationTimestamp: null }, spec: defaultedPodSpec } },
        },
        schedule: '0 * * * *',
        successfulJobsHistoryLimit: 3,
        suspend: false,
      },
      status: {},
    });
  });

  it('batch/v1beta1 CronJob is defaulted the same way', () => {
    const cronJob = createdAsServer({
      apiVersion: 'batch/v1beta1',
      kind: 'CronJob',
      metadata: { name: 'c' },
      spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: podSpec } } } },
    });
    expect(cronJob.spec).to.include({ concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });
  });
});
