/**
 * Assertions stay on in production: a broken invariant crashes the node, which then restarts
 * from its durable state rather than replicating a corrupted one.
 */

export class AssertionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AssertionError';
  }
}

export function assert(condition: unknown, message: string | (() => string)): asserts condition {
  if (!condition) {
    throw new AssertionError(typeof message === 'function' ? message() : message);
  }
}

export function assertSafeInteger(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new AssertionError(`${what} is not a non-negative safe integer: ${value}`);
  }
}
