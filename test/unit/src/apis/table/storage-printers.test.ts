import { expect } from 'chai';
import { ago, cellsOf, columnShapes, shapes } from './table-test-support';

// Columns and cells: kubernetes pkg/printers/internalversion/printers.go at v1.25 (printCSIDriver,
// printCSINode, printCSIStorageCapacity, printVolumeAttachment).

const created = { creationTimestamp: ago(3 * 86400) };

describe('CSI driver printer', () => {
  it('has the v1.25 columns and prints the spec flags', () => {
    const driver = {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: { name: 'ebs.csi.aws.com', ...created },
      spec: { attachRequired: true, podInfoOnMount: false, storageCapacity: true, tokenRequests: [{ audience: 'vault' }, { audience: 'sts' }], volumeLifecycleModes: ['Persistent', 'Ephemeral'] },
    };
    expect(columnShapes(driver)).to.deep.equal(
      shapes(['Name', 'string'], ['AttachRequired', 'boolean'], ['PodInfoOnMount', 'boolean'], ['StorageCapacity', 'boolean'], ['TokenRequests', 'string'], ['RequiresRepublish', 'boolean'], ['Modes', 'string'], ['Age', 'string']),
    );
    expect(cellsOf(driver)).to.deep.equal(['ebs.csi.aws.com', true, false, true, 'vault,sts', false, 'Persistent,Ephemeral', '3d']);
  });

  it('prints the defaults of unset fields', () => {
    const driver = { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'x', ...created }, spec: {} };
    expect(cellsOf(driver)).to.deep.equal(['x', true, false, false, '<unset>', false, '<none>', '3d']);
  });
});

describe('CSI node printer', () => {
  it('counts the registered drivers', () => {
    const node = { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: 'node-1', ...created }, spec: { drivers: [{ name: 'a', nodeID: 'n1' }] } };
    expect(columnShapes(node)).to.deep.equal(shapes(['Name', 'string'], ['Drivers', 'integer'], ['Age', 'string']));
    expect(cellsOf(node)).to.deep.equal(['node-1', 1, '3d']);
  });
});

describe('CSI storage capacity printer', () => {
  it('prints class and capacity, with no Age column', () => {
    const capacity = { apiVersion: 'storage.k8s.io/v1', kind: 'CSIStorageCapacity', metadata: { name: 'csisc-1', ...created }, storageClassName: 'fast', capacity: '100Gi' };
    expect(columnShapes(capacity)).to.deep.equal(shapes(['Name', 'string'], ['StorageClassName', 'string'], ['Capacity', 'string']));
    expect(cellsOf(capacity)).to.deep.equal(['csisc-1', 'fast', '100Gi']);
    expect(cellsOf({ ...capacity, capacity: undefined })[2]).to.equal('<unset>');
  });
});

describe('volume attachment printer', () => {
  it('gives Attacher the name format and prints PV, node and attached', () => {
    const attachment = {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name: 'csi-123', ...created },
      spec: { attacher: 'ebs.csi.aws.com', nodeName: 'node-1', source: { persistentVolumeName: 'pv-1' } },
      status: { attached: true },
    };
    expect(columnShapes(attachment)).to.deep.equal(
      shapes(['Name', 'string'], ['Attacher', 'string', 0, 'name'], ['PV', 'string'], ['Node', 'string'], ['Attached', 'boolean'], ['Age', 'string']),
    );
    expect(cellsOf(attachment)).to.deep.equal(['csi-123', 'ebs.csi.aws.com', 'pv-1', 'node-1', true, '3d']);
  });
});
