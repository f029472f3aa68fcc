/**
 * Printers for pod templates, disruption budgets, quotas, controller revisions, network
 * policies, endpoint slices, priority and runtime classes and component statuses, after
 * kubernetes pkg/printers/internalversion/printers.go (v1.25).
 */
import {
  AGE_COLUMN,
  NAME_COLUMN,
  ageOf,
  asArray,
  asNumber,
  asString,
  at,
  column,
  compareBytes,
  containerCells,
  formatLabelSelector,
  formatLabels,
  type KindPrinter,
} from './printer-support';
import { metadataOf, nameOf, objectOrEmpty } from '../object';

/** listWithMoreString and its callers show at most three entries. */
const MAX_LISTED = 3;

/** listWithMoreString: "a,b,c + N more...", or "<unset>" for an empty list. */
export function listWithMore(entries: readonly string[]): string {
  if (entries.length > MAX_LISTED) return `${entries.slice(0, MAX_LISTED).join(',')} + ${entries.length - MAX_LISTED} more...`;
  return entries.length === 0 ? '<unset>' : entries.join(',');
}

/** intstr.IntOrString.String(). */
function intOrStringText(value: unknown): string {
  return typeof value === 'number' ? `${value}` : asString(value);
}

export const podTemplatePrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Containers', 'string', 'Names of each container in the template.'),
    column('Images', 'string', 'Images referenced by each container in the template.'),
    column('Pod Labels', 'string', 'The labels for the pod template.'),
  ],
  printRow(podTemplate) {
    const [names, images] = containerCells(at(podTemplate, 'template', 'spec', 'containers'));
    return { cells: [nameOf(podTemplate), names, images, formatLabels(at(podTemplate, 'template', 'metadata', 'labels'))] };
  },
};

export const podDisruptionBudgetPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Min Available', 'string', 'The minimum number of pods that must be available.'),
    column('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable.'),
    column('Allowed Disruptions', 'integer', 'Calculated number of pods that may be disrupted at this time.'),
    AGE_COLUMN,
  ],
  printRow(budget, context) {
    const spec = objectOrEmpty(budget['spec']);
    const minAvailable = spec['minAvailable'];
    const maxUnavailable = spec['maxUnavailable'];
    return {
      cells: [
        nameOf(budget),
        minAvailable === undefined || minAvailable === null ? 'N/A' : intOrStringText(minAvailable),
        maxUnavailable === undefined || maxUnavailable === null ? 'N/A' : intOrStringText(maxUnavailable),
        asNumber(at(budget, 'status', 'disruptionsAllowed')),
        ageOf(budget, context),
      ],
    };
  },
};

export const controllerRevisionPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Controller', 'string', 'Controller of the object'),
    column('Revision', 'string', 'Revision indicates the revision of the state represented by Data.'),
    AGE_COLUMN,
  ],
  printRow(revision, context) {
    const controller = asArray(metadataOf(revision)['ownerReferences'])
      .map(objectOrEmpty)
      .find((reference) => reference['controller'] === true);
    let controllerCell = '<none>';
    if (controller !== undefined) {
      // formatResourceName: lower-cased "kind.group/name", just "kind/name" for the core group.
      const apiVersion = asString(controller['apiVersion']);
      const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
      const kind = asString(controller['kind']);
      const groupKind = group === '' ? kind : `${kind}.${group}`;
      const name = asString(controller['name']);
      controllerCell = groupKind === '' ? name : `${groupKind.toLowerCase()}/${name}`;
    }
    return { cells: [nameOf(revision), controllerCell, asNumber(revision['revision']), ageOf(revision, context)] };
  },
};

export const resourceQuotaPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    AGE_COLUMN,
    column('Request', 'string', 'Request represents a minimum amount of cpu/memory that a container may consume.'),
    column('Limit', 'string', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.'),
  ],
  printRow(quota, context) {
    const hard = objectOrEmpty(at(quota, 'status', 'hard'));
    const used = objectOrEmpty(at(quota, 'status', 'used'));
    const requests: string[] = [];
    const limits: string[] = [];
    for (const resource of Object.keys(hard).sort(compareBytes)) {
      const pieces = resource.split('.');
      const target = pieces.length > 1 && pieces[0] === 'limits' ? limits : requests;
      target.push(`${resource}: ${quantityText(used[resource])}/${quantityText(hard[resource])}`);
    }
    return { cells: [nameOf(quota), ageOf(quota, context), requests.join(', '), limits.join(', ')] };
  },
};

/** resource.Quantity.String(); a missing quantity is the zero quantity "0". */
function quantityText(value: unknown): string {
  if (typeof value === 'number') return `${value}`;
  return typeof value === 'string' && value !== '' ? value : '0';
}

export const componentStatusPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'Status of the component conditions'),
    column('Message', 'string', 'Message of the component conditions'),
    column('Error', 'string', 'Error of the component conditions'),
  ],
  printRow(componentStatus) {
    const healthy = asArray(componentStatus['conditions'])
      .map(objectOrEmpty)
      .find((condition) => asString(condition['type']) === 'Healthy');
    if (healthy === undefined) return { cells: [nameOf(componentStatus), 'Unknown', '', ''] };
    return {
      cells: [
        nameOf(componentStatus),
        asString(healthy['status']) === 'True' ? 'Healthy' : 'Unhealthy',
        asString(healthy['message']),
        asString(healthy['error']),
      ],
    };
  },
};

export const networkPolicyPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'Pod-Selector',
      'string',
      'Selects the pods to which this NetworkPolicy object applies. The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods. In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.',
    ),
    AGE_COLUMN,
  ],
  printRow(policy, context) {
    // podSelector is a struct, never nil, so an absent one selects everything: "<none>".
    return { cells: [nameOf(policy), formatLabelSelector(at(policy, 'spec', 'podSelector') ?? {}), ageOf(policy, context)] };
  },
};

export const endpointSlicePrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'AddressType',
      'string',
      'addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.',
    ),
    column(
      'Ports',
      'string',
      'ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates "all ports". Each slice may include a maximum of 100 ports.',
    ),
    column('Endpoints', 'string', 'endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.'),
    AGE_COLUMN,
  ],
  printRow(slice, context) {
    const ports = asArray(slice['ports'])
      .map(objectOrEmpty)
      .map((port) => {
        if (typeof port['port'] === 'number') return `${port['port']}`;
        return typeof port['name'] === 'string' ? port['name'] : '*';
      });
    const addresses = asArray(slice['endpoints'])
      .map(objectOrEmpty)
      .flatMap((endpoint) => asArray(endpoint['addresses']).map(asString));
    return { cells: [nameOf(slice), asString(slice['addressType']), listWithMore(ports), listWithMore(addresses), ageOf(slice, context)] };
  },
};

export const priorityClassPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'Value',
      'integer',
      'The value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.',
    ),
    column(
      'Global-Default',
      'boolean',
      'globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.',
    ),
    AGE_COLUMN,
  ],
  printRow: (priorityClass, context) => ({
    cells: [nameOf(priorityClass), asNumber(priorityClass['value']), priorityClass['globalDefault'] === true, ageOf(priorityClass, context)],
  }),
};

export const runtimeClassPrinter: KindPrinter = {
  // kube quotes ObjectMeta's doc for a "handler" key it does not have, hence the empty description.
  columns: [NAME_COLUMN, column('Handler', 'string', ''), AGE_COLUMN],
  printRow: (runtimeClass, context) => ({ cells: [nameOf(runtimeClass), asString(runtimeClass['handler']), ageOf(runtimeClass, context)] }),
};
