/**
 * Printers for the core ("") group, after kubernetes pkg/printers/internalversion/printers.go
 * at v1.25: column definitions as AddHandlers registers them and cells as the print* functions
 * fill them with options.Wide set, which is how kube-apiserver always renders a Table.
 */
import {
  AGE_COLUMN,
  CONTAINERS_COLUMN,
  IMAGES_COLUMN,
  NAME_COLUMN,
  ageOf,
  ageSince,
  asArray,
  asNumber,
  asString,
  at,
  column,
  containerCells,
  countKeys,
  formatLabels,
  parseTime,
  sortedUnique,
  wideColumn,
  type KindPrinter,
  type PrintContext,
  type PrintedRow,
  type TableRowCondition,
} from './printer-support';
import { type JsonObject, metadataOf, nameOf, objectOrEmpty } from '../object';

// ---------------------------------------------------------------- pods

const POD_SUCCEEDED_CONDITIONS: TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
];
const POD_FAILED_CONDITIONS: TableRowCondition[] = [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }];

/** node.NodeUnreachablePodReason: a pod being deleted on a lost node shows as Unknown. */
const NODE_UNREACHABLE_POD_REASON = 'NodeLost';

export const podPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
    column('Status', 'string', 'The aggregate status of the containers in this pod.'),
    column(
      'Restarts',
      'string',
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    ),
    AGE_COLUMN,
    wideColumn('IP', 'string', 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.'),
    wideColumn(
      'Node',
      'string',
      'NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements.',
    ),
    wideColumn(
      'Nominated Node',
      'string',
      'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.',
    ),
    wideColumn(
      'Readiness Gates',
      'string',
      'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
    ),
  ],
  printRow: printPod,
};

function printPod(pod: JsonObject, context: PrintContext): PrintedRow {
  const spec = objectOrEmpty(pod['spec']);
  const status = objectOrEmpty(pod['status']);
  const phase = asString(status['phase']);
  const statusReason = asString(status['reason']);
  const initContainerCount = asArray(spec['initContainers']).length;
  const totalContainers = asArray(spec['containers']).length;

  let reason = statusReason !== '' ? statusReason : phase;
  let restarts = 0;
  let readyContainers = 0;
  let lastRestart: number | undefined;
  const noteLastTermination = (containerStatus: JsonObject): void => {
    const finishedAt = parseTime(at(containerStatus, 'lastState', 'terminated', 'finishedAt'));
    if (finishedAt !== undefined && (lastRestart === undefined || lastRestart < finishedAt)) lastRestart = finishedAt;
  };

  let initializing = false;
  const initStatuses = asArray(status['initContainerStatuses']).map(objectOrEmpty);
  for (let index = 0; index < initStatuses.length; index++) {
    const containerStatus = initStatuses[index] ?? {};
    restarts += asNumber(containerStatus['restartCount']);
    noteLastTermination(containerStatus);
    const terminated = at(containerStatus, 'state', 'terminated');
    const waitingReason = asString(at(containerStatus, 'state', 'waiting', 'reason'));
    if (terminated !== undefined && terminated !== null && asNumber(objectOrEmpty(terminated)['exitCode']) === 0) continue;
    if (terminated !== undefined && terminated !== null) {
      reason = 'Init:' + terminatedReason(objectOrEmpty(terminated));
    } else if (waitingReason !== '' && waitingReason !== 'PodInitializing') {
      reason = 'Init:' + waitingReason;
    } else {
      reason = `Init:${index}/${initContainerCount}`;
    }
    initializing = true;
    break;
  }

  if (!initializing) {
    restarts = 0;
    let hasRunning = false;
    const statuses = asArray(status['containerStatuses']).map(objectOrEmpty);
    // Walked from the last container so that the first container's state wins the STATUS cell.
    for (let index = statuses.length - 1; index >= 0; index--) {
      const containerStatus = statuses[index] ?? {};
      restarts += asNumber(containerStatus['restartCount']);
      noteLastTermination(containerStatus);
      const state = objectOrEmpty(containerStatus['state']);
      const waitingReason = asString(at(state, 'waiting', 'reason'));
      const terminated = state['terminated'];
      if (waitingReason !== '') {
        reason = waitingReason;
      } else if (terminated !== undefined && terminated !== null) {
        reason = terminatedReason(objectOrEmpty(terminated));
      } else if (containerStatus['ready'] === true && state['running'] !== undefined && state['running'] !== null) {
        hasRunning = true;
        readyContainers++;
      }
    }
    if (reason === 'Completed' && hasRunning) reason = hasPodReadyCondition(status) ? 'Running' : 'NotReady';
  }

  const deleting = parseTime(metadataOf(pod)['deletionTimestamp']) !== undefined;
  if (deleting) reason = statusReason === NODE_UNREACHABLE_POD_REASON ? 'Unknown' : 'Terminating';

  const restartsCell = lastRestart === undefined ? `${restarts}` : `${restarts} (${ageSince(new Date(lastRestart).toISOString(), context)} ago)`;

  const podIP = asString(at(asArray(status['podIPs'])[0], 'ip'));
  const readinessGates = asArray(spec['readinessGates']).map(objectOrEmpty);
  let readinessGatesCell = '<none>';
  if (readinessGates.length > 0) {
    const conditions = asArray(status['conditions']).map(objectOrEmpty);
    let trueConditions = 0;
    for (const gate of readinessGates) {
      const condition = conditions.find((c) => asString(c['type']) === asString(gate['conditionType']));
      if (condition !== undefined && asString(condition['status']) === 'True') trueConditions++;
    }
    readinessGatesCell = `${trueConditions}/${readinessGates.length}`;
  }

  const row: PrintedRow = {
    cells: [
      nameOf(pod),
      `${readyContainers}/${totalContainers}`,
      reason,
      restartsCell,
      ageOf(pod, context),
      podIP === '' ? '<none>' : podIP,
      asString(spec['nodeName']) || '<none>',
      asString(status['nominatedNodeName']) || '<none>',
      readinessGatesCell,
    ],
  };
  if (phase === 'Succeeded') row.conditions = POD_SUCCEEDED_CONDITIONS;
  else if (phase === 'Failed') row.conditions = POD_FAILED_CONDITIONS;
  return row;
}

/** A terminated container's reason, or Signal:n / ExitCode:n when it gave none. */
function terminatedReason(terminated: JsonObject): string {
  const reason = asString(terminated['reason']);
  if (reason !== '') return reason;
  const signal = asNumber(terminated['signal']);
  return signal !== 0 ? `Signal:${signal}` : `ExitCode:${asNumber(terminated['exitCode'])}`;
}

function hasPodReadyCondition(status: JsonObject): boolean {
  return asArray(status['conditions'])
    .map(objectOrEmpty)
    .some((c) => asString(c['type']) === 'Ready' && asString(c['status']) === 'True');
}

// ---------------------------------------------------------------- services

export const servicePrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'Type',
      'string',
      'type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. "ClusterIP" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is "None", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. "NodePort" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. "LoadBalancer" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. "ExternalName" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types',
    ),
    column(
      'Cluster-IP',
      'string',
      'clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are "None", empty string (""), or a valid IP address. Setting this to "None" makes a "headless service" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies',
    ),
    column(
      'External-IP',
      'string',
      'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.',
    ),
    column(
      'Port(s)',
      'string',
      'The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies',
    ),
    AGE_COLUMN,
    wideColumn(
      'Selector',
      'string',
      'Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/',
    ),
  ],
  printRow(service, context) {
    const spec = objectOrEmpty(service['spec']);
    const clusterIPs = asArray(spec['clusterIPs']);
    const ports = asArray(spec['ports'])
      .map(objectOrEmpty)
      .map((port) => {
        const nodePort = asNumber(port['nodePort']);
        const protocol = asString(port['protocol']);
        return nodePort > 0 ? `${asNumber(port['port'])}:${nodePort}/${protocol}` : `${asNumber(port['port'])}/${protocol}`;
      })
      .join(',');
    return {
      cells: [
        nameOf(service),
        asString(spec['type']),
        clusterIPs.length > 0 ? asString(clusterIPs[0]) : '<none>',
        serviceExternalIP(service),
        ports === '' ? '<none>' : ports,
        ageOf(service, context),
        formatLabels(spec['selector']),
      ],
    };
  },
};

function serviceExternalIP(service: JsonObject): string {
  const spec = objectOrEmpty(service['spec']);
  const externalIPs = asArray(spec['externalIPs']).map(asString);
  switch (asString(spec['type'])) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      // The server renders wide, so the load-balancer list is never clipped here.
      const balancers = loadBalancerIngressText(at(service, 'status', 'loadBalancer'));
      if (externalIPs.length > 0) return [...(balancers === '' ? [] : balancers.split(',')), ...externalIPs].join(',');
      return balancers !== '' ? balancers : '<pending>';
    }
    case 'ExternalName':
      return asString(spec['externalName']);
    default:
      return '<unknown>';
  }
}

/** loadBalancerStatusStringer with wide set: the ingress IPs (else hostnames), sorted and de-duplicated. */
export function loadBalancerIngressText(loadBalancer: unknown): string {
  const points = asArray(at(loadBalancer, 'ingress'))
    .map(objectOrEmpty)
    .map((point) => asString(point['ip']) || asString(point['hostname']))
    .filter((text) => text !== '');
  return sortedUnique(points).join(',');
}

// ---------------------------------------------------------------- nodes

const NODE_ROLE_LABEL_PREFIX = 'node-role.kubernetes.io/';
const NODE_ROLE_LABEL = 'kubernetes.io/role';
const NODE_ADDRESSES_DESCRIPTION =
  'List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/concepts/nodes/node/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See http://pr.k8s.io/79391 for an example.';

export const nodePrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'The status of the node'),
    column('Roles', 'string', 'The roles of the node'),
    AGE_COLUMN,
    column('Version', 'string', 'Kubelet Version reported by the node.'),
    wideColumn('Internal-IP', 'string', NODE_ADDRESSES_DESCRIPTION),
    wideColumn('External-IP', 'string', NODE_ADDRESSES_DESCRIPTION),
    wideColumn('OS-Image', 'string', 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).'),
    wideColumn('Kernel-Version', 'string', "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."),
    wideColumn(
      'Container-Runtime',
      'string',
      'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).',
    ),
  ],
  printRow(node, context) {
    const status = objectOrEmpty(node['status']);
    const nodeInfo = objectOrEmpty(status['nodeInfo']);
    // Only the Ready condition counts; with duplicates the last one wins, as in Go's map.
    const ready = asArray(status['conditions'])
      .map(objectOrEmpty)
      .filter((c) => asString(c['type']) === 'Ready')
      .pop();
    const states = [ready === undefined ? 'Unknown' : asString(ready['status']) === 'True' ? 'Ready' : 'NotReady'];
    if (at(node, 'spec', 'unschedulable') === true) states.push('SchedulingDisabled');
    const roles = nodeRoles(objectOrEmpty(metadataOf(node)['labels'])).join(',');
    const addresses = asArray(status['addresses']).map(objectOrEmpty);
    const addressOfType = (type: string): string =>
      asString(addresses.find((address) => asString(address['type']) === type)?.['address']) || '<none>';
    return {
      cells: [
        nameOf(node),
        states.join(','),
        roles === '' ? '<none>' : roles,
        ageOf(node, context),
        asString(nodeInfo['kubeletVersion']),
        addressOfType('InternalIP'),
        addressOfType('ExternalIP'),
        asString(nodeInfo['osImage']) || '<unknown>',
        asString(nodeInfo['kernelVersion']) || '<unknown>',
        asString(nodeInfo['containerRuntimeVersion']) || '<unknown>',
      ],
    };
  },
};

function nodeRoles(labels: JsonObject): string[] {
  const roles: string[] = [];
  for (const [key, value] of Object.entries(labels)) {
    if (key.startsWith(NODE_ROLE_LABEL_PREFIX)) {
      const role = key.slice(NODE_ROLE_LABEL_PREFIX.length);
      if (role !== '') roles.push(role);
    } else if (key === NODE_ROLE_LABEL && asString(value) !== '') {
      roles.push(asString(value));
    }
  }
  return sortedUnique(roles);
}

// ---------------------------------------------------------------- namespaces, configmaps, secrets, service accounts

export const namespacePrinter: KindPrinter = {
  columns: [NAME_COLUMN, column('Status', 'string', 'The status of the namespace'), AGE_COLUMN],
  printRow: (namespace, context) => ({
    cells: [nameOf(namespace), asString(at(namespace, 'status', 'phase')), ageOf(namespace, context)],
  }),
};

export const configMapPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'Data',
      'string',
      "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
    ),
    AGE_COLUMN,
  ],
  printRow: (configMap, context) => ({
    cells: [nameOf(configMap), countKeys(configMap['data']) + countKeys(configMap['binaryData']), ageOf(configMap, context)],
  }),
};

export const secretPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'Type',
      'string',
      'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types',
    ),
    column(
      'Data',
      'string',
      "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
    ),
    AGE_COLUMN,
  ],
  printRow: (secret, context) => ({
    cells: [nameOf(secret), asString(secret['type']), countKeys(secret['data']), ageOf(secret, context)],
  }),
};

export const serviceAccountPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'Secrets',
      'string',
      'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "kubernetes.io/enforce-mountable-secrets" annotation set to "true". This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret',
    ),
    AGE_COLUMN,
  ],
  printRow: (account, context) => ({
    cells: [nameOf(account), asArray(account['secrets']).length, ageOf(account, context)],
  }),
};

// ---------------------------------------------------------------- endpoints

const MAX_LISTED = 3;

export const endpointsPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'Endpoints',
      'string',
      'The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.',
    ),
    AGE_COLUMN,
  ],
  printRow: (endpoints, context) => ({ cells: [nameOf(endpoints), formatEndpoints(endpoints), ageOf(endpoints, context)] }),
};

/** formatEndpoints with every port: at most three "ip:port" (or bare ip without ports), then "+ N more...". */
function formatEndpoints(endpoints: JsonObject): string {
  const subsets = asArray(endpoints['subsets']).map(objectOrEmpty);
  if (subsets.length === 0) return '<none>';
  const listed: string[] = [];
  let count = 0;
  for (const subset of subsets) {
    const addresses = asArray(subset['addresses']).map((address) => asString(objectOrEmpty(address)['ip']));
    const ports = asArray(subset['ports']).map((port) => asNumber(objectOrEmpty(port)['port']));
    // Headless services may publish addresses without ports.
    const entries = ports.length === 0 ? [addresses] : ports.map((port) => addresses.map((ip) => joinHostPort(ip, port)));
    for (const group of entries) {
      count += group.length;
      for (const entry of group) {
        if (listed.length === MAX_LISTED) break;
        listed.push(entry);
      }
    }
  }
  const text = listed.join(',');
  return count > MAX_LISTED ? `${text} + ${count - MAX_LISTED} more...` : text;
}

/** net.JoinHostPort: IPv6 hosts are bracketed. */
function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

// ---------------------------------------------------------------- events

export const eventPrinter: KindPrinter = {
  columns: [
    column('Last Seen', 'string', 'The time at which the most recent occurrence of this event was recorded.'),
    column('Type', 'string', 'Type of this event (Normal, Warning), new types could be added in the future'),
    column(
      'Reason',
      'string',
      "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    ),
    column('Object', 'string', 'The object that this event is about.'),
    wideColumn(
      'Subobject',
      'string',
      'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
    ),
    wideColumn('Source', 'string', 'The component reporting this event. Should be a short machine understandable string.'),
    column('Message', 'string', 'A human-readable description of the status of this operation.'),
    wideColumn('First Seen', 'string', 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)'),
    wideColumn('Count', 'string', 'The number of times this event has occurred.'),
    column('Name', 'string', NAME_COLUMN.description, { format: 'name', priority: 1 }),
  ],
  printRow: printEvent,
};

/** The fields of a core/v1 Event that the printer reads; events.k8s.io/v1 objects are mapped onto them. */
interface EventView {
  firstTimestamp: unknown;
  lastTimestamp: unknown;
  eventTime: unknown;
  count: number;
  series: JsonObject | undefined;
  involvedObject: JsonObject;
  type: string;
  reason: string;
  message: string;
  sourceComponent: string;
  sourceHost: string;
}

function eventView(event: JsonObject): EventView {
  const series = event['series'];
  const common = {
    eventTime: event['eventTime'],
    series: series === undefined || series === null ? undefined : objectOrEmpty(series),
    type: asString(event['type']),
    reason: asString(event['reason']),
  };
  if (asString(event['apiVersion']).startsWith('events.k8s.io/')) {
    // The registry converts events.k8s.io Events to the core internal type before printing.
    return {
      ...common,
      firstTimestamp: event['deprecatedFirstTimestamp'],
      lastTimestamp: event['deprecatedLastTimestamp'],
      count: asNumber(event['deprecatedCount']),
      involvedObject: objectOrEmpty(event['regarding']),
      message: asString(event['note']),
      sourceComponent: asString(at(event, 'deprecatedSource', 'component')),
      sourceHost: asString(at(event, 'deprecatedSource', 'host')),
    };
  }
  return {
    ...common,
    firstTimestamp: event['firstTimestamp'],
    lastTimestamp: event['lastTimestamp'],
    count: asNumber(event['count']),
    involvedObject: objectOrEmpty(event['involvedObject']),
    message: asString(event['message']),
    sourceComponent: asString(at(event, 'source', 'component')),
    sourceHost: asString(at(event, 'source', 'host')),
  };
}

function printEvent(event: JsonObject, context: PrintContext): PrintedRow {
  const view = eventView(event);
  const firstSeen = parseTime(view.firstTimestamp) === undefined ? ageSince(view.eventTime, context) : ageSince(view.firstTimestamp, context);
  let lastSeen = parseTime(view.lastTimestamp) === undefined ? firstSeen : ageSince(view.lastTimestamp, context);
  let count = view.count;
  if (view.series !== undefined) {
    lastSeen = ageSince(view.series['lastObservedTime'], context);
    count = asNumber(view.series['count']);
  } else if (count === 0) {
    // Singleton events of the new API carry no count.
    count = 1;
  }
  const kind = asString(view.involvedObject['kind']).toLowerCase();
  const involvedName = asString(view.involvedObject['name']);
  const source = view.sourceHost === '' ? view.sourceComponent : `${view.sourceComponent}, ${view.sourceHost}`;
  return {
    cells: [
      lastSeen,
      view.type,
      view.reason,
      involvedName === '' ? kind : `${kind}/${involvedName}`,
      asString(view.involvedObject['fieldPath']),
      source,
      view.message.trim(),
      firstSeen,
      count,
      nameOf(event),
    ],
  };
}

// ---------------------------------------------------------------- persistent volumes and claims

const STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** helper.GetAccessModesAsString: abbreviations in a fixed order, duplicates ignored. */
function accessModesText(modes: unknown): string {
  const present = new Set(asArray(modes).map(asString));
  const order: Array<[string, string]> = [
    ['ReadWriteOnce', 'RWO'],
    ['ReadOnlyMany', 'ROX'],
    ['ReadWriteMany', 'RWX'],
    ['ReadWriteOncePod', 'RWOP'],
  ];
  return order
    .filter(([mode]) => present.has(mode))
    .map(([, short]) => short)
    .join(',');
}

/** The beta annotation still overrides spec.storageClassName, as helper.GetPersistentVolume(Claim)Class does. */
function storageClassOf(object: JsonObject): string {
  const annotations = objectOrEmpty(metadataOf(object)['annotations']);
  if (Object.prototype.hasOwnProperty.call(annotations, STORAGE_CLASS_ANNOTATION)) return asString(annotations[STORAGE_CLASS_ANNOTATION]);
  return asString(at(object, 'spec', 'storageClassName'));
}

/** resource.Quantity.String() of a stored quantity; a missing one is the zero quantity "0". */
function quantityText(value: unknown): string {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number') return String(value);
  return '0';
}

function isDeleting(object: JsonObject): boolean {
  return parseTime(metadataOf(object)['deletionTimestamp']) !== undefined;
}

export const persistentVolumePrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'Capacity',
      'string',
      "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity",
    ),
    column(
      'Access Modes',
      'string',
      'accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes',
    ),
    column(
      'Reclaim Policy',
      'string',
      'persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming',
    ),
    column(
      'Status',
      'string',
      'phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase',
    ),
    column(
      'Claim',
      'string',
      'claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding',
    ),
    column('StorageClass', 'string', 'StorageClass of the pv'),
    column(
      'Reason',
      'string',
      'reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.',
    ),
    AGE_COLUMN,
    wideColumn(
      'VolumeMode',
      'string',
      'volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.',
    ),
  ],
  printRow(volume, context) {
    const spec = objectOrEmpty(volume['spec']);
    const claimRef = spec['claimRef'];
    const claim =
      claimRef === undefined || claimRef === null ? '' : `${asString(objectOrEmpty(claimRef)['namespace'])}/${asString(objectOrEmpty(claimRef)['name'])}`;
    const volumeMode = spec['volumeMode'];
    return {
      cells: [
        nameOf(volume),
        quantityText(at(spec, 'capacity', 'storage')),
        accessModesText(spec['accessModes']),
        asString(spec['persistentVolumeReclaimPolicy']),
        isDeleting(volume) ? 'Terminating' : asString(at(volume, 'status', 'phase')),
        claim,
        storageClassOf(volume),
        asString(at(volume, 'status', 'reason')),
        ageOf(volume, context),
        typeof volumeMode === 'string' ? volumeMode : '<unset>',
      ],
    };
  },
};

export const persistentVolumeClaimPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'phase represents the current phase of PersistentVolumeClaim.'),
    column('Volume', 'string', 'volumeName is the binding reference to the PersistentVolume backing this claim.'),
    column('Capacity', 'string', 'capacity represents the actual resources of the underlying volume.'),
    column(
      'Access Modes',
      'string',
      'accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1',
    ),
    column('StorageClass', 'string', 'StorageClass of the pvc'),
    AGE_COLUMN,
    wideColumn(
      'VolumeMode',
      'string',
      'volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.',
    ),
  ],
  printRow(claim, context) {
    const spec = objectOrEmpty(claim['spec']);
    const status = objectOrEmpty(claim['status']);
    const volumeName = asString(spec['volumeName']);
    // Capacity and access modes are only shown once the claim is bound to a volume.
    const bound = volumeName !== '';
    const annotations = objectOrEmpty(metadataOf(claim)['annotations']);
    const storageClass = Object.prototype.hasOwnProperty.call(annotations, STORAGE_CLASS_ANNOTATION)
      ? asString(annotations[STORAGE_CLASS_ANNOTATION])
      : asString(spec['storageClassName']);
    const volumeMode = spec['volumeMode'];
    return {
      cells: [
        nameOf(claim),
        isDeleting(claim) ? 'Terminating' : asString(status['phase']),
        volumeName,
        bound ? quantityText(at(status, 'capacity', 'storage')) : '',
        bound ? accessModesText(status['accessModes']) : '',
        storageClass,
        ageOf(claim, context),
        typeof volumeMode === 'string' ? volumeMode : '<unset>',
      ],
    };
  },
};

// ---------------------------------------------------------------- replication controllers

export const replicationControllerPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'Desired',
      'integer',
      'Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller',
    ),
    column(
      'Current',
      'integer',
      'Replicas is the most recently oberved number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller',
    ),
    column('Ready', 'integer', 'The number of ready replicas for this replication controller.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    wideColumn(
      'Selector',
      'string',
      'Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors',
    ),
  ],
  printRow(controller, context) {
    const [names, images] = containerCells(at(controller, 'spec', 'template', 'spec', 'containers'));
    return {
      cells: [
        nameOf(controller),
        asNumber(at(controller, 'spec', 'replicas')),
        asNumber(at(controller, 'status', 'replicas')),
        asNumber(at(controller, 'status', 'readyReplicas')),
        ageOf(controller, context),
        names,
        images,
        formatLabels(at(controller, 'spec', 'selector')),
      ],
    };
  },
};
