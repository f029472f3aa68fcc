/**
 * Starts, stops, kills and talks to raft-member processes on loopback. Used by the integration
 * tests and bench/raft. Every process it starts is killed by close().
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MemberConfig } from './raft-member';
import { until } from './until';

export interface Reply {
  ok: boolean;
  code?: string;
  error?: string;
  [key: string]: unknown;
}

export class Member {
  private child: ChildProcess | null = null;
  private nextRid = 1;
  private readonly pending = new Map<number, (reply: Reply) => void>();
  stderr = '';

  constructor(readonly config: MemberConfig) {}

  get running(): boolean {
    return this.child !== null;
  }

  async start(): Promise<void> {
    const script = join(__dirname, 'raft-member.js');
    const child = fork(script, [JSON.stringify(this.config)], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    this.child = child;
    child.stderr?.on('data', (d: Buffer) => {
      this.stderr += d.toString();
      if (this.stderr.length > 100_000) this.stderr = this.stderr.slice(-50_000);
    });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (message: { event?: string; rid?: number } & Reply) => {
        if (message.event === 'started') {
          resolve();
          return;
        }
        if (message.rid !== undefined) {
          const done = this.pending.get(message.rid);
          this.pending.delete(message.rid);
          done?.(message);
        }
      };
      child.on('message', onMessage);
      child.once('exit', (code, signal) => {
        if (this.child === child) this.child = null;
        for (const [, done] of this.pending) done({ ok: false, code: 'EXITED', error: `member ${this.config.id} exited (${code ?? signal})` });
        this.pending.clear();
        reject(new Error(`member ${this.config.id} exited during start (${code ?? signal}): ${this.stderr}`));
      });
    });
  }

  request(message: Record<string, unknown>, timeoutMs = 30_000): Promise<Reply> {
    const child = this.child;
    if (!child) return Promise.resolve({ ok: false, code: 'EXITED', error: `member ${this.config.id} is not running` });
    const rid = this.nextRid++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(rid);
        resolve({ ok: false, code: 'CLIENT_TIMEOUT', error: `no reply from member ${this.config.id} in ${timeoutMs} ms` });
      }, timeoutMs);
      this.pending.set(rid, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      const failed = (err: Error) => {
        if (!this.pending.delete(rid)) return;
        clearTimeout(timer);
        resolve({ ok: false, code: 'EXITED', error: err.message });
      };
      try {
        // The callback receives a channel closed by a kill -9 that raced with this send; without
        // it the error would be emitted on the child process, uncaught.
        child.send({ ...message, rid }, (err) => {
          if (err) failed(err);
        });
      } catch (err) {
        failed(err as Error);
      }
    });
  }

  /** kill -9: nothing in memory survives, only what was synced to disk. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    this.child = null;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
    this.child = null;
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') return reject(new Error('no port'));
      server.close(() => resolve(address.port));
    });
  });
}

/** `count` free loopback ports, all different (freePort may hand out a port twice once closed). */
export async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  for (let tries = 0; ports.size < count; tries++) {
    if (tries > count * 20) throw new Error('could not find free ports');
    ports.add(await freePort());
  }
  return [...ports];
}

export class RaftCluster {
  readonly members: Member[] = [];
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  static async start(size: number, overrides: Partial<MemberConfig> = {}): Promise<RaftCluster> {
    const cluster = new RaftCluster(mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-raft-')));
    const peers: Record<string, string> = {};
    const ports = await distinctFreePorts(size);
    for (let id = 1; id <= size; id++) peers[String(id)] = `127.0.0.1:${ports[id - 1]}`;
    for (let id = 1; id <= size; id++) {
      cluster.members.push(new Member({
        id,
        dataDir: join(cluster.dir, `member-${id}`),
        raftAddress: peers[String(id)],
        peers,
        ...overrides,
      }));
    }
    await Promise.all(cluster.members.map((m) => m.start()));
    return cluster;
  }

  member(id: number): Member {
    return this.members[id - 1];
  }

  /** The leader that every running member agrees on, waiting up to timeoutMs. */
  async waitForLeader(timeoutMs = 15_000, exclude: number[] = []): Promise<number> {
    return until(`an agreed leader${exclude.length > 0 ? ` other than ${exclude.join(', ')}` : ''}`, async () => {
      const statuses = await Promise.all(this.members.filter((m) => m.running).map((m) => m.request({ cmd: 'status' }, 2_000)));
      const leads = new Set(statuses.map((s) => (s.ok ? (s.status as { lead: number }).lead : -1)));
      const [lead] = leads;
      return leads.size === 1 && lead > 0 && !exclude.includes(lead) ? lead : null;
    }, timeoutMs);
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((m) => m.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
