import { expect } from 'chai';
import { ApiMetrics } from '../../../../src/observability/api-metrics';

/** The samples of the rendered /metrics text whose name starts with `family`, by their full line. */
function samples(body: string, family: string): string[] {
  return body.split('\n').filter((line) => line.startsWith(family) && !line.startsWith('#'));
}

describe('ApiMetrics', () => {
  it('counts each watch event, per watched kind, in apiserver_watch_events_total and its size in apiserver_watch_events_sizes', async () => {
    const metrics = new ApiMetrics();
    const configMaps = metrics.watchEventRecorder({ group: '', version: 'v1', kind: 'ConfigMap' });
    const sameKind = metrics.watchEventRecorder({ group: '', version: 'v1', kind: 'ConfigMap' });
    const deployments = metrics.watchEventRecorder({ group: 'apps', version: 'v1', kind: 'Deployment' });
    configMaps(100);
    configMaps(2100);
    sameKind(1024);
    deployments(300_000);
    const { body } = await metrics.render();
    expect(body).to.include('# TYPE apiserver_watch_events_total counter');
    expect(body).to.include('# TYPE apiserver_watch_events_sizes histogram');
    expect(samples(body, 'apiserver_watch_events_total')).to.have.members([
      'apiserver_watch_events_total{group="",version="v1",kind="ConfigMap"} 3',
      'apiserver_watch_events_total{group="apps",version="v1",kind="Deployment"} 1',
    ]);
    const sizes = samples(body, 'apiserver_watch_events_sizes').filter((line) => line.includes('kind="ConfigMap"'));
    expect(sizes).to.include('apiserver_watch_events_sizes_bucket{group="",version="v1",kind="ConfigMap",le="1024"} 2');
    expect(sizes).to.include('apiserver_watch_events_sizes_bucket{group="",version="v1",kind="ConfigMap",le="2048"} 2');
    expect(sizes).to.include('apiserver_watch_events_sizes_bucket{group="",version="v1",kind="ConfigMap",le="4096"} 3');
    expect(sizes).to.include('apiserver_watch_events_sizes_bucket{group="",version="v1",kind="ConfigMap",le="+Inf"} 3');
    expect(sizes).to.include('apiserver_watch_events_sizes_sum{group="",version="v1",kind="ConfigMap"} 3224');
    expect(sizes).to.include('apiserver_watch_events_sizes_count{group="",version="v1",kind="ConfigMap"} 3');
    expect(samples(body, 'apiserver_watch_events_sizes_bucket').filter((line) => line.includes('kind="Deployment"') && line.includes('le="131072"'))).to.deep.equal([
      'apiserver_watch_events_sizes_bucket{group="apps",version="v1",kind="Deployment",le="131072"} 0',
    ]);
  });
});
