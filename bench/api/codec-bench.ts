/**
 * In-process encode and decode cost of the two wire representations the API serves: JSON as
 * the HTTP layer writes it (JSON.stringify plus a newline, src/endpoints/body-codec.ts) and the
 * Kubernetes Protobuf body (src/codec ProtobufCodec, the same instance the server uses), for a
 * ~2 KiB Pod, a 10,000-item ConfigMapList and a 10,000-item PodList. Medians of repeated runs.
 */
import { performance } from 'node:perf_hooks';
import { ProtobufCodec } from '../../src/codec';
import { median } from '../support/latency';
import type { JsonObject } from '../../src/apis/object';

export interface CodecRow {
  subject: string;
  jsonBytes: number;
  protobufBytes: number;
  jsonEncodeUs: number;
  protobufEncodeUs: number;
  jsonDecodeUs: number;
  protobufDecodeUs: number;
}

/** A Pod as a controller-made one looks on the wire: about 2 KiB of JSON. */
export function samplePod(index: number): JsonObject {
  const name = `web-7d4b9c8f6d-${String(index).padStart(5, '0')}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: 'web-7d4b9c8f6d-',
      namespace: 'default',
      uid: `0b7c3c1e-3a5f-4c1d-9f6e-${String(index).padStart(12, '0')}`,
      resourceVersion: String(100_000 + index),
      creationTimestamp: '2026-11-25T08:00:00Z',
      labels: { app: 'web', 'pod-template-hash': '7d4b9c8f6d', tier: 'frontend' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d4b9c8f6d', uid: '5d3f0a8e-1b2c-4d5e-8f90-a1b2c3d4e5f6', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'registry.example.com/web/frontend:1.25.3',
          args: ['--port=8080', '--metrics-port=9090', '--log-level=info'],
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }, { name: 'metrics', containerPort: 9090, protocol: 'TCP' }],
          env: [{ name: 'ENVIRONMENT', value: 'production' }, { name: 'CACHE_SIZE', value: '256Mi' }, { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }],
          resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } },
          volumeMounts: [{ name: 'config', mountPath: '/etc/web', readOnly: true }],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      volumes: [
        { name: 'config', configMap: { name: 'web-config', defaultMode: 420 } },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      nodeName: 'node-3',
      securityContext: {},
      schedulerName: 'default-scheduler',
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-11-25T08:00:01Z' },
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-11-25T08:00:09Z' },
        { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-11-25T08:00:00Z' },
      ],
      hostIP: '10.0.3.17',
      podIP: `10.244.3.${index % 250}`,
      podIPs: [{ ip: `10.244.3.${index % 250}` }],
      startTime: '2026-11-25T08:00:01Z',
      containerStatuses: [{ name: 'web', state: { running: { startedAt: '2026-11-25T08:00:04Z' } }, lastState: {}, ready: true, restartCount: 0, image: 'registry.example.com/web/frontend:1.25.3', started: true }],
      qosClass: 'Burstable',
    },
  };
}

function sampleConfigMap(index: number): JsonObject {
  const name = `item-${String(index).padStart(5, '0')}`;
  return {
    metadata: { name, namespace: 'bench-list', uid: `7e1d2c3b-4a5f-4e6d-8c7b-${String(index).padStart(12, '0')}`, resourceVersion: String(200_000 + index), creationTimestamp: '2026-11-25T08:00:00Z', labels: { app: 'bench' } },
    data: { payload: 'x'.repeat(120) },
  };
}

function list(kind: string, items: JsonObject[]): JsonObject {
  return { kind, apiVersion: 'v1', metadata: { resourceVersion: '300000' }, items };
}

/** Median µs of `op` over `runs` runs (after one unmeasured run). */
function medianMicros(runs: number, op: () => unknown): number {
  op();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const began = performance.now();
    op();
    times.push((performance.now() - began) * 1000);
  }
  return median(times);
}

function measure(subject: string, object: JsonObject, runs: number): CodecRow {
  const codec = ProtobufCodec.load();
  const json = Buffer.from(JSON.stringify(object) + '\n', 'utf8');
  const protobuf = codec.encode(object);
  return {
    subject,
    jsonBytes: json.length,
    protobufBytes: protobuf.length,
    jsonEncodeUs: medianMicros(runs, () => Buffer.from(JSON.stringify(object) + '\n', 'utf8')),
    protobufEncodeUs: medianMicros(runs, () => codec.encode(object)),
    jsonDecodeUs: medianMicros(runs, () => JSON.parse(json.toString('utf8'))),
    protobufDecodeUs: medianMicros(runs, () => codec.decode(protobuf)),
  };
}

/** The three subjects; `listRuns` repetitions for the 10,000-item lists, 200x that for the Pod. */
export function measureCodec(listRuns = 7): CodecRow[] {
  const items = 10_000;
  return [
    measure('Pod (~2 KiB JSON)', samplePod(1), listRuns * 200),
    measure(`ConfigMapList, ${items.toLocaleString('en-US')} items`, list('ConfigMapList', Array.from({ length: items }, (_, i) => sampleConfigMap(i))), listRuns),
    measure(`PodList, ${items.toLocaleString('en-US')} items`, list('PodList', Array.from({ length: items }, (_, i) => samplePod(i))), listRuns),
  ];
}

export function formatCodecTable(rows: CodecRow[]): string {
  const us = (v: number) => (v >= 10_000 ? `${(v / 1000).toFixed(1)} ms` : `${v.toFixed(1)} µs`);
  const lines = [
    '| subject | JSON bytes | Protobuf bytes | JSON encode | Protobuf encode | JSON decode | Protobuf decode |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(`| ${r.subject} | ${r.jsonBytes.toLocaleString('en-US')} | ${r.protobufBytes.toLocaleString('en-US')} | ${us(r.jsonEncodeUs)} | ${us(r.protobufEncodeUs)} | ${us(r.jsonDecodeUs)} | ${us(r.protobufDecodeUs)} |`);
  }
  return lines.join('\n');
}
