/**
 * The embedded store replica's metrics (raft/etcd/metrics.ts: etcd 3.4's names, as plain
 * MetricFamily data) in Prometheus' text format (0.0.4), served on the API server's /metrics
 * after kube's families. They are rendered here rather than registered with prom-client because
 * the families are data the replica hands over whole at each scrape, in this process or (with
 * --api-workers) from the primary's, and may only be known after the first scrape.
 */
import type { MetricFamily, MetricLabels } from '../../raft';

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapeLabelValue(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

function sample(name: string, labels: MetricLabels, value: number): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabelValue(v)}"`);
  return `${name}${pairs.length > 0 ? `{${pairs.join(',')}}` : ''} ${formatValue(value)}`;
}

/** One family: HELP, TYPE, then its samples (a histogram's cumulative buckets, +Inf, sum and count). */
export function renderMetricFamily(family: MetricFamily): string {
  const lines = [`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`];
  if (family.type === 'histogram') {
    for (const { labels, histogram } of family.histograms ?? []) {
      let cumulative = 0;
      histogram.buckets.forEach((le, i) => {
        cumulative += histogram.counts[i];
        lines.push(sample(`${family.name}_bucket`, { ...labels, le: String(le) }, cumulative));
      });
      lines.push(sample(`${family.name}_bucket`, { ...labels, le: '+Inf' }, histogram.count));
      lines.push(sample(`${family.name}_sum`, labels, histogram.sum));
      lines.push(sample(`${family.name}_count`, labels, histogram.count));
    }
  } else {
    for (const { labels, value } of family.values ?? []) lines.push(sample(family.name, labels, value));
  }
  return lines.join('\n');
}

export function renderMetricFamilies(families: readonly MetricFamily[]): string {
  return families.map(renderMetricFamily).join('\n\n');
}
