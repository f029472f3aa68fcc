import { expect } from 'chai';
import { GrpcServerMetrics, memberIdLabel } from '../../../../raft/etcd/metrics';

describe('raft/etcd metrics: the etcd API\'s gRPC counters as go-grpc-prometheus keeps them for etcd', () => {
  it('has every method\'s started and handled series at 0 before any call, as InitializeMetrics makes them', () => {
    const families = new Map(new GrpcServerMetrics().families().map((f) => [f.name, f]));
    const started = families.get('grpc_server_started_total')?.values ?? [];
    expect(started).to.deep.include({ labels: { grpc_type: 'unary', grpc_service: 'etcdserverpb.KV', grpc_method: 'Range' }, value: 0 });
    expect(started).to.deep.include({ labels: { grpc_type: 'bidi_stream', grpc_service: 'etcdserverpb.Watch', grpc_method: 'Watch' }, value: 0 });
    const handled = families.get('grpc_server_handled_total')?.values ?? [];
    expect(handled.filter((v) => v.labels.grpc_method === 'Range').map((v) => v.labels.grpc_code)).to.have.length(17).and.include.members(['OK', 'Unavailable', 'DeadlineExceeded']);
    expect(handled.every((v) => v.value === 0)).to.equal(true);
  });

  it('counts a call in its method\'s started series and in handled under the code it ended with', () => {
    const metrics = new GrpcServerMetrics();
    metrics.callStarted('range');
    metrics.callHandled('range', 14);
    const families = new Map(metrics.families().map((f) => [f.name, f]));
    expect(families.get('grpc_server_started_total')?.values).to.deep.include({ labels: { grpc_type: 'unary', grpc_service: 'etcdserverpb.KV', grpc_method: 'Range' }, value: 1 });
    expect(families.get('grpc_server_handled_total')?.values).to.deep.include({ labels: { grpc_type: 'unary', grpc_service: 'etcdserverpb.KV', grpc_method: 'Range', grpc_code: 'Unavailable' }, value: 1 });
  });

  it('names members in hexadecimal, as etcd\'s types.ID does', () => {
    expect(memberIdLabel(255)).to.equal('ff');
  });
});
