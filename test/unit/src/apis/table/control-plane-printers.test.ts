import { expect } from 'chai';
import { toTable } from '../../../../../src/apis/table';
import { NOW, ago, cellsOf, columnShapes, shapes } from './table-test-support';

// Columns and cells: kubernetes pkg/printers/internalversion/printers.go at v1.25
// (printCertificateSigningRequest, printMutating/ValidatingWebhook, printFlowSchema(List),
// printPriorityLevelConfiguration, printStorageVersion) and kube-aggregator
// pkg/registry/apiservice/etcd/etcd.go ConvertToTable for APIService.

const created = { creationTimestamp: ago(600) };

describe('certificate signing request printer', () => {
  const csr = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: 'csr-1', ...created },
    spec: { signerName: 'kubernetes.io/kube-apiserver-client', username: 'alice', expirationSeconds: 86400, request: 'LS0t', usages: ['client auth'] },
    status: { conditions: [{ type: 'Approved', status: 'True' }], certificate: 'LS0tLS1' },
  };

  it('has Age second and prints signer, requestor, duration and condition', () => {
    expect(columnShapes(csr)).to.deep.equal(
      shapes(['Name', 'string'], ['Age', 'string'], ['SignerName', 'string'], ['Requestor', 'string'], ['RequestedDuration', 'string'], ['Condition', 'string']),
    );
    expect(cellsOf(csr)).to.deep.equal(['csr-1', '10m', 'kubernetes.io/kube-apiserver-client', 'alice', '24h', 'Approved,Issued']);
  });

  it('ranks Denied over Approved, adds Failed, and prints <none> for a missing duration', () => {
    const denied = { ...csr, spec: { ...csr.spec, expirationSeconds: undefined }, status: { conditions: [{ type: 'Approved' }, { type: 'Denied' }, { type: 'Failed' }] } };
    expect(cellsOf(denied).slice(4)).to.deep.equal(['<none>', 'Denied,Failed']);
    expect(cellsOf({ ...csr, status: {} })[5]).to.equal('Pending');
  });
});

describe('webhook configuration printers', () => {
  it('counts the webhooks of both kinds', () => {
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      const configuration = { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: 'hooks', ...created }, webhooks: [{ name: 'a.example.com' }, { name: 'b.example.com' }] };
      expect(columnShapes(configuration)).to.deep.equal(shapes(['Name', 'string'], ['Webhooks', 'integer'], ['Age', 'string']));
      expect(cellsOf(configuration)).to.deep.equal(['hooks', 2, '10m']);
    }
  });
});

describe('flow schema printer', () => {
  function flowSchema(name: string, precedence: number, extra: object = {}): Record<string, unknown> {
    return {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2',
      kind: 'FlowSchema',
      metadata: { name, ...created },
      spec: { priorityLevelConfiguration: { name: 'workload-low' }, matchingPrecedence: precedence, distinguisherMethod: { type: 'ByUser' } },
      ...extra,
    };
  }

  it('has MissingPL after Age and prints the dangling condition status', () => {
    const object = flowSchema('service-accounts', 9000, { status: { conditions: [{ type: 'Dangling', status: 'False' }] } });
    expect(columnShapes(object)).to.deep.equal(
      shapes(['Name', 'string'], ['PriorityLevel', 'string'], ['MatchingPrecedence', 'string'], ['DistinguisherMethod', 'string'], ['Age', 'string'], ['MissingPL', 'string']),
    );
    expect(cellsOf(object)).to.deep.equal(['service-accounts', 'workload-low', 9000, 'ByUser', '10m', 'False']);
    const bare = flowSchema('exempt', 1);
    (bare['spec'] as Record<string, unknown>)['distinguisherMethod'] = undefined;
    expect(cellsOf(bare).slice(3)).to.deep.equal(['<none>', '10m', '?']);
  });

  it('sorts a list by matching precedence, then name, with each row keeping its object', () => {
    const table = toTable([flowSchema('b', 1000), flowSchema('global-default', 9900), flowSchema('a', 1000), flowSchema('exempt', 1)], {}, { includeObject: 'Metadata', now: NOW });
    const rows = table['rows'] as Array<{ cells: unknown[]; object: { metadata: { name: string } } }>;
    expect(rows.map((row) => row.cells[0])).to.deep.equal(['exempt', 'a', 'b', 'global-default']);
    expect(rows.map((row) => row.object.metadata.name)).to.deep.equal(['exempt', 'a', 'b', 'global-default']);
  });
});

describe('priority level configuration printer', () => {
  it('uses the v1.25 AssuredConcurrencyShares column and prints queuing numbers', () => {
    const limited = {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: 'workload-low', ...created },
      spec: { type: 'Limited', limited: { assuredConcurrencyShares: 100, limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } } } },
    };
    expect(columnShapes(limited)).to.deep.equal(
      shapes(['Name', 'string'], ['Type', 'string'], ['AssuredConcurrencyShares', 'string'], ['Queues', 'string'], ['HandSize', 'string'], ['QueueLengthLimit', 'string'], ['Age', 'string']),
    );
    expect(cellsOf(limited)).to.deep.equal(['workload-low', 'Limited', 100, 128, 6, 50, '10m']);
    const exempt = { ...limited, metadata: { name: 'exempt', ...created }, spec: { type: 'Exempt' } };
    expect(cellsOf(exempt)).to.deep.equal(['exempt', 'Exempt', '<none>', '<none>', '<none>', '<none>', '10m']);
    const rejecting = { ...limited, spec: { type: 'Limited', limited: { assuredConcurrencyShares: 5, limitResponse: { type: 'Reject' } } } };
    expect(cellsOf(rejecting).slice(2, 6)).to.deep.equal([5, '<none>', '<none>', '<none>']);
  });
});

describe('storage version printer', () => {
  it('prints the common encoding version and the per-server versions', () => {
    const storageVersion = {
      apiVersion: 'internal.apiserver.k8s.io/v1alpha1',
      kind: 'StorageVersion',
      metadata: { name: 'apps.deployments', ...created },
      status: { commonEncodingVersion: 'apps/v1', storageVersions: [{ apiServerID: 'kube-apiserver-1', encodingVersion: 'apps/v1', decodableVersions: ['apps/v1'] }] },
    };
    expect(columnShapes(storageVersion)).to.deep.equal(shapes(['Name', 'string'], ['CommonEncodingVersion', 'string'], ['StorageVersions', 'string'], ['Age', 'string']));
    expect(cellsOf(storageVersion)).to.deep.equal(['apps.deployments', 'apps/v1', 'kube-apiserver-1=apps/v1', '10m']);
    expect(cellsOf({ ...storageVersion, status: {} }).slice(1, 3)).to.deep.equal(['<unset>', '<unset>']);
  });
});

describe('APIService printer', () => {
  it('prints Local for an in-process group and the availability with its reason', () => {
    const local = { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1.apps', ...created }, spec: { group: 'apps', version: 'v1' }, status: { conditions: [{ type: 'Available', status: 'True', reason: 'Local' }] } };
    expect(columnShapes(local)).to.deep.equal(shapes(['Name', 'string'], ['Service', 'string'], ['Available', 'string'], ['Age', 'string']));
    expect(cellsOf(local)).to.deep.equal(['v1.apps', 'Local', 'True', '10m']);
    const remote = {
      ...local,
      metadata: { name: 'v1beta1.metrics.k8s.io', ...created },
      spec: { service: { namespace: 'kube-system', name: 'metrics-server' } },
      status: { conditions: [{ type: 'Available', status: 'False', reason: 'MissingEndpoints' }] },
    };
    expect(cellsOf(remote)).to.deep.equal(['v1beta1.metrics.k8s.io', 'kube-system/metrics-server', 'False (MissingEndpoints)', '10m']);
    expect(cellsOf({ ...local, status: {} })[2]).to.equal('Unknown');
  });
});
