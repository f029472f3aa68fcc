/**
 * Printers for the apps group, after kubernetes pkg/printers/internalversion/printers.go (v1.25).
 * Several descriptions come from the extensions/v1beta1 and apps/v1beta1 Go types, whose
 * SwaggerDoc kube still uses for these columns.
 */
import {
  AGE_COLUMN,
  CONTAINERS_COLUMN,
  IMAGES_COLUMN,
  NAME_COLUMN,
  ageOf,
  asNumber,
  at,
  column,
  containerCells,
  formatLabelSelector,
  formatLabels,
  labelSelectorText,
  wideColumn,
  type KindPrinter,
} from './printer-support';
import { nameOf } from '../object';

const READY_PODS_DESCRIPTION = 'Number of the pod with ready state';

export const deploymentPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Ready', 'string', READY_PODS_DESCRIPTION),
    column('Up-to-date', 'string', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.'),
    column('Available', 'string', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    wideColumn(
      'Selector',
      'string',
      'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.',
    ),
  ],
  printRow(deployment, context) {
    const [names, images] = containerCells(at(deployment, 'spec', 'template', 'spec', 'containers'));
    let selector: string;
    try {
      selector = labelSelectorText(at(deployment, 'spec', 'selector'));
    } catch {
      // kube fails the whole request here; validation keeps such a selector from being stored.
      selector = '<invalid>';
    }
    return {
      cells: [
        nameOf(deployment),
        `${asNumber(at(deployment, 'status', 'readyReplicas'))}/${asNumber(at(deployment, 'spec', 'replicas'))}`,
        asNumber(at(deployment, 'status', 'updatedReplicas')),
        asNumber(at(deployment, 'status', 'availableReplicas')),
        ageOf(deployment, context),
        names,
        images,
        selector,
      ],
    };
  },
};

export const replicaSetPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'Desired',
      'integer',
      'Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller',
    ),
    column(
      'Current',
      'integer',
      'Replicas is the most recently oberved number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller',
    ),
    column('Ready', 'integer', 'readyReplicas is the number of pods targeted by this ReplicaSet with a Ready Condition.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    wideColumn(
      'Selector',
      'string',
      'Selector is a label query over pods that should match the replica count. If the selector is empty, it is defaulted to the labels present on the pod template. Label keys and values that must match in order to be controlled by this replica set. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors',
    ),
  ],
  printRow(replicaSet, context) {
    const [names, images] = containerCells(at(replicaSet, 'spec', 'template', 'spec', 'containers'));
    return {
      cells: [
        nameOf(replicaSet),
        asNumber(at(replicaSet, 'spec', 'replicas')),
        asNumber(at(replicaSet, 'status', 'replicas')),
        asNumber(at(replicaSet, 'status', 'readyReplicas')),
        ageOf(replicaSet, context),
        names,
        images,
        formatLabelSelector(at(replicaSet, 'spec', 'selector')),
      ],
    };
  },
};

export const statefulSetPrinter: KindPrinter = {
  columns: [NAME_COLUMN, column('Ready', 'string', READY_PODS_DESCRIPTION), AGE_COLUMN, CONTAINERS_COLUMN, IMAGES_COLUMN],
  printRow(statefulSet, context) {
    const [names, images] = containerCells(at(statefulSet, 'spec', 'template', 'spec', 'containers'));
    return {
      cells: [
        nameOf(statefulSet),
        `${asNumber(at(statefulSet, 'status', 'readyReplicas'))}/${asNumber(at(statefulSet, 'spec', 'replicas'))}`,
        ageOf(statefulSet, context),
        names,
        images,
      ],
    };
  },
};

const DAEMON_SET_DOCS = 'More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/';

export const daemonSetPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'Desired',
      'integer',
      `The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). ${DAEMON_SET_DOCS}`,
    ),
    column(
      'Current',
      'integer',
      `The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. ${DAEMON_SET_DOCS}`,
    ),
    column(
      'Ready',
      'integer',
      'numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.',
    ),
    column('Up-to-date', 'integer', 'The total number of nodes that are running updated daemon pod'),
    column(
      'Available',
      'integer',
      'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)',
    ),
    column(
      'Node Selector',
      'string',
      "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/",
    ),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    wideColumn(
      'Selector',
      'string',
      'A label query over pods that are managed by the daemon set. Must match in order to be controlled. If empty, defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors',
    ),
  ],
  printRow(daemonSet, context) {
    const podSpec = at(daemonSet, 'spec', 'template', 'spec');
    const [names, images] = containerCells(at(podSpec, 'containers'));
    return {
      cells: [
        nameOf(daemonSet),
        asNumber(at(daemonSet, 'status', 'desiredNumberScheduled')),
        asNumber(at(daemonSet, 'status', 'currentNumberScheduled')),
        asNumber(at(daemonSet, 'status', 'numberReady')),
        asNumber(at(daemonSet, 'status', 'updatedNumberScheduled')),
        asNumber(at(daemonSet, 'status', 'numberAvailable')),
        formatLabels(at(podSpec, 'nodeSelector')),
        ageOf(daemonSet, context),
        names,
        images,
        formatLabelSelector(at(daemonSet, 'spec', 'selector')),
      ],
    };
  },
};
