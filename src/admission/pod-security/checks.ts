/**
 * The Pod Security Standards' checks as v1.25 evaluates them (kubernetes
 * staging/src/k8s.io/pod-security-admission/policy, one check_*.go each): each check has a
 * level (baseline or restricted), an id, and implementations by the policy version they start
 * at; a restricted check may override baseline ones (restrictedVolumes replaces
 * hostPathVolumes, seccompProfile_restricted replaces seccompProfile_baseline,
 * capabilities_restricted replaces capabilities_baseline). A failed check has a reason
 * ("host namespaces") and a detail ("hostNetwork=true") with kube's exact wording, since
 * clients and people read them in warnings and 403s.
 */
import { arrayField, objectField, stringField, stringMap } from '../plugin-support';
import { visitContainers } from '../pod-spec';
import type { JsonObject } from '../../apis/object';

export type Level = 'privileged' | 'baseline' | 'restricted';

export interface CheckResult {
  readonly reason: string;
  readonly detail: string;
}

type CheckFn = (metadata: JsonObject, spec: JsonObject) => CheckResult | undefined;

export interface Check {
  readonly id: string;
  readonly level: 'baseline' | 'restricted';
  /** Implementations by the minor version (of 1.x) they apply from, oldest first. */
  readonly versions: ReadonlyArray<{ readonly minor: number; readonly fn: CheckFn; readonly overrides?: readonly string[] }>;
}

function pluralize(singular: string, plural: string, count: number): string {
  return count === 1 ? singular : plural;
}

/** `"a", "b"` (Go's %q of each, joined). */
function joinQuote(items: readonly string[]): string {
  return items.map((item) => JSON.stringify(item)).join(', ');
}

/** sets.String.List(): sorted, without duplicates. */
function sortedSet(items: Iterable<string>): string[] {
  return [...new Set(items)].sort();
}

function securityContext(container: JsonObject): JsonObject | undefined {
  return objectField(container, 'securityContext');
}

function podContext(spec: JsonObject): JsonObject | undefined {
  return objectField(spec, 'securityContext');
}

function isWindows(spec: JsonObject): boolean {
  return stringField(objectField(spec, 'os'), 'name') === 'windows';
}

function containersNamed(spec: JsonObject, predicate: (container: JsonObject) => boolean): string[] {
  const names: string[] = [];
  visitContainers(spec, (container) => {
    if (predicate(container)) names.push(stringField(container, 'name'));
  });
  return names;
}

/** "pod and containers "a"": the pod first when it sets the field, then the containers. */
function setters(pod: boolean, containers: string[]): string {
  const parts: string[] = [];
  if (pod) parts.push('pod');
  if (containers.length > 0) parts.push(`${pluralize('container', 'containers', containers.length)} ${joinQuote(containers)}`);
  return parts.join(' and ');
}

const hostNamespaces: CheckFn = (_metadata, spec) => {
  const found = sortedSet(['hostNetwork', 'hostPID', 'hostIPC'].filter((field) => spec[field] === true));
  return found.length === 0 ? undefined : { reason: 'host namespaces', detail: found.join(', ') };
};

const privileged: CheckFn = (_metadata, spec) => {
  const bad = containersNamed(spec, (c) => securityContext(c)?.privileged === true);
  return bad.length === 0 ? undefined : { reason: 'privileged', detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must not set securityContext.privileged=true` };
};

const BASELINE_CAPABILITIES = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);

function capabilityList(container: JsonObject, which: 'add' | 'drop'): string[] {
  const raw = (objectField(securityContext(container), 'capabilities') ?? {})[which];
  return Array.isArray(raw) ? raw.filter((c): c is string => typeof c === 'string') : [];
}

const capabilitiesBaseline: CheckFn = (_metadata, spec) => {
  const nonDefault: string[] = [];
  const bad = containersNamed(spec, (c) => {
    const extra = capabilityList(c, 'add').filter((cap) => !BASELINE_CAPABILITIES.has(cap));
    nonDefault.push(...extra);
    return extra.length > 0;
  });
  if (bad.length === 0) return undefined;
  return { reason: 'non-default capabilities', detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must not include ${joinQuote(sortedSet(nonDefault))} in securityContext.capabilities.add` };
};

const hostPathVolumes: CheckFn = (_metadata, spec) => {
  const names = arrayField(spec, 'volumes').filter((v) => objectField(v, 'hostPath') !== undefined).map((v) => stringField(v, 'name'));
  return names.length === 0 ? undefined : { reason: 'hostPath volumes', detail: `${pluralize('volume', 'volumes', names.length)} ${joinQuote(names)}` };
};

const hostPorts: CheckFn = (_metadata, spec) => {
  const ports: string[] = [];
  const bad = containersNamed(spec, (c) => {
    const used = arrayField(c, 'ports').filter((p) => typeof p.hostPort === 'number' && p.hostPort !== 0).map((p) => String(p.hostPort));
    ports.push(...used);
    return used.length > 0;
  });
  if (bad.length === 0) return undefined;
  const distinct = sortedSet(ports);
  return { reason: 'hostPort', detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', distinct.length)} ${distinct.join(', ')}` };
};

const APPARMOR_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

const appArmorProfile: CheckFn = (metadata) => {
  const forbidden: string[] = [];
  for (const [key, value] of Object.entries(stringMap(metadata, 'annotations'))) {
    if (key.startsWith(APPARMOR_PREFIX) && !(value === '' || value === 'runtime/default' || value.startsWith('localhost/'))) forbidden.push(`${key}=${JSON.stringify(value)}`);
  }
  if (forbidden.length === 0) return undefined;
  forbidden.sort();
  return { reason: pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', forbidden.length), detail: forbidden.join(', ') };
};

const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);

const seLinuxOptions: CheckFn = (_metadata, spec) => {
  const badTypes = new Set<string>();
  let setUser = false;
  let setRole = false;
  const valid = (options: JsonObject): boolean => {
    let ok = true;
    const type = stringField(options, 'type');
    if (!SELINUX_TYPES.has(type)) {
      ok = false;
      badTypes.add(type);
    }
    if (stringField(options, 'user') !== '') {
      ok = false;
      setUser = true;
    }
    if (stringField(options, 'role') !== '') {
      ok = false;
      setRole = true;
    }
    return ok;
  };
  const podOptions = objectField(podContext(spec), 'seLinuxOptions');
  const podBad = podOptions !== undefined && !valid(podOptions);
  const bad = containersNamed(spec, (c) => {
    const options = objectField(securityContext(c), 'seLinuxOptions');
    return options !== undefined && !valid(options);
  });
  if (!podBad && bad.length === 0) return undefined;
  // v1.25 lists the user and role only alongside a bad type.
  const data: string[] = [];
  if (badTypes.size > 0) {
    const types = sortedSet(badTypes);
    data.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
    if (setUser) data.push('user may not be set');
    if (setRole) data.push('role may not be set');
  }
  return { reason: 'seLinuxOptions', detail: `${setters(podBad, bad)} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}` };
};

const procMount: CheckFn = (_metadata, spec) => {
  const types: string[] = [];
  const bad = containersNamed(spec, (c) => {
    const value = securityContext(c)?.procMount;
    if (typeof value !== 'string' || value === 'Default') return false;
    types.push(value);
    return true;
  });
  if (bad.length === 0) return undefined;
  return { reason: 'procMount', detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}` };
};

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';

function validSeccompAnnotation(value: string): boolean {
  return value === 'runtime/default' || value === 'docker/default' || value.startsWith('localhost/');
}

const seccompBaselineAnnotations: CheckFn = (metadata, spec) => {
  const annotations = stringMap(metadata, 'annotations');
  const forbidden = new Set<string>();
  if (SECCOMP_POD_ANNOTATION in annotations && !validSeccompAnnotation(annotations[SECCOMP_POD_ANNOTATION])) forbidden.add(`${SECCOMP_POD_ANNOTATION}=${JSON.stringify(annotations[SECCOMP_POD_ANNOTATION])}`);
  visitContainers(spec, (c) => {
    const key = SECCOMP_CONTAINER_PREFIX + stringField(c, 'name');
    if (key in annotations && !validSeccompAnnotation(annotations[key])) forbidden.add(`${key}=${JSON.stringify(annotations[key])}`);
  });
  if (forbidden.size === 0) return undefined;
  return { reason: 'seccompProfile', detail: `forbidden ${pluralize('annotation', 'annotations', forbidden.size)} ${sortedSet(forbidden).join(', ')}` };
};

function seccompType(context: JsonObject | undefined): string | undefined {
  const profile = objectField(context, 'seccompProfile');
  return profile === undefined ? undefined : stringField(profile, 'type');
}

function validSeccomp(type: string): boolean {
  return type === 'Localhost' || type === 'RuntimeDefault';
}

const seccompBaseline: CheckFn = (_metadata, spec) => {
  const badValues = new Set<string>();
  const podType = seccompType(podContext(spec));
  const podBad = podType !== undefined && !validSeccomp(podType);
  if (podBad) badValues.add(podType as string);
  const bad = containersNamed(spec, (c) => {
    const type = seccompType(securityContext(c));
    if (type === undefined || validSeccomp(type)) return false;
    badValues.add(type);
    return true;
  });
  if (!podBad && bad.length === 0) return undefined;
  return { reason: 'seccompProfile', detail: `${setters(podBad, bad)} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(badValues))}` };
};

const SAFE_SYSCTLS = new Set(['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start']);

const sysctls: CheckFn = (_metadata, spec) => {
  const forbidden = arrayField(podContext(spec), 'sysctls').map((s) => stringField(s, 'name')).filter((name) => !SAFE_SYSCTLS.has(name));
  return forbidden.length === 0 ? undefined : { reason: 'forbidden sysctls', detail: forbidden.join(', ') };
};

const windowsHostProcess: CheckFn = (_metadata, spec) => {
  const podBad = objectField(podContext(spec), 'windowsOptions')?.hostProcess === true;
  const bad = containersNamed(spec, (c) => objectField(securityContext(c), 'windowsOptions')?.hostProcess === true);
  if (!podBad && bad.length === 0) return undefined;
  return { reason: 'hostProcess', detail: `${setters(podBad, bad)} must not set securityContext.windowsOptions.hostProcess=true` };
};

const ALLOWED_VOLUME_SOURCES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];

const restrictedVolumes: CheckFn = (_metadata, spec) => {
  const names = sortedSet(arrayField(spec, 'volumes').filter((v) => !ALLOWED_VOLUME_SOURCES.some((source) => objectField(v, source) !== undefined)).map((v) => stringField(v, 'name')));
  // Go's %q of a []string: ["a" "b"].
  return names.length === 0 ? undefined : { reason: 'restricted volume types', detail: `volumes [${names.map((n) => JSON.stringify(n)).join(' ')}] have restricted types` };
};

const allowPrivilegeEscalation: CheckFn = (_metadata, spec) => {
  const bad = containersNamed(spec, (c) => securityContext(c)?.allowPrivilegeEscalation !== false);
  return bad.length === 0 ? undefined : { reason: 'allowPrivilegeEscalation != false', detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must set securityContext.allowPrivilegeEscalation=false` };
};

const runAsNonRoot: CheckFn = (_metadata, spec) => {
  const podValue = podContext(spec)?.runAsNonRoot;
  const podBad = podValue === false;
  const podTrue = podValue === true;
  const explicit: string[] = [];
  const implicit: string[] = [];
  visitContainers(spec, (c) => {
    const value = securityContext(c)?.runAsNonRoot;
    if (typeof value === 'boolean') {
      if (!value) explicit.push(stringField(c, 'name'));
    } else if (!podTrue) {
      implicit.push(stringField(c, 'name'));
    }
  });
  if (podBad || explicit.length > 0) return { reason: 'runAsNonRoot != true', detail: `${setters(podBad, explicit)} must not set securityContext.runAsNonRoot=false` };
  if (implicit.length > 0) return { reason: 'runAsNonRoot != true', detail: `pod or ${pluralize('container', 'containers', implicit.length)} ${joinQuote(implicit)} must set securityContext.runAsNonRoot=true` };
  return undefined;
};

const runAsUser: CheckFn = (_metadata, spec) => {
  const podBad = podContext(spec)?.runAsUser === 0;
  const bad = containersNamed(spec, (c) => securityContext(c)?.runAsUser === 0);
  return !podBad && bad.length === 0 ? undefined : { reason: 'runAsUser=0', detail: `${setters(podBad, bad)} must not set runAsUser=0` };
};

const seccompRestricted: CheckFn = (_metadata, spec) => {
  const badValues = new Set<string>();
  const podType = seccompType(podContext(spec));
  const podBad = podType !== undefined && !validSeccomp(podType);
  const podSet = podType !== undefined && !podBad;
  if (podBad) badValues.add(podType as string);
  const explicit: string[] = [];
  const implicit: string[] = [];
  visitContainers(spec, (c) => {
    const type = seccompType(securityContext(c));
    if (type !== undefined) {
      if (!validSeccomp(type)) {
        explicit.push(stringField(c, 'name'));
        badValues.add(type);
      }
    } else if (!podSet) {
      implicit.push(stringField(c, 'name'));
    }
  });
  if (podBad || explicit.length > 0) return { reason: 'seccompProfile', detail: `${setters(podBad, explicit)} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(badValues))}` };
  if (implicit.length > 0) return { reason: 'seccompProfile', detail: `pod or ${pluralize('container', 'containers', implicit.length)} ${joinQuote(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` };
  return undefined;
};

const capabilitiesRestricted: CheckFn = (_metadata, spec) => {
  const missingDropAll: string[] = [];
  const adding: string[] = [];
  const forbidden: string[] = [];
  visitContainers(spec, (c) => {
    const name = stringField(c, 'name');
    if (objectField(securityContext(c), 'capabilities') === undefined) {
      missingDropAll.push(name);
      return;
    }
    if (!capabilityList(c, 'drop').includes('ALL')) missingDropAll.push(name);
    const extra = capabilityList(c, 'add').filter((cap) => cap !== 'NET_BIND_SERVICE');
    if (extra.length > 0) {
      adding.push(name);
      forbidden.push(...extra);
    }
  });
  const details: string[] = [];
  if (missingDropAll.length > 0) details.push(`${pluralize('container', 'containers', missingDropAll.length)} ${joinQuote(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (adding.length > 0) details.push(`${pluralize('container', 'containers', adding.length)} ${joinQuote(adding)} must not include ${joinQuote(sortedSet(forbidden))} in securityContext.capabilities.add`);
  return details.length === 0 ? undefined : { reason: 'unrestricted capabilities', detail: details.join('; ') };
};

/** From 1.25 these restricted checks pass Windows pods (spec.os.name=windows), whose API validation forbids the fields. */
function exceptWindows(fn: CheckFn): CheckFn {
  return (metadata, spec) => (isWindows(spec) ? undefined : fn(metadata, spec));
}

export const CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ minor: 0, fn: appArmorProfile }] },
  { id: 'capabilities_baseline', level: 'baseline', versions: [{ minor: 0, fn: capabilitiesBaseline }] },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ minor: 0, fn: hostNamespaces }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ minor: 0, fn: hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ minor: 0, fn: hostPorts }] },
  { id: 'privileged', level: 'baseline', versions: [{ minor: 0, fn: privileged }] },
  { id: 'procMount', level: 'baseline', versions: [{ minor: 0, fn: procMount }] },
  { id: 'seLinuxOptions', level: 'baseline', versions: [{ minor: 0, fn: seLinuxOptions }] },
  { id: 'seccompProfile_baseline', level: 'baseline', versions: [{ minor: 0, fn: seccompBaselineAnnotations }, { minor: 19, fn: seccompBaseline }] },
  { id: 'sysctls', level: 'baseline', versions: [{ minor: 0, fn: sysctls }] },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ minor: 0, fn: windowsHostProcess }] },
  { id: 'allowPrivilegeEscalation', level: 'restricted', versions: [{ minor: 8, fn: allowPrivilegeEscalation }, { minor: 25, fn: exceptWindows(allowPrivilegeEscalation) }] },
  { id: 'capabilities_restricted', level: 'restricted', versions: [{ minor: 22, fn: capabilitiesRestricted, overrides: ['capabilities_baseline'] }, { minor: 25, fn: exceptWindows(capabilitiesRestricted), overrides: ['capabilities_baseline'] }] },
  { id: 'restrictedVolumes', level: 'restricted', versions: [{ minor: 0, fn: restrictedVolumes, overrides: ['hostPathVolumes'] }] },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ minor: 0, fn: runAsNonRoot }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ minor: 23, fn: runAsUser }] },
  { id: 'seccompProfile_restricted', level: 'restricted', versions: [{ minor: 19, fn: seccompRestricted, overrides: ['seccompProfile_baseline'] }, { minor: 25, fn: exceptWindows(seccompRestricted), overrides: ['seccompProfile_baseline'] }] },
];
