import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { barChart, distributionPoints, latencyDistribution, lineChart, niceTicks, wrapLabel, writeSvgReport } from '../../../../bench/support/svg-plot';

/** The numbers of a polyline's points attribute. */
function polylinePoints(svg: string): Array<Array<[number, number]>> {
  return [...svg.matchAll(/<polyline points="([^"]*)"/g)].map((m) => m[1].split(' ').map((p) => p.split(',').map(Number) as [number, number]));
}

describe('bench/support: the SVG plots of the bench reports', () => {
  it('picks round ticks 1, 2 or 5 times a power of ten apart', () => {
    expect(niceTicks(0, 1.3)).to.deep.equal([0, 0.5, 1, 1.5]);
    expect(niceTicks(0, 7000)).to.deep.equal([0, 2000, 4000, 6000, 8000]);
    expect(niceTicks(0, 1)).to.deep.equal([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(niceTicks(5, 5)).to.deep.equal([5]);
  });

  it('draws one bar per scenario and series, labelled, with its value as a tooltip, and a goal line', () => {
    const svg = barChart({
      title: 'CPU per operation vs tracing off',
      yLabel: 'ratio',
      series: ['create', 'GET'],
      groups: [{ label: 'sampling 0', values: [1.01, 0.99] }, { label: 'sampling 1,000,000', values: [1.18, undefined] }],
      references: [{ value: 1.2, label: 'goal 1.20x' }],
    });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).to.equal(true);
    expect(svg.trimEnd().endsWith('</svg>')).to.equal(true);
    expect(svg.match(/<rect x=[^>]*><title>/g)).to.have.length(3);
    expect(svg).to.include('<title>sampling 1,000,000, create: 1.18</title>');
    expect(svg).to.include('goal 1.20x');
    expect(svg).to.include('>CPU per operation vs tracing off<');
  });

  it('wraps a long group label at spaces so that neighbouring labels do not overlap', () => {
    expect(wrapLabel('sampling 1,000,000 (baseline build)', 20)).to.deep.equal(['sampling 1,000,000', '(baseline build)']);
    expect(wrapLabel('off', 20)).to.deep.equal(['off']);
    const svg = barChart({ title: 't', yLabel: 'y', series: ['a'], groups: [{ label: 'sampling 1,000,000 (baseline build)', values: [1] }, { label: 'b', values: [1] }, { label: 'c', values: [1] }, { label: 'd', values: [1] }, { label: 'e', values: [1] }] });
    expect(svg).to.include('>sampling 1,000,000</tspan>');
    expect(svg).to.include('>(baseline build)</tspan>');
  });

  it('escapes text, so a label cannot break the document', () => {
    const svg = barChart({ title: 'a <b> & "c"', yLabel: 'y', series: ['s'], groups: [{ label: '<g>', values: [1] }] });
    expect(svg).to.include('a &lt;b&gt; &amp; &quot;c&quot;');
    expect(svg).not.to.include('<g>');
  });

  it('draws each series of a line chart as a polyline inside the plot, larger y higher up', () => {
    const svg = lineChart({ title: 'throughput', xLabel: 's', yLabel: 'ops/s', series: [{ name: 'carina', points: [[0, 100], [1, 200], [2, 150]] }] });
    const [line] = polylinePoints(svg);
    expect(line).to.have.length(3);
    expect(line[0][0]).to.be.lessThan(line[1][0]);
    expect(line[1][1]).to.be.lessThan(line[0][1]);
    for (const [x, y] of line) {
      expect(x).to.be.within(0, 760);
      expect(y).to.be.within(0, 420);
    }
  });

  it('turns latencies into the share of operations at or under each one, ending at 1', () => {
    expect(distributionPoints([3, 1, 2, 4], 4)).to.deep.equal([[1, 0.25], [2, 0.5], [3, 0.75], [4, 1]]);
    const svg = latencyDistribution('GET latency', [{ name: 'off', latenciesMs: [0.5, 1, 2, 40] }, { name: 'full', latenciesMs: [0.6, 1.2, 3] }]);
    expect(polylinePoints(svg)).to.have.length(2);
    expect(svg).to.include('latency, ms (log scale)');
  });

  it('writes the same bytes for the same figure into the reports folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svg-plot-'));
    process.env.BENCH_REPORTS_DIR = join(dir, 'reports');
    try {
      const chart = { title: 't', yLabel: 'y', series: ['a'], groups: [{ label: 'g', values: [2] }] };
      expect(writeSvgReport('figure', barChart(chart))).to.equal(join('reports', 'figure.svg'));
      expect(readFileSync(join(dir, 'reports', 'figure.svg'), 'utf8')).to.equal(barChart(chart));
    } finally {
      delete process.env.BENCH_REPORTS_DIR;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
