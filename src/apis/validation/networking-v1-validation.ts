/** networking.k8s.io/v1 Ingress and NetworkPolicy (pkg/apis/networking/validation, v1.25). */
import { FieldPath } from './field-path';
import { FieldError, GoValue, forbidden, invalid, notSupported, required } from './field-error';
import { objectsAt, optionalNumberAt, stringAt, stringsAt } from './json-value';
import { validateLabelSelector } from './label-selector';
import {
  isDNS1123Subdomain,
  isValidPathSegmentName,
  isValidPortName,
  isValidPortNum,
  isWildcardDNS1123Subdomain,
  nameIsDNS1035Label,
  nameIsDNSSubdomain,
  parseCIDR,
  parseIP,
} from './name-validation';
import { validateObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { asJsonObject, type JsonObject, metadataOf } from '../object';

const metadata = FieldPath.root('metadata');

function specOf(object: JsonObject): JsonObject {
  return asJsonObject(object['spec']) ?? {};
}

// ---------------------------------------------------------------- Ingress

const invalidPathSequences = ['//', '/./', '/../', '%2f', '%2F'];
const invalidPathSuffixes = ['/..', '/.'];
const pathTypes = ['Exact', 'ImplementationSpecific', 'Prefix'];

function validateIngressBackend(backend: JsonObject, path: FieldPath): FieldError[] {
  const resource = asJsonObject(backend['resource']);
  const service = asJsonObject(backend['service']);
  if (resource !== undefined && service !== undefined) return [invalid(path, '', 'cannot set both resource and service backends')];
  if (resource !== undefined) {
    const errs: FieldError[] = [];
    const resourcePath = path.child('resource');
    if (typeof resource['apiGroup'] === 'string') {
      const apiGroup = resource['apiGroup'];
      errs.push(...isDNS1123Subdomain(apiGroup).map((msg) => invalid(resourcePath.child('apiGroup'), apiGroup, msg)));
    }
    for (const key of ['kind', 'name']) {
      const value = stringAt(resource[key]);
      if (value === '') errs.push(required(resourcePath.child(key), `${key} is required`));
      else errs.push(...isValidPathSegmentName(value).map((msg) => invalid(resourcePath.child(key), value, msg)));
    }
    return errs;
  }
  if (service === undefined) return [invalid(path, '', 'resource or service backend is required')];
  const errs: FieldError[] = [];
  const name = stringAt(service['name']);
  if (name === '') errs.push(required(path.child('service', 'name')));
  else errs.push(...nameIsDNS1035Label(name, false).map((msg) => invalid(path.child('service', 'name'), name, msg)));
  const port = asJsonObject(service['port']) ?? {};
  const portName = stringAt(port['name']);
  const portNumber = optionalNumberAt(port['number']) ?? 0;
  if (portName !== '' && portNumber !== 0) errs.push(invalid(path, '', 'cannot set both port name & port number'));
  else if (portName !== '') errs.push(...isValidPortName(portName).map((msg) => invalid(path.child('service', 'port', 'name'), portName, msg)));
  else if (portNumber !== 0) errs.push(...isValidPortNum(portNumber).map((msg) => invalid(path.child('service', 'port', 'number'), portNumber, msg)));
  else errs.push(required(path, 'port name or number is required'));
  return errs;
}

function validateHTTPIngressPath(ingressPath: JsonObject, path: FieldPath): FieldError[] {
  const pathType = ingressPath['pathType'];
  if (typeof pathType !== 'string') return [required(path.child('pathType'), 'pathType must be specified')];
  const errs: FieldError[] = [];
  const value = stringAt(ingressPath['path']);
  if (pathType === 'Exact' || pathType === 'Prefix') {
    if (!value.startsWith('/')) errs.push(invalid(path.child('path'), value, 'must be an absolute path'));
    if (value !== '') {
      for (const sequence of invalidPathSequences) if (value.includes(sequence)) errs.push(invalid(path.child('path'), value, `must not contain '${sequence}'`));
      for (const suffix of invalidPathSuffixes) if (value.endsWith(suffix)) errs.push(invalid(path.child('path'), value, `cannot end with '${suffix}'`));
    }
  } else if (pathType === 'ImplementationSpecific') {
    if (value !== '' && !value.startsWith('/')) errs.push(invalid(path.child('path'), value, 'must be an absolute path'));
  } else {
    errs.push(notSupported(path.child('pathType'), pathType, pathTypes));
  }
  errs.push(...validateIngressBackend(asJsonObject(ingressPath['backend']) ?? {}, path.child('backend')));
  return errs;
}

function validateIngressSpec(spec: JsonObject): FieldError[] {
  const specPath = FieldPath.root('spec');
  const errs: FieldError[] = [];
  const rules = objectsAt(spec['rules']);
  const defaultBackend = asJsonObject(spec['defaultBackend']);
  if (rules.length === 0 && defaultBackend === undefined) {
    const shown = Array.isArray(spec['rules']) ? '[]networking.IngressRule{}' : '[]networking.IngressRule(nil)';
    errs.push(invalid(specPath, new GoValue(shown), 'either `defaultBackend` or `rules` must be specified'));
  }
  if (defaultBackend !== undefined) errs.push(...validateIngressBackend(defaultBackend, specPath.child('defaultBackend')));
  rules.forEach((rule, i) => {
    const rulePath = specPath.child('rules').index(i);
    const host = stringAt(rule['host']);
    if (host !== '') {
      if (parseIP(host) !== undefined) errs.push(invalid(rulePath.child('host'), host, 'must be a DNS name, not an IP address'));
      const msgs = host.includes('*') ? isWildcardDNS1123Subdomain(host) : isDNS1123Subdomain(host);
      errs.push(...msgs.map((msg) => invalid(rulePath.child('host'), host, msg)));
    }
    const http = asJsonObject(rule['http']);
    if (http !== undefined) {
      const paths = objectsAt(http['paths']);
      if (paths.length === 0) errs.push(required(rulePath.child('http', 'paths')));
      paths.forEach((p, j) => errs.push(...validateHTTPIngressPath(p, rulePath.child('http', 'paths').index(j))));
    }
  });
  objectsAt(spec['tls']).forEach((tls, i) => {
    stringsAt(tls['hosts']).forEach((host, j) => {
      const hostPath = specPath.child('tls').index(i).child('hosts').index(j);
      const msgs = host.includes('*') ? isWildcardDNS1123Subdomain(host) : isDNS1123Subdomain(host);
      errs.push(...msgs.map((msg) => invalid(hostPath, host, msg)));
    });
  });
  if (typeof spec['ingressClassName'] === 'string') {
    const className = spec['ingressClassName'];
    errs.push(...nameIsDNSSubdomain(className, false).map((msg) => invalid(specPath.child('ingressClassName'), className, msg)));
  }
  return errs;
}

export function validateIngress(ingress: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMeta(metadataOf(ingress), namespaced, nameIsDNSSubdomain, metadata);
  errs.push(...validateIngressSpec(specOf(ingress)));
  return errs;
}

export function validateIngressUpdate(ingress: JsonObject, old: JsonObject): FieldError[] {
  const errs = validateObjectMetaUpdate(metadataOf(ingress), metadataOf(old), metadata);
  errs.push(...validateIngressSpec(specOf(ingress)));
  return errs;
}

// ---------------------------------------------------------------- NetworkPolicy

function validatePort(port: JsonObject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const protocol = port['protocol'];
  if (typeof protocol === 'string' && !['TCP', 'UDP', 'SCTP'].includes(protocol)) {
    errs.push(notSupported(path.child('protocol'), protocol, ['TCP', 'UDP', 'SCTP']));
  }
  const number = port['port'];
  const endPort = optionalNumberAt(port['endPort']);
  if (typeof number === 'number') {
    errs.push(...isValidPortNum(number).map((msg) => invalid(path.child('port'), number, msg)));
    if (endPort !== undefined) {
      if (endPort < number) errs.push(invalid(path.child('endPort'), number, 'must be greater than or equal to `port`'));
      errs.push(...isValidPortNum(endPort).map((msg) => invalid(path.child('endPort'), endPort, msg)));
    }
  } else if (typeof number === 'string') {
    if (endPort !== undefined) errs.push(invalid(path.child('endPort'), endPort, 'may not be specified when `port` is non-numeric'));
    errs.push(...isValidPortName(number).map((msg) => invalid(path.child('port'), number, msg)));
  } else if (endPort !== undefined) {
    errs.push(invalid(path.child('endPort'), endPort, 'may not be specified when `port` is not specified'));
  }
  return errs;
}

function cidrContains(outer: { version: 4 | 6; bytes: number[]; prefix: number }, inner: { version: 4 | 6; bytes: number[] }): boolean {
  if (outer.version !== inner.version) return false;
  for (let bit = 0; bit < outer.prefix; bit++) {
    const byte = Math.floor(bit / 8);
    const mask = 0x80 >> bit % 8;
    if (((outer.bytes[byte] ?? 0) & mask) !== ((inner.bytes[byte] ?? 0) & mask)) return false;
  }
  return true;
}

function validateIPBlock(block: JsonObject, path: FieldPath): FieldError[] {
  const cidr = stringAt(block['cidr']);
  if (cidr === '') return [required(path.child('cidr'))];
  const outer = parseCIDR(cidr);
  if (outer === undefined) return [invalid(path.child('cidr'), cidr, 'not a valid CIDR')];
  const errs: FieldError[] = [];
  const excepts = stringsAt(block['except']);
  for (let i = 0; i < excepts.length; i++) {
    const except = excepts[i] ?? '';
    const exceptPath = path.child('except').index(i);
    const inner = parseCIDR(except);
    if (inner === undefined) {
      errs.push(invalid(exceptPath, except, 'not a valid CIDR'));
      return errs;
    }
    if (!cidrContains(outer, inner) || outer.prefix >= inner.prefix) errs.push(invalid(exceptPath, except, 'must be a strict subset of `cidr`'));
  }
  return errs;
}

function validatePeer(peer: JsonObject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let peers = 0;
  for (const key of ['podSelector', 'namespaceSelector']) {
    if (asJsonObject(peer[key]) === undefined) continue;
    peers++;
    errs.push(...validateLabelSelector(peer[key], path.child(key)));
  }
  const ipBlock = asJsonObject(peer['ipBlock']);
  if (ipBlock !== undefined) {
    peers++;
    errs.push(...validateIPBlock(ipBlock, path.child('ipBlock')));
  }
  if (peers === 0) errs.push(required(path, 'must specify a peer'));
  else if (peers > 1 && ipBlock !== undefined) errs.push(forbidden(path, 'may not specify both ipBlock and another peer'));
  return errs;
}

function validateNetworkPolicySpec(spec: JsonObject): FieldError[] {
  const specPath = FieldPath.root('spec');
  const errs = validateLabelSelector(spec['podSelector'], specPath.child('podSelector'));
  for (const [direction, peersKey] of [['ingress', 'from'], ['egress', 'to']] as const) {
    objectsAt(spec[direction]).forEach((rule, i) => {
      const rulePath = specPath.child(direction).index(i);
      objectsAt(rule['ports']).forEach((port, j) => errs.push(...validatePort(port, rulePath.child('ports').index(j))));
      objectsAt(rule[peersKey]).forEach((peer, j) => errs.push(...validatePeer(peer, rulePath.child(peersKey).index(j))));
    });
  }
  const policyTypes = stringsAt(spec['policyTypes']);
  if (policyTypes.length > 2) {
    errs.push(invalid(specPath.child('policyTypes'), policyTypes, 'may not specify more than two policyTypes'));
    return errs;
  }
  policyTypes.forEach((type, i) => {
    if (type !== 'Ingress' && type !== 'Egress') errs.push(notSupported(specPath.child('policyTypes').index(i), type, ['Ingress', 'Egress']));
  });
  return errs;
}

export function validateNetworkPolicy(policy: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMeta(metadataOf(policy), namespaced, nameIsDNSSubdomain, metadata);
  errs.push(...validateNetworkPolicySpec(specOf(policy)));
  return errs;
}

export function validateNetworkPolicyUpdate(policy: JsonObject, old: JsonObject): FieldError[] {
  const errs = validateObjectMetaUpdate(metadataOf(policy), metadataOf(old), metadata);
  errs.push(...validateNetworkPolicySpec(specOf(policy)));
  return errs;
}
