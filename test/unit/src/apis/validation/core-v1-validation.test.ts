import { expect } from 'chai';
import { validateCreate, validateUpdate } from '../../../../../src/apis/validation';
import { edited, messages, service } from './fixtures';
import type { JsonObject } from '../../../../../src/apis/object';

const configKeyMsg =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const dns1035Msg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const labelMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

const meta = (name: string): JsonObject => ({ name, namespace: 'default', resourceVersion: '1' });
const b64 = (text: string): string => Buffer.from(text).toString('base64');

// Rules of k8s.io/kubernetes pkg/apis/core/validation/validation.go, v1.25 (ValidateConfigMap,
// ValidateSecret, ValidateNamespace, ValidateService, ValidateNode, ValidatePersistentVolumeClaim,
// ValidateEndpoints and their Update variants).
describe('apis/validation core/v1', () => {
  describe('ConfigMap', () => {
    const cm = (data: JsonObject, binaryData?: JsonObject): JsonObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('cm'), data, ...(binaryData ? { binaryData } : {}) });
    const cases: Array<[string, JsonObject, string[]]> = [
      ['accepts good keys', cm({ 'a.b_c-D': '1' }), []],
      ['refuses bad keys', cm({ 'a/b': '1' }), [`data[a/b]: Invalid value: "a/b": ${configKeyMsg}`]],
      ['refuses a key in both data and binaryData', cm({ k: '1' }, { k: b64('1') }), ['data[k]: Invalid value: "k": duplicate of key present in binaryData']],
      ['limits data and binaryData to 1MiB together, on the empty path', cm({ a: 'x'.repeat(600 * 1024) }, { b: b64('y'.repeat(500 * 1024)) }), [': Too long: must have at most 1048576 bytes']],
    ];
    for (const [name, object, expected] of cases) it(name, () => expect(messages(validateCreate(object, true))).to.deep.equal(expected));

    it('freezes data, binaryData and immutable once immutable is true', () => {
      const old = { ...cm({ a: '1' }), immutable: true };
      expect(messages(validateUpdate({ ...cm({ a: '2' }), immutable: false }, old, true))).to.deep.equal([
        'immutable: Forbidden: field is immutable when `immutable` is set',
        'data: Forbidden: field is immutable when `immutable` is set',
      ]);
      expect(messages(validateUpdate({ ...cm({ a: '1' }), immutable: true, metadata: { ...meta('cm'), labels: { x: 'y' } } }, old, true))).to.deep.equal([]);
    });
  });

  describe('Secret', () => {
    const secret = (type: string, data: JsonObject, extra: JsonObject = {}): JsonObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: meta('s'), type, data, ...extra });
    const cases: Array<[string, JsonObject, string[]]> = [
      ['accepts Opaque', secret('Opaque', { 'x.y': b64('1') }), []],
      ['checks keys', secret('Opaque', { 'a b': b64('1') }), [`data[a b]: Invalid value: "a b": ${configKeyMsg}`]],
      ['checks stringData keys merged into data', secret('Opaque', {}, { stringData: { '..x': 'v' } }), [`data[..x]: Invalid value: "..x": must not start with '..'`]],
      ['limits data to 1MiB on data', secret('Opaque', { big: b64('x'.repeat(1024 * 1024 + 1)) }), ['data: Too long: must have at most 1048576 bytes']],
      ['needs both TLS keys', secret('kubernetes.io/tls', { 'tls.crt': b64('c') }), ['data[tls.key]: Required value']],
      ['needs a dockerconfigjson key', secret('kubernetes.io/dockerconfigjson', {}), ['data[.dockerconfigjson]: Required value']],
      ['needs dockerconfigjson to be a JSON object', secret('kubernetes.io/dockerconfigjson', { '.dockerconfigjson': b64('garbage') }), [
        `data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character 'g' looking for beginning of value`,
      ]],
      ['needs dockerconfigjson to be an object, not a list', secret('kubernetes.io/dockerconfigjson', { '.dockerconfigjson': b64('[]') }), [
        'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": json: cannot unmarshal array into Go value of type map[string]interface {}',
      ]],
      ['needs a username or password for basic-auth', secret('kubernetes.io/basic-auth', {}), ['data[username]: Required value', 'data[password]: Required value']],
      ['accepts basic-auth with only a password', secret('kubernetes.io/basic-auth', { password: b64('p') }), []],
      ['needs a non-empty ssh-privatekey', secret('kubernetes.io/ssh-auth', { 'ssh-privatekey': '' }), ['data[ssh-privatekey]: Required value']],
      ['needs the service account annotation on token secrets', secret('kubernetes.io/service-account-token', {}), [
        'metadata.annotations[kubernetes.io/service-account.name]: Required value',
      ]],
    ];
    for (const [name, object, expected] of cases) it(name, () => expect(messages(validateCreate(object, true))).to.deep.equal(expected));

    it('keeps the type and, when immutable, the data', () => {
      const old = secret('Opaque', { a: b64('1') }, { immutable: true });
      expect(messages(validateUpdate(secret('kubernetes.io/basic-auth', { a: b64('2') }, { immutable: true }), old, true))).to.deep.equal([
        'type: Invalid value: "kubernetes.io/basic-auth": field is immutable',
        'data: Forbidden: field is immutable when `immutable` is set',
        'data[username]: Required value',
        'data[password]: Required value',
      ]);
    });
  });

  describe('Namespace and ServiceAccount', () => {
    it('names namespaces with DNS-1123 labels', () => {
      const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team.a' } };
      expect(messages(validateCreate(ns, false))).to.deep.equal(['metadata.name: Invalid value: "team.a": must not contain dots']);
    });
    it('checks namespace spec.finalizers', () => {
      const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' }, spec: { finalizers: ['kubernetes', 'mine'] } };
      expect(messages(validateCreate(ns, false))).to.deep.equal([
        'spec.finalizers: Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified',
      ]);
    });
    it('names service accounts with DNS subdomains', () => {
      const sa = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('build.bot') };
      expect(validateCreate(sa, true)).to.deep.equal([]);
    });
  });

  describe('Service', () => {
    const cases: Array<[string, (s: JsonObject) => void, string[]]> = [
      ['accepts the fixture', () => undefined, []],
      ['names services with DNS-1035 labels', (s) => ((s['metadata'] as JsonObject)['name'] = '1web'), [`metadata.name: Invalid value: "1web": ${dns1035Msg}`]],
      ['requires ports', (s) => ((s['spec'] as JsonObject)['ports'] = []), ['spec.ports: Required value']],
      ['lets headless services omit ports', (s) => Object.assign(s['spec'] as JsonObject, { ports: [], clusterIP: 'None', clusterIPs: ['None'] }), []],
      ['checks the port range', (s) => (((s['spec'] as JsonObject)['ports'] as JsonObject[])[0]!['port'] = 70000), ['spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive']],
      ['checks the protocol', (s) => (((s['spec'] as JsonObject)['ports'] as JsonObject[])[0]!['protocol'] = 'HTTP'), [
        'spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
      ]],
      ['checks targetPort names', (s) => (((s['spec'] as JsonObject)['ports'] as JsonObject[])[0]!['targetPort'] = 'Web_Port'), [
        'spec.ports[0].targetPort: Invalid value: "Web_Port": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      ]],
      ['requires names when there are several ports, and unique ones', (s) => ((s['spec'] as JsonObject)['ports'] = [
        { name: 'a', protocol: 'TCP', port: 80, targetPort: 80 },
        { protocol: 'TCP', port: 81, targetPort: 81 },
        { name: 'a', protocol: 'TCP', port: 82, targetPort: 82 },
      ]), ['spec.ports[1].name: Required value', 'spec.ports[2].name: Duplicate value: "a"']],
      ['checks port names as DNS labels', (s) => (((s['spec'] as JsonObject)['ports'] as JsonObject[])[0]!['name'] = 'HTTP'), [`spec.ports[0].name: Invalid value: "HTTP": ${labelMsg}`]],
      ['refuses a repeated port and protocol', (s) => ((s['spec'] as JsonObject)['ports'] = [
        { name: 'a', protocol: 'TCP', port: 80, targetPort: 80 },
        { name: 'b', protocol: 'TCP', port: 80, targetPort: 81 },
      ]), [
        'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
      ]],
      ['checks the type', (s) => ((s['spec'] as JsonObject)['type'] = 'Magic'), ['spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"']],
      ['checks clusterIP syntax', (s) => Object.assign(s['spec'] as JsonObject, { clusterIP: '10.0.0.300', clusterIPs: ['10.0.0.300'] }), [
        'spec.clusterIPs[0]: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      ]],
      ['forbids nodePort on ClusterIP services', (s) => (((s['spec'] as JsonObject)['ports'] as JsonObject[])[0]!['nodePort'] = 30080), [
        "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
      ]],
      ['checks selector labels', (s) => ((s['spec'] as JsonObject)['selector'] = { app: 'a b' }), [
        `spec.selector: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
      ]],
      ['requires externalName for ExternalName services and forbids cluster IPs', (s) => Object.assign(s['spec'] as JsonObject, { type: 'ExternalName' }), [
        'spec.clusterIPs: Forbidden: may not be set for ExternalName services',
        'spec.externalName: Required value',
      ]],
      ['refuses the kubelet port on LoadBalancer services', (s) => Object.assign(s['spec'] as JsonObject, {
        type: 'LoadBalancer', externalTrafficPolicy: 'Cluster', allocateLoadBalancerNodePorts: true,
        ports: [{ name: 'k', protocol: 'TCP', port: 10250, targetPort: 10250, nodePort: 31000 }],
      }), ['spec.ports[0]: Invalid value: 10250: may not expose port 10250 externally since it is used by kubelet']],
      ['keeps clusterIP and clusterIPs in step', (s) => Object.assign(s['spec'] as JsonObject, { clusterIPs: ['10.96.0.11'] }), [
        'spec.clusterIPs: Invalid value: []string{"10.96.0.11"}: first value must match `clusterIP`',
      ]],
      ['needs one IP per family', (s) => Object.assign(s['spec'] as JsonObject, { clusterIPs: ['10.96.0.10', '10.96.0.11'], ipFamilies: ['IPv4', 'IPv4'] }), [
        'spec.ipFamilies[1]: Duplicate value: "IPv4"',
        'spec.clusterIPs: Invalid value: []string{"10.96.0.10", "10.96.0.11"}: may specify no more than one IP for each IP family',
      ]],
      ['matches clusterIPs to ipFamilies', (s) => Object.assign(s['spec'] as JsonObject, { ipFamilies: ['IPv6'] }), [
        'spec.clusterIPs[0]: Invalid value: "10.96.0.10": expected an IPv6 value as indicated by `ipFamilies[0]`',
      ]],
      ['keeps externalTrafficPolicy to NodePort and LoadBalancer', (s) => ((s['spec'] as JsonObject)['externalTrafficPolicy'] = 'Local'), [
        "spec.externalTrafficPolicy: Invalid value: \"Local\": may only be set when `type` is 'NodePort' or 'LoadBalancer'",
      ]],
      ['keeps loadBalancerSourceRanges to LoadBalancer, under Go\'s capitalised name', (s) => ((s['spec'] as JsonObject)['loadBalancerSourceRanges'] = ['10.0.0.0/8']), [
        "spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'",
      ]],
      ['bounds the ClientIP affinity timeout', (s) => Object.assign(s['spec'] as JsonObject, { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 0 } } }), [
        'spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400',
      ]],
      ['checks internalTrafficPolicy', (s) => ((s['spec'] as JsonObject)['internalTrafficPolicy'] = 'Nearby'), [
        'spec.internalTrafficPolicy: Unsupported value: "Nearby": supported values: "Cluster", "Local"',
      ]],
      ['checks externalName as a DNS subdomain, allowing a trailing dot', (s) => {
        const spec = s['spec'] as JsonObject;
        Object.assign(spec, { type: 'ExternalName', externalName: 'db.example.com.' });
        delete spec['clusterIP'];
        delete spec['clusterIPs'];
      }, []],
    ];
    for (const [name, edit, expected] of cases) it(name, () => expect(messages(validateCreate(edited(service(), edit), true))).to.deep.equal(expected));

    it('keeps an allocated cluster IP', () => {
      const next = edited(service(), (s) => Object.assign(s['spec'] as JsonObject, { clusterIP: '10.96.0.11', clusterIPs: ['10.96.0.11'] }));
      expect(messages(validateUpdate(next, service(), true))).to.deep.equal(['spec.clusterIPs[0]: Invalid value: []string{"10.96.0.11"}: may not change once set']);
    });
    it('treats an update without clusterIP as keeping it', () => {
      const next = edited(service(), (s) => {
        delete (s['spec'] as JsonObject)['clusterIP'];
        delete (s['spec'] as JsonObject)['clusterIPs'];
      });
      expect(messages(validateUpdate(next, service(), true))).to.deep.equal([]);
    });
  });

  describe('Node', () => {
    it('checks taints', () => {
      const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, spec: { taints: [{ key: 'a', effect: 'Sometimes' }, { key: 'b', effect: '' }] } };
      expect(messages(validateCreate(node, false))).to.deep.equal([
        'spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
        'spec.taints[1].effect: Required value',
      ]);
    });
  });

  describe('PersistentVolumeClaim', () => {
    const pvc = (spec: JsonObject, status?: JsonObject): JsonObject => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('data'), spec, ...(status ? { status } : {}) });
    const good = (): JsonObject => ({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem', storageClassName: 'standard' });
    const cases: Array<[string, JsonObject, string[]]> = [
      ['accepts a claim', pvc(good()), []],
      ['requires access modes and storage (keyed on resources)', pvc({}), ['spec.accessModes: Required value: at least 1 access mode is required', 'spec.resources[storage]: Required value']],
      ['checks access modes', pvc({ ...good(), accessModes: ['ReadWriteOncePod'] }), [
        'spec.accessModes: Unsupported value: "ReadWriteOncePod": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce"',
      ]],
      ['needs a positive storage request', pvc({ ...good(), resources: { requests: { storage: '0' } } }), ['spec.resources[storage]: Invalid value: "0": must be greater than zero']],
    ];
    for (const [name, object, expected] of cases) it(name, () => expect(messages(validateCreate(object, true))).to.deep.equal(expected));

    it('freezes the spec except storage requests of bound claims', () => {
      const grown = { ...good(), resources: { requests: { storage: '2Gi' } } };
      expect(messages(validateUpdate(pvc(grown, { phase: 'Bound' }), pvc(good(), { phase: 'Bound' }), true))).to.deep.equal([]);
      expect(messages(validateUpdate(pvc(grown), pvc(good()), true))).to.deep.equal([
        'spec: Forbidden: spec is immutable after creation except resources.requests for bound claims\n' +
          '  core.PersistentVolumeClaimSpec{\n- \tResources: {"requests":{"storage":"1Gi"}},\n+ \tResources: {"requests":{"storage":"2Gi"}},\n  }\n',
      ]);
      const modes = messages(validateUpdate(pvc({ ...good(), accessModes: ['ReadWriteMany'] }, { phase: 'Bound' }), pvc(good(), { phase: 'Bound' }), true));
      expect(modes).to.have.length(1);
      expect(modes[0]).to.match(/^spec: Forbidden: spec is immutable after creation except resources\.requests for bound claims\n {2}core\.PersistentVolumeClaimSpec\{\n- \tAccessModes: \["ReadWriteOnce"\],/);
      expect(messages(validateUpdate(pvc({ ...good(), resources: { requests: { storage: '512Mi' } } }, { phase: 'Bound' }), pvc(good(), { phase: 'Bound' }), true))).to.deep.equal([
        'spec.resources.requests.storage: Forbidden: field can not be less than previous value',
      ]);
    });
    it('lets volumeName be set once', () => {
      expect(validateUpdate(pvc({ ...good(), volumeName: 'pv-1' }), pvc(good()), true)).to.deep.equal([]);
    });
  });

  describe('Endpoints', () => {
    it('needs addresses in each subset and refuses special IPs', () => {
      const endpoints = {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: meta('web'),
        subsets: [{ ports: [{ port: 80, protocol: 'TCP' }] }, { addresses: [{ ip: '127.0.0.1' }], ports: [{ port: 0, protocol: 'TCP' }] }],
      };
      expect(messages(validateCreate(endpoints, true))).to.deep.equal([
        'subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`',
        'subsets[1].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8)',
        'subsets[1].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive',
      ]);
    });
  });
});
