/**
 * The bench reports' plots: a small SVG writer of our own (no plotting package), so that each
 * `make bench-*` leaves, beside its table, one plot per figure in bench/reports/ that RESULTS.md
 * links. Three kinds cover the figures the benchmarks make:
 *
 * - barChart: a value per scenario, grouped (CPU per operation, throughput, ratios to a baseline),
 *   with an optional reference line (a goal such as 1.20x);
 * - lineChart: series of (x, y) points (throughput over time, the fan-out's event latency over
 *   time), linear axes;
 * - latencyDistribution: each series' latencies as a distribution (the share of operations at or
 *   under a latency), on a logarithmic latency axis.
 *
 * The output is deterministic for the same input (no time stamps, no random ids), plain SVG 1.1
 * that browsers and image viewers show, with the numbers in <title> tooltips.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

export interface BarGroup {
  readonly label: string;
  /** One bar per series, in the chart's series order; undefined leaves a gap. */
  readonly values: ReadonlyArray<number | undefined>;
}

export interface BarChart {
  readonly title: string;
  readonly yLabel: string;
  readonly series: readonly string[];
  readonly groups: readonly BarGroup[];
  /** Horizontal reference lines (goals), e.g. { value: 1.2, label: 'goal 1.20x' }. */
  readonly references?: ReadonlyArray<{ readonly value: number; readonly label: string }>;
}

export interface LineSeries {
  readonly name: string;
  readonly points: ReadonlyArray<readonly [number, number]>;
}

export interface LineChart {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly LineSeries[];
}

export interface LatencySeries {
  readonly name: string;
  /** Latencies in milliseconds, in any order. */
  readonly latenciesMs: readonly number[];
}

const WIDTH = 760;
const HEIGHT = 420;
const MARGIN = { left: 70, right: 20, top: 40, bottom: 90 };
const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];
const FONT = 'font-family="Helvetica, Arial, sans-serif"';

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Fixed to 2 decimals at most, without trailing zeros (deterministic text). */
function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return String(Number(value.toFixed(digits)));
}

/** About `count` round tick values from min up to the first at or past max (1, 2 or 5 times a power of ten apart). */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!(max > min)) return [min];
  const raw = (max - min) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const ticks: number[] = [];
  const last = Math.ceil(max / step - 1e-9) * step;
  for (let v = Math.ceil(min / step - 1e-9) * step; v <= last + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

function frame(title: string, body: string[], legend: readonly string[]): string {
  const legendItems = legend.map((name, i) => {
    const x = MARGIN.left + (i % 3) * 230;
    const y = HEIGHT - 38 + Math.floor(i / 3) * 16;
    return `<rect x="${x}" y="${y - 9}" width="10" height="10" fill="${PALETTE[i % PALETTE.length]}"/><text x="${x + 14}" y="${y}" font-size="11" ${FONT}>${escapeXml(name)}</text>`;
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold" ${FONT}>${escapeXml(title)}</text>`,
    ...body,
    ...legendItems,
    '</svg>',
    '',
  ].join('\n');
}

interface Axis {
  readonly min: number;
  readonly max: number;
  readonly ticks: readonly number[];
  readonly log?: boolean;
}

function scale(axis: Axis, from: number, to: number): (v: number) => number {
  if (axis.log) {
    const lo = Math.log10(axis.min);
    const hi = Math.log10(axis.max);
    return (v) => from + ((Math.log10(Math.max(v, axis.min)) - lo) / (hi - lo)) * (to - from);
  }
  return (v) => from + ((v - axis.min) / (axis.max - axis.min || 1)) * (to - from);
}

function yAxis(axis: Axis, label: string): { y: (v: number) => number; svg: string[] } {
  const y = scale(axis, HEIGHT - MARGIN.bottom, MARGIN.top);
  const svg = axis.ticks.map((t) => `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#e0e0e0"/><text x="${MARGIN.left - 6}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end" font-size="11" ${FONT}>${formatNumber(t)}</text>`);
  svg.push(`<text transform="translate(16 ${(MARGIN.top + HEIGHT - MARGIN.bottom) / 2}) rotate(-90)" text-anchor="middle" font-size="12" ${FONT}>${escapeXml(label)}</text>`);
  svg.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${HEIGHT - MARGIN.bottom}" stroke="black"/>`);
  return { y, svg };
}

function xAxis(axis: Axis, label: string): { x: (v: number) => number; svg: string[] } {
  const x = scale(axis, MARGIN.left, WIDTH - MARGIN.right);
  const base = HEIGHT - MARGIN.bottom;
  const svg = axis.ticks.map((t) => `<line x1="${x(t).toFixed(1)}" x2="${x(t).toFixed(1)}" y1="${base}" y2="${base + 4}" stroke="black"/><text x="${x(t).toFixed(1)}" y="${base + 16}" text-anchor="middle" font-size="11" ${FONT}>${formatNumber(t)}</text>`);
  svg.push(`<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${base}" y2="${base}" stroke="black"/>`);
  svg.push(`<text x="${(MARGIN.left + WIDTH - MARGIN.right) / 2}" y="${base + 34}" text-anchor="middle" font-size="12" ${FONT}>${escapeXml(label)}</text>`);
  return { x, svg };
}

/** A label split at spaces into lines of at most `width` characters (a word longer than that keeps its own line). */
export function wrapLabel(label: string, width: number): string[] {
  const lines: string[] = [];
  for (const word of label.split(' ')) {
    const last = lines[lines.length - 1];
    if (last !== undefined && last.length + 1 + word.length <= width) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}

export function barChart(chart: BarChart): string {
  const values = chart.groups.flatMap((g) => g.values.filter((v): v is number => v !== undefined && Number.isFinite(v)));
  const top = Math.max(0, ...values, ...(chart.references ?? []).map((r) => r.value)) * 1.1 || 1;
  const ticks = niceTicks(0, top);
  const axis: Axis = { min: 0, max: Math.max(top, ticks[ticks.length - 1]), ticks };
  const { y, svg } = yAxis(axis, chart.yLabel);
  const body = [...svg];
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const groupWidth = plotWidth / Math.max(1, chart.groups.length);
  const barWidth = (groupWidth * 0.8) / Math.max(1, chart.series.length);
  const base = HEIGHT - MARGIN.bottom;
  chart.groups.forEach((group, g) => {
    const left = MARGIN.left + g * groupWidth + groupWidth * 0.1;
    group.values.forEach((value, s) => {
      if (value === undefined || !Number.isFinite(value)) return;
      const x = left + s * barWidth;
      const top = y(value);
      body.push(`<rect x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${(barWidth - 2).toFixed(1)}" height="${(base - top).toFixed(1)}" fill="${PALETTE[s % PALETTE.length]}"><title>${escapeXml(`${group.label}, ${chart.series[s]}: ${formatNumber(value)}`)}</title></rect>`);
      body.push(`<text x="${(x + barWidth / 2).toFixed(1)}" y="${(top - 3).toFixed(1)}" text-anchor="middle" font-size="10" ${FONT}>${formatNumber(value)}</text>`);
    });
    const center = (left + groupWidth * 0.4).toFixed(1);
    const lines = wrapLabel(group.label, Math.max(8, Math.floor(groupWidth / 6.5)));
    body.push(`<text x="${center}" y="${base + 16}" text-anchor="middle" font-size="11" ${FONT}>${lines.map((line, i) => `<tspan x="${center}" dy="${i === 0 ? 0 : 13}">${escapeXml(line)}</tspan>`).join('')}</text>`);
  });
  body.push(`<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${base}" y2="${base}" stroke="black"/>`);
  for (const reference of chart.references ?? []) {
    const at = y(reference.value).toFixed(1);
    // The label on a white halo: it stays legible where it crosses a bar.
    body.push(`<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${at}" y2="${at}" stroke="#d62728" stroke-dasharray="6 4"/><text x="${WIDTH - MARGIN.right - 4}" y="${Number(at) - 4}" text-anchor="end" font-size="11" fill="#d62728" stroke="white" stroke-width="3" paint-order="stroke" ${FONT}>${escapeXml(reference.label)}</text>`);
  }
  return frame(chart.title, body, chart.series);
}

function polyline(points: ReadonlyArray<readonly [number, number]>, x: (v: number) => number, y: (v: number) => number, color: string, name: string): string {
  const path = points.map(([px, py]) => `${x(px).toFixed(1)},${y(py).toFixed(1)}`).join(' ');
  return `<polyline points="${path}" fill="none" stroke="${color}" stroke-width="1.5"><title>${escapeXml(name)}</title></polyline>`;
}

export function lineChart(chart: LineChart): string {
  const points = chart.series.flatMap((s) => s.points).filter(([px, py]) => Number.isFinite(px) && Number.isFinite(py));
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const xMin = Math.min(...xs, 0);
  const xMax = Math.max(...xs, xMin + 1);
  const yMax = Math.max(...ys, 0) * 1.1 || 1;
  const xTicks = niceTicks(xMin, xMax);
  const yTicks = niceTicks(0, yMax);
  const { x, svg: xSvg } = xAxis({ min: xMin, max: xTicks[xTicks.length - 1], ticks: xTicks }, chart.xLabel);
  const { y, svg: ySvg } = yAxis({ min: 0, max: Math.max(yMax, yTicks[yTicks.length - 1]), ticks: yTicks }, chart.yLabel);
  const body = [...ySvg, ...xSvg];
  chart.series.forEach((series, i) => body.push(polyline(series.points, x, y, PALETTE[i % PALETTE.length], series.name)));
  return frame(chart.title, body, chart.series.map((s) => s.name));
}

/** The share of operations at or under each latency, at most `points` steps per series. */
export function distributionPoints(latenciesMs: readonly number[], points = 200): Array<[number, number]> {
  const sorted = [...latenciesMs].filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return [];
  const out: Array<[number, number]> = [];
  const step = Math.max(1, Math.floor(sorted.length / points));
  for (let i = step - 1; i < sorted.length; i += step) out.push([sorted[i], (i + 1) / sorted.length]);
  if (out[out.length - 1]?.[1] !== 1) out.push([sorted[sorted.length - 1], 1]);
  return out;
}

export function latencyDistribution(title: string, series: readonly LatencySeries[]): string {
  const curves = series.map((s) => ({ name: s.name, points: distributionPoints(s.latenciesMs) }));
  const all = curves.flatMap((c) => c.points.map((p) => p[0])).filter((v) => v > 0);
  const lo = 10 ** Math.floor(Math.log10(Math.min(...all, 1)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...all, lo * 10)));
  const decades: number[] = [];
  for (let v = lo; v <= hi * 1.0001; v *= 10) decades.push(Number(v.toPrecision(6)));
  const { x, svg: xSvg } = xAxis({ min: lo, max: hi, ticks: decades, log: true }, 'latency, ms (log scale)');
  const { y, svg: ySvg } = yAxis({ min: 0, max: 1, ticks: [0, 0.25, 0.5, 0.75, 0.9, 1] }, 'share of operations at or under');
  const body = [...ySvg, ...xSvg];
  curves.forEach((curve, i) => body.push(polyline(curve.points, x, y, PALETTE[i % PALETTE.length], curve.name)));
  return frame(title, body, curves.map((c) => c.name));
}

/** bench/reports/ of this repository (this module runs as dist/bench/support/svg-plot.js); BENCH_REPORTS_DIR overrides it. */
export function reportsDirectory(): string {
  return process.env.BENCH_REPORTS_DIR ?? resolve(__dirname, '..', '..', '..', 'bench', 'reports');
}

/** Writes `svg` as bench/reports/<name>.svg; returns its path relative to the repository's bench/ (for RESULTS.md). */
export function writeSvgReport(name: string, svg: string): string {
  const dir = reportsDirectory();
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.svg`);
  writeFileSync(file, svg);
  return relative(resolve(dir, '..'), file);
}
