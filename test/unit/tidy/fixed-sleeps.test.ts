/**
 * Fixed sleeps in test/ (issue 30): a test waits on the event that matters (a watch event, a log
 * line, a metric, a callback), bounded by a deadline (test/support/until.ts), not on the clock.
 * At most MAX_FIXED_SLEEPS remain, where the wait is itself what the test checks (a quiet while)
 * or plays (a client waiting out Retry-After, a workload's steady pace), and each says why on a
 * `// Fixed sleep:` comment line just above it.
 *
 * What counts as a fixed sleep (FIXED_SLEEP_PATTERNS; one count per matching spot):
 * - a promise resolved by a timer: `new Promise((r) => setTimeout(r, ms))`, with any name for the
 *   resolver and `() => r()` for it, also inside braces (`{ const t = setTimeout(resolve, ms); }`);
 * - the promisified timers: `node:timers/promises`, `promisify(setTimeout)`;
 * - a call of a helper named sleep, delay, pause or nap (their definitions count as well);
 * - `Atomics.wait(` and a busy loop on `Date.now()`;
 * - a poll whose probe never holds, `until('...', () => false, ms)`, waited out to its deadline;
 * - a `sleep` program run by a test (`spawn('sleep', ...)`), and `sleep N` in a shell script.
 * Not counted: a timer that ends a wait early (a deadline that rejects, kills or finishes), a
 * stand-in's or a fault's delay (`setTimeout(send, delayMs)`: the behaviour under test), fake
 * clocks, and the poll interval of test/support/until.ts, the one polling helper. test/fixtures/
 * holds data and the scripts that made it, run by hand, not by the suite.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..', '..', '..');
const MAX_FIXED_SLEEPS = 5;
/** The polling helper: its interval between probes is no fixed sleep. */
const POLLING_HELPER = 'test/support/until.ts';
/** This file: its examples of what counts are no sleeps. */
const THIS_TEST = 'test/unit/tidy/fixed-sleeps.test.ts';
const MARKER = /\/\/\s*Fixed sleep:/;

/** Resolver names are captured from `new Promise((name, ...) =>`; `\1` stands for that name. */
const TIMER_RESOLVED_PROMISE = /new Promise\s*(?:<[^>]*>)?\s*\(\s*\(?\s*(\w+)[^)]*\)?\s*=>[^]{0,400}?setTimeout\s*\(\s*(?:\1|\(\)\s*=>\s*\{?\s*\1\s*\(\s*(?:undefined)?\s*\)\s*;?\s*\}?)\s*,/g;

/** `code`: matched against the code alone, strings and comments blanked (see codeOnly). */
const FIXED_SLEEP_PATTERNS: Array<{ name: string; pattern: RegExp; files: RegExp; code: boolean }> = [
  { name: 'a promise resolved by a timer', pattern: TIMER_RESOLVED_PROMISE, files: /\.[jt]s$/, code: true },
  { name: 'promisified timers', pattern: /['"](?:node:)?timers\/promises['"]|promisify\s*\(\s*setTimeout\s*\)/g, files: /\.[jt]s$/, code: false },
  { name: 'a sleep helper', pattern: /(?<![\w.$])(?:sleep|delay|pause|nap)\s*(?:<[^>]*>)?\s*\(/g, files: /\.[jt]s$/, code: true },
  { name: 'a blocking wait', pattern: /Atomics\.wait\s*\(|while\s*\(\s*Date\.now\(\)\s*<[^)]*\)\s*(?:;|\{\s*\})/g, files: /\.[jt]s$/, code: true },
  { name: 'a poll that never holds', pattern: /\buntil\s*\([^,]*,\s*(?:async\s*)?\(\)\s*=>\s*(?:false|null|undefined)\s*[,)]/g, files: /\.[jt]s$/, code: true },
  { name: 'the sleep program', pattern: /(?:spawn|exec|execFile)(?:Sync)?\s*\(\s*['"`]sleep\b/g, files: /\.[jt]s$/, code: false },
  { name: 'sleep in a shell script', pattern: /(?:^|[\s;&|(])sleep\s+[\d.$]/gm, files: /\.sh$/, code: false },
];

/**
 * The text with the contents of quoted strings and comments replaced by spaces (line breaks kept,
 * so that positions do not move): prose that says "delay (" is no call. Template literals stay:
 * they may hold the code of a child process. A simple scanner, not a parser: a regular
 * expression literal holding a quote may blank the rest of its line.
 */
function codeOnly(text: string): string {
  let out = '';
  let i = 0;
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    let end = -1;
    if (c === '/' && next === '/') end = text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i);
    else if (c === '/' && next === '*') end = text.indexOf('*/', i + 2) === -1 ? text.length : text.indexOf('*/', i + 2) + 2;
    else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      end = Math.min(j + 1, text.length);
      out += c + blank(text.slice(i + 1, end - 1)) + (end - 1 > i ? text[end - 1] : '');
      i = end;
      continue;
    }
    if (end === -1) {
      out += c;
      i++;
    } else {
      out += blank(text.slice(i, end));
      i = end;
    }
  }
  return out;
}

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (relative(ROOT, path) !== 'test/fixtures') out.push(...files(path));
    } else if (/\.(?:ts|js|sh)$/.test(name) && !name.endsWith('.d.ts')) {
      out.push(path);
    }
  }
  return out;
}

interface FixedSleep {
  where: string;
  kind: string;
  line: string;
  explained: boolean;
}

/** The fixed sleeps of one source text, one per spot (a timer or a call). */
function fixedSleepsIn(path: string, text: string): FixedSleep[] {
  const lines = text.split('\n');
  const code = codeOnly(text);
  const found = new Map<string, FixedSleep>();
  for (const { name, pattern, files: applies, code: inCode } of FIXED_SLEEP_PATTERNS) {
    if (!applies.test(path)) continue;
    for (const match of (inCode ? code : text).matchAll(pattern)) {
      // The spot is the timer, not where its promise began; or the call, not the space before it.
      const timer = match[0].lastIndexOf('setTimeout');
      const at = (match.index ?? 0) + (name === 'a promise resolved by a timer' && timer >= 0 ? timer : match[0].search(/\S/));
      const lineIndex = text.slice(0, at).split('\n').length - 1;
      const where = `${path}:${lineIndex + 1}`;
      if (found.has(where)) continue;
      const above = lines.slice(Math.max(0, lineIndex - 3), lineIndex + 1);
      found.set(where, { where, kind: name, line: lines[lineIndex].trim(), explained: above.some((l) => MARKER.test(l)) });
    }
  }
  return [...found.values()];
}

function fixedSleepsInTests(): FixedSleep[] {
  return files(join(ROOT, 'test'))
    .map((file) => relative(ROOT, file))
    .filter((path) => path !== POLLING_HELPER && path !== THIS_TEST)
    .flatMap((path) => fixedSleepsIn(path, readFileSync(join(ROOT, path), 'utf8')));
}

describe('tidy: fixed sleeps in test/', () => {
  it(`finds every spelling of a fixed sleep, and not a deadline or a stand-in's delay`, () => {
    const sleeps = (text: string) => fixedSleepsIn('x.test.ts', text).length;
    expect(sleeps('await new Promise((r) => setTimeout(r, 300));')).to.equal(1);
    expect(sleeps('await new Promise<void>((resolve) => setTimeout(() => resolve(), 1_500));')).to.equal(1);
    expect(sleeps('await new Promise((done) => {\n  const timer = setTimeout(done, Math.min(left, 100));\n  wake = () => done();\n});')).to.equal(1);
    expect(sleeps("import { setTimeout as wait } from 'node:timers/promises';")).to.equal(1);
    expect(sleeps('const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));\nawait sleep(25);')).to.equal(2);
    expect(sleeps('await delay(100);')).to.equal(1);
    expect(sleeps("spawnSync('sleep', ['1']);")).to.equal(1);
    expect(sleeps("await until('the session to end', async () => false, 3000).catch(() => undefined);")).to.equal(1);
    expect(fixedSleepsIn('x.sh', 'until ready; do sleep 0.2; done')).to.have.length(1);
    expect(sleeps('const timer = setTimeout(() => child.kill(\'SIGKILL\'), 5000);')).to.equal(0);
    expect(sleeps('return new Promise((resolve, reject) => { const timer = setTimeout(() => reject(new Error(\'late\')), ms); });')).to.equal(0);
    expect(sleeps('if (a.delayMs !== undefined) setTimeout(send, a.delayMs).unref();')).to.equal(0);
    expect(sleeps("args: ['sleep', 'infinity'], delayMs: 20, network.pauseAll()")).to.equal(0);
    expect(sleeps("describe('the shutdown delay (issue 16)', () => undefined); // no sleep(200) here")).to.equal(0);
    expect(sleeps('const deadline = Date.now() + 5000;\nwhile (Date.now() < deadline) {\n  if (await probe()) break;\n}')).to.equal(0);
  });

  it(`keeps at most ${MAX_FIXED_SLEEPS}, each saying why no event can be awaited`, () => {
    const sleeps = fixedSleepsInTests();
    const listed = sleeps.map((s) => `${s.where} (${s.kind}): ${s.line}`).join('\n');
    expect(sleeps.length, `fixed sleeps in test/:\n${listed}`).to.be.at.most(MAX_FIXED_SLEEPS);
    expect(sleeps.filter((s) => !s.explained).map((s) => s.where), 'fixed sleeps without a "// Fixed sleep:" comment just above').to.deep.equal([]);
  });
});
