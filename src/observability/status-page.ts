/**
 * The status page each replica serves for an operator who wants to look rather than query:
 * `/status` is one HTML document with its style and script inline (no external asset: it works
 * in an air-gapped cluster), which polls `/status/data` (JSON) every second and draws small live
 * charts as inline SVG. It shows the members, the leader, the term, the commit and applied
 * indexes, on the leader each follower's lag and heartbeat round trip, request rates and
 * latencies by verb, watch counts, the watch fan-out's backlog, and the recent leader changes
 * and faults.
 *
 * Both paths are non-resource URLs behind the filter chain: authentication, then RBAC. v1.25's
 * default policy grants neither to anyone but cluster-admin (nonResourceURLs "*"); an operator
 * grants them with a ClusterRole rule `nonResourceURLs: ["/status", "/status/*"], verbs: ["get"]`.
 * The page sends a Content-Security-Policy that allows only its own inline script and style
 * (by hash) and fetches to its own origin.
 *
 * The server samples once a second (commit index, request count, watchers, backlog) so that a
 * page opened now shows the last two minutes at once.
 */
import { createHash } from 'node:crypto';
import type { StoreStatusReport } from '../../raft';
import type { RequestWindow, VerbSummary } from './request-window';

const HISTORY_POINTS = 120;

export interface StatusPageSources {
  /** This replica's name (its member id or address). */
  identity: string;
  /** The embedded store's report (an API worker's comes from its primary, a quarter second old at most); undefined with an external etcd. */
  store?: () => StoreStatusReport | undefined;
  requests: RequestWindow;
  watchers: () => number;
  fanOutBacklog: () => number;
  now?: () => number;
}

export interface StatusData {
  identity: string;
  at: number;
  store: StoreStatusReport | null;
  requests: VerbSummary[];
  watchers: number;
  fanOutBacklog: number;
  /** One point a second, oldest first. */
  history: { requestsPerSecond: number[]; commitsPerSecond: number[]; watchers: number[]; fanOutBacklog: number[] };
}

export class StatusPage {
  private timer?: NodeJS.Timeout;
  private lastCommit: number | undefined;
  private readonly history = { commitsPerSecond: [] as number[], watchers: [] as number[], fanOutBacklog: [] as number[] };

  constructor(private readonly sources: StatusPageSources) {}

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.sample(), 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private sample(): void {
    const report = this.sources.store?.();
    const push = (series: number[], value: number) => {
      series.push(value);
      if (series.length > HISTORY_POINTS) series.shift();
    };
    if (report !== undefined) {
      push(this.history.commitsPerSecond, this.lastCommit === undefined ? 0 : Math.max(0, report.commit - this.lastCommit));
      this.lastCommit = report.commit;
    }
    push(this.history.watchers, this.sources.watchers());
    push(this.history.fanOutBacklog, this.sources.fanOutBacklog());
  }

  data(): StatusData {
    return {
      identity: this.sources.identity,
      at: (this.sources.now ?? Date.now)(),
      store: this.sources.store?.() ?? null,
      requests: this.sources.requests.summary(10),
      watchers: this.sources.watchers(),
      fanOutBacklog: this.sources.fanOutBacklog(),
      history: { requestsPerSecond: this.sources.requests.ratePerSecond(HISTORY_POINTS), ...this.history },
    };
  }

  /** /status/data: the JSON the page polls. */
  dataDocument(): { body: string; contentType: string; cacheControl: string; headers: Record<string, string> } {
    return { body: JSON.stringify(this.data()), contentType: 'application/json', cacheControl: 'no-store', headers: { 'X-Content-Type-Options': 'nosniff' } };
  }

  /** /status: the page. */
  pageDocument(): { body: string; contentType: string; cacheControl: string; headers: Record<string, string> } {
    return {
      body: PAGE,
      contentType: 'text/html; charset=utf-8',
      cacheControl: 'no-store',
      headers: {
        'Content-Security-Policy': `default-src 'none'; script-src '${SCRIPT_HASH}'; style-src '${STYLE_HASH}'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
      },
    };
  }
}

const STYLE = `
:root { color-scheme: light; --ink: #1b2330; --muted: #5b6678; --line: #d9dee7; --ok: #1d7f46; --bad: #b3261e; --warn: #9a6700; --accent: #2456c7; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: #f5f7fa; }
header { display: flex; flex-wrap: wrap; gap: 12px 28px; align-items: baseline; padding: 14px 22px; background: #fff; border-bottom: 1px solid var(--line); }
header h1 { font-size: 18px; margin: 0 12px 0 0; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 10px; font-weight: 600; font-size: 12px; color: #fff; background: var(--muted); }
.badge.leader { background: var(--ok); } .badge.follower { background: var(--accent); } .badge.none { background: var(--bad); }
.kv { color: var(--muted); } .kv b { color: var(--ink); font-variant-numeric: tabular-nums; }
main { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 16px; padding: 16px 22px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px 14px; }
section h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 0 0 8px; }
table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 4px 6px; border-bottom: 1px solid var(--line); }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
td.num, th.num { text-align: right; }
.bad { color: var(--bad); font-weight: 600; } .warn { color: var(--warn); } .ok { color: var(--ok); }
.charts { display: grid; grid-template-columns: 1fr; gap: 10px; }
.chart { display: grid; grid-template-columns: 150px 1fr 70px; align-items: center; gap: 8px; }
.chart svg { width: 100%; height: 42px; background: #fafbfd; border: 1px solid var(--line); border-radius: 4px; }
.chart .now { text-align: right; font-variant-numeric: tabular-nums; font-weight: 600; }
ul.events { list-style: none; padding: 0; margin: 0; max-height: 220px; overflow: auto; }
ul.events li { padding: 3px 0; border-bottom: 1px dashed var(--line); }
#stale { display: none; padding: 6px 22px; background: #fdecea; color: var(--bad); font-weight: 600; }
`;

const SCRIPT = `
'use strict';
const el = (id) => document.getElementById(id);
const fmt = (n, d = 0) => (n === null || n === undefined || Number.isNaN(n)) ? '–' : Number(n).toFixed(d);
const ago = (ms) => { const s = Math.max(0, Math.round(ms / 1000)); return s < 60 ? s + ' s ago' : s < 3600 ? Math.round(s / 60) + ' min ago' : Math.round(s / 3600) + ' h ago'; };
const text = (tag, content, cls) => { const e = document.createElement(tag); e.textContent = content; if (cls) e.className = cls; return e; };
function row(cells) { const tr = document.createElement('tr'); for (const c of cells) tr.appendChild(c); return tr; }
function fill(tbody, rows) { tbody.replaceChildren(...rows); }
function spark(svg, values) {
  const w = 300, h = 40, n = values.length;
  svg.setAttribute('viewBox', '0 0 ' + w + ' ' + h);
  svg.setAttribute('preserveAspectRatio', 'none');
  const max = Math.max(1, ...values);
  const pts = values.map((v, i) => ((n <= 1 ? 0 : i * w / (n - 1)).toFixed(1)) + ',' + (h - 2 - (v / max) * (h - 6)).toFixed(1)).join(' ');
  const ns = 'http://www.w3.org/2000/svg';
  const line = document.createElementNS(ns, 'polyline');
  line.setAttribute('points', pts); line.setAttribute('fill', 'none'); line.setAttribute('stroke', '#2456c7'); line.setAttribute('stroke-width', '1.5');
  svg.replaceChildren(line);
}
function render(d) {
  el('stale').style.display = 'none';
  el('identity').textContent = d.identity;
  const s = d.store;
  const role = el('role');
  if (s === null) {
    role.textContent = 'store not in this process'; role.className = 'badge';
  } else {
    const hasLeader = s.leader !== 0;
    role.textContent = s.role === 'leader' ? 'leader' : hasLeader ? 'follower' : 'no leader';
    role.className = 'badge ' + (s.role === 'leader' ? 'leader' : hasLeader ? 'follower' : 'none');
    el('leader').textContent = hasLeader ? 'member ' + s.leader : 'none';
    el('leader').className = hasLeader ? '' : 'bad';
    el('term').textContent = s.term; el('commit').textContent = s.commit; el('applied').textContent = s.applied; el('revision').textContent = s.revision;
    const followers = new Map(s.followers.map((f) => [f.id, f]));
    fill(el('members'), s.members.map((m) => {
      const f = followers.get(m.id);
      const isSelf = m.id === s.memberId;
      const roleText = m.id === s.leader ? 'leader' : m.isLearner ? 'learner' : 'follower';
      const silent = f !== undefined && f.unansweredMs > 1000;
      return row([
        text('td', m.id + (isSelf ? ' (this)' : '')),
        text('td', m.name || '(unstarted)'),
        text('td', roleText, m.id === s.leader ? 'ok' : ''),
        text('td', f === undefined ? (isSelf || s.role !== 'leader' ? '–' : '?') : f.match === 0 && f.state === 'probe' ? 'unknown' : String(f.lagEntries), 'num' + (f !== undefined && f.lagEntries > 100 ? ' warn' : '')),
        text('td', f === undefined ? '–' : silent ? 'no answer for ' + fmt(f.unansweredMs / 1000, 1) + ' s' : fmt(f.lastRoundTripMs, 2) + ' ms', 'num' + (silent ? ' bad' : '')),
        text('td', f === undefined ? '' : f.state),
      ]);
    }));
    el('members-note').textContent = s.role === 'leader' ? 'Lag and round trip as this replica (the leader) sees its followers.' : 'Lag and round trips are known to the leader: open its page.';
  }
  fill(el('requests'), d.requests.length === 0 ? [row([text('td', 'no requests in the last 10 s')])] : d.requests.map((r) => row([
    text('td', r.verb), text('td', fmt(r.perSecond, 1), 'num'), text('td', fmt(r.meanMs, 1), 'num'), text('td', fmt(r.maxMs, 1), 'num' + (r.maxMs > 1000 ? ' warn' : '')),
  ])));
  el('watchers').textContent = d.watchers; el('backlog').textContent = d.fanOutBacklog;
  const h = d.history;
  spark(el('chart-requests'), h.requestsPerSecond); el('now-requests').textContent = fmt(h.requestsPerSecond[h.requestsPerSecond.length - 1]) + '/s';
  spark(el('chart-commits'), h.commitsPerSecond); el('now-commits').textContent = fmt(h.commitsPerSecond[h.commitsPerSecond.length - 1]) + '/s';
  spark(el('chart-watchers'), h.watchers); el('now-watchers').textContent = fmt(d.watchers);
  spark(el('chart-backlog'), h.fanOutBacklog); el('now-backlog').textContent = fmt(d.fanOutBacklog);
  const events = [];
  if (s !== null) {
    if (s.corruption !== null) events.push({ at: d.at, text: 'store diverged from the others: ' + s.corruption, cls: 'bad' });
    for (const f of s.followers) if (f.unansweredMs > 1000) events.push({ at: d.at - f.unansweredMs, text: 'member ' + f.id + ' does not answer heartbeats', cls: 'bad' });
    for (const g of s.peerSilences) events.push({ at: g.atMs, text: 'member ' + g.peer + ' did not answer heartbeats for ' + fmt(g.silentMs / 1000, 1) + ' s', cls: 'warn' });
    for (const c of s.leaderChanges) events.push({ at: c.atMs, text: c.leader === 0 ? 'leader lost (term ' + c.term + ')' : 'member ' + c.leader + ' leads (term ' + c.term + ')', cls: c.leader === 0 ? 'bad' : '' });
  }
  events.sort((a, b) => b.at - a.at);
  fill(el('events'), events.length === 0 ? [text('li', 'nothing yet')] : events.map((e) => { const li = text('li', ago(d.at - e.at) + ': ' + e.text, e.cls); return li; }));
  el('updated').textContent = new Date(d.at).toLocaleTimeString();
}
async function poll() {
  try {
    const r = await fetch('status/data', { credentials: 'same-origin', cache: 'no-store' });
    if (!r.ok) throw new Error('HTTP ' + r.status);
    render(await r.json());
    document.body.dataset.state = 'live';
  } catch (err) {
    el('stale').textContent = 'This replica does not answer (' + err.message + '): the figures below are from ' + el('updated').textContent + '.';
    el('stale').style.display = 'block';
    document.body.dataset.state = 'stale';
  }
  setTimeout(poll, 1000);
}
poll();
`;

function cspHash(text: string): string {
  return `sha256-${createHash('sha256').update(text).digest('base64')}`;
}

const SCRIPT_HASH = cspHash(SCRIPT);
const STYLE_HASH = cspHash(STYLE);

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Carina replica status</title>
<style>${STYLE}</style>
</head>
<body data-state="loading">
<header>
  <h1>Carina <span id="identity">…</span></h1>
  <span id="role" class="badge">…</span>
  <span class="kv">leader <b id="leader">–</b></span>
  <span class="kv">term <b id="term">–</b></span>
  <span class="kv">commit <b id="commit">–</b></span>
  <span class="kv">applied <b id="applied">–</b></span>
  <span class="kv">revision <b id="revision">–</b></span>
  <span class="kv">updated <b id="updated">–</b></span>
</header>
<div id="stale"></div>
<main>
  <section>
    <h2>Members</h2>
    <table><thead><tr><th>id</th><th>name</th><th>role</th><th class="num">lag (entries)</th><th class="num">round trip</th><th>replication</th></tr></thead><tbody id="members"></tbody></table>
    <p class="kv" id="members-note"></p>
  </section>
  <section>
    <h2>Requests, last 10 s</h2>
    <table><thead><tr><th>verb</th><th class="num">per second</th><th class="num">mean ms</th><th class="num">max ms</th></tr></thead><tbody id="requests"></tbody></table>
    <p class="kv">watches open <b id="watchers">–</b> · fan-out backlog <b id="backlog">–</b> events</p>
  </section>
  <section>
    <h2>Last two minutes</h2>
    <div class="charts">
      <div class="chart"><span>requests / s</span><svg id="chart-requests" role="img" aria-label="requests per second"></svg><span class="now" id="now-requests">–</span></div>
      <div class="chart"><span>entries committed / s</span><svg id="chart-commits" role="img" aria-label="entries committed per second"></svg><span class="now" id="now-commits">–</span></div>
      <div class="chart"><span>watches open</span><svg id="chart-watchers" role="img" aria-label="watches open"></svg><span class="now" id="now-watchers">–</span></div>
      <div class="chart"><span>fan-out backlog</span><svg id="chart-backlog" role="img" aria-label="fan-out backlog"></svg><span class="now" id="now-backlog">–</span></div>
    </div>
  </section>
  <section>
    <h2>Leader changes and faults</h2>
    <ul class="events" id="events"><li>loading…</li></ul>
  </section>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
