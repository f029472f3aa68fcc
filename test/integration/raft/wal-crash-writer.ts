/**
 * The child process of wal-crash.test.ts: opens a write-ahead log and writes to it as a Raft node
 * would (appends, suffix replacements, snapshots, compactions, segment rotations) until killed.
 * Before each save it tells the parent what it is about to write ('intent'), and after the save
 * returned, that it is durable ('ack'); the parent checks what survives a kill -9 against that.
 */
import { SeededRandom } from '../../../raft/core/rand';
import type { Entry } from '../../../raft/core/types';
import { WalStorage } from '../../../raft/storage';

export type CrashWriterMessage =
  | { kind: 'ready'; lastIndex: number }
  | { kind: 'intent'; entries: Array<{ index: number; term: number; data: string }>; commit: number; term: number }
  | { kind: 'ack' };

function send(message: CrashWriterMessage): Promise<void> {
  return new Promise((resolve) => process.send!(message, () => resolve()));
}

async function main(): Promise<void> {
  const [dir, seedText] = process.argv.slice(2);
  const random = new SeededRandom(Number(seedText));
  const storage = await WalStorage.open(dir, { segmentBytes: 32 * 1024, bootstrap: { voters: [1], learners: [] } });
  await send({ kind: 'ready', lastIndex: storage.lastIndex() });
  let term = storage.initialState().hardState.term;
  for (;;) {
    const hard = storage.initialState().hardState;
    const last = storage.lastIndex();
    // Now and then a new leader replaces an uncommitted suffix.
    let from = last + 1;
    if (random.nextFloat() < 0.15 && last > hard.commit + 1) {
      term++;
      from = hard.commit + 1 + random.intBelow(last - hard.commit);
    }
    const count = 1 + random.intBelow(12);
    const entries: Entry[] = [];
    for (let i = 0; i < count; i++) {
      const size = random.intBelow(10) === 0 ? 3000 + random.intBelow(9000) : 10 + random.intBelow(400);
      const data = Buffer.alloc(size, `${from + i}:${term};`);
      entries.push({ index: from + i, term, type: 'normal', data });
    }
    const newLast = from + count - 1;
    const commit = Math.max(hard.commit, Math.min(newLast, newLast - random.intBelow(5)), storage.snapshot().metadata.index);
    await send({ kind: 'intent', entries: entries.map((e) => ({ index: e.index, term: e.term, data: Buffer.from(e.data).toString('latin1') })), commit, term });
    await storage.save({ hardState: { term, vote: 1, commit }, entries, snapshot: null }, { sync: true });
    await send({ kind: 'ack' });
    if (random.nextFloat() < 0.05 && commit > storage.snapshot().metadata.index + 20) {
      await storage.createSnapshot(commit, { voters: [1], learners: [] }, Buffer.from(`image@${commit}`));
      await storage.compact(commit - 10);
    }
  }
}

main().catch((err) => {
  process.stderr.write(`wal crash writer: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
