/**
 * A cache of token verification results, in front of the token authenticators (apiserver
 * pkg/authentication/token/cache: kube-apiserver caches its token union's successes for 10 s and
 * does not cache failures; the token webhook caches its own answers for
 * --authentication-token-webhook-cache-ttl).
 *
 * Invariants:
 * - Keys are HMAC-SHA256 of (audiences, token) under a random per-process key: the cache holds
 *   no token, and its keys are worthless outside this process.
 * - Bounded: at most `maxEntries` entries, least recently used evicted first. 4096 by default,
 *   as kube-apiserver's cache (32 stripes of 128): one entry per distinct live token and audience
 *   set, about a kilobyte each, so 4 MiB at most; past that, tokens are verified again, which
 *   costs one signature check (tens of microseconds), not an outage.
 * - A success is kept `successTtlMs` (10 s, as v1.25). A success that carries a `recheck`
 *   (authenticator.ts) is kept `recheckedSuccessTtlMs` (60 s) instead, and its recheck runs on
 *   every hit: a deleted ServiceAccount, Secret or Pod, or an expiry, evicts it at once, so the
 *   longer life never outlives a revocation.
 * - Results that are not successes are kept only when `failureTtlMs` > 0 (0 by default: never),
 *   and `failed` results only when `cacheFailures` is set too (the webhook caches its "not
 *   authenticated" answers, never its errors).
 * - Concurrent lookups of one key while it is being verified share that one verification.
 *
 * A hit costs one HMAC and one Map lookup plus the recheck (a few Map lookups in the watch
 * cache): the same order as checking a client certificate, which is the benchmark's yardstick.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { AuthenticationResult, TokenAuthenticator } from './authenticator';

export interface TokenCacheOptions {
  readonly maxEntries?: number;
  readonly successTtlMs?: number;
  readonly recheckedSuccessTtlMs?: number;
  readonly failureTtlMs?: number;
  /** Keep `failed` results for failureTtlMs too (not-mine results are kept whenever failureTtlMs > 0). */
  readonly cacheFailures?: boolean;
  readonly now?: () => number;
}

export const DEFAULT_TOKEN_CACHE_ENTRIES = 4096;
export const DEFAULT_SUCCESS_TTL_MS = 10_000;
export const DEFAULT_RECHECKED_SUCCESS_TTL_MS = 60_000;

interface Entry {
  readonly result: AuthenticationResult;
  readonly expiresAtMs: number;
}

export interface TokenCacheStats {
  hits: number;
  misses: number;
  evictions: number;
  /** Entries dropped because their recheck said the credential no longer holds. */
  revoked: number;
}

export class CachedTokenAuthenticator implements TokenAuthenticator {
  readonly name: string;
  readonly stats: TokenCacheStats = { hits: 0, misses: 0, evictions: 0, revoked: 0 };
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<AuthenticationResult>>();
  private readonly hmacKey = randomBytes(32);
  private readonly maxEntries: number;
  private readonly successTtlMs: number;
  private readonly recheckedSuccessTtlMs: number;
  private readonly failureTtlMs: number;
  private readonly now: () => number;

  constructor(private readonly inner: TokenAuthenticator, private readonly options: TokenCacheOptions = {}) {
    this.name = inner.name;
    this.maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_TOKEN_CACHE_ENTRIES);
    this.successTtlMs = options.successTtlMs ?? DEFAULT_SUCCESS_TTL_MS;
    this.recheckedSuccessTtlMs = options.recheckedSuccessTtlMs ?? DEFAULT_RECHECKED_SUCCESS_TTL_MS;
    this.failureTtlMs = options.failureTtlMs ?? 0;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Forgets every entry (for a configuration reload or a test). */
  clear(): void {
    this.entries.clear();
  }

  private key(token: string, audiences: readonly string[]): string {
    const hmac = createHmac('sha256', this.hmacKey);
    hmac.update(`${audiences.length}\0`);
    for (const audience of audiences) hmac.update(`${Buffer.byteLength(audience)}\0${audience}\0`);
    hmac.update(token);
    return hmac.digest('base64');
  }

  /** The cached result for `key`, or undefined; drops entries that expired or no longer hold. */
  private lookup(key: string): AuthenticationResult | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.now() >= entry.expiresAtMs) {
      this.entries.delete(key);
      return undefined;
    }
    const result = entry.result;
    if (result.outcome === 'authenticated' && result.recheck !== undefined && !result.recheck()) {
      this.entries.delete(key);
      this.stats.revoked += 1;
      return undefined;
    }
    // Most recently used goes last.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return result;
  }

  private ttlFor(result: AuthenticationResult): number {
    if (result.outcome === 'authenticated') return result.recheck !== undefined ? this.recheckedSuccessTtlMs : this.successTtlMs;
    if (result.outcome === 'failed' && !this.options.cacheFailures) return 0;
    return this.failureTtlMs;
  }

  private store(key: string, result: AuthenticationResult): void {
    const ttl = this.ttlFor(result);
    if (ttl <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { result, expiresAtMs: this.now() + ttl });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
      this.stats.evictions += 1;
    }
  }

  async authenticateToken(token: string, audiences: readonly string[]): Promise<AuthenticationResult> {
    const key = this.key(token, audiences);
    const cached = this.lookup(key);
    if (cached !== undefined) {
      this.stats.hits += 1;
      return cached;
    }
    const pending = this.inFlight.get(key);
    if (pending !== undefined) return pending;
    this.stats.misses += 1;
    const verification = this.inner.authenticateToken(token, audiences).then(
      (result) => {
        this.inFlight.delete(key);
        this.store(key, result);
        return result;
      },
      (error: unknown) => {
        this.inFlight.delete(key);
        throw error;
      },
    );
    this.inFlight.set(key, verification);
    return verification;
  }
}
