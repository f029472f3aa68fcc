/**
 * Pods, pod templates and pod specs as pkg/apis/core/validation (v1.25) checks them: containers,
 * ports, env, volumes and their mounts, probes, resources, policies, tolerations, and the narrow set
 * of pod updates kube-apiserver allows.
 */
import { FieldPath } from './field-path';
import { FieldError, GoValue, duplicate, forbidden, invalid, notFound, notSupported, required } from './field-error';
import { JsonObject, objectAt, objectsAt, optionalNumberAt, semanticEqual, stringAt, stringsAt } from './json-value';
import { validateLabelName, validateLabels } from './label-selector';
import {
  inclusiveRangeError,
  isConfigMapKey,
  isDNS1123Label,
  isEnvVarName,
  isHTTPHeaderName,
  isNegativeErrorMsg,
  isQualifiedName,
  isValidLabelValue,
  isValidPortName,
  isValidPortNum,
  nameIsDNSSubdomain,
} from './name-validation';
import { metadataOf, validateAnnotations, validateObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { quantityText, quantityValue } from './quantity';
import { specDiff } from './spec-diff';

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

/** Volume sources in the order Go's validateVolumeSource examines them. */
const volumeSourceKeys = [
  'hostPath', 'emptyDir', 'gitRepo', 'gcePersistentDisk', 'awsElasticBlockStore', 'secret', 'nfs', 'iscsi', 'glusterfs',
  'flocker', 'persistentVolumeClaim', 'rbd', 'cinder', 'cephfs', 'downwardAPI', 'fc', 'flexVolume', 'configMap', 'azureFile',
  'vsphereVolume', 'photonPersistentDisk', 'portworxVolume', 'azureDisk', 'storageos', 'projected', 'scaleIO', 'csi', 'ephemeral',
];

function validateDefaultMode(source: JsonObject, path: FieldPath): FieldError[] {
  const mode = optionalNumberAt(source['defaultMode']);
  return mode !== undefined && (mode > 0o777 || mode < 0) ? [invalid(path.child('defaultMode'), mode, fileModeErrorMsg)] : [];
}

function validateVolumeSource(volume: JsonObject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let count = 0;
  for (const key of volumeSourceKeys) {
    const source = objectAt(volume[key]);
    if (source === undefined) continue;
    if (count > 0) {
      errs.push(forbidden(path.child(key), 'may not specify more than 1 volume type'));
      continue;
    }
    count++;
    const sourcePath = path.child(key);
    switch (key) {
      case 'hostPath':
        if (stringAt(source['path']) === '') errs.push(required(sourcePath.child('path')));
        break;
      case 'secret':
        if (stringAt(source['secretName']) === '') errs.push(required(sourcePath.child('secretName')));
        errs.push(...validateDefaultMode(source, sourcePath));
        break;
      case 'configMap':
        if (stringAt(source['name']) === '') errs.push(required(sourcePath.child('name')));
        errs.push(...validateDefaultMode(source, sourcePath));
        break;
      case 'persistentVolumeClaim':
        if (stringAt(source['claimName']) === '') errs.push(required(sourcePath.child('claimName')));
        break;
      case 'nfs':
        if (stringAt(source['server']) === '') errs.push(required(sourcePath.child('server')));
        if (stringAt(source['path']) === '') errs.push(required(sourcePath.child('path')));
        else if (!stringAt(source['path']).startsWith('/')) {
          errs.push(invalid(sourcePath.child('path'), stringAt(source['path']), 'must be an absolute path'));
        }
        break;
      case 'emptyDir':
        if (source['sizeLimit'] !== undefined && quantityValue(source['sizeLimit']) < 0) {
          errs.push(invalid(sourcePath.child('sizeLimit'), quantityText(source['sizeLimit']), isNegativeErrorMsg));
        }
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

function validateLocalDescendingPath(target: string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (target.startsWith('/')) errs.push(invalid(path, target, 'must be a relative path'));
  if (target.split(/[\\/]/).includes('..')) errs.push(invalid(path, target, "must not contain '..'"));
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

function validateEnv(env: JsonObject[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  env.forEach((variable, i) => {
    const varPath = path.index(i);
    const name = stringAt(variable['name']);
    if (name === '') errs.push(required(varPath.child('name')));
    else errs.push(...isEnvVarName(name).map((msg) => invalid(varPath.child('name'), name, msg)));
    const valueFrom = objectAt(variable['valueFrom']);
    if (valueFrom === undefined) return;
    const fromPath = varPath.child('valueFrom');
    const sources = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'].filter((k) => objectAt(valueFrom[k]) !== undefined);
    for (const source of ['configMapKeyRef', 'secretKeyRef']) {
      const ref = objectAt(valueFrom[source]);
      if (ref === undefined) continue;
      const refPath = fromPath.child(source);
      const key = stringAt(ref['key']);
      if (stringAt(ref['name']) === '') errs.push(required(refPath.child('name')));
      if (key === '') errs.push(required(refPath.child('key')));
      else errs.push(...isConfigMapKey(key).map((msg) => invalid(refPath.child('key'), key, msg)));
    }
    const fieldRef = objectAt(valueFrom['fieldRef']);
    if (fieldRef !== undefined && stringAt(fieldRef['fieldPath']) === '') errs.push(required(fromPath.child('fieldRef', 'fieldPath')));
    if (sources.length === 0) {
      errs.push(invalid(fromPath, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
    } else if (sources.length > 1) {
      errs.push(invalid(fromPath, '', 'may not have more than one field specified at a time'));
    } else if (stringAt(variable['value']) !== '') {
      errs.push(invalid(fromPath, '', 'may not be specified when `value` is not empty'));
    }
  });
  return errs;
}

function validateHandler(handler: JsonObject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let count = 0;
  for (const kind of ['exec', 'httpGet', 'tcpSocket', 'grpc']) {
    const action = objectAt(handler[kind]);
    if (action === undefined) continue;
    const actionPath = path.child(kind);
    if (count > 0) {
      errs.push(forbidden(actionPath, 'may not specify more than 1 handler type'));
      continue;
    }
    count++;
    if (kind === 'exec' && stringsAt(action['command']).length === 0) errs.push(required(actionPath.child('command')));
    if (kind === 'httpGet') {
      if (stringAt(action['path'] ?? '/') === '') errs.push(required(actionPath.child('path')));
      errs.push(...validatePortNumOrName(action['port'], actionPath.child('port')));
      const scheme = stringAt(action['scheme'] ?? 'HTTP');
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
  const limits = objectAt(resources?.['limits']) ?? {};
  const requests = objectAt(resources?.['requests']) ?? {};
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

function validateContainers(containers: JsonObject[], volumes: Set<string>, path: FieldPath, names: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  containers.forEach((container, i) => {
    const containerPath = path.index(i);
    const namePath = containerPath.child('name');
    const name = stringAt(container['name']);
    if (name === '') errs.push(required(namePath));
    else errs.push(...validateDNS1123Label(name, namePath));
    if (names.has(name)) errs.push(duplicate(namePath, name));
    else names.add(name);
    // Go only checks the length here: " " is a historical placeholder image some clients send.
    if (stringAt(container['image']) === '') errs.push(required(containerPath.child('image')));
    const liveness = objectAt(container['livenessProbe']);
    errs.push(...validateProbe(liveness, containerPath.child('livenessProbe')));
    if (liveness !== undefined && (optionalNumberAt(liveness['successThreshold']) ?? 1) !== 1) {
      errs.push(invalid(containerPath.child('livenessProbe', 'successThreshold'), optionalNumberAt(liveness['successThreshold']) ?? 0, 'must be 1'));
    }
    const readiness = objectAt(container['readinessProbe']);
    errs.push(...validateProbe(readiness, containerPath.child('readinessProbe')));
    if (readiness !== undefined && readiness['terminationGracePeriodSeconds'] !== undefined) {
      errs.push(
        invalid(containerPath.child('readinessProbe', 'terminationGracePeriodSeconds'), readiness['terminationGracePeriodSeconds'], 'must not be set for readinessProbes'),
      );
    }
    const startup = objectAt(container['startupProbe']);
    errs.push(...validateProbe(startup, containerPath.child('startupProbe')));
    if (startup !== undefined && (optionalNumberAt(startup['successThreshold']) ?? 1) !== 1) {
      errs.push(invalid(containerPath.child('startupProbe', 'successThreshold'), optionalNumberAt(startup['successThreshold']) ?? 0, 'must be 1'));
    }
    const terminationMessagePolicy = stringAt(container['terminationMessagePolicy']);
    if (terminationMessagePolicy !== '' && terminationMessagePolicy !== 'File' && terminationMessagePolicy !== 'FallbackToLogsOnError') {
      errs.push(invalid(containerPath.child('terminationMessagePolicy'), terminationMessagePolicy, "must be 'File' or 'FallbackToLogsOnError'"));
    }
    errs.push(...validateContainerPorts(objectsAt(container['ports']), containerPath.child('ports')));
    errs.push(...validateEnv(objectsAt(container['env']), containerPath.child('env')));
    errs.push(...validateVolumeMounts(objectsAt(container['volumeMounts']), volumes, containerPath.child('volumeMounts')));
    const pullPolicy = stringAt(container['imagePullPolicy']);
    if (pullPolicy !== '' && !['Always', 'IfNotPresent', 'Never'].includes(pullPolicy)) {
      errs.push(notSupported(containerPath.child('imagePullPolicy'), pullPolicy, ['Always', 'IfNotPresent', 'Never']));
    }
    errs.push(...validateResourceRequirements(objectAt(container['resources']), containerPath.child('resources')));
  });
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

export function validatePodSpec(spec: JsonObject, path: FieldPath): FieldError[] {
  const volumes = validateVolumes(objectsAt(spec['volumes']), path.child('volumes'));
  const errs = [...volumes.errs];
  const containers = objectsAt(spec['containers']);
  const containerNames = new Set<string>();
  if (containers.length === 0) errs.push(required(path.child('containers')));
  else errs.push(...validateContainers(containers, volumes.names, path.child('containers'), containerNames));

  const initContainers = objectsAt(spec['initContainers']);
  const initNames = new Set<string>();
  errs.push(...validateContainers(initContainers, volumes.names, path.child('initContainers'), initNames));
  initContainers.forEach((container, i) => {
    const containerPath = path.child('initContainers').index(i);
    const name = stringAt(container['name']);
    if (containerNames.has(name)) errs.push(duplicate(containerPath.child('name'), name));
    for (const field of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) {
      if (container[field] !== undefined && container[field] !== null) {
        errs.push(invalid(containerPath.child(field), new GoValue(JSON.stringify(container[field])), 'must not be set for init containers'));
      }
    }
  });

  // restartPolicy and dnsPolicy are defaulted, so only explicit unknown values fail.
  const restartPolicy = stringAt(spec['restartPolicy']);
  if (restartPolicy !== '' && !['Always', 'OnFailure', 'Never'].includes(restartPolicy)) {
    errs.push(notSupported(path.child('restartPolicy'), restartPolicy, ['Always', 'OnFailure', 'Never']));
  }
  const dnsPolicy = stringAt(spec['dnsPolicy']);
  const dnsPolicies = ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'];
  if (dnsPolicy !== '' && !dnsPolicies.includes(dnsPolicy)) errs.push(notSupported(path.child('dnsPolicy'), dnsPolicy, dnsPolicies));
  if (dnsPolicy === 'None') {
    const nameservers = stringsAt(objectAt(spec['dnsConfig'])?.['nameservers']);
    if (nameservers.length === 0) errs.push(required(path.child('dnsConfig', 'nameservers'), 'must provide at least one DNS nameserver when DNSPolicy is None'));
  }
  errs.push(...validateLabels(spec['nodeSelector'], path.child('nodeSelector')));
  objectsAt(spec['imagePullSecrets']).forEach((secret, i) => {
    if (stringAt(secret['name']) === '') errs.push(required(path.child('imagePullSecrets').index(i).child('name')));
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
  const priorityClassName = stringAt(spec['priorityClassName']);
  if (priorityClassName !== '') {
    errs.push(...nameIsDNSSubdomain(priorityClassName, false).map((msg) => invalid(path.child('priorityClassName'), priorityClassName, msg)));
  }
  return errs;
}

/** ValidatePodTemplateSpec: labels and annotations sit on `<path>.labels`, not `<path>.metadata.labels`. */
export function validatePodTemplateSpec(template: JsonObject, path: FieldPath): FieldError[] {
  const meta = metadataOf(template);
  const errs = validateLabels(meta['labels'], path.child('labels'));
  errs.push(...validateAnnotations(meta['annotations'], path.child('annotations')));
  errs.push(...validatePodSpec(objectAt(template['spec']) ?? {}, path.child('spec')));
  if (objectsAt(objectAt(template['spec'])?.['ephemeralContainers']).length > 0) {
    errs.push(forbidden(path.child('spec', 'ephemeralContainers'), 'ephemeral containers not allowed in pod template'));
  }
  return errs;
}

export function validatePod(pod: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMeta(metadataOf(pod), namespaced, nameIsDNSSubdomain, FieldPath.root('metadata'));
  errs.push(...validatePodSpec(objectAt(pod['spec']) ?? {}, FieldPath.root('spec')));
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
  errs.push(...validatePod(pod, namespaced));
  const spec = objectAt(pod['spec']) ?? {};
  const oldSpec = objectAt(old['spec']) ?? {};
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

export function validatePodStatusUpdate(pod: JsonObject, old: JsonObject): FieldError[] {
  const errs = validateObjectMetaUpdate(metadataOf(pod), metadataOf(old), FieldPath.root('metadata'));
  const status = objectAt(pod['status']) ?? {};
  const nominatedNodeName = stringAt(status['nominatedNodeName']);
  if (nominatedNodeName !== '') {
    errs.push(
      ...nameIsDNSSubdomain(nominatedNodeName, false).map((msg) => invalid(FieldPath.root('status', 'nominatedNodeName'), nominatedNodeName, msg)),
    );
  }
  return errs;
}
