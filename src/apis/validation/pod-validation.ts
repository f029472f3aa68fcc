/**
 * Pods, pod templates and pod specs as pkg/apis/core/validation (v1.25) checks them: containers,
 * ports, env, volumes and their mounts, probes, resources, policies, tolerations, and the narrow set
 * of pod updates kube-apiserver allows.
 */
import { FieldPath } from './field-path';
import { FieldError, GoValue, duplicate, forbidden, invalid, notFound, notSupported, required } from './field-error';
import { arrayAt, defaultedString, objectsAt, optionalNumberAt, semanticEqual, stringAt, stringsAt } from './json-value';
import { validateLabelName, validateLabelSelector, validateLabels } from './label-selector';
import {
  inclusiveRangeError,
  isConfigMapKey,
  isDNS1123Label,
  isDNS1123Subdomain,
  isEnvVarName,
  isHTTPHeaderName,
  isNegativeErrorMsg,
  isQualifiedName,
  isValidLabelValue,
  isValidPortName,
  isValidIP,
  isValidPortNum,
  nameIsDNSSubdomain,
} from './name-validation';
import { validateAnnotations, validateObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { quantityText, quantityValue } from './quantity';
import { specDiff } from './spec-diff';
import { asJsonObject, type JsonObject, metadataOf } from '../object';

const maxInt32 = 2147483647;
const supportedPortProtocols = ['SCTP', 'TCP', 'UDP'];
const fileModeErrorMsg = 'must be a number between 0 and 0777 (octal), both inclusive';

export function validateDNS1123Label(value: string, path: FieldPath): FieldError[] {
  return isDNS1123Label(value).map((msg) => invalid(path, value, msg));
}

function nonNegative(value: number, path: FieldPath): FieldError[] {
  return value < 0 ? [invalid(path, value, isNegativeErrorMsg)] : [];
}

/** An IntOrString port: numbers must be valid port numbers, strings valid port names. */
export function validatePortNumOrName(port: unknown, path: FieldPath): FieldError[] {
  if (typeof port === 'number') return isValidPortNum(port).map((msg) => invalid(path, port, msg));
  const name = stringAt(port);
  return isValidPortName(name).map((msg) => invalid(path, name, msg));
}

/**
 * Volume sources in the order Go's validateVolumeSource examines them, with the path each one's
 * "more than 1 volume type" error names (v1.25 spells two of them differently from the field).
 */
const volumeSources: Array<[key: string, forbiddenPath: string]> = [
  ['emptyDir', 'emptyDir'], ['hostPath', 'hostPath'], ['gitRepo', 'gitRepo'], ['gcePersistentDisk', 'gcePersistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore'], ['secret', 'secret'], ['nfs', 'nfs'], ['iscsi', 'iscsi'], ['glusterfs', 'glusterfs'],
  ['flocker', 'flocker'], ['persistentVolumeClaim', 'persistentVolumeClaim'], ['rbd', 'rbd'], ['cinder', 'cinder'], ['cephfs', 'cephFS'],
  ['quobyte', 'quobyte'], ['downwardAPI', 'downwarAPI'], ['fc', 'fc'], ['flexVolume', 'flexVolume'], ['configMap', 'configMap'],
  ['azureFile', 'azureFile'], ['vsphereVolume', 'vsphereVolume'], ['photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume'], ['azureDisk', 'azureDisk'], ['storageos', 'storageos'], ['projected', 'projected'],
  ['scaleIO', 'scaleIO'], ['csi', 'csi'], ['ephemeral', 'ephemeral'],
];

function validateFileMode(value: unknown, path: FieldPath): FieldError[] {
  const mode = optionalNumberAt(value);
  return mode !== undefined && (mode > 0o777 || mode < 0) ? [invalid(path, mode, fileModeErrorMsg)] : [];
}

function validatePathNoBacksteps(target: string, path: FieldPath): FieldError[] {
  return target.split('/').includes('..') ? [invalid(path, target, "must not contain '..'")] : [];
}

function validateLocalDescendingPath(target: string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (target.startsWith('/')) errs.push(invalid(path, target, 'must be a relative path'));
  errs.push(...validatePathNoBacksteps(target, path));
  return errs;
}

function validateLocalNonReservedPath(target: string, path: FieldPath): FieldError[] {
  const errs = validateLocalDescendingPath(target, path);
  // "../x" already failed the backstep check.
  if (target.startsWith('..') && !target.startsWith('../')) errs.push(invalid(path, target, "must not start with '..'"));
  return errs;
}

function validateKeyToPaths(items: JsonObject[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  items.forEach((item, i) => {
    const itemPath = path.index(i);
    const target = stringAt(item['path']);
    if (stringAt(item['key']) === '') errs.push(required(itemPath.child('key')));
    if (target === '') errs.push(required(itemPath.child('path')));
    errs.push(...validateLocalNonReservedPath(target, itemPath.child('path')));
    errs.push(...validateFileMode(item['mode'], itemPath.child('mode')));
  });
  return errs;
}

function validateVolumeSource(volume: JsonObject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let count = 0;
  for (const [key, forbiddenPath] of volumeSources) {
    const source = asJsonObject(volume[key]);
    if (source === undefined) continue;
    if (count > 0) {
      errs.push(forbidden(path.child(forbiddenPath), 'may not specify more than 1 volume type'));
      continue;
    }
    count++;
    const sourcePath = path.child(key);
    switch (key) {
      case 'emptyDir':
        if (source['sizeLimit'] !== undefined && quantityValue(source['sizeLimit']) < 0) {
          errs.push(forbidden(sourcePath.child('sizeLimit'), 'SizeLimit field must be a valid resource quantity'));
        }
        break;
      case 'hostPath': {
        const hostPath = stringAt(source['path']);
        if (hostPath === '') {
          errs.push(required(sourcePath.child('path')));
          break;
        }
        errs.push(...validatePathNoBacksteps(hostPath, sourcePath.child('path')));
        const type = stringAt(source['type']);
        const types = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'];
        if (!types.includes(type)) errs.push(notSupported(sourcePath.child('type'), type, types));
        break;
      }
      case 'secret':
        if (stringAt(source['secretName']) === '') errs.push(required(sourcePath.child('secretName')));
        errs.push(...validateFileMode(source['defaultMode'], sourcePath.child('defaultMode')));
        errs.push(...validateKeyToPaths(objectsAt(source['items']), sourcePath.child('items')));
        break;
      case 'configMap':
        if (stringAt(source['name']) === '') errs.push(required(sourcePath.child('name')));
        errs.push(...validateFileMode(source['defaultMode'], sourcePath.child('defaultMode')));
        errs.push(...validateKeyToPaths(objectsAt(source['items']), sourcePath.child('items')));
        break;
      case 'persistentVolumeClaim':
        if (stringAt(source['claimName']) === '') errs.push(required(sourcePath.child('claimName')));
        break;
      case 'nfs': {
        const nfsPath = stringAt(source['path']);
        if (stringAt(source['server']) === '') errs.push(required(sourcePath.child('server')));
        if (nfsPath === '') errs.push(required(sourcePath.child('path')));
        if (!nfsPath.startsWith('/')) errs.push(invalid(sourcePath.child('path'), nfsPath, 'must be an absolute path'));
        break;
      }
      case 'downwardAPI':
        errs.push(...validateFileMode(source['defaultMode'], sourcePath.child('defaultMode')));
        break;
      case 'projected':
        errs.push(...validateFileMode(source['defaultMode'], sourcePath.child('defaultMode')));
        objectsAt(source['sources']).forEach((projection, i) => {
          const token = asJsonObject(projection['serviceAccountToken']);
          if (token === undefined) return;
          const tokenPath = sourcePath.child('sources').index(i).child('serviceAccountToken');
          // expirationSeconds defaults to 3600.
          const expiration = optionalNumberAt(token['expirationSeconds']) ?? 3600;
          if (expiration < 600) errs.push(invalid(tokenPath.child('expirationSeconds'), expiration, 'may not specify a duration less than 10 minutes'));
          if (expiration > 2 ** 32) errs.push(invalid(tokenPath.child('expirationSeconds'), expiration, 'may not specify a duration larger than 2^32 seconds'));
        });
        break;
    }
  }
  if (count === 0) errs.push(required(path, 'must specify a volume type'));
  return errs;
}

/** The pod's volumes; returns the names that validated cleanly, which mounts may reference. */
function validateVolumes(volumes: JsonObject[], path: FieldPath): { names: Set<string>; errs: FieldError[] } {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  volumes.forEach((volume, i) => {
    const volumePath = path.index(i);
    const namePath = volumePath.child('name');
    const name = stringAt(volume['name']);
    const volumeErrs = validateVolumeSource(volume, volumePath);
    if (name === '') volumeErrs.push(required(namePath));
    else volumeErrs.push(...validateDNS1123Label(name, namePath));
    if (names.has(name)) volumeErrs.push(duplicate(namePath, name));
    if (volumeErrs.length === 0) names.add(name);
    else errs.push(...volumeErrs);
  });
  return { names, errs };
}

function validateVolumeMounts(mounts: JsonObject[], volumes: Set<string>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const mountPoints = new Set<string>();
  mounts.forEach((mount, i) => {
    const mountPath = path.index(i);
    const name = stringAt(mount['name']);
    const target = stringAt(mount['mountPath']);
    if (name === '') errs.push(required(mountPath.child('name')));
    if (!volumes.has(name)) errs.push(notFound(mountPath.child('name'), name));
    if (target === '') errs.push(required(mountPath.child('mountPath')));
    if (mountPoints.has(target)) errs.push(invalid(mountPath.child('mountPath'), target, 'must be unique'));
    mountPoints.add(target);
    const subPath = stringAt(mount['subPath']);
    if (subPath !== '') errs.push(...validateLocalDescendingPath(subPath, path.child('subPath')));
  });
  return errs;
}

function validateContainerPorts(ports: JsonObject[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const portPath = path.index(i);
    const name = stringAt(port['name']);
    if (name !== '') {
      const msgs = isValidPortName(name);
      if (msgs.length > 0) errs.push(...msgs.map((msg) => invalid(portPath.child('name'), name, msg)));
      else if (names.has(name)) errs.push(duplicate(portPath.child('name'), name));
      else names.add(name);
    }
    const containerPort = optionalNumberAt(port['containerPort']) ?? 0;
    if (containerPort === 0) errs.push(required(portPath.child('containerPort')));
    else errs.push(...isValidPortNum(containerPort).map((msg) => invalid(portPath.child('containerPort'), containerPort, msg)));
    const hostPort = optionalNumberAt(port['hostPort']) ?? 0;
    if (hostPort !== 0) errs.push(...isValidPortNum(hostPort).map((msg) => invalid(portPath.child('hostPort'), hostPort, msg)));
    // protocol defaults to TCP; only an explicit unknown value can fail here.
    const protocol = stringAt(port['protocol']);
    if (protocol !== '' && !supportedPortProtocols.includes(protocol)) {
      errs.push(notSupported(portPath.child('protocol'), protocol, supportedPortProtocols));
    }
  });
  return errs;
}

const envFieldPaths = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.podIP',
  'status.podIPs',
];

function validateKeySelector(ref: JsonObject, path: FieldPath): FieldError[] {
  // Go checks the name with the Secret name rule even when it is empty.
  const name = stringAt(ref['name']);
  const errs = nameIsDNSSubdomain(name, false).map((msg) => invalid(path.child('name'), name, msg));
  const key = stringAt(ref['key']);
  if (key === '') errs.push(required(path.child('key')));
  else errs.push(...isConfigMapKey(key).map((msg) => invalid(path.child('key'), key, msg)));
  return errs;
}

function validateFieldRef(ref: JsonObject, path: FieldPath): FieldError[] {
  // apiVersion defaults to v1.
  const fieldPath = stringAt(ref['fieldPath']);
  if (fieldPath === '') return [required(path.child('fieldPath'))];
  const subscripted = /^(metadata\.(?:annotations|labels))\['(.*)'\]$/.exec(fieldPath);
  if (subscripted !== null) {
    const key = subscripted[1] === 'metadata.annotations' ? (subscripted[2] ?? '').toLowerCase() : subscripted[2] ?? '';
    return isQualifiedName(key).map((msg) => invalid(path, key, msg));
  }
  return envFieldPaths.includes(fieldPath) ? [] : [notSupported(path.child('fieldPath'), fieldPath, envFieldPaths)];
}

function validateEnv(env: JsonObject[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  env.forEach((variable, i) => {
    const varPath = path.index(i);
    const name = stringAt(variable['name']);
    if (name === '') errs.push(required(varPath.child('name')));
    else errs.push(...isEnvVarName(name).map((msg) => invalid(varPath.child('name'), name, msg)));
    const valueFrom = asJsonObject(variable['valueFrom']);
    if (valueFrom === undefined) return;
    const fromPath = varPath.child('valueFrom');
    let sources = 0;
    const fieldRef = asJsonObject(valueFrom['fieldRef']);
    if (fieldRef !== undefined) {
      sources++;
      errs.push(...validateFieldRef(fieldRef, fromPath.child('fieldRef')));
    }
    const resourceFieldRef = asJsonObject(valueFrom['resourceFieldRef']);
    if (resourceFieldRef !== undefined) {
      sources++;
      if (stringAt(resourceFieldRef['resource']) === '') errs.push(required(fromPath.child('resourceFieldRef', 'resource')));
    }
    for (const key of ['configMapKeyRef', 'secretKeyRef']) {
      const ref = asJsonObject(valueFrom[key]);
      if (ref === undefined) continue;
      sources++;
      errs.push(...validateKeySelector(ref, fromPath.child(key)));
    }
    if (sources === 0) {
      errs.push(invalid(fromPath, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
    } else if (stringAt(variable['value']) !== '') {
      errs.push(invalid(fromPath, '', 'may not be specified when `value` is not empty'));
    } else if (sources > 1) {
      errs.push(invalid(fromPath, '', 'may not have more than one field specified at a time'));
    }
  });
  return errs;
}

function validateEnvFrom(sources: JsonObject[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  sources.forEach((source, i) => {
    const sourcePath = path.index(i);
    const prefix = stringAt(source['prefix']);
    if (prefix !== '') errs.push(...isEnvVarName(prefix).map((msg) => invalid(sourcePath.child('prefix'), prefix, msg)));
    let count = 0;
    for (const key of ['configMapRef', 'secretRef']) {
      const ref = asJsonObject(source[key]);
      if (ref === undefined) continue;
      count++;
      const name = stringAt(ref['name']);
      if (name === '') errs.push(required(sourcePath.child(key, 'name')));
      else errs.push(...nameIsDNSSubdomain(name, true).map((msg) => invalid(sourcePath.child(key, 'name'), name, msg)));
    }
    // Go reports these on the envFrom list itself.
    if (count === 0) errs.push(invalid(path, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (count > 1) errs.push(invalid(path, '', 'may not have more than one field specified at a time'));
  });
  return errs;
}

function validateHandler(handler: JsonObject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let count = 0;
  for (const kind of ['exec', 'httpGet', 'tcpSocket', 'grpc']) {
    const action = asJsonObject(handler[kind]);
    if (action === undefined) continue;
    const actionPath = path.child(kind);
    if (count > 0) {
      errs.push(forbidden(actionPath, 'may not specify more than 1 handler type'));
      continue;
    }
    count++;
    if (kind === 'exec' && stringsAt(action['command']).length === 0) errs.push(required(actionPath.child('command')));
    if (kind === 'httpGet') {
      // path defaults to "/" and scheme to HTTP, so neither can be missing here.
      errs.push(...validatePortNumOrName(action['port'], actionPath.child('port')));
      const scheme = defaultedString(action['scheme'], 'HTTP');
      if (scheme !== 'HTTP' && scheme !== 'HTTPS') errs.push(notSupported(actionPath.child('scheme'), scheme, ['HTTP', 'HTTPS']));
      for (const header of objectsAt(action['httpHeaders'])) {
        const headerName = stringAt(header['name']);
        errs.push(...isHTTPHeaderName(headerName).map((msg) => invalid(actionPath.child('httpHeaders'), headerName, msg)));
      }
    }
    if (kind === 'tcpSocket') errs.push(...validatePortNumOrName(action['port'], actionPath.child('port')));
    if (kind === 'grpc') {
      const port = optionalNumberAt(action['port']) ?? 0;
      errs.push(...isValidPortNum(port).map((msg) => invalid(actionPath.child('port'), port, msg)));
    }
  }
  if (count === 0) errs.push(required(path, 'must specify a handler type'));
  return errs;
}

/** Absent probe numbers read as their v1 defaults, since a defaulted object always carries them. */
function validateProbe(probe: JsonObject | undefined, path: FieldPath): FieldError[] {
  if (probe === undefined) return [];
  const errs = validateHandler(probe, path);
  const numbers: Array<[string, number]> = [
    ['initialDelaySeconds', 0],
    ['timeoutSeconds', 1],
    ['periodSeconds', 10],
    ['successThreshold', 1],
    ['failureThreshold', 3],
  ];
  for (const [key, fallback] of numbers) errs.push(...nonNegative(optionalNumberAt(probe[key]) ?? fallback, path.child(key)));
  const grace = optionalNumberAt(probe['terminationGracePeriodSeconds']);
  if (grace !== undefined && grace <= 0) errs.push(invalid(path.child('terminationGracePeriodSeconds'), grace, 'must be greater than 0'));
  return errs;
}

const standardContainerResources = new Set(['cpu', 'memory', 'ephemeral-storage']);

function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

function isHugePages(name: string): boolean {
  return name.startsWith('hugepages-');
}

function validateContainerResourceName(name: string, path: FieldPath): FieldError[] {
  const errs = isQualifiedName(name).map((msg) => invalid(path, name, msg));
  if (!name.includes('/')) {
    if (!standardContainerResources.has(name) && !isHugePages(name)) errs.push(invalid(path, name, 'must be a standard resource for containers'));
  } else if (!isNativeResource(name) && (name.startsWith('requests.') || isQualifiedName(`requests.${name}`).length > 0)) {
    errs.push(invalid(path, name, "doesn't follow extended resource name standard"));
  }
  return errs;
}

export function validateResourceRequirements(resources: JsonObject | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const limits = asJsonObject(resources?.['limits']) ?? {};
  const requests = asJsonObject(resources?.['requests']) ?? {};
  const limitsPath = path.child('limits');
  const requestsPath = path.child('requests');
  let cpuOrMemory = false;
  let hugePages = false;
  for (const [name, quantity] of Object.entries(limits)) {
    const quantityPath = limitsPath.key(name);
    errs.push(...validateContainerResourceName(name, quantityPath));
    if (quantityValue(quantity) < 0) errs.push(invalid(quantityPath, quantityText(quantity), isNegativeErrorMsg));
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
    if (isHugePages(name)) hugePages = true;
  }
  for (const [name, quantity] of Object.entries(requests)) {
    const quantityPath = requestsPath.key(name);
    errs.push(...validateContainerResourceName(name, quantityPath));
    if (quantityValue(quantity) < 0) errs.push(invalid(quantityPath, quantityText(quantity), isNegativeErrorMsg));
    const overcommitAllowed = isNativeResource(name) && !isHugePages(name);
    if (Object.prototype.hasOwnProperty.call(limits, name)) {
      const request = quantityValue(quantity);
      const limit = quantityValue(limits[name]);
      if (request !== limit && !overcommitAllowed) {
        errs.push(invalid(requestsPath, quantityText(quantity), `must be equal to ${name} limit`));
      } else if (request > limit) {
        errs.push(invalid(requestsPath, quantityText(quantity), `must be less than or equal to ${name} limit`));
      }
    } else if (!overcommitAllowed) {
      errs.push(required(limitsPath, 'Limit must be set for non overcommitable resources'));
    }
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
    if (isHugePages(name)) hugePages = true;
  }
  if (!cpuOrMemory && hugePages) errs.push(forbidden(path, 'HugePages require cpu or memory'));
  return errs;
}

function validateLifecycle(lifecycle: JsonObject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const hook of ['postStart', 'preStop']) {
    const handler = asJsonObject(lifecycle[hook]);
    if (handler !== undefined) errs.push(...validateHandler({ ...handler, grpc: undefined }, path.child(hook)));
  }
  return errs;
}

/** Host ports may not collide on (protocol, hostIP, port) within the set of containers sharing `seen`. */
function hostPortConflicts(container: JsonObject, containerPath: FieldPath, seen: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  objectsAt(container['ports']).forEach((port, j) => {
    const hostPort = optionalNumberAt(port['hostPort']) ?? 0;
    if (hostPort === 0) return;
    const key = `${defaultedString(port['protocol'], 'TCP')}/${stringAt(port['hostIP'])}/${hostPort}`;
    if (seen.has(key)) errs.push(duplicate(containerPath.child('ports').index(j).child('hostPort'), key));
    else seen.add(key);
  });
  return errs;
}

function validateContainers(containers: JsonObject[], isInit: boolean, volumes: Set<string>, path: FieldPath): FieldError[] {
  if (containers.length === 0) return [required(path)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  containers.forEach((container, i) => {
    const containerPath = path.index(i);
    const namePath = containerPath.child('name');
    const name = stringAt(container['name']);
    if (name === '') errs.push(required(namePath));
    else errs.push(...validateDNS1123Label(name, namePath));
    if (names.has(name)) errs.push(duplicate(namePath, name));
    else names.add(name);
    // Go only checks the length here: " " is a historical placeholder image in pod templates.
    if (stringAt(container['image']) === '') errs.push(required(containerPath.child('image')));
    const lifecycle = asJsonObject(container['lifecycle']);
    if (lifecycle !== undefined) errs.push(...validateLifecycle(lifecycle, containerPath.child('lifecycle')));
    const liveness = asJsonObject(container['livenessProbe']);
    const readiness = asJsonObject(container['readinessProbe']);
    const startup = asJsonObject(container['startupProbe']);
    errs.push(...validateProbe(liveness, containerPath.child('livenessProbe')));
    if (readiness !== undefined && readiness['terminationGracePeriodSeconds'] !== undefined && readiness['terminationGracePeriodSeconds'] !== null) {
      errs.push(
        invalid(containerPath.child('readinessProbe', 'terminationGracePeriodSeconds'), readiness['terminationGracePeriodSeconds'], 'must not be set for readinessProbes'),
      );
    }
    errs.push(...validateProbe(startup, containerPath.child('startupProbe')));
    if (liveness !== undefined && (optionalNumberAt(liveness['successThreshold']) ?? 1) !== 1) {
      errs.push(invalid(containerPath.child('livenessProbe', 'successThreshold'), optionalNumberAt(liveness['successThreshold']) ?? 0, 'must be 1'));
    }
    // v1.25 validates the startup probe a second time here; its causes appear twice.
    errs.push(...validateProbe(startup, containerPath.child('startupProbe')));
    if (startup !== undefined && (optionalNumberAt(startup['successThreshold']) ?? 1) !== 1) {
      errs.push(invalid(containerPath.child('startupProbe', 'successThreshold'), optionalNumberAt(startup['successThreshold']) ?? 0, 'must be 1'));
    }
    const terminationMessagePolicy = stringAt(container['terminationMessagePolicy']);
    if (terminationMessagePolicy !== '' && terminationMessagePolicy !== 'File' && terminationMessagePolicy !== 'FallbackToLogsOnError') {
      errs.push(invalid(containerPath.child('terminationMessagePolicy'), terminationMessagePolicy, "must be 'File' or 'FallbackToLogsOnError'"));
    }
    errs.push(...validateProbe(readiness, containerPath.child('readinessProbe')));
    errs.push(...validateContainerPorts(objectsAt(container['ports']), containerPath.child('ports')));
    errs.push(...validateEnv(objectsAt(container['env']), containerPath.child('env')));
    errs.push(...validateEnvFrom(objectsAt(container['envFrom']), containerPath.child('envFrom')));
    errs.push(...validateVolumeMounts(objectsAt(container['volumeMounts']), volumes, containerPath.child('volumeMounts')));
    const pullPolicy = stringAt(container['imagePullPolicy']);
    if (pullPolicy !== '' && !['Always', 'IfNotPresent', 'Never'].includes(pullPolicy)) {
      errs.push(notSupported(containerPath.child('imagePullPolicy'), pullPolicy, ['Always', 'IfNotPresent', 'Never']));
    }
    errs.push(...validateResourceRequirements(asJsonObject(container['resources']), containerPath.child('resources')));
    errs.push(...validateSecurityContextIds(asJsonObject(container['securityContext']), containerPath.child('securityContext')));
  });
  // Init containers run one at a time, so only a container's own ports can collide.
  const shared = new Set<string>();
  containers.forEach((container, i) => errs.push(...hostPortConflicts(container, path.index(i), isInit ? new Set<string>() : shared)));
  return errs;
}

const maxUnixId = 4294967295;

/** runAsUser, runAsGroup and fsGroup must be valid Unix ids. */
function validateSecurityContextIds(context: JsonObject | undefined, path: FieldPath): FieldError[] {
  if (context === undefined) return [];
  const errs: FieldError[] = [];
  for (const key of ['fsGroup', 'runAsUser', 'runAsGroup']) {
    const id = optionalNumberAt(context[key]);
    if (id !== undefined && (id < 0 || id > maxUnixId)) errs.push(invalid(path.child(key), id, inclusiveRangeError(0, maxUnixId)));
  }
  return errs;
}

const taintEffects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

export function validateTaintEffect(effect: string, allowEmpty: boolean, path: FieldPath): FieldError[] {
  if (!allowEmpty && effect === '') return [required(path)];
  return taintEffects.includes(effect) ? [] : [notSupported(path, effect, taintEffects)];
}

export function validateTolerations(tolerations: JsonObject[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  tolerations.forEach((toleration, i) => {
    const tolerationPath = path.index(i);
    const key = stringAt(toleration['key']);
    const operator = stringAt(toleration['operator']);
    const value = stringAt(toleration['value']);
    const effect = stringAt(toleration['effect']);
    if (key !== '') errs.push(...validateLabelName(key, tolerationPath.child('key')));
    if (key === '' && operator !== 'Exists') {
      errs.push(invalid(tolerationPath.child('operator'), operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (toleration['tolerationSeconds'] !== undefined && toleration['tolerationSeconds'] !== null && effect !== 'NoExecute') {
      errs.push(invalid(tolerationPath.child('effect'), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (operator === 'Equal' || operator === '') {
      const msgs = isValidLabelValue(value);
      if (msgs.length > 0) errs.push(invalid(tolerationPath.child('operator'), value, msgs.join(';')));
    } else if (operator === 'Exists') {
      if (value !== '') errs.push(invalid(tolerationPath.child('operator'), new GoValue(JSON.stringify(toleration)), "value must be empty when `operator` is 'Exists'"));
    } else {
      errs.push(notSupported(tolerationPath.child('operator'), operator, ['Equal', 'Exists']));
    }
    if (effect !== '') errs.push(...validateTaintEffect(effect, true, tolerationPath.child('effect')));
  });
  return errs;
}

function validateNodeSelectorTerm(term: JsonObject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  objectsAt(term['matchExpressions']).forEach((req, j) => {
    const reqPath = path.child('matchExpressions').index(j);
    const operator = stringAt(req['operator']);
    const values = stringsAt(req['values']);
    if (operator === 'In' || operator === 'NotIn') {
      if (values.length === 0) errs.push(required(reqPath.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (operator === 'Exists' || operator === 'DoesNotExist') {
      if (values.length > 0) errs.push(forbidden(reqPath.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else if (operator === 'Gt' || operator === 'Lt') {
      if (values.length !== 1) errs.push(required(reqPath.child('values'), "must be specified single value when `operator` is 'Lt' or 'Gt'"));
    } else {
      errs.push(invalid(reqPath.child('operator'), operator, 'not a valid selector operator'));
    }
    errs.push(...validateLabelName(stringAt(req['key']), reqPath.child('key')));
  });
  return errs;
}

function validateNodeSelector(selector: JsonObject, path: FieldPath): FieldError[] {
  const termsPath = path.child('nodeSelectorTerms');
  const terms = objectsAt(selector['nodeSelectorTerms']);
  if (terms.length === 0) return [required(termsPath, 'must have at least one node selector term')];
  return terms.flatMap((term, i) => validateNodeSelectorTerm(term, termsPath.index(i)));
}

function validatePodAffinityTerm(term: JsonObject, path: FieldPath): FieldError[] {
  const errs = [
    ...validateLabelSelector(term['labelSelector'], path.child('labelSelector')),
    ...validateLabelSelector(term['namespaceSelector'], path.child('namespaceSelector')),
  ];
  for (const namespace of stringsAt(term['namespaces'])) {
    errs.push(...isDNS1123Label(namespace).map((msg) => invalid(path.child('namespace'), namespace, msg)));
  }
  const topologyKey = stringAt(term['topologyKey']);
  if (topologyKey === '') errs.push(required(path.child('topologyKey'), 'can not be empty'));
  errs.push(...validateLabelName(topologyKey, path.child('topologyKey')));
  return errs;
}

function validateAffinity(affinity: JsonObject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const weightOutOfRange = (weight: number): boolean => weight <= 0 || weight > 100;
  const nodeAffinity = asJsonObject(affinity['nodeAffinity']);
  if (nodeAffinity !== undefined) {
    const nodePath = path.child('nodeAffinity');
    const requiredTerms = asJsonObject(nodeAffinity['requiredDuringSchedulingIgnoredDuringExecution']);
    if (requiredTerms !== undefined) errs.push(...validateNodeSelector(requiredTerms, nodePath.child('requiredDuringSchedulingIgnoredDuringExecution')));
    objectsAt(nodeAffinity['preferredDuringSchedulingIgnoredDuringExecution']).forEach((term, i) => {
      const termPath = nodePath.child('preferredDuringSchedulingIgnoredDuringExecution').index(i);
      const weight = optionalNumberAt(term['weight']) ?? 0;
      if (weightOutOfRange(weight)) errs.push(invalid(termPath.child('weight'), weight, 'must be in the range 1-100'));
      errs.push(...validateNodeSelectorTerm(asJsonObject(term['preference']) ?? {}, termPath.child('preference')));
    });
  }
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const podAffinity = asJsonObject(affinity[kind]);
    if (podAffinity === undefined) continue;
    const kindPath = path.child(kind);
    objectsAt(podAffinity['requiredDuringSchedulingIgnoredDuringExecution']).forEach((term, i) => {
      errs.push(...validatePodAffinityTerm(term, kindPath.child('requiredDuringSchedulingIgnoredDuringExecution').index(i)));
    });
    objectsAt(podAffinity['preferredDuringSchedulingIgnoredDuringExecution']).forEach((term, i) => {
      const termPath = kindPath.child('preferredDuringSchedulingIgnoredDuringExecution').index(i);
      const weight = optionalNumberAt(term['weight']) ?? 0;
      if (weightOutOfRange(weight)) errs.push(invalid(termPath.child('weight'), weight, 'must be in the range 1-100'));
      errs.push(...validatePodAffinityTerm(asJsonObject(term['podAffinityTerm']) ?? {}, termPath.child('podAffinityTerm')));
    });
  }
  return errs;
}

function validateDNSConfig(spec: JsonObject, path: FieldPath): FieldError[] {
  const dnsConfig = asJsonObject(spec['dnsConfig']);
  if (stringAt(spec['dnsPolicy']) === 'None') {
    if (dnsConfig === undefined) return [required(path, 'must provide `dnsConfig` when `dnsPolicy` is None')];
    if (stringsAt(dnsConfig['nameservers']).length === 0) {
      return [required(path.child('nameservers'), 'must provide at least one DNS nameserver when `dnsPolicy` is None')];
    }
  }
  if (dnsConfig === undefined) return [];
  const errs: FieldError[] = [];
  const nameservers = stringsAt(dnsConfig['nameservers']);
  if (nameservers.length > 3) errs.push(invalid(path.child('nameservers'), nameservers, 'must not have more than 3 nameservers'));
  nameservers.forEach((ns, i) => {
    if (isValidIP(ns).length > 0) errs.push(invalid(path.child('nameservers').index(i), ns, 'must be valid IP address'));
  });
  // ExpandedDNSConfig is beta and on in v1.25: 32 paths, 2048 characters.
  const searches = stringsAt(dnsConfig['searches']);
  if (searches.length > 32) errs.push(invalid(path.child('searches'), searches, 'must not have more than 32 search paths'));
  if (searches.join(' ').length > 2048) errs.push(invalid(path.child('searches'), searches, 'must not have more than 2048 characters (including spaces) in the search list'));
  searches.forEach((search, i) => {
    const trimmed = search.replace(/\.$/, '');
    errs.push(...isDNS1123Subdomain(trimmed).map((msg) => invalid(path.child('searches').index(i), trimmed, msg)));
  });
  objectsAt(dnsConfig['options']).forEach((option, i) => {
    if (stringAt(option['name']) === '') errs.push(required(path.child('options').index(i), 'must not be empty'));
  });
  return errs;
}

function validatePodSecurityContext(spec: JsonObject, path: FieldPath): FieldError[] {
  const context = asJsonObject(spec['securityContext']);
  const errs: FieldError[] = [];
  if (spec['hostNetwork'] === true) {
    objectsAt(spec['containers']).forEach((container, i) => {
      objectsAt(container['ports']).forEach((port, j) => {
        const containerPort = optionalNumberAt(port['containerPort']) ?? 0;
        if ((optionalNumberAt(port['hostPort']) ?? containerPort) !== containerPort) {
          errs.push(invalid(path.child('containers').index(i).child('ports').index(j).child('containerPort'), containerPort, 'must match `hostPort` when `hostNetwork` is true'));
        }
      });
    });
  }
  if (context === undefined) return errs;
  const contextPath = path.child('securityContext');
  errs.push(...validateSecurityContextIds(context, contextPath));
  arrayAt(context['supplementalGroups']).forEach((gid, i) => {
    if (typeof gid === 'number' && (gid < 0 || gid > maxUnixId)) {
      errs.push(invalid(contextPath.child('supplementalGroups').index(i), gid, inclusiveRangeError(0, maxUnixId)));
    }
  });
  if (context['shareProcessNamespace'] === true && spec['hostPID'] === true) {
    errs.push(invalid(contextPath.child('shareProcessNamespace'), true, 'ShareProcessNamespace and HostPID cannot both be enabled'));
  }
  return errs;
}

export function validatePodSpec(spec: JsonObject, path: FieldPath): FieldError[] {
  const volumes = validateVolumes(objectsAt(spec['volumes']), path.child('volumes'));
  const errs = [...volumes.errs];
  const containers = objectsAt(spec['containers']);
  errs.push(...validateContainers(containers, false, volumes.names, path.child('containers')));

  const initContainers = objectsAt(spec['initContainers']);
  if (initContainers.length > 0) errs.push(...validateContainers(initContainers, true, volumes.names, path.child('initContainers')));
  const taken = new Set(containers.map((c) => stringAt(c['name'])));
  initContainers.forEach((container, i) => {
    const containerPath = path.child('initContainers').index(i);
    const name = stringAt(container['name']);
    if (taken.has(name)) errs.push(duplicate(containerPath.child('name'), name));
    if (name !== '') taken.add(name);
    for (const field of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) {
      if (container[field] !== undefined && container[field] !== null) {
        errs.push(invalid(containerPath.child(field), new GoValue(JSON.stringify(container[field])), 'must not be set for init containers'));
      }
    }
  });

  // restartPolicy and dnsPolicy are always defaulted, so only explicit unknown values fail.
  const restartPolicy = stringAt(spec['restartPolicy']);
  if (restartPolicy !== '' && !['Always', 'OnFailure', 'Never'].includes(restartPolicy)) {
    errs.push(notSupported(path.child('restartPolicy'), restartPolicy, ['Always', 'OnFailure', 'Never']));
  }
  const dnsPolicy = stringAt(spec['dnsPolicy']);
  const dnsPolicies = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
  if (dnsPolicy !== '' && !dnsPolicies.includes(dnsPolicy)) errs.push(notSupported(path.child('dnsPolicy'), dnsPolicy, dnsPolicies));
  errs.push(...validateLabels(spec['nodeSelector'], path.child('nodeSelector')));
  errs.push(...validatePodSecurityContext(spec, path));
  const affinity = asJsonObject(spec['affinity']);
  if (affinity !== undefined) errs.push(...validateAffinity(affinity, path.child('affinity')));
  errs.push(...validateDNSConfig(spec, path.child('dnsConfig')));
  objectsAt(spec['readinessGates']).forEach((gate, i) => {
    const conditionType = stringAt(gate['conditionType']);
    errs.push(...isQualifiedName(conditionType).map((msg) => invalid(path.child('readinessGates').index(i).child('conditionType'), conditionType, msg)));
  });
  const serviceAccountName = stringAt(spec['serviceAccountName']);
  if (serviceAccountName !== '') {
    errs.push(...nameIsDNSSubdomain(serviceAccountName, false).map((msg) => invalid(path.child('serviceAccountName'), serviceAccountName, msg)));
  }
  const nodeName = stringAt(spec['nodeName']);
  if (nodeName !== '') errs.push(...nameIsDNSSubdomain(nodeName, false).map((msg) => invalid(path.child('nodeName'), nodeName, msg)));
  const activeDeadlineSeconds = optionalNumberAt(spec['activeDeadlineSeconds']);
  if (activeDeadlineSeconds !== undefined && (activeDeadlineSeconds < 1 || activeDeadlineSeconds > maxInt32)) {
    errs.push(invalid(path.child('activeDeadlineSeconds'), activeDeadlineSeconds, inclusiveRangeError(1, maxInt32)));
  }
  for (const key of ['hostname', 'subdomain']) {
    const value = stringAt(spec[key]);
    if (value !== '') errs.push(...validateDNS1123Label(value, path.child(key)));
  }
  errs.push(...validateTolerations(objectsAt(spec['tolerations']), path.child('tolerations')));
  for (const alias of objectsAt(spec['hostAliases'])) {
    const ip = stringAt(alias['ip']);
    if (isValidIP(ip).length > 0) errs.push(invalid(path.child('hostAliases').child('ip'), ip, 'must be valid IP address'));
    for (const hostname of stringsAt(alias['hostnames'])) {
      errs.push(...isDNS1123Subdomain(hostname).map((msg) => invalid(path.child('hostAliases').child('hostnames'), hostname, msg)));
    }
  }
  const priorityClassName = stringAt(spec['priorityClassName']);
  if (priorityClassName !== '') {
    errs.push(...nameIsDNSSubdomain(priorityClassName, false).map((msg) => invalid(path.child('priorityClassName'), priorityClassName, msg)));
  }
  if (typeof spec['runtimeClassName'] === 'string') {
    const runtimeClassName = spec['runtimeClassName'];
    errs.push(...nameIsDNSSubdomain(runtimeClassName, false).map((msg) => invalid(path.child('runtimeClassName'), runtimeClassName, msg)));
  }
  const preemptionPolicy = spec['preemptionPolicy'];
  if (typeof preemptionPolicy === 'string' && preemptionPolicy !== 'PreemptLowerPriority' && preemptionPolicy !== 'Never') {
    errs.push(notSupported(path.child('preemptionPolicy'), preemptionPolicy, ['PreemptLowerPriority', 'Never']));
  }
  const os = asJsonObject(spec['os']);
  if (os !== undefined) {
    const osName = stringAt(os['name']);
    if (osName === '') errs.push(required(path.child('os', 'name')));
    else if (osName !== 'linux' && osName !== 'windows') errs.push(notSupported(path.child('os', 'name'), osName, ['linux', 'windows']));
  }
  return errs;
}

const maxInt32Text = /^(0|[1-9][0-9]*|-[0-9]+)$/;

/** ValidatePodSpecificAnnotations: the mirror-pod and pod-deletion-cost annotations. */
function validatePodAnnotations(annotations: unknown, spec: JsonObject, path: FieldPath): FieldError[] {
  const map = asJsonObject(annotations) ?? {};
  const errs: FieldError[] = [];
  const mirror = 'kubernetes.io/config.mirror';
  if (typeof map[mirror] === 'string' && stringAt(spec['nodeName']) === '') {
    errs.push(invalid(path.key(mirror), map[mirror], 'must set spec.nodeName if mirror pod annotation is set'));
  }
  const deletionCost = 'controller.kubernetes.io/pod-deletion-cost';
  if (typeof map[deletionCost] === 'string') {
    const cost = map[deletionCost];
    const value = Number(cost);
    if (!maxInt32Text.test(cost) || value > maxInt32 || value < -maxInt32 - 1) {
      errs.push(invalid(path.key(deletionCost), cost, 'must be a 32bit integer'));
    }
  }
  return errs;
}

/** ValidatePodTemplateSpec: labels and annotations sit on `<path>.labels`, not `<path>.metadata.labels`. */
export function validatePodTemplateSpec(template: JsonObject, path: FieldPath): FieldError[] {
  const meta = metadataOf(template);
  const errs = validateLabels(meta['labels'], path.child('labels'));
  errs.push(...validateAnnotations(meta['annotations'], path.child('annotations')));
  errs.push(...validatePodAnnotations(meta['annotations'], asJsonObject(template['spec']) ?? {}, path.child('annotations')));
  errs.push(...validatePodSpec(asJsonObject(template['spec']) ?? {}, path.child('spec')));
  if (objectsAt(asJsonObject(template['spec'])?.['ephemeralContainers']).length > 0) {
    errs.push(forbidden(path.child('spec', 'ephemeralContainers'), 'ephemeral containers not allowed in pod template'));
  }
  return errs;
}

/** validatePodMetadataAndSpec: what pods (not templates) get on create and on update. */
function validatePodMetadataAndSpec(pod: JsonObject, namespaced: boolean): FieldError[] {
  const meta = metadataOf(pod);
  const errs = validateObjectMeta(meta, namespaced, nameIsDNSSubdomain, FieldPath.root('metadata'));
  const spec = asJsonObject(pod['spec']) ?? {};
  const specPath = FieldPath.root('spec');
  errs.push(...validatePodAnnotations(meta['annotations'], spec, FieldPath.root('metadata', 'annotations')));
  errs.push(...validatePodSpec(spec, specPath));
  // Templates tolerate padded images for compatibility; pods do not.
  for (const key of ['containers', 'initContainers']) {
    objectsAt(spec[key]).forEach((container, i) => {
      const image = stringAt(container['image']);
      if (image.trim() !== image) errs.push(invalid(specPath.child(key).index(i).child('image'), image, 'must not have leading or trailing whitespace'));
    });
  }
  return errs;
}

export function validatePod(pod: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validatePodMetadataAndSpec(pod, namespaced);
  if (objectsAt(asJsonObject(pod['spec'])?.['ephemeralContainers']).length > 0) {
    errs.push(forbidden(FieldPath.root('spec', 'ephemeralContainers'), 'cannot be set on create'));
  }
  return errs;
}

export const podUpdateForbiddenMessage =
  'pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

function validateContainerUpdates(next: JsonObject[], old: JsonObject[], path: FieldPath): { errs: FieldError[]; stop: boolean } {
  if (next.length !== old.length) return { errs: [forbidden(path, 'pod updates may not add or remove containers')], stop: true };
  const errs: FieldError[] = [];
  next.forEach((container, i) => {
    const image = stringAt(container['image']);
    if (image === '') errs.push(required(path.index(i).child('image')));
    if (image.trim() !== image) errs.push(invalid(path.index(i).child('image'), image, 'must not have leading or trailing whitespace'));
  });
  return { errs, stop: false };
}

function tolerationsMatchIgnoringSeconds(old: JsonObject, next: JsonObject): boolean {
  return semanticEqual({ ...old, tolerationSeconds: null }, { ...next, tolerationSeconds: null });
}

export function validatePodUpdate(pod: JsonObject, old: JsonObject, namespaced: boolean): FieldError[] {
  const metaPath = FieldPath.root('metadata');
  const errs = validateObjectMetaUpdate(metadataOf(pod), metadataOf(old), metaPath);
  errs.push(...validatePodMetadataAndSpec(pod, namespaced));
  const spec = asJsonObject(pod['spec']) ?? {};
  const oldSpec = asJsonObject(old['spec']) ?? {};
  const specPath = FieldPath.root('spec');
  for (const key of ['containers', 'initContainers']) {
    const result = validateContainerUpdates(objectsAt(spec[key]), objectsAt(oldSpec[key]), specPath.child(key));
    errs.push(...result.errs);
    if (result.stop) return errs;
  }
  const deadline = optionalNumberAt(spec['activeDeadlineSeconds']);
  const oldDeadline = optionalNumberAt(oldSpec['activeDeadlineSeconds']);
  if (deadline !== undefined) {
    if (deadline < 0 || deadline > maxInt32) {
      errs.push(invalid(specPath.child('activeDeadlineSeconds'), deadline, inclusiveRangeError(0, maxInt32)));
      return errs;
    }
    if (oldDeadline !== undefined && oldDeadline < deadline) {
      errs.push(invalid(specPath.child('activeDeadlineSeconds'), deadline, 'must be less than or equal to previous value'));
      return errs;
    }
  } else if (oldDeadline !== undefined) {
    errs.push(invalid(specPath.child('activeDeadlineSeconds'), null, 'must not update from a positive integer to nil value'));
  }
  const tolerations = objectsAt(spec['tolerations']);
  for (const oldToleration of objectsAt(oldSpec['tolerations'])) {
    if (!tolerations.some((t) => tolerationsMatchIgnoringSeconds(oldToleration, t))) {
      errs.push(forbidden(specPath.child('tolerations'), 'existing toleration can not be modified except its tolerationSeconds'));
      break;
    }
  }
  if (semanticEqual(spec, oldSpec)) return errs;

  // Overlay the mutable fields from the new spec onto the old one; whatever still differs is forbidden.
  const munged: JsonObject = { ...spec };
  for (const key of ['containers', 'initContainers']) {
    if (Array.isArray(spec[key])) {
      const oldContainers = objectsAt(oldSpec[key]);
      munged[key] = objectsAt(spec[key]).map((c, i) => ({ ...c, image: oldContainers[i]?.['image'] }));
    }
  }
  munged['activeDeadlineSeconds'] = oldSpec['activeDeadlineSeconds'];
  munged['tolerations'] = oldSpec['tolerations'];
  const oldGrace = optionalNumberAt(oldSpec['terminationGracePeriodSeconds']);
  if (oldGrace !== undefined && oldGrace < 0 && optionalNumberAt(spec['terminationGracePeriodSeconds']) === 1) {
    munged['terminationGracePeriodSeconds'] = oldSpec['terminationGracePeriodSeconds'];
  }
  if (!semanticEqual(munged, oldSpec)) {
    errs.push(forbidden(specPath, `${podUpdateForbiddenMessage}\n${specDiff('core.PodSpec', oldSpec, munged)}`));
  }
  return errs;
}

const systemPodConditions = new Set(['PodScheduled', 'Ready', 'Initialized']);

/** Terminated containers of pods that do not restart may not come back. */
function containerStateTransitions(next: JsonObject[], old: JsonObject[], path: FieldPath, restartPolicy: string): FieldError[] {
  if (restartPolicy === 'Always') return [];
  const errs: FieldError[] = [];
  old.forEach((oldStatus, i) => {
    const terminated = asJsonObject(asJsonObject(oldStatus['state'])?.['terminated']);
    if (terminated === undefined) return;
    if ((optionalNumberAt(terminated['exitCode']) ?? 0) !== 0 && restartPolicy === 'OnFailure') return;
    for (const newStatus of next) {
      if (stringAt(newStatus['name']) === stringAt(oldStatus['name']) && asJsonObject(asJsonObject(newStatus['state'])?.['terminated']) === undefined) {
        errs.push(forbidden(path.index(i).child('state'), 'may not be transitioned to non-terminated state'));
      }
    }
  });
  return errs;
}

export function validatePodStatusUpdate(pod: JsonObject, old: JsonObject): FieldError[] {
  const metaPath = FieldPath.root('metadata');
  const errs = validateObjectMetaUpdate(metadataOf(pod), metadataOf(old), metaPath);
  const status = asJsonObject(pod['status']) ?? {};
  const oldStatus = asJsonObject(old['status']) ?? {};
  objectsAt(status['conditions']).forEach((condition, i) => {
    const type = stringAt(condition['type']);
    if (systemPodConditions.has(type)) return;
    // v1.25 reports custom condition types under metadata.conditions[i].Type.
    errs.push(...isQualifiedName(type).map((msg) => invalid(metaPath.child('conditions').index(i).child('Type'), type, msg)));
  });
  const statusPath = FieldPath.root('status');
  if (stringAt(asJsonObject(pod['spec'])?.['nodeName']) !== stringAt(asJsonObject(old['spec'])?.['nodeName'])) {
    errs.push(forbidden(statusPath.child('nodeName'), 'may not be changed directly'));
  }
  const nominatedNodeName = stringAt(status['nominatedNodeName']);
  if (nominatedNodeName !== '' && nominatedNodeName !== stringAt(oldStatus['nominatedNodeName'])) {
    errs.push(...nameIsDNSSubdomain(nominatedNodeName, false).map((msg) => invalid(statusPath.child('nominatedNodeName'), nominatedNodeName, msg)));
  }
  const restartPolicy = stringAt(asJsonObject(old['spec'])?.['restartPolicy']);
  for (const key of ['containerStatuses', 'initContainerStatuses']) {
    errs.push(...containerStateTransitions(objectsAt(status[key]), objectsAt(oldStatus[key]), statusPath.child(key), restartPolicy));
  }
  errs.push(...containerStateTransitions(objectsAt(status['ephemeralContainerStatuses']), objectsAt(oldStatus['ephemeralContainerStatuses']), statusPath.child('ephemeralContainerStatuses'), 'Never'));
  objectsAt(status['podIPs']).forEach((podIP, i) => {
    const ip = stringAt(podIP['ip']);
    errs.push(...isValidIP(ip).map((msg) => invalid(statusPath.child('podIPs').index(i), ip, msg)));
  });
  return errs;
}
