/**
 * The core/v1 kinds other than pods: ConfigMap, Secret, Namespace, Service, Node,
 * PersistentVolumeClaim, ServiceAccount and Endpoints (pkg/apis/core/validation, v1.25).
 */
import { FieldPath } from './field-path';
import { FieldError, GoValue, duplicate, forbidden, goQuote, invalid, notSupported, required, tooLong } from './field-error';
import { byteLength, defaultedString, objectsAt, optionalNumberAt, semanticEqual, stringAt, stringMapAt, stringsAt } from './json-value';
import { validateLabelName, validateLabelSelector, validateLabels } from './label-selector';
import {
  fieldImmutableErrorMsg,
  isConfigMapKey,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidIP,
  isValidLabelValue,
  isValidPortNum,
  nameIsDNS1035Label,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  parseCIDR,
  parseIP,
} from './name-validation';
import { validateObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { validateDNS1123Label, validatePortNumOrName, validateTaintEffect } from './pod-validation';
import { quantityText, quantityValue } from './quantity';
import { specDiff } from './spec-diff';
import { asJsonObject, isJsonObject, type JsonObject, metadataOf } from '../object';

/** core.MaxSecretSize, which also bounds ConfigMaps. */
const maxSecretSize = 1024 * 1024;
const supportedPortProtocols = ['SCTP', 'TCP', 'UDP'];
const immutableWhenSetMsg = 'field is immutable when `immutable` is set';
const metadata = FieldPath.root('metadata');

function specOf(object: JsonObject): JsonObject {
  return asJsonObject(object['spec']) ?? {};
}

function decodedLength(base64: string): number {
  return Buffer.from(base64, 'base64').length;
}

// ---------------------------------------------------------------- ConfigMap

export function validateConfigMap(configMap: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMeta(metadataOf(configMap), namespaced, nameIsDNSSubdomain, metadata);
  const data = stringMapAt(configMap['data']) ?? {};
  const binaryData = stringMapAt(configMap['binaryData']) ?? {};
  let totalSize = 0;
  for (const [key, value] of Object.entries(data)) {
    const keyPath = FieldPath.root('data').key(key);
    errs.push(...isConfigMapKey(key).map((msg) => invalid(keyPath, key, msg)));
    if (Object.prototype.hasOwnProperty.call(binaryData, key)) errs.push(invalid(keyPath, key, 'duplicate of key present in binaryData'));
    totalSize += byteLength(value);
  }
  for (const [key, value] of Object.entries(binaryData)) {
    errs.push(...isConfigMapKey(key).map((msg) => invalid(FieldPath.root('binaryData').key(key), key, msg)));
    totalSize += decodedLength(value);
  }
  // Go reports the oversize on the empty path: the whole object is too large.
  if (totalSize > maxSecretSize) errs.push(tooLong(FieldPath.root(''), maxSecretSize));
  return errs;
}

function validateImmutableData(object: JsonObject, old: JsonObject, dataKeys: string[]): FieldError[] {
  if (old['immutable'] !== true) return [];
  const errs: FieldError[] = [];
  if (object['immutable'] !== true) errs.push(forbidden(FieldPath.root('immutable'), immutableWhenSetMsg));
  for (const key of dataKeys) {
    if (!semanticEqual(object[key], old[key])) errs.push(forbidden(FieldPath.root(key), immutableWhenSetMsg));
  }
  return errs;
}

export function validateConfigMapUpdate(configMap: JsonObject, old: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMetaUpdate(metadataOf(configMap), metadataOf(old), metadata);
  errs.push(...validateImmutableData(configMap, old, ['data', 'binaryData']));
  errs.push(...validateConfigMap(configMap, namespaced));
  return errs;
}

// ---------------------------------------------------------------- Secret

/** Secret data as the internal type holds it: base64 `data` decoded, `stringData` merged over it. */
function secretData(secret: JsonObject): Map<string, Buffer> {
  const data = new Map<string, Buffer>();
  for (const [key, value] of Object.entries(stringMapAt(secret['data']) ?? {})) data.set(key, Buffer.from(value, 'base64'));
  for (const [key, value] of Object.entries(stringMapAt(secret['stringData']) ?? {})) data.set(key, Buffer.from(value, 'utf8'));
  return data;
}

/** The error text Go's json.Unmarshal gives when the bytes are not a JSON object. */
function jsonObjectError(bytes: Buffer): string | undefined {
  const text = bytes.toString('utf8');
  const first = text.trimStart().charAt(0);
  if (first === '') return 'unexpected end of JSON input';
  if (!'{["-0123456789tfn'.includes(first)) return `invalid character '${first}' looking for beginning of value`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'unexpected end of JSON input';
  }
  if (parsed === null || isJsonObject(parsed)) return undefined;
  const goKind = Array.isArray(parsed) ? 'array' : typeof parsed === 'boolean' ? 'bool' : typeof parsed;
  return `json: cannot unmarshal ${goKind} into Go value of type map[string]interface {}`;
}

export function validateSecret(secret: JsonObject, namespaced: boolean): FieldError[] {
  const meta = metadataOf(secret);
  const errs = validateObjectMeta(meta, namespaced, nameIsDNSSubdomain, metadata);
  const dataPath = FieldPath.root('data');
  const data = secretData(secret);
  let totalSize = 0;
  for (const [key, value] of data) {
    errs.push(...isConfigMapKey(key).map((msg) => invalid(dataPath.key(key), key, msg)));
    totalSize += value.length;
  }
  if (totalSize > maxSecretSize) errs.push(tooLong(dataPath, maxSecretSize));

  const type = defaultedString(secret['type'], 'Opaque');
  const requireKey = (key: string): boolean => {
    if (data.has(key)) return true;
    errs.push(required(dataPath.key(key)));
    return false;
  };
  switch (type) {
    case 'kubernetes.io/service-account-token': {
      const annotation = 'kubernetes.io/service-account.name';
      if (stringAt(asJsonObject(meta['annotations'])?.[annotation]) === '') errs.push(required(metadata.child('annotations').key(annotation)));
      break;
    }
    case 'kubernetes.io/dockercfg':
    case 'kubernetes.io/dockerconfigjson': {
      const key = type === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
      if (!requireKey(key)) break;
      const problem = jsonObjectError(data.get(key) ?? Buffer.alloc(0));
      if (problem !== undefined) errs.push(invalid(dataPath.key(key), '<secret contents redacted>', problem));
      break;
    }
    case 'kubernetes.io/basic-auth':
      // Either key may be empty, but at least one must be present.
      if (!data.has('username') && !data.has('password')) {
        errs.push(required(dataPath.key('username')), required(dataPath.key('password')));
      }
      break;
    case 'kubernetes.io/ssh-auth':
      if ((data.get('ssh-privatekey')?.length ?? 0) === 0) errs.push(required(dataPath.key('ssh-privatekey')));
      break;
    case 'kubernetes.io/tls':
      requireKey('tls.crt');
      requireKey('tls.key');
      break;
  }
  return errs;
}

export function validateSecretUpdate(secret: JsonObject, old: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMetaUpdate(metadataOf(secret), metadataOf(old), metadata);
  const type = defaultedString(secret['type'], 'Opaque');
  if (type !== defaultedString(old['type'], 'Opaque')) errs.push(invalid(FieldPath.root('type'), type, fieldImmutableErrorMsg));
  errs.push(...validateImmutableData(secret, old, ['data']));
  errs.push(...validateSecret(secret, namespaced));
  return errs;
}

// ---------------------------------------------------------------- Namespace, ServiceAccount

export function validateNamespace(namespace: JsonObject): FieldError[] {
  const errs = validateObjectMeta(metadataOf(namespace), false, nameIsDNSLabel, metadata);
  const finalizersPath = FieldPath.root('spec', 'finalizers');
  for (const finalizer of stringsAt(specOf(namespace)['finalizers'])) {
    errs.push(...isQualifiedName(finalizer).map((msg) => invalid(finalizersPath, finalizer, msg)));
    if (!finalizer.includes('/') && finalizer !== 'kubernetes') {
      errs.push(invalid(finalizersPath, finalizer, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  }
  return errs;
}

export function validateServiceAccount(serviceAccount: JsonObject, namespaced: boolean): FieldError[] {
  return validateObjectMeta(metadataOf(serviceAccount), namespaced, nameIsDNSSubdomain, metadata);
}

// ---------------------------------------------------------------- Service

const serviceTypes = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const kubeletPort = 10250;

/** spec.clusterIPs as the strategy leaves it: a lone clusterIP stands for the list. */
function clusterIPsOf(spec: JsonObject): string[] {
  const list = stringsAt(spec['clusterIPs']);
  if (list.length > 0) return list;
  const single = stringAt(spec['clusterIP']);
  return single === '' ? [] : [single];
}

function isHeadless(spec: JsonObject): boolean {
  const ips = clusterIPsOf(spec);
  return ips.length === 1 && ips[0] === 'None';
}

function goServicePortKey(protocol: string, port: number): GoValue {
  return new GoValue(
    `core.ServicePort{Name:"", Protocol:${goQuote(protocol)}, AppProtocol:(*string)(nil), Port:${port}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`,
  );
}

function validateServicePort(port: JsonObject, requireName: boolean, names: Set<string>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const name = stringAt(port['name']);
  if (requireName && name === '') {
    errs.push(required(path.child('name')));
  } else if (name !== '') {
    errs.push(...validateDNS1123Label(name, path.child('name')));
    if (names.has(name)) errs.push(duplicate(path.child('name'), name));
    else names.add(name);
  }
  const number = optionalNumberAt(port['port']) ?? 0;
  errs.push(...isValidPortNum(number).map((msg) => invalid(path.child('port'), number, msg)));
  const protocol = defaultedString(port['protocol'], 'TCP');
  if (!supportedPortProtocols.includes(protocol)) errs.push(notSupported(path.child('protocol'), protocol, supportedPortProtocols));
  // Defaulting replaces an absent, 0 or "" targetPort with the port.
  const targetPort = port['targetPort'];
  errs.push(...validatePortNumOrName(targetPort === undefined || targetPort === 0 || targetPort === '' ? number : targetPort, path.child('targetPort')));
  if (typeof port['appProtocol'] === 'string') {
    const appProtocol = port['appProtocol'];
    errs.push(...isQualifiedName(appProtocol).map((msg) => invalid(path.child('appProtocol'), appProtocol, msg)));
  }
  return errs;
}

export function validateService(service: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMeta(metadataOf(service), namespaced, nameIsDNS1035Label, metadata);
  const spec = specOf(service);
  const specPath = FieldPath.root('spec');
  const type = defaultedString(spec['type'], 'ClusterIP');
  const ports = objectsAt(spec['ports']);
  const headless = isHeadless(spec);
  const clusterIPs = clusterIPsOf(spec);

  if (ports.length === 0 && !headless && type !== 'ExternalName') errs.push(required(specPath.child('ports')));
  switch (type) {
    case 'LoadBalancer':
      ports.forEach((port, i) => {
        if (port['port'] === kubeletPort) {
          errs.push(invalid(specPath.child('ports').index(i), kubeletPort, `may not expose port ${kubeletPort} externally since it is used by kubelet`));
        }
      });
      if (headless) errs.push(invalid(specPath.child('clusterIPs').index(0), clusterIPs[0], "may not be set to 'None' for LoadBalancer services"));
      break;
    case 'NodePort':
      if (headless) errs.push(invalid(specPath.child('clusterIPs').index(0), clusterIPs[0], "may not be set to 'None' for NodePort services"));
      break;
    case 'ExternalName': {
      if (clusterIPs.length > 0) errs.push(forbidden(specPath.child('clusterIPs'), 'may not be set for ExternalName services'));
      if (stringsAt(spec['ipFamilies']).length > 0) errs.push(forbidden(specPath.child('ipFamilies'), 'may not be set for ExternalName services'));
      if (spec['ipFamilyPolicy'] !== undefined && spec['ipFamilyPolicy'] !== null) {
        errs.push(forbidden(specPath.child('ipFamilyPolicy'), 'may not be set for ExternalName services'));
      }
      // A trailing dot marks the CNAME as fully qualified.
      const cname = stringAt(spec['externalName']).replace(/\.$/, '');
      if (cname === '') errs.push(required(specPath.child('externalName')));
      else errs.push(...isDNS1123Subdomain(cname).map((msg) => invalid(specPath.child('externalName'), cname, msg)));
      break;
    }
  }

  const portNames = new Set<string>();
  ports.forEach((port, i) => errs.push(...validateServicePort(port, ports.length > 1, portNames, specPath.child('ports').index(i))));
  if (spec['selector'] !== undefined) errs.push(...validateLabels(spec['selector'], specPath.child('selector')));

  const affinity = defaultedString(spec['sessionAffinity'], 'None');
  if (affinity !== 'ClientIP' && affinity !== 'None') errs.push(notSupported(specPath.child('sessionAffinity'), affinity, ['ClientIP', 'None']));
  if (affinity === 'ClientIP') {
    // Defaulting fills the ClientIP timeout (10800s) when the config is absent.
    const timeout = optionalNumberAt(asJsonObject(asJsonObject(spec['sessionAffinityConfig'])?.['clientIP'])?.['timeoutSeconds']);
    if (timeout !== undefined && (timeout <= 0 || timeout > maxClientIPAffinitySeconds)) {
      errs.push(
        invalid(specPath.child('sessionAffinityConfig', 'clientIP', 'timeoutSeconds'), timeout, `must be greater than 0 and less than ${maxClientIPAffinitySeconds}`),
      );
    }
  } else if (affinity === 'None' && spec['sessionAffinityConfig'] !== undefined && spec['sessionAffinityConfig'] !== null) {
    errs.push(forbidden(specPath.child('sessionAffinityConfig'), 'must not be set when session affinity is None'));
  }

  if (type !== 'ExternalName') errs.push(...validateClusterIPsRelatedFields(spec, clusterIPs, headless));

  stringsAt(spec['externalIPs']).forEach((ip, i) => {
    const msgs = isValidIP(ip);
    errs.push(...msgs.map((msg) => invalid(specPath.child('externalIPs').index(i), ip, msg)));
    if (msgs.length === 0) errs.push(...validateNonSpecialIP(ip, specPath.child('externalIPs').index(i)));
  });

  if (!serviceTypes.includes(type)) errs.push(notSupported(specPath.child('type'), type, serviceTypes));

  if (type === 'ClusterIP') {
    ports.forEach((port, i) => {
      if ((optionalNumberAt(port['nodePort']) ?? 0) !== 0) {
        errs.push(forbidden(specPath.child('ports').index(i).child('nodePort'), "may not be used when `type` is 'ClusterIP'"));
      }
    });
  }
  const nodePorts = new Set<string>();
  ports.forEach((port, i) => {
    const nodePort = optionalNumberAt(port['nodePort']) ?? 0;
    if (nodePort === 0) return;
    const key = `${defaultedString(port['protocol'], 'TCP')}/${nodePort}`;
    if (nodePorts.has(key)) errs.push(duplicate(specPath.child('ports').index(i).child('nodePort'), nodePort));
    nodePorts.add(key);
  });
  const portKeys = new Set<string>();
  ports.forEach((port, i) => {
    const protocol = defaultedString(port['protocol'], 'TCP');
    const number = optionalNumberAt(port['port']) ?? 0;
    const key = `${protocol}/${number}`;
    if (portKeys.has(key)) errs.push(duplicate(specPath.child('ports').index(i), goServicePortKey(protocol, number)));
    portKeys.add(key);
  });

  const sourceRanges = stringsAt(spec['loadBalancerSourceRanges']);
  if (sourceRanges.length > 0) {
    // Go names this field with a capital L.
    const rangesPath = specPath.child('LoadBalancerSourceRanges');
    if (type !== 'LoadBalancer') errs.push(forbidden(rangesPath, "may only be used when `type` is 'LoadBalancer'"));
    if (sourceRanges.some((range) => parseCIDR(range.trim()) === undefined)) {
      errs.push(invalid(rangesPath, `[${sourceRanges.join(' ')}]`, 'must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 '));
    }
  }
  if (spec['allocateLoadBalancerNodePorts'] !== undefined && spec['allocateLoadBalancerNodePorts'] !== null && type !== 'LoadBalancer') {
    errs.push(forbidden(specPath.child('allocateLoadBalancerNodePorts'), "may only be used when `type` is 'LoadBalancer'"));
  }
  if (typeof spec['loadBalancerClass'] === 'string') {
    const className = spec['loadBalancerClass'];
    if (type === 'LoadBalancer') errs.push(...isQualifiedName(className).map((msg) => invalid(specPath.child('loadBalancerClass'), className, msg)));
    else errs.push(forbidden(specPath.child('loadBalancerClass'), "may only be used when `type` is 'LoadBalancer'"));
  }

  // externalTrafficPolicy is defaulted (Cluster) for NodePort and LoadBalancer only.
  const externalPolicy = stringAt(spec['externalTrafficPolicy']);
  const needsExternalPolicy = type === 'NodePort' || type === 'LoadBalancer';
  if (!needsExternalPolicy && externalPolicy !== '') {
    errs.push(invalid(specPath.child('externalTrafficPolicy'), externalPolicy, "may only be set when `type` is 'NodePort' or 'LoadBalancer'"));
  } else if (needsExternalPolicy && externalPolicy !== '' && externalPolicy !== 'Cluster' && externalPolicy !== 'Local') {
    errs.push(notSupported(specPath.child('externalTrafficPolicy'), externalPolicy, ['Cluster', 'Local']));
  }
  const healthCheckNodePort = optionalNumberAt(spec['healthCheckNodePort']) ?? 0;
  const needsHealthCheck = type === 'LoadBalancer' && externalPolicy === 'Local';
  if (!needsHealthCheck && healthCheckNodePort !== 0) {
    errs.push(invalid(specPath.child('healthCheckNodePort'), healthCheckNodePort, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"));
  } else if (needsHealthCheck && healthCheckNodePort !== 0) {
    errs.push(...isValidPortNum(healthCheckNodePort).map((msg) => invalid(specPath.child('healthCheckNodePort'), healthCheckNodePort, msg)));
  }
  const internalPolicy = spec['internalTrafficPolicy'];
  if (typeof internalPolicy === 'string' && internalPolicy !== 'Cluster' && internalPolicy !== 'Local') {
    errs.push(notSupported(specPath.child('internalTrafficPolicy'), internalPolicy, ['Cluster', 'Local']));
  }
  return errs;
}

const maxClientIPAffinitySeconds = 86400;

/** ValidateServiceClusterIPsRelatedFields: clusterIP(s), ipFamilies and ipFamilyPolicy (not for ExternalName). */
function validateClusterIPsRelatedFields(spec: JsonObject, clusterIPs: string[], headless: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const clusterIPsPath = FieldPath.root('spec', 'clusterIPs');
  // The strategy fills whichever of clusterIP and clusterIPs is missing; both given must agree.
  if (typeof spec['clusterIP'] === 'string' && Array.isArray(spec['clusterIPs'])) {
    const clusterIP = spec['clusterIP'];
    const listed = stringsAt(spec['clusterIPs']);
    if (clusterIP !== '') {
      if (listed.length === 0) errs.push(required(clusterIPsPath));
      else if (listed[0] !== clusterIP) errs.push(invalid(clusterIPsPath, listed, 'first value must match `clusterIP`'));
    } else if (listed.length > 0) {
      errs.push(invalid(clusterIPsPath, listed, 'must be empty when `clusterIP` is not specified'));
    }
  }
  const families = stringsAt(spec['ipFamilies']);
  const seenFamilies = new Set<string>();
  families.forEach((family, i) => {
    const familyPath = FieldPath.root('spec', 'ipFamilies').index(i);
    if (family !== 'IPv4' && family !== 'IPv6') errs.push(notSupported(familyPath, family, ['IPv4', 'IPv6']));
    if (seenFamilies.has(family)) errs.push(duplicate(familyPath, family));
    seenFamilies.add(family);
  });
  const policy = spec['ipFamilyPolicy'];
  if (typeof policy === 'string' && !['PreferDualStack', 'RequireDualStack', 'SingleStack'].includes(policy)) {
    errs.push(notSupported(FieldPath.root('spec', 'ipFamilyPolicy'), policy, ['PreferDualStack', 'RequireDualStack', 'SingleStack']));
  }
  let invalidIPs = false;
  clusterIPs.forEach((ip, i) => {
    if (i === 0 && ip === 'None') {
      if (clusterIPs.length > 1) {
        invalidIPs = true;
        errs.push(invalid(clusterIPsPath, clusterIPs, "'None' must be the first and only value"));
      }
      return;
    }
    const msgs = isValidIP(ip);
    if (msgs.length > 0) invalidIPs = true;
    errs.push(...msgs.map((msg) => invalid(clusterIPsPath.index(i), ip, msg)));
  });
  if (clusterIPs.length > 2) errs.push(invalid(clusterIPsPath, clusterIPs, 'may only hold up to 2 values'));
  if (invalidIPs) return errs;
  const versions = clusterIPs.map((ip) => parseIP(ip)?.version);
  if (clusterIPs.length > 1 && (clusterIPs.length > 2 || versions[0] === versions[1])) {
    errs.push(invalid(clusterIPsPath, clusterIPs, 'may specify no more than one IP for each IP family'));
  }
  if (!headless) {
    clusterIPs.forEach((ip, i) => {
      const family = families[i];
      if (family === 'IPv4' && versions[i] === 6) errs.push(invalid(clusterIPsPath.index(i), ip, `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``));
      if (family === 'IPv6' && versions[i] !== 6) errs.push(invalid(clusterIPsPath.index(i), ip, `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``));
    });
  }
  return errs;
}

/** Updates may add or drop a secondary cluster IP but never change one that is set. */
export function validateServiceUpdate(service: JsonObject, old: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMetaUpdate(metadataOf(service), metadataOf(old), metadata);
  const spec = specOf(service);
  const oldSpec = specOf(old);
  const type = defaultedString(spec['type'], 'ClusterIP');
  const oldType = defaultedString(oldSpec['type'], 'ClusterIP');
  if (type !== 'ExternalName' && oldType !== 'ExternalName' && !(isHeadless(spec) && isHeadless(oldSpec))) {
    const next = clusterIPsOf(spec);
    const prior = clusterIPsOf(oldSpec);
    const path = FieldPath.root('spec', 'clusterIPs');
    // An update that leaves clusterIP out keeps the allocated one (the strategy copies it over).
    if (next.length > 0) {
      if (next.length === prior.length) {
        prior.forEach((ip, i) => {
          if (ip !== next[i]) errs.push(invalid(path.index(i), next, 'may not change once set'));
        });
      } else if (prior.length > 0 && next[0] !== prior[0]) {
        errs.push(invalid(path.index(0), next, 'may not change once set'));
      }
      if (next.length === 1 && prior.length > 1 && spec['ipFamilyPolicy'] !== 'SingleStack') {
        const policy = typeof spec['ipFamilyPolicy'] === 'string' ? spec['ipFamilyPolicy'] : null;
        errs.push(invalid(FieldPath.root('spec', 'ipFamilyPolicy'), policy, "must be set to 'SingleStack' when releasing the secondary clusterIP"));
      }
    }
  }
  if (type === 'LoadBalancer' && oldType === 'LoadBalancer' && spec['loadBalancerClass'] !== oldSpec['loadBalancerClass']) {
    const className = typeof spec['loadBalancerClass'] === 'string' ? spec['loadBalancerClass'] : null;
    errs.push(invalid(FieldPath.root('spec', 'loadBalancerClass'), className, 'may not change once set'));
  }
  const needsHealthCheck = (s: JsonObject): boolean => s['type'] === 'LoadBalancer' && s['externalTrafficPolicy'] === 'Local';
  if (needsHealthCheck(spec) && needsHealthCheck(oldSpec) && spec['healthCheckNodePort'] !== undefined && spec['healthCheckNodePort'] !== oldSpec['healthCheckNodePort']) {
    errs.push(forbidden(FieldPath.root('spec', 'healthCheckNodePort'), 'field is immutable'));
  }
  errs.push(...validateService(service, namespaced));
  return errs;
}

export function validateNonSpecialIP(ip: string, path: FieldPath): FieldError[] {
  const parsed = parseIP(ip);
  if (parsed === undefined) return [invalid(path, ip, 'must be a valid IP address')];
  const errs: FieldError[] = [];
  const b = parsed.version === 4 ? parsed.bytes : isV4Mapped(parsed.bytes) ? parsed.bytes.slice(12) : undefined;
  if (b !== undefined) {
    if (b.every((x) => x === 0)) errs.push(invalid(path, ip, 'may not be unspecified (0.0.0.0)'));
    if (b[0] === 127) errs.push(invalid(path, ip, 'may not be in the loopback range (127.0.0.0/8)'));
    if (b[0] === 169 && b[1] === 254) errs.push(invalid(path, ip, 'may not be in the link-local range (169.254.0.0/16)'));
    if (b[0] === 224 && b[1] === 0 && b[2] === 0) errs.push(invalid(path, ip, 'may not be in the link-local multicast range (224.0.0.0/24)'));
  } else {
    const v6 = parsed.bytes;
    if (v6.every((x) => x === 0)) errs.push(invalid(path, ip, 'may not be unspecified (0.0.0.0)'));
    if (v6.slice(0, 15).every((x) => x === 0) && v6[15] === 1) errs.push(invalid(path, ip, 'may not be in the loopback range (127.0.0.0/8)'));
    if (v6[0] === 0xfe && ((v6[1] ?? 0) & 0xc0) === 0x80) errs.push(invalid(path, ip, 'may not be in the link-local range (169.254.0.0/16)'));
    if (v6[0] === 0xff && ((v6[1] ?? 0) & 0x0f) === 0x02) errs.push(invalid(path, ip, 'may not be in the link-local multicast range (224.0.0.0/24)'));
  }
  return errs;
}

function isV4Mapped(bytes: number[]): boolean {
  return bytes.slice(0, 10).every((x) => x === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
}

// ---------------------------------------------------------------- Endpoints

function validateEndpointAddress(address: JsonObject, path: FieldPath): FieldError[] {
  const ip = stringAt(address['ip']);
  const errs = isValidIP(ip).map((msg) => invalid(path.child('ip'), ip, msg));
  const hostname = stringAt(address['hostname']);
  if (hostname !== '') errs.push(...validateDNS1123Label(hostname, path.child('hostname')));
  if (typeof address['nodeName'] === 'string') {
    const nodeName = address['nodeName'];
    errs.push(...nameIsDNSSubdomain(nodeName, false).map((msg) => invalid(path.child('nodeName'), nodeName, msg)));
  }
  errs.push(...validateNonSpecialIP(ip, path.child('ip')));
  return errs;
}

export function validateEndpoints(endpoints: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMeta(metadataOf(endpoints), namespaced, nameIsDNSSubdomain, metadata);
  objectsAt(endpoints['subsets']).forEach((subset, i) => {
    const subsetPath = FieldPath.root('subsets').index(i);
    const addresses = objectsAt(subset['addresses']);
    const notReady = objectsAt(subset['notReadyAddresses']);
    if (addresses.length === 0 && notReady.length === 0) errs.push(required(subsetPath, 'must specify `addresses` or `notReadyAddresses`'));
    addresses.forEach((a, j) => errs.push(...validateEndpointAddress(a, subsetPath.child('addresses').index(j))));
    notReady.forEach((a, j) => errs.push(...validateEndpointAddress(a, subsetPath.child('notReadyAddresses').index(j))));
    const ports = objectsAt(subset['ports']);
    ports.forEach((port, j) => {
      const portPath = subsetPath.child('ports').index(j);
      const name = stringAt(port['name']);
      if (ports.length > 1 && name === '') errs.push(required(portPath.child('name')));
      else if (name !== '') errs.push(...validateDNS1123Label(name, portPath.child('name')));
      const number = optionalNumberAt(port['port']) ?? 0;
      errs.push(...isValidPortNum(number).map((msg) => invalid(portPath.child('port'), number, msg)));
      const protocol = defaultedString(port['protocol'], 'TCP');
      if (!supportedPortProtocols.includes(protocol)) errs.push(notSupported(portPath.child('protocol'), protocol, supportedPortProtocols));
    });
  });
  return errs;
}

// ---------------------------------------------------------------- Node

export function validateNode(node: JsonObject): FieldError[] {
  const errs = validateObjectMeta(metadataOf(node), false, nameIsDNSSubdomain, metadata);
  const taintsPath = FieldPath.root('spec', 'taints');
  const seen = new Set<string>();
  objectsAt(specOf(node)['taints']).forEach((taint, i) => {
    const taintPath = taintsPath.index(i);
    const key = stringAt(taint['key']);
    const value = stringAt(taint['value']);
    const effect = stringAt(taint['effect']);
    errs.push(...validateLabelName(key, taintPath.child('key')));
    const msgs = isValidLabelValue(value);
    if (msgs.length > 0) errs.push(invalid(taintPath.child('value'), value, msgs.join(';')));
    errs.push(...validateTaintEffect(effect, false, taintPath.child('effect')));
    const pair = `${effect}\u0000${key}`;
    if (seen.has(pair)) {
      errs.push({ ...duplicate(taintPath, new GoValue(JSON.stringify(taint))), detail: 'taints must be unique by key and effect pair' });
    }
    seen.add(pair);
  });
  return errs;
}

// ---------------------------------------------------------------- PersistentVolumeClaim

const accessModes = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce'];

export function validatePersistentVolumeClaim(claim: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMeta(metadataOf(claim), namespaced, nameIsDNSSubdomain, metadata);
  const spec = specOf(claim);
  const specPath = FieldPath.root('spec');
  const modes = stringsAt(spec['accessModes']);
  if (modes.length === 0) errs.push(required(specPath.child('accessModes'), 'at least 1 access mode is required'));
  errs.push(...validateLabelSelector(spec['selector'], specPath.child('selector')));
  // ReadWriteOncePod sits behind a feature gate that is off in v1.25.
  for (const mode of modes) if (!accessModes.includes(mode)) errs.push(notSupported(specPath.child('accessModes'), mode, accessModes));
  const requests = asJsonObject(asJsonObject(spec['resources'])?.['requests']) ?? {};
  // Go names the key on `resources`, not on `resources.requests`.
  const storagePath = specPath.child('resources').key('storage');
  if (!Object.prototype.hasOwnProperty.call(requests, 'storage')) {
    errs.push(required(storagePath));
  } else if (!(quantityValue(requests['storage']) > 0)) {
    errs.push(invalid(storagePath, quantityText(requests['storage']), 'must be greater than zero'));
  }
  if (typeof spec['storageClassName'] === 'string' && spec['storageClassName'] !== '') {
    const className = spec['storageClassName'];
    errs.push(...nameIsDNSSubdomain(className, false).map((msg) => invalid(specPath.child('storageClassName'), className, msg)));
  }
  const volumeMode = spec['volumeMode'];
  if (typeof volumeMode === 'string' && volumeMode !== 'Block' && volumeMode !== 'Filesystem') {
    errs.push(notSupported(specPath.child('volumeMode'), volumeMode, ['Block', 'Filesystem']));
  }
  return errs;
}

/** Only resources.requests (for bound claims) and a first volumeName may change. */
export function validatePersistentVolumeClaimUpdate(claim: JsonObject, old: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMetaUpdate(metadataOf(claim), metadataOf(old), metadata);
  errs.push(...validatePersistentVolumeClaim(claim, namespaced));
  const spec = specOf(claim);
  const oldSpec = specOf(old);
  const comparableNew: JsonObject = { ...spec };
  const comparableOld: JsonObject = { ...oldSpec };
  if (stringAt(oldSpec['volumeName']) === '') comparableOld['volumeName'] = spec['volumeName'];
  const bound = stringAt(asJsonObject(claim['status'])?.['phase']) === 'Bound';
  if (bound) {
    const resources = asJsonObject(spec['resources']) ?? {};
    const requests = { ...(asJsonObject(resources['requests']) ?? {}), storage: asJsonObject(asJsonObject(oldSpec['resources'])?.['requests'])?.['storage'] };
    comparableNew['resources'] = { ...resources, requests };
  }
  if (!semanticEqual(comparableNew, comparableOld)) {
    errs.push(
      forbidden(
        FieldPath.root('spec'),
        `spec is immutable after creation except resources.requests for bound claims\n${specDiff('core.PersistentVolumeClaimSpec', comparableOld, comparableNew)}`,
      ),
    );
  }
  const newSize = quantityValue(asJsonObject(asJsonObject(spec['resources'])?.['requests'])?.['storage']);
  const oldSize = quantityValue(asJsonObject(asJsonObject(oldSpec['resources'])?.['requests'])?.['storage']);
  if (newSize < oldSize) errs.push(forbidden(FieldPath.root('spec', 'resources', 'requests', 'storage'), 'field can not be less than previous value'));
  return errs;
}
