/** Invariant checks for src/: a failed assertion is a bug in Carina, never a client error. */
export class AssertionError extends Error {
  override name = 'AssertionError';
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionError(message);
}
