/** Printers for the CSI kinds and VolumeAttachment, after kubernetes pkg/printers/internalversion/printers.go (v1.25). */
import { AGE_COLUMN, NAME_COLUMN, ageOf, asArray, asString, at, column, type KindPrinter } from './printer-support';
import { nameOf, objectOrEmpty } from '../object';

export const csiDriverPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'AttachRequired',
      'boolean',
      'attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the CSIDriverRegistry feature gate is enabled and the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.',
    ),
    column(
      'PodInfoOnMount',
      'boolean',
      'If set to true, podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations. If set to false, pod information will not be passed on mount. Default is false. The CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext. The following VolumeConext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. "csi.storage.k8s.io/pod.name": pod.Name "csi.storage.k8s.io/pod.namespace": pod.Namespace "csi.storage.k8s.io/pod.uid": string(pod.UID) "csi.storage.k8s.io/ephemeral": "true" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise "false"\n\n"csi.storage.k8s.io/ephemeral" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the "Persistent" and "Ephemeral" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn\'t support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field is immutable.',
    ),
    column(
      'StorageCapacity',
      'boolean',
      'If set to true, storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable.',
    ),
    column(
      'TokenRequests',
      'string',
      'TokenRequests indicates the CSI driver needs pods\' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: "csi.storage.k8s.io/serviceAccount.tokens": {\n  "<audience>": {\n    "token": <token>,\n    "expirationTimestamp": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.',
    ),
    column(
      'RequiresRepublish',
      'boolean',
      'RequiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container.',
    ),
    column(
      'Modes',
      'string',
      'volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is "Persistent", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism. The other mode is "Ephemeral". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume. For more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future. This field is beta.\n\nThis field is immutable.',
    ),
    AGE_COLUMN,
  ],
  printRow(driver, context) {
    const spec = objectOrEmpty(driver['spec']);
    const tokenRequests = spec['tokenRequests'];
    const modes = asArray(spec['volumeLifecycleModes']).map(asString).join(',');
    return {
      cells: [
        nameOf(driver),
        // Unset pointers print as their defaults: attach is required unless said otherwise.
        spec['attachRequired'] !== false,
        spec['podInfoOnMount'] === true,
        spec['storageCapacity'] === true,
        Array.isArray(tokenRequests) ? tokenRequests.map((request) => asString(objectOrEmpty(request)['audience'])).join(',') : '<unset>',
        spec['requiresRepublish'] === true,
        modes === '' ? '<none>' : modes,
        ageOf(driver, context),
      ],
    };
  },
};

export const csiNodePrinter: KindPrinter = {
  columns: [NAME_COLUMN, column('Drivers', 'integer', 'Drivers indicates the number of CSI drivers registered on the node'), AGE_COLUMN],
  printRow: (node, context) => ({ cells: [nameOf(node), asArray(at(node, 'spec', 'drivers')).length, ageOf(node, context)] }),
};

export const csiStorageCapacityPrinter: KindPrinter = {
  // No Age column: v1.25 registers only these three.
  columns: [
    NAME_COLUMN,
    column(
      'StorageClassName',
      'string',
      'The name of the StorageClass that the reported capacity applies to. It must meet the same requirements as the name of a StorageClass object (non-empty, DNS subdomain). If that object no longer exists, the CSIStorageCapacity object is obsolete and should be removed by its creator. This field is immutable.',
    ),
    column(
      'Capacity',
      'string',
      'Capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields.\n\nThe semantic is currently (CSI spec 1.2) defined as: The available capacity, in bytes, of the storage that can be used to provision volumes. If not set, that information is currently unavailable.',
    ),
  ],
  printRow(capacity) {
    const quantity = capacity['capacity'];
    const capacityCell = typeof quantity === 'string' ? quantity : typeof quantity === 'number' ? `${quantity}` : '<unset>';
    return { cells: [nameOf(capacity), asString(capacity['storageClassName']), capacityCell] };
  },
};

export const volumeAttachmentPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    // kube gives the Attacher column the "name" format too.
    column('Attacher', 'string', 'Attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().', {
      format: 'name',
    }),
    column('PV', 'string', 'Name of the persistent volume to attach.'),
    column('Node', 'string', 'The node that the volume should be attached to.'),
    column(
      'Attached',
      'boolean',
      'Indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.',
    ),
    AGE_COLUMN,
  ],
  printRow(attachment, context) {
    const spec = objectOrEmpty(attachment['spec']);
    return {
      cells: [
        nameOf(attachment),
        asString(spec['attacher']),
        asString(at(spec, 'source', 'persistentVolumeName')),
        asString(spec['nodeName']),
        at(attachment, 'status', 'attached') === true,
        ageOf(attachment, context),
      ],
    };
  },
};
