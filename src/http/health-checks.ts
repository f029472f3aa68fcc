/**
 * /healthz, /livez and /readyz (spec §4.10) as kube-apiserver v1.25 renders them: 200 "ok" or
 * 500 with a failed check; `?verbose` lists `[+]<name> ok` lines; `?exclude=<name>` skips a
 * check; `/livez/<name>` runs one.
 */

export interface HealthCheck {
  name: string;
  /** Resolves when healthy; rejects (or resolves with an error message) when not. */
  check(): Promise<string | undefined>;
}

export interface HealthResult {
  status: number;
  body: string;
}

export async function runHealthChecks(endpoint: 'healthz' | 'livez' | 'readyz', checks: HealthCheck[], query: URLSearchParams, only?: string): Promise<HealthResult | undefined> {
  if (only !== undefined) {
    const check = checks.find((c) => c.name === only);
    if (check === undefined) return undefined;
    const failure = await runOne(check);
    return failure === undefined ? { status: 200, body: 'ok' } : { status: 500, body: `internal server error: ${failure}\n` };
  }
  const excluded = new Set(query.getAll('exclude').flatMap((v) => v.split(',')).filter((v) => v !== ''));
  const verbose = query.has('verbose') && query.get('verbose') !== 'false';
  const lines: string[] = [];
  let failed = false;
  for (const check of checks) {
    if (excluded.has(check.name)) {
      lines.push(`[+]${check.name} excluded: ok`);
      excluded.delete(check.name);
      continue;
    }
    const failure = await runOne(check);
    if (failure === undefined) {
      lines.push(`[+]${check.name} ok`);
    } else {
      failed = true;
      lines.push(`[-]${check.name} failed: reason withheld`);
    }
  }
  if (excluded.size > 0) {
    lines.push(`warn: some health checks cannot be excluded: no matches for ${[...excluded].map((e) => `"${e}"`).join(',')}`);
  }
  if (failed) {
    return { status: 500, body: lines.join('\n') + `\n${endpoint} check failed\n` };
  }
  if (!verbose) return { status: 200, body: 'ok' };
  return { status: 200, body: lines.join('\n') + `\n${endpoint} check passed\n` };
}

async function runOne(check: HealthCheck): Promise<string | undefined> {
  try {
    return await check.check();
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * A start-up hook as /livez sees it: unfinished counts as healthy during `gracePeriodMs` after
 * start (--livez-grace-period), failed after; /readyz uses gracePeriodMs 0.
 */
export function startupHookCheck(name: string, finished: () => boolean, gracePeriodMs: number, startedAtMs: number, now: () => number = Date.now): HealthCheck {
  return {
    name,
    check: async () => (finished() || now() - startedAtMs < gracePeriodMs ? undefined : 'not finished'),
  };
}
