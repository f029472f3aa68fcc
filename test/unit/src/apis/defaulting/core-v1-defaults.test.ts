import { expect } from 'chai';
import { createdAsServer, defaulted } from './create-as-server';

// Facts: k8s.io/kubernetes v1.25 pkg/apis/core/v1/defaults.go (SetDefaults_*), k8s.io/api core/v1
// types.go (`+default=` markers), pkg/registry/core/*/strategy.go (PrepareForCreate).
describe('apis/defaulting: core/v1', () => {
  describe('Pod', () => {
    it('fills a minimal pod as kube-apiserver returns it from create', () => {
      const pod = createdAsServer({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', namespace: 'default' },
        spec: { containers: [{ name: 'web', image: 'nginx' }] },
      });
      expect(pod).to.deep.equal({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'nginx',
              imagePullPolicy: 'Always',
              resources: {},
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
            },
          ],
          dnsPolicy: 'ClusterFirst',
          enableServiceLinks: true,
          restartPolicy: 'Always',
          schedulerName: 'default-scheduler',
          securityContext: {},
          terminationGracePeriodSeconds: 30,
        },
        status: { phase: 'Pending', qosClass: 'BestEffort' },
      });
    });

    it('defaults ports, probes, lifecycle handlers, env field references and volumes', () => {
      const pod = createdAsServer({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'full' },
        spec: {
          initContainers: [{ name: 'init', image: 'busybox:1.36' }],
          containers: [
            {
              name: 'app',
              image: 'registry.example.com:5000/team/app:v2',
              ports: [{ containerPort: 8080 }, { containerPort: 53, protocol: 'UDP' }],
              env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
              livenessProbe: { httpGet: { port: 8080 } },
              readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 5 },
              startupProbe: { grpc: { port: 9090 } },
              lifecycle: { preStop: { httpGet: { port: 8080, path: '/quit' } } },
            },
          ],
          volumes: [
            { name: 'scratch' },
            { name: 'config', configMap: { name: 'cfg' } },
            { name: 'creds', secret: { secretName: 's', defaultMode: 0o400 } },
            { name: 'host', hostPath: { path: '/var/log' } },
            { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
            { name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } },
            {
              name: 'claim',
              ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } },
            },
          ],
        },
      });
      const spec = pod.spec as Record<string, unknown>;
      expect(spec.initContainers).to.deep.equal([
        {
          name: 'init',
          image: 'busybox:1.36',
          imagePullPolicy: 'IfNotPresent',
          resources: {},
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ]);
      expect(spec.containers).to.deep.equal([
        {
          name: 'app',
          image: 'registry.example.com:5000/team/app:v2',
          imagePullPolicy: 'IfNotPresent',
          ports: [
            { containerPort: 8080, protocol: 'TCP' },
            { containerPort: 53, protocol: 'UDP' },
          ],
          env: [{ name: 'NODE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } }],
          livenessProbe: {
            httpGet: { port: 8080, path: '/', scheme: 'HTTP' },
            timeoutSeconds: 1,
            periodSeconds: 10,
            successThreshold: 1,
            failureThreshold: 3,
          },
          readinessProbe: { tcpSocket: { port: 8080 }, timeoutSeconds: 1, periodSeconds: 5, successThreshold: 1, failureThreshold: 3 },
          // GRPCAction.service carries `+default=""` in k8s.io/api core/v1 types.go.
          startupProbe: { grpc: { port: 9090, service: '' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
          lifecycle: { preStop: { httpGet: { port: 8080, path: '/quit', scheme: 'HTTP' } } },
          resources: {},
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ]);
      expect(spec.volumes).to.deep.equal([
        { name: 'scratch', emptyDir: {} },
        { name: 'config', configMap: { name: 'cfg', defaultMode: 420 } },
        { name: 'creds', secret: { secretName: 's', defaultMode: 0o400 } },
        { name: 'host', hostPath: { path: '/var/log', type: '' } },
        {
          name: 'info',
          downwardAPI: { items: [{ path: 'labels', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.labels' } }], defaultMode: 420 },
        },
        { name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }], defaultMode: 420 } },
        {
          name: 'claim',
          ephemeral: {
            volumeClaimTemplate: {
              metadata: { creationTimestamp: null },
              spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' },
            },
          },
        },
      ]);
    });

    it('keeps what the client set', () => {
      const sent = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'explicit' },
        spec: {
          containers: [
            {
              name: 'c',
              image: 'nginx',
              imagePullPolicy: 'Never',
              terminationMessagePath: '/tmp/log',
              terminationMessagePolicy: 'FallbackToLogsOnError',
              resources: {},
            },
          ],
          dnsPolicy: 'Default',
          enableServiceLinks: false,
          restartPolicy: 'Never',
          schedulerName: 'mine',
          securityContext: { runAsUser: 1000 },
          terminationGracePeriodSeconds: 0,
        },
      };
      expect(defaulted(sent)).to.deep.equal(sent);
    });

    it('copies limits into missing requests of containers and init containers, and grades QoS from the result', () => {
      const pod = createdAsServer({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'guaranteed' },
        spec: {
          initContainers: [{ name: 'i', image: 'busybox', resources: { limits: { cpu: '100m', memory: '64Mi' } } }],
          containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1000m' } } }],
        },
      });
      const spec = pod.spec as { containers: { resources: unknown }[]; initContainers: { resources: unknown }[] };
      // "1000m" reads back as "1": k8s.io/apimachinery pkg/api/resource/quantity.go prints the canonical form.
      expect(spec.containers[0].resources).to.deep.equal({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } });
      expect(spec.initContainers[0].resources).to.deep.equal({
        limits: { cpu: '100m', memory: '64Mi' },
        requests: { cpu: '100m', memory: '64Mi' },
      });
      expect(pod.status).to.deep.equal({ phase: 'Pending', qosClass: 'Guaranteed' });
    });

    it('grades Burstable when requests fall short of limits or a limit is missing', () => {
      const qos = (resources: unknown): unknown =>
        createdAsServer({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x', resources }] } }).status;
      expect(qos({ requests: { cpu: '100m' } })).to.deep.equal({ phase: 'Pending', qosClass: 'Burstable' });
      expect(qos({ limits: { cpu: '1' } })).to.deep.equal({ phase: 'Pending', qosClass: 'Burstable' });
      expect(qos({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m' } })).to.deep.equal({ phase: 'Pending', qosClass: 'Burstable' });
      // Zero amounts and other resources do not count (pkg/apis/core/helper/qos/qos.go).
      expect(qos({ requests: { cpu: '0', 'ephemeral-storage': '1Gi' } })).to.deep.equal({ phase: 'Pending', qosClass: 'BestEffort' });
    });

    it('does not add what admission plugins add, nor defaults that only Pods get to templates', () => {
      const pod = defaulted({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
      const spec = pod.spec as Record<string, unknown>;
      for (const admissionField of ['serviceAccountName', 'tolerations', 'priority', 'preemptionPolicy']) {
        expect(spec).not.to.have.property(admissionField);
      }
      const template = defaulted({
        apiVersion: 'v1',
        kind: 'PodTemplate',
        metadata: { name: 't' },
        template: { spec: { containers: [{ name: 'c', image: 'x:1', resources: { limits: { cpu: '1' } } }] } },
      });
      expect(template.template).to.deep.equal({
        metadata: { creationTimestamp: null },
        spec: {
          containers: [
            {
              name: 'c',
              image: 'x:1',
              imagePullPolicy: 'IfNotPresent',
              resources: { limits: { cpu: '1' } },
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
            },
          ],
          dnsPolicy: 'ClusterFirst',
          restartPolicy: 'Always',
          schedulerName: 'default-scheduler',
          securityContext: {},
          terminationGracePeriodSeconds: 30,
        },
      });
    });

    it('uses container ports as host ports under host networking', () => {
      const pod = defaulted({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: { hostNetwork: true, containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80 }, { containerPort: 81, hostPort: 81 }] }] },
      });
      expect((pod.spec as { containers: { ports: unknown }[] }).containers[0].ports).to.deep.equal([
        { containerPort: 80, protocol: 'TCP', hostPort: 80 },
        { containerPort: 81, hostPort: 81, protocol: 'TCP' },
      ]);
    });

    it('defaults the legacy in-tree volume sources from their +default markers', () => {
      const pod = defaulted({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: {
          containers: [],
          volumes: [
            { name: 'a', iscsi: { targetPortal: 't', iqn: 'i', lun: 0 } },
            { name: 'b', rbd: { monitors: ['m'], image: 'i' } },
            { name: 'c', azureDisk: { diskName: 'd', diskURI: 'u' } },
            { name: 'd', scaleIO: { gateway: 'g', system: 's', secretRef: { name: 'x' } } },
          ],
        },
      });
      expect((pod.spec as { volumes: unknown }).volumes).to.deep.equal([
        { name: 'a', iscsi: { targetPortal: 't', iqn: 'i', lun: 0, iscsiInterface: 'default' } },
        { name: 'b', rbd: { monitors: ['m'], image: 'i', pool: 'rbd', user: 'admin', keyring: '/etc/ceph/keyring' } },
        { name: 'c', azureDisk: { diskName: 'd', diskURI: 'u', cachingMode: 'ReadWrite', fsType: 'ext4', readOnly: false, kind: 'Shared' } },
        { name: 'd', scaleIO: { gateway: 'g', system: 's', secretRef: { name: 'x' }, storageMode: 'ThinProvisioned', fsType: 'xfs' } },
      ]);
    });
  });

  describe('Service', () => {
    it('fills a minimal ClusterIP service, IP families included, but leaves clusterIP to the allocator', () => {
      const service = createdAsServer({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web' },
        spec: { selector: { app: 'web' }, ports: [{ port: 80 }, { name: 'dns', port: 53, protocol: 'UDP', targetPort: 'dns' }] },
      });
      expect(service).to.deep.equal({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web' },
        spec: {
          selector: { app: 'web' },
          ports: [
            { port: 80, protocol: 'TCP', targetPort: 80 },
            { name: 'dns', port: 53, protocol: 'UDP', targetPort: 'dns' },
          ],
          sessionAffinity: 'None',
          type: 'ClusterIP',
          internalTrafficPolicy: 'Cluster',
          // pkg/registry/core/service/storage/alloc.go initIPFamilyFields, single-stack IPv4 cluster.
          ipFamilyPolicy: 'SingleStack',
          ipFamilies: ['IPv4'],
        },
        status: { loadBalancer: {} },
      });
    });

    it('adds externalTrafficPolicy to NodePort and LoadBalancer, allocateLoadBalancerNodePorts to LoadBalancer', () => {
      const specOf = (type: string): unknown =>
        defaulted({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { type, ports: [{ port: 443, targetPort: 0 }] } }).spec;
      expect(specOf('NodePort')).to.deep.equal({
        type: 'NodePort',
        ports: [{ port: 443, targetPort: 443, protocol: 'TCP' }],
        sessionAffinity: 'None',
        externalTrafficPolicy: 'Cluster',
        internalTrafficPolicy: 'Cluster',
      });
      expect(specOf('LoadBalancer')).to.deep.equal({
        type: 'LoadBalancer',
        ports: [{ port: 443, targetPort: 443, protocol: 'TCP' }],
        sessionAffinity: 'None',
        externalTrafficPolicy: 'Cluster',
        internalTrafficPolicy: 'Cluster',
        allocateLoadBalancerNodePorts: true,
      });
      expect(specOf('ExternalName')).to.deep.equal({
        type: 'ExternalName',
        ports: [{ port: 443, targetPort: 443, protocol: 'TCP' }],
        sessionAffinity: 'None',
      });
    });

    it('gives ClientIP affinity its 10800 second timeout and drops affinity config under None', () => {
      const clientIp = defaulted({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { sessionAffinity: 'ClientIP' } });
      expect((clientIp.spec as Record<string, unknown>).sessionAffinityConfig).to.deep.equal({ clientIP: { timeoutSeconds: 10800 } });
      const none = defaulted({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 's' },
        spec: { sessionAffinityConfig: { clientIP: { timeoutSeconds: 5 } } },
      });
      expect(none.spec).not.to.have.property('sessionAffinityConfig');
    });

    it('makes a headless service without selector RequireDualStack, and mirrors clusterIP into clusterIPs', () => {
      const service = createdAsServer({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'h' }, spec: { clusterIP: 'None' } });
      const spec = service.spec as Record<string, unknown>;
      expect(spec.clusterIPs).to.deep.equal(['None']);
      expect(spec.ipFamilyPolicy).to.equal('RequireDualStack');
      expect(spec.ipFamilies).to.deep.equal(['IPv4', 'IPv6']);
      const withIp = createdAsServer({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { clusterIP: 'fd00::10' } });
      expect((withIp.spec as Record<string, unknown>).ipFamilies).to.deep.equal(['IPv6']);
    });
  });

  it('Secret defaults to type Opaque', () => {
    expect(createdAsServer({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } })).to.deep.equal({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      type: 'Opaque',
    });
  });

  it('ConfigMap, ServiceAccount and Event get nothing visible', () => {
    for (const kind of ['ConfigMap', 'ServiceAccount', 'Event']) {
      const sent = { apiVersion: 'v1', kind, metadata: { name: 'x' } };
      expect(createdAsServer(sent)).to.deep.equal(sent);
    }
  });

  it('Namespace gets its name label, the kubernetes finalizer and phase Active', () => {
    expect(createdAsServer({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } })).to.deep.equal({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-a', labels: { 'kubernetes.io/metadata.name': 'team-a' } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
    const generated = createdAsServer({ apiVersion: 'v1', kind: 'Namespace', metadata: { generateName: 'ns-' }, spec: { finalizers: ['x/y'] } });
    expect(generated.metadata).to.deep.equal({ generateName: 'ns-' });
    expect(generated.spec).to.deep.equal({ finalizers: ['x/y', 'kubernetes'] });
  });

  it('PersistentVolumeClaim gets volumeMode Filesystem and phase Pending, with dataSource mirrored', () => {
    expect(
      createdAsServer({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
          dataSource: { kind: 'PersistentVolumeClaim', name: 'src' },
        },
      }),
    ).to.deep.equal({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
        dataSource: { kind: 'PersistentVolumeClaim', name: 'src' },
        // AnyVolumeDataSource is beta and on in v1.25 (pkg/api/persistentvolumeclaim/util.go NormalizeDataSources).
        dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'src' },
        volumeMode: 'Filesystem',
      },
      status: { phase: 'Pending' },
    });
  });

  it('PersistentVolume gets reclaim policy Retain, volumeMode Filesystem and phase Pending', () => {
    expect(
      createdAsServer({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'pv' },
        spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/d' } },
      }),
    ).to.deep.equal({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv' },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        hostPath: { path: '/d', type: '' },
        persistentVolumeReclaimPolicy: 'Retain',
        volumeMode: 'Filesystem',
      },
      status: { phase: 'Pending' },
    });
  });

  it('Endpoints ports default to TCP', () => {
    const endpoints = createdAsServer({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'e' },
      subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }, { port: 53, protocol: 'UDP' }] }],
    });
    expect(endpoints.subsets).to.deep.equal([
      {
        addresses: [{ ip: '10.0.0.1' }],
        ports: [
          { port: 80, protocol: 'TCP' },
          { port: 53, protocol: 'UDP' },
        ],
      },
    ]);
  });

  it('Node keeps its status on create, prints its empty value structs and copies capacity to allocatable', () => {
    expect(createdAsServer({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } })).to.deep.equal({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1' },
      spec: {},
      status: {
        daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
        nodeInfo: {
          architecture: '',
          bootID: '',
          containerRuntimeVersion: '',
          kernelVersion: '',
          kubeProxyVersion: '',
          kubeletVersion: '',
          machineID: '',
          operatingSystem: '',
          osImage: '',
          systemUUID: '',
        },
      },
    });
    const withCapacity = defaulted({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' }, status: { capacity: { cpu: '4' } } });
    expect((withCapacity.status as Record<string, unknown>).allocatable).to.deep.equal({ cpu: '4' });
  });

  it('LimitRange container items get default limits from max and default requests from defaults, then min', () => {
    const limitRange = defaulted({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'l' },
      spec: {
        limits: [
          { type: 'Container', max: { cpu: '2' }, min: { memory: '10Mi' } },
          { type: 'Pod', max: { cpu: '4' } },
        ],
      },
    });
    expect(limitRange.spec).to.deep.equal({
      limits: [
        { type: 'Container', max: { cpu: '2' }, min: { memory: '10Mi' }, default: { cpu: '2' }, defaultRequest: { cpu: '2', memory: '10Mi' } },
        { type: 'Pod', max: { cpu: '4' } },
      ],
    });
  });

  it('ReplicationController takes selector and labels from its template and starts at generation 1', () => {
    const controller = createdAsServer({
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'rc' },
      spec: { template: { metadata: { labels: { app: 'rc' } }, spec: { containers: [{ name: 'c', image: 'x:1' }] } } },
    });
    expect(controller.metadata).to.deep.equal({ name: 'rc', labels: { app: 'rc' }, generation: 1 });
    const spec = controller.spec as Record<string, unknown>;
    expect(spec.selector).to.deep.equal({ app: 'rc' });
    expect(spec.replicas).to.equal(1);
    expect(controller.status).to.deep.equal({ replicas: 0 });
  });
});

describe('apis/defaulting: Pod seccomp annotations and fields', () => {
  // Facts: k8s.io/kubernetes v1.25 pkg/registry/core/pod/strategy.go applySeccompVersionSkew.
  it('writes the field from an annotation and the annotation from a field', () => {
    const pod = createdAsServer({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default' } },
      spec: {
        containers: [
          { name: 'a', image: 'x:1', securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'prof.json' } } },
          { name: 'b', image: 'x:1' },
        ],
      },
    });
    expect((pod.metadata as Record<string, unknown>).annotations).to.deep.equal({
      'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default',
      'container.seccomp.security.alpha.kubernetes.io/a': 'localhost/prof.json',
    });
    const spec = pod.spec as { securityContext: unknown; containers: { securityContext?: unknown }[] };
    expect(spec.securityContext).to.deep.equal({ seccompProfile: { type: 'RuntimeDefault' } });
    expect(spec.containers[1]).not.to.have.property('securityContext');
  });

  it('ignores an annotation it cannot map to a field', () => {
    const sent = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', annotations: { 'container.seccomp.security.alpha.kubernetes.io/a': 'localhost/' } },
      spec: { containers: [{ name: 'a', image: 'x:1' }] },
    };
    const pod = createdAsServer(sent);
    expect(pod.metadata).to.deep.equal(sent.metadata);
    expect((pod.spec as { containers: object[] }).containers[0]).not.to.have.property('securityContext');
  });
});
