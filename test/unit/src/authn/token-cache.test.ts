import { expect } from 'chai';
import type { AuthenticationResult, TokenAuthenticator } from '../../../../src/authn/authenticator';
import { CachedTokenAuthenticator } from '../../../../src/authn/token-cache';

/** A token authenticator that counts its calls and answers from a table. */
class Scripted implements TokenAuthenticator {
  readonly name = 'scripted';
  calls = 0;
  valid = true;
  private release: (() => void) | undefined;
  gate: Promise<void> | undefined;

  constructor(private readonly answers: Record<string, AuthenticationResult>) {}

  hold(): void {
    this.gate = new Promise((resolve) => {
      this.release = resolve;
    });
  }

  open(): void {
    this.release?.();
    this.gate = undefined;
  }

  async authenticateToken(token: string): Promise<AuthenticationResult> {
    this.calls += 1;
    if (this.gate !== undefined) await this.gate;
    return this.answers[token] ?? { outcome: 'not-mine' };
  }
}

const user = { name: 'jane', uid: '', groups: [], extra: {} };

describe('authn: token cache', () => {
  let now: number;
  let inner: Scripted;

  beforeEach(() => {
    now = 1_000_000;
    inner = new Scripted({
      plain: { outcome: 'authenticated', user },
      rechecked: { outcome: 'authenticated', user, recheck: () => inner.valid },
      bad: { outcome: 'failed', reason: 'nope' },
    });
  });

  function cache(options: ConstructorParameters<typeof CachedTokenAuthenticator>[1] = {}): CachedTokenAuthenticator {
    return new CachedTokenAuthenticator(inner, { now: () => now, ...options });
  }

  it('keeps a success 10 s, then verifies again', async () => {
    const cached = cache();
    await cached.authenticateToken('plain', []);
    now += 9_999;
    await cached.authenticateToken('plain', []);
    expect(inner.calls).to.equal(1);
    now += 2;
    await cached.authenticateToken('plain', []);
    expect(inner.calls).to.equal(2);
  });

  it('keys on the audiences too', async () => {
    const cached = cache();
    await cached.authenticateToken('plain', ['a']);
    await cached.authenticateToken('plain', ['b']);
    await cached.authenticateToken('plain', ['a']);
    expect(inner.calls).to.equal(2);
  });

  it('keeps a success with a recheck 60 s, running the recheck on every hit: a revocation evicts at once', async () => {
    const cached = cache();
    await cached.authenticateToken('rechecked', []);
    now += 59_000;
    expect((await cached.authenticateToken('rechecked', [])).outcome).to.equal('authenticated');
    expect(inner.calls).to.equal(1);
    inner.valid = false;
    await cached.authenticateToken('rechecked', []);
    expect(inner.calls).to.equal(2);
    expect(cached.stats.revoked).to.equal(1);
  });

  it('never caches failures or not-mine answers by default', async () => {
    const cached = cache();
    await cached.authenticateToken('bad', []);
    await cached.authenticateToken('bad', []);
    await cached.authenticateToken('unknown', []);
    await cached.authenticateToken('unknown', []);
    expect(inner.calls).to.equal(4);
    expect(cached.size).to.equal(0);
  });

  it('caches not-mine answers, but not failures, when asked to (the webhook\'s cache)', async () => {
    const cached = cache({ failureTtlMs: 120_000 });
    await cached.authenticateToken('unknown', []);
    await cached.authenticateToken('unknown', []);
    await cached.authenticateToken('bad', []);
    await cached.authenticateToken('bad', []);
    expect(inner.calls).to.equal(3);
  });

  it('evicts the least recently used entry beyond its bound', async () => {
    const answers: Record<string, AuthenticationResult> = {};
    for (const token of ['t1', 't2', 't3']) answers[token] = { outcome: 'authenticated', user };
    inner = new Scripted(answers);
    const cached = cache({ maxEntries: 2 });
    await cached.authenticateToken('t1', []);
    await cached.authenticateToken('t2', []);
    await cached.authenticateToken('t1', []);
    await cached.authenticateToken('t3', []);
    expect(cached.size).to.equal(2);
    expect(cached.stats.evictions).to.equal(1);
    const before = inner.calls;
    await cached.authenticateToken('t1', []);
    expect(inner.calls).to.equal(before);
    await cached.authenticateToken('t2', []);
    expect(inner.calls).to.equal(before + 1);
  });

  it('shares one verification between concurrent requests for the same token', async () => {
    const cached = cache();
    inner.hold();
    const pending = [cached.authenticateToken('plain', []), cached.authenticateToken('plain', []), cached.authenticateToken('plain', [])];
    inner.open();
    const results = await Promise.all(pending);
    expect(results.every((result) => result.outcome === 'authenticated')).to.equal(true);
    expect(inner.calls).to.equal(1);
  });
});
