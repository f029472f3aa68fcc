import { expect } from 'chai';
import { renderMetricFamily } from '../../../../src/observability/store-metrics';
import { parsePrometheusText } from '../../../support/prometheus-text';

describe('observability/store-metrics: the store\'s families in the text format', () => {
  it('writes a histogram\'s buckets cumulatively, then +Inf, sum and count, per label set', () => {
    const text = renderMetricFamily({
      name: 'etcd_network_peer_round_trip_time_seconds',
      help: 'Round-Trip-Time histogram between peers',
      type: 'histogram',
      histograms: [{ labels: { To: '2' }, histogram: { buckets: [0.1, 1], counts: [1, 2, 3], sum: 9, count: 6 } }],
    });
    expect(text).to.equal([
      '# HELP etcd_network_peer_round_trip_time_seconds Round-Trip-Time histogram between peers',
      '# TYPE etcd_network_peer_round_trip_time_seconds histogram',
      'etcd_network_peer_round_trip_time_seconds_bucket{To="2",le="0.1"} 1',
      'etcd_network_peer_round_trip_time_seconds_bucket{To="2",le="1"} 3',
      'etcd_network_peer_round_trip_time_seconds_bucket{To="2",le="+Inf"} 6',
      'etcd_network_peer_round_trip_time_seconds_sum{To="2"} 9',
      'etcd_network_peer_round_trip_time_seconds_count{To="2"} 6',
    ].join('\n'));
  });

  it('escapes help and label values so that the parser reads them back', () => {
    const text = renderMetricFamily({ name: 'etcd_server_version', help: 'a \\ help\nline', type: 'gauge', values: [{ labels: { server_version: 'say "3.4"\\' }, value: 1 }] });
    expect(text.split('\n')[0]).to.equal('# HELP etcd_server_version a \\\\ help\\nline');
    const family = parsePrometheusText(text).get('etcd_server_version');
    expect(family?.samples).to.deep.equal([{ name: 'etcd_server_version', labels: { server_version: 'say "3.4"\\' }, value: 1 }]);
  });
});
