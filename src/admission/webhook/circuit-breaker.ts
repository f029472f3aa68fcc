/**
 * A circuit breaker per webhook (beyond v1.25): a webhook that keeps failing stops being called
 * for a while, so that a broken or overloaded webhook costs each request nothing instead of a
 * timeout, and failurePolicy decides at once (Ignore: skipped; Fail: refused with a message that
 * names the webhook and the breaker).
 *
 *          failure count >= threshold within windowMs
 *   closed ─────────────────────────────────────────────▶ open
 *     ▲                                                    │ cooldownMs passed
 *     │ the trial call succeeds                            ▼
 *     └──────────────────────────────────────────────── half-open ── the trial fails ──▶ open
 *
 * - A failure is a call that gave no usable answer (refused, timed out, HTTP error, not an
 *   AdmissionReview). A refusal (`allowed: false`) is an answer, hence a success.
 * - Half-open lets exactly one call through; the others are still short-circuited until it ends.
 * - A threshold of 0 disables the breaker.
 *
 * Pure state: time comes from `now`, nothing here does I/O; the caller logs and counts.
 */

export interface CircuitBreakerOptions {
  /** Failures within `windowMs` that open the circuit; 0 disables it. */
  readonly failureThreshold: number;
  readonly windowMs: number;
  /** How long an open circuit short-circuits before one trial call. */
  readonly cooldownMs: number;
}

export const DEFAULT_CIRCUIT_BREAKER: CircuitBreakerOptions = { failureThreshold: 5, windowMs: 30_000, cooldownMs: 30_000 };

export type CircuitState = 'closed' | 'open' | 'half-open';

/** What to do with one call: go ahead (maybe as the half-open trial), or short-circuit. */
export type CircuitDecision =
  | { readonly allowed: true; readonly trial: boolean }
  | { readonly allowed: false; readonly failures: number; readonly retryInMs: number };

interface Circuit {
  state: CircuitState;
  /** Times of the failures within the window, oldest first (closed only). */
  failures: number[];
  openedAt: number;
  /** Failures that opened it, for the message. */
  openedWith: number;
  trialInFlight: boolean;
}

export class CircuitBreaker {
  private readonly circuits = new Map<string, Circuit>();

  constructor(readonly options: CircuitBreakerOptions = DEFAULT_CIRCUIT_BREAKER, private readonly now: () => number = Date.now) {}

  get enabled(): boolean {
    return this.options.failureThreshold > 0;
  }

  state(key: string): CircuitState {
    const circuit = this.circuits.get(key);
    if (circuit === undefined) return 'closed';
    if (circuit.state === 'open' && this.now() - circuit.openedAt >= this.options.cooldownMs) return 'half-open';
    return circuit.state;
  }

  /** The keys whose circuit is not closed, with their state. */
  openCircuits(): Array<{ key: string; state: CircuitState }> {
    const out: Array<{ key: string; state: CircuitState }> = [];
    for (const key of this.circuits.keys()) {
      const state = this.state(key);
      if (state !== 'closed') out.push({ key, state });
    }
    return out;
  }

  /** Asks before a call; an allowed trial must be followed by success() or failure(). */
  admit(key: string): CircuitDecision {
    if (!this.enabled) return { allowed: true, trial: false };
    const circuit = this.circuits.get(key);
    if (circuit === undefined || circuit.state === 'closed') return { allowed: true, trial: false };
    const now = this.now();
    const elapsed = now - circuit.openedAt;
    if (circuit.state === 'open' && elapsed >= this.options.cooldownMs) circuit.state = 'half-open';
    if (circuit.state === 'half-open' && !circuit.trialInFlight) {
      circuit.trialInFlight = true;
      return { allowed: true, trial: true };
    }
    return { allowed: false, failures: circuit.openedWith, retryInMs: Math.max(0, this.options.cooldownMs - elapsed) };
  }

  success(key: string): void {
    if (!this.enabled) return;
    // A success closes the circuit and forgets older failures: they were not consecutive.
    this.circuits.delete(key);
  }

  /** Records a failed call; true when it opened the circuit. */
  failure(key: string): boolean {
    if (!this.enabled) return false;
    const now = this.now();
    let circuit = this.circuits.get(key);
    if (circuit === undefined) {
      circuit = { state: 'closed', failures: [], openedAt: 0, openedWith: 0, trialInFlight: false };
      this.circuits.set(key, circuit);
    }
    if (circuit.state !== 'closed') {
      // The half-open trial failed (or a call that started before the circuit opened): open again.
      const reopened = circuit.state === 'half-open' || circuit.trialInFlight;
      circuit.state = 'open';
      circuit.trialInFlight = false;
      if (reopened) circuit.openedAt = now;
      return reopened;
    }
    circuit.failures.push(now);
    while (circuit.failures.length > 0 && now - circuit.failures[0] > this.options.windowMs) circuit.failures.shift();
    if (circuit.failures.length < this.options.failureThreshold) return false;
    circuit.state = 'open';
    circuit.openedAt = now;
    circuit.openedWith = circuit.failures.length;
    circuit.failures = [];
    return true;
  }
}
