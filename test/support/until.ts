/**
 * Polls `probe` until it yields a truthy value (a probe that throws counts as not yet), or fails
 * after `timeoutMs` naming what it waited for and, if given, what `describe` says of the state.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 15_000,
  describe: () => string = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) {
      const state = describe();
      throw new Error(`timed out waiting for ${what}${state === '' ? '' : `\n${state}`}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
