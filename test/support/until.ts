/**
 * Waiting in tests: on a condition, with a deadline, never on the clock alone (issue 30; the tidy
 * test test/unit/tidy/fixed-sleeps.test.ts keeps fixed sleeps out of test/).
 *
 * `until` polls a probe; `untilSettled` waits for a promise (an event: a message, an exit, a
 * callback) but no longer than its deadline.
 */

/** The first polls come soon after the probe (most conditions hold within a few ms), then every 50 ms. */
const FIRST_POLL_MS = 5;
const POLL_MS = 50;

/**
 * Polls `probe` until it yields a truthy value (a probe that throws counts as not yet), or fails
 * after `timeoutMs` naming what it waited for and, if given, what `describe` says of the state.
 */
export async function until<T>(
  what: string,
  probe: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  timeoutMs = 15_000,
  describe: () => string = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let pollMs = FIRST_POLL_MS; ; pollMs = Math.min(POLL_MS, pollMs * 2)) {
    const value = await Promise.resolve().then(probe).catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) {
      const state = describe();
      throw new Error(`timed out waiting for ${what}${state === '' ? '' : `\n${state}`}`);
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/**
 * Resolves with what `event` resolves with, or fails after `timeoutMs` naming what it waited for
 * (and what `describe` says of the state): the bound on a wait for one event.
 */
export function untilSettled<T>(what: string, event: Promise<T>, timeoutMs = 15_000, describe: () => string = () => ''): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const state = describe();
      reject(new Error(`timed out waiting for ${what}${state === '' ? '' : `\n${state}`}`));
    }, timeoutMs);
    event.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
