/**
 * Printers for networking, RBAC, storage and coordination kinds, after kubernetes
 * pkg/printers/internalversion/printers.go (v1.25).
 */
import { loadBalancerIngressText } from './core-printers';
import {
  AGE_COLUMN,
  NAME_COLUMN,
  ageOf,
  asArray,
  asString,
  at,
  column,
  wideColumn,
  type KindPrinter,
  type PrintContext,
  type PrintedRow,
} from './printer-support';
import { type JsonObject, metadataOf, nameOf, objectOrEmpty } from '../object';

// ---------------------------------------------------------------- networking.k8s.io

const MAX_HOSTS = 3;

export const ingressPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Class', 'string', 'The name of the IngressClass resource that should be used for additional configuration'),
    column('Hosts', 'string', 'Hosts that incoming requests are matched against before the ingress rule'),
    column('Address', 'string', 'Address is a list containing ingress points for the load-balancer'),
    column('Ports', 'string', 'Ports of TLS configurations that open'),
    AGE_COLUMN,
  ],
  printRow(ingress, context) {
    const spec = objectOrEmpty(ingress['spec']);
    const className = spec['ingressClassName'];
    return {
      cells: [
        nameOf(ingress),
        typeof className === 'string' ? className : '<none>',
        formatHosts(asArray(spec['rules']).map(objectOrEmpty)),
        loadBalancerIngressText(at(ingress, 'status', 'loadBalancer')),
        asArray(spec['tls']).length > 0 ? '80, 443' : '80',
        ageOf(ingress, context),
      ],
    };
  },
};

/** formatHosts: the first three non-empty hosts, "*" when none, "+ N more..." counting every rule. */
function formatHosts(rules: JsonObject[]): string {
  const hosts: string[] = [];
  let more = false;
  for (const rule of rules) {
    if (hosts.length === MAX_HOSTS) more = true;
    const host = asString(rule['host']);
    if (!more && host !== '') hosts.push(host);
  }
  if (hosts.length === 0) return '*';
  const text = hosts.join(',');
  return more ? `${text} + ${rules.length - MAX_HOSTS} more...` : text;
}

export const ingressClassPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Controller', 'string', 'Controller that is responsible for handling this class'),
    column('Parameters', 'string', 'A reference to a resource with additional parameters'),
    AGE_COLUMN,
  ],
  printRow(ingressClass, context) {
    const parameters = at(ingressClass, 'spec', 'parameters');
    let parametersCell = '<none>';
    if (parameters !== undefined && parameters !== null) {
      const reference = objectOrEmpty(parameters);
      const group = reference['apiGroup'];
      parametersCell = asString(reference['kind']) + (typeof group === 'string' ? `.${group}` : '') + `/${asString(reference['name'])}`;
    }
    return { cells: [nameOf(ingressClass), asString(at(ingressClass, 'spec', 'controller')), parametersCell, ageOf(ingressClass, context)] };
  },
};

// ---------------------------------------------------------------- rbac.authorization.k8s.io

function bindingPrinter(roleRefDescription: string, subjectsOf: string): KindPrinter {
  return {
    columns: [
      NAME_COLUMN,
      column('Role', 'string', roleRefDescription),
      AGE_COLUMN,
      wideColumn('Users', 'string', `Users in the ${subjectsOf}`),
      wideColumn('Groups', 'string', `Groups in the ${subjectsOf}`),
      wideColumn('ServiceAccounts', 'string', `ServiceAccounts in the ${subjectsOf}`),
    ],
    printRow: printBinding,
  };
}

function printBinding(binding: JsonObject, context: PrintContext): PrintedRow {
  const users: string[] = [];
  const groups: string[] = [];
  const serviceAccounts: string[] = [];
  for (const subject of asArray(binding['subjects']).map(objectOrEmpty)) {
    const name = asString(subject['name']);
    switch (asString(subject['kind'])) {
      case 'ServiceAccount':
        serviceAccounts.push(`${asString(subject['namespace'])}/${name}`);
        break;
      case 'User':
        users.push(name);
        break;
      case 'Group':
        groups.push(name);
        break;
    }
  }
  const roleRef = objectOrEmpty(binding['roleRef']);
  return {
    cells: [
      nameOf(binding),
      `${asString(roleRef['kind'])}/${asString(roleRef['name'])}`,
      ageOf(binding, context),
      users.join(', '),
      groups.join(', '),
      serviceAccounts.join(', '),
    ],
  };
}

export const roleBindingPrinter = bindingPrinter(
  'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.',
  'roleBinding',
);

export const clusterRoleBindingPrinter = bindingPrinter(
  'RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.',
  'clusterRoleBinding',
);

// ---------------------------------------------------------------- storage.k8s.io

const DEFAULT_CLASS_ANNOTATIONS = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];

export const storageClassPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Provisioner', 'string', 'Provisioner indicates the type of the provisioner.'),
    column('ReclaimPolicy', 'string', 'Dynamically provisioned PersistentVolumes of this storage class are created with this reclaimPolicy. Defaults to Delete.'),
    column(
      'VolumeBindingMode',
      'string',
      'VolumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.',
    ),
    column('AllowVolumeExpansion', 'string', 'AllowVolumeExpansion shows whether the storage class allow volume expand'),
    AGE_COLUMN,
  ],
  printRow(storageClass, context) {
    const annotations = objectOrEmpty(metadataOf(storageClass)['annotations']);
    const isDefault = DEFAULT_CLASS_ANNOTATIONS.some((key) => annotations[key] === 'true');
    const reclaimPolicy = storageClass['reclaimPolicy'];
    const bindingMode = storageClass['volumeBindingMode'];
    return {
      cells: [
        isDefault ? `${nameOf(storageClass)} (default)` : nameOf(storageClass),
        asString(storageClass['provisioner']),
        typeof reclaimPolicy === 'string' ? reclaimPolicy : 'Delete',
        typeof bindingMode === 'string' ? bindingMode : 'Immediate',
        storageClass['allowVolumeExpansion'] === true,
        ageOf(storageClass, context),
      ],
    };
  },
};

// ---------------------------------------------------------------- coordination.k8s.io

export const leasePrinter: KindPrinter = {
  columns: [NAME_COLUMN, column('Holder', 'string', 'holderIdentity contains the identity of the holder of a current lease.'), AGE_COLUMN],
  printRow: (lease, context) => ({ cells: [nameOf(lease), asString(at(lease, 'spec', 'holderIdentity')), ageOf(lease, context)] }),
};
