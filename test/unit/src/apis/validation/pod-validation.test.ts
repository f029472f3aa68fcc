import { expect } from 'chai';
import { validateCreate, validateStatusUpdate, validateUpdate } from '../../../../../src/apis/validation';
import { podUpdateForbiddenMessage } from '../../../../../src/apis/validation/pod-validation';
import { edited, messages, pod } from './fixtures';
import type { JsonObject } from '../../../../../src/apis/object';

const labelMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

const spec = (p: JsonObject): JsonObject => p['spec'] as JsonObject;
const container = (p: JsonObject, i = 0): JsonObject => (spec(p)['containers'] as JsonObject[])[i]!;

// Rules of k8s.io/kubernetes pkg/apis/core/validation/validation.go (ValidatePodSpec,
// validateContainers, ValidateVolumes, ValidateResourceRequirements, ValidatePodUpdate), v1.25.
describe('apis/validation pods', () => {
  it('accepts the fixture', () => expect(validateCreate(pod(), true)).to.deep.equal([]));

  const cases: Array<[string, (p: JsonObject) => void, string[]]> = [
    ['requires containers', (p) => (spec(p)['containers'] = []), ['spec.containers: Required value']],
    ['names containers with DNS labels', (p) => (container(p)['name'] = 'App_1'), [`spec.containers[0].name: Invalid value: "App_1": ${labelMsg}`]],
    ['requires container names', (p) => delete container(p)['name'], ['spec.containers[0].name: Required value']],
    ['requires unique container names', (p) => (spec(p)['containers'] = [{ name: 'a', image: 'x' }, { name: 'a', image: 'y' }]), ['spec.containers[1].name: Duplicate value: "a"']],
    ['requires an image', (p) => delete container(p)['image'], ['spec.containers[0].image: Required value']],
    ['checks container ports', (p) => (container(p)['ports'] = [{ containerPort: 0 }, { name: 'http', containerPort: 70000, protocol: 'TCP' }, { name: 'http', containerPort: 81, protocol: 'ICMP' }]), [
      'spec.containers[0].ports[0].containerPort: Required value',
      'spec.containers[0].ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
      'spec.containers[0].ports[2].name: Duplicate value: "http"',
      'spec.containers[0].ports[2].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
    ]],
    ['checks env names', (p) => (container(p)['env'] = [{ name: '1ST', value: 'x' }, { value: 'y' }]), [
      "spec.containers[0].env[0].name: Invalid value: \"1ST\": a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
      'spec.containers[0].env[1].name: Required value',
    ]],
    ['refuses env values with valueFrom', (p) => (container(p)['env'] = [{ name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }]), [
      'spec.containers[0].env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty',
    ]],
    ['requires unique volume names and a volume type', (p) => (spec(p)['volumes'] = [{ name: 'data', emptyDir: {} }, { name: 'data', emptyDir: {} }, { name: 'cfg' }]), [
      'spec.volumes[1].name: Duplicate value: "data"',
      'spec.volumes[2]: Required value: must specify a volume type',
    ]],
    ['allows one volume type per volume', (p) => (spec(p)['volumes'] = [{ name: 'v', emptyDir: {}, configMap: { name: 'c' } }]), [
      'spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type',
    ]],
    ['checks volume sources', (p) => (spec(p)['volumes'] = [{ name: 's', secret: {} }, { name: 'c', configMap: { name: 'c', defaultMode: 1024 } }]), [
      'spec.volumes[0].secret.secretName: Required value',
      'spec.volumes[1].configMap.defaultMode: Invalid value: 1024: must be a number between 0 and 0777 (octal), both inclusive',
    ]],
    ['names the extra source with v1.25\'s spelling', (p) => (spec(p)['volumes'] = [{ name: 'v', emptyDir: {}, downwardAPI: {} }]), [
      'spec.volumes[0].downwarAPI: Forbidden: may not specify more than 1 volume type',
    ]],
    ['checks volume items and hostPath backsteps', (p) => (spec(p)['volumes'] = [
      { name: 'c', configMap: { name: 'c', items: [{ key: '', path: '../x' }, { key: 'k', path: '..y' }] } },
      { name: 'h', hostPath: { path: '/var/../etc' } },
    ]), [
      'spec.volumes[0].configMap.items[0].key: Required value',
      'spec.volumes[0].configMap.items[0].path: Invalid value: "../x": must not contain \'..\'',
      'spec.volumes[0].configMap.items[1].path: Invalid value: "..y": must not start with \'..\'',
      'spec.volumes[1].hostPath.path: Invalid value: "/var/../etc": must not contain \'..\'',
    ]],
    ['requires mounts to name a volume, with unique mount paths', (p) => {
      spec(p)['volumes'] = [{ name: 'data', emptyDir: {} }];
      container(p)['volumeMounts'] = [{ name: 'data', mountPath: '/d' }, { name: 'missing', mountPath: '/d' }];
    }, ['spec.containers[0].volumeMounts[1].name: Not found: "missing"', 'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/d": must be unique']],
    ['checks restartPolicy', (p) => (spec(p)['restartPolicy'] = 'Sometimes'), ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']],
    ['checks dnsPolicy', (p) => (spec(p)['dnsPolicy'] = 'Google'), [
      'spec.dnsPolicy: Unsupported value: "Google": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
    ]],
    ['checks imagePullPolicy', (p) => (container(p)['imagePullPolicy'] = 'Sometimes'), [
      'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
    ]],
    ['keeps requests within limits', (p) => (container(p)['resources'] = { limits: { cpu: '500m', memory: '1Gi' }, requests: { cpu: '1', memory: '512Mi' } }), [
      'spec.containers[0].resources.requests: Invalid value: "1": must be less than or equal to cpu limit',
    ]],
    ['knows resource names', (p) => (container(p)['resources'] = { requests: { gpu: '1' } }), [
      'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers',
    ]],
    ['needs equal requests and limits for extended resources', (p) => (container(p)['resources'] = { requests: { 'example.com/gpu': '1' } }), [
      'spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources',
    ]],
    ['refuses negative quantities', (p) => (container(p)['resources'] = { limits: { memory: '-1Gi' } }), [
      'spec.containers[0].resources.limits[memory]: Invalid value: "-1Gi": must be greater than or equal to 0',
    ]],
    ['checks probes', (p) => Object.assign(container(p), {
      livenessProbe: { httpGet: { path: '/healthz', port: 0 }, successThreshold: 2, periodSeconds: -1 },
      readinessProbe: {},
    }), [
      'spec.containers[0].livenessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive',
      'spec.containers[0].livenessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0',
      'spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1',
      'spec.containers[0].readinessProbe: Required value: must specify a handler type',
    ]],
    ['checks tolerations', (p) => (spec(p)['tolerations'] = [{ operator: 'Equal', value: 'x' }, { key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 5 }]), [
      'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
      "spec.tolerations[1].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
    ]],
    ['checks nodeSelector labels and nodeName', (p) => Object.assign(spec(p), { nodeSelector: { 'a/b/c': 'x' }, nodeName: 'Node_1' }), [
      "spec.nodeSelector: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      "spec.nodeName: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]],
    ['checks activeDeadlineSeconds', (p) => (spec(p)['activeDeadlineSeconds'] = 0), ['spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive']],
    ['orders env valueFrom checks as Go does, and checks key-selector names even when empty', (p) => (container(p)['env'] = [
      { name: 'A', valueFrom: {} },
      { name: 'B', value: 'x', valueFrom: { configMapKeyRef: { key: 'k' }, secretKeyRef: { name: 's', key: 'k' } } },
      { name: 'C', valueFrom: { fieldRef: { fieldPath: 'spec.hostname' } } },
    ]), [
      'spec.containers[0].env[0].valueFrom: Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
      `spec.containers[0].env[1].valueFrom.configMapKeyRef.name: Invalid value: "": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      'spec.containers[0].env[1].valueFrom: Invalid value: "": may not be specified when `value` is not empty',
      'spec.containers[0].env[2].valueFrom.fieldRef.fieldPath: Unsupported value: "spec.hostname": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.podIP", "status.podIPs"',
    ]],
    ['needs a source in envFrom, reported on the list', (p) => (container(p)['envFrom'] = [{ prefix: 'X_' }]), [
      'spec.containers[0].envFrom: Invalid value: "": must specify one of: `configMapRef` or `secretRef`',
    ]],
    ['refuses colliding host ports', (p) => (spec(p)['containers'] = [
      { name: 'a', image: 'x', ports: [{ containerPort: 80, hostPort: 8080, protocol: 'TCP' }] },
      { name: 'b', image: 'y', ports: [{ containerPort: 81, hostPort: 8080, protocol: 'TCP' }] },
    ]), ['spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"']],
    ['validates startup probes twice, as v1.25 does', (p) => (container(p)['startupProbe'] = { exec: { command: [] } }), [
      'spec.containers[0].startupProbe.exec.command: Required value',
      'spec.containers[0].startupProbe.exec.command: Required value',
    ]],
    ['checks lifecycle handlers', (p) => (container(p)['lifecycle'] = { preStop: {} }), ['spec.containers[0].lifecycle.preStop: Required value: must specify a handler type']],
    ['refuses images with surrounding spaces on pods', (p) => (container(p)['image'] = ' nginx'), ['spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace']],
    ['forbids ephemeral containers on create', (p) => (spec(p)['ephemeralContainers'] = [{ name: 'debug', image: 'busybox' }]), ['spec.ephemeralContainers: Forbidden: cannot be set on create']],
    ['needs dnsConfig nameservers with dnsPolicy None', (p) => Object.assign(spec(p), { dnsPolicy: 'None', dnsConfig: { searches: ['svc.cluster.local'] } }), [
      'spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when `dnsPolicy` is None',
    ]],
    ['checks node affinity terms', (p) => (spec(p)['affinity'] = { nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'Near', values: ['a'] }] }] },
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, preference: { matchExpressions: [{ key: 'disk', operator: 'In' }] } }],
    } }), [
      'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
      'spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100',
      "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
    ]],
    ['needs a topologyKey in pod affinity terms', (p) => (spec(p)['affinity'] = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } } }] } }), [
      'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty',
      "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: \"\": name part must be non-empty",
      "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]],
    ['checks security context ids', (p) => (spec(p)['securityContext'] = { runAsUser: -1 }), ['spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 4294967295, inclusive']],
    ['checks the pod-deletion-cost annotation', (p) => ((p['metadata'] as JsonObject)['annotations'] = { 'controller.kubernetes.io/pod-deletion-cost': '3000000000' }), [
      'metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "3000000000": must be a 32bit integer',
    ]],
    ['keeps init container names distinct from containers', (p) => (spec(p)['initContainers'] = [{ name: 'app', image: 'busybox' }]), ['spec.initContainers[0].name: Duplicate value: "app"']],
  ];
  for (const [name, edit, expected] of cases) it(name, () => expect(messages(validateCreate(edited(pod(), edit), true))).to.deep.equal(expected));

  describe('updates', () => {
    const update = (edit: (p: JsonObject) => void): string[] => messages(validateUpdate(edited(pod(), edit), pod(), true));

    it('allows image, activeDeadlineSeconds, added tolerations and label changes', () => {
      expect(update((p) => {
        container(p)['image'] = 'nginx:1.26';
        spec(p)['activeDeadlineSeconds'] = 30;
        spec(p)['tolerations'] = [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }];
        (p['metadata'] as JsonObject)['labels'] = { tier: 'web' };
      })).to.deep.equal([]);
    });

    it('forbids other spec changes with the v1.25 message and a diff', () => {
      const errors = validateUpdate(edited(pod(), (p) => (spec(p)['restartPolicy'] = 'Never')), pod(), true);
      expect(errors).to.have.length(1);
      expect(errors[0]!.field).to.equal('spec');
      expect(errors[0]!.type).to.equal('FieldValueForbidden');
      expect(errors[0]!.detail.startsWith(`${podUpdateForbiddenMessage}\n`)).to.equal(true);
      expect(errors[0]!.detail).to.contain('- \tRestartPolicy: "Always"');
      expect(errors[0]!.detail).to.contain('+ \tRestartPolicy: "Never"');
      expect(podUpdateForbiddenMessage).to.equal(
        'pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
      );
    });

    it('treats explicit zero values like the omitted fields they decode to', () => {
      expect(update((p) => {
        Object.assign(spec(p), { hostNetwork: false, nodeName: '', initContainers: [] });
        Object.assign(container(p), { stdin: false, args: [] });
      })).to.deep.equal([]);
    });

    it('forbids adding or removing containers', () => {
      expect(update((p) => (spec(p)['containers'] = [container(p), { name: 'side', image: 'busybox' }]))).to.deep.equal([
        'spec.containers: Forbidden: pod updates may not add or remove containers',
      ]);
    });

    it('only lets activeDeadlineSeconds shrink and never unset', () => {
      const withDeadline = edited(pod(), (p) => (spec(p)['activeDeadlineSeconds'] = 30));
      expect(messages(validateUpdate(edited(withDeadline, (p) => (spec(p)['activeDeadlineSeconds'] = 60)), withDeadline, true))).to.deep.equal([
        'spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value',
      ]);
      expect(messages(validateUpdate(edited(withDeadline, (p) => delete spec(p)['activeDeadlineSeconds']), withDeadline, true))).to.deep.equal([
        'spec.activeDeadlineSeconds: Invalid value: "null": must not update from a positive integer to nil value',
      ]);
    });

    it('forbids changing existing tolerations except their seconds', () => {
      const tolerant = edited(pod(), (p) => (spec(p)['tolerations'] = [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }]));
      expect(messages(validateUpdate(edited(tolerant, (p) => ((spec(p)['tolerations'] as JsonObject[])[0]!['tolerationSeconds'] = 5)), tolerant, true))).to.deep.equal([]);
      expect(messages(validateUpdate(edited(tolerant, (p) => ((spec(p)['tolerations'] as JsonObject[])[0]!['key'] = 'other')), tolerant, true))[0]).to.equal(
        'spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds',
      );
    });

    it('checks only metadata and status on status updates', () => {
      const next = edited(pod(), (p) => {
        spec(p)['restartPolicy'] = 'Never';
        p['status'] = { phase: 'Running', nominatedNodeName: 'Bad_Node' };
      });
      expect(messages(validateStatusUpdate(next, pod(), true))).to.have.length(1);
      expect(messages(validateStatusUpdate(next, pod(), true))[0]).to.match(/^status\.nominatedNodeName: Invalid value: "Bad_Node": a lowercase RFC 1123 subdomain/);
    });

    it('refuses binding through status and reviving terminated containers of Never pods', () => {
      const old = edited(pod(), (p) => {
        spec(p)['restartPolicy'] = 'Never';
        p['status'] = { containerStatuses: [{ name: 'app', state: { terminated: { exitCode: 0 } } }] };
      });
      const next = edited(old, (p) => {
        spec(p)['nodeName'] = 'node-1';
        p['status'] = { containerStatuses: [{ name: 'app', state: { running: {} } }], conditions: [{ type: 'bad type', status: 'True' }] };
      });
      expect(messages(validateStatusUpdate(next, old, true))).to.deep.equal([
        "metadata.conditions[0].Type: Invalid value: \"bad type\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        'status.nodeName: Forbidden: may not be changed directly',
        'status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state',
      ]);
    });
  });
});
