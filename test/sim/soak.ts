/**
 * The long soak: `make soak` runs SEEDS (default 50,000) simulation seeds starting at FIRST_SEED
 * (default 1), split over one worker process per core, and prints every failing seed with its
 * replay command, the total and the wall-clock time. Exit status 1 if any seed failed.
 */
import { fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { runSimulation, SimulationViolation } from '../../raft/testing';

interface WorkerResult {
  from: number;
  to: number;
  failures: string[];
  steps: number;
}

function runRange(from: number, to: number): WorkerResult {
  const failures: string[] = [];
  let steps = 0;
  for (let seed = from; seed < to; seed++) {
    try {
      steps += runSimulation({ seed }).steps;
    } catch (err) {
      const message = err instanceof SimulationViolation ? err.message : `seed ${seed}: ${String(err)}`;
      failures.push(message);
    }
  }
  return { from, to, failures, steps };
}

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, not ${JSON.stringify(raw)}`);
  return value;
}

async function main(): Promise<void> {
  if (process.argv[2] === '--worker') {
    const result = runRange(Number(process.argv[3]), Number(process.argv[4]));
    process.send!(result);
    return;
  }
  const seeds = positiveInteger('SEEDS', 50_000);
  const first = positiveInteger('FIRST_SEED', 1);
  const workers = Math.max(1, Math.min(availableParallelism(), seeds));
  const started = Date.now();
  console.log(`soak: ${seeds} seeds from ${first}, ${workers} workers`);
  const per = Math.ceil(seeds / workers);
  const results = await Promise.all(
    Array.from({ length: workers }, (_, w) => {
      const from = first + w * per;
      const to = Math.min(first + seeds, from + per);
      return new Promise<WorkerResult>((resolve, reject) => {
        const child = fork(__filename, ['--worker', String(from), String(to)]);
        child.once('message', (m) => resolve(m as WorkerResult));
        child.once('exit', (code) => {
          if (code !== 0) reject(new Error(`worker for seeds [${from}, ${to}) exited with ${code}`));
        });
      });
    }),
  );
  const failures = results.flatMap((r) => r.failures);
  const steps = results.reduce((sum, r) => sum + r.steps, 0);
  for (const f of failures) console.log(`FAIL ${f}\n  replay: SEED=${f.split(' ')[1]} make sim`);
  const seconds = (Date.now() - started) / 1000;
  console.log(`soak: ${seeds} seeds, ${steps} steps, ${failures.length} failed, ${seconds.toFixed(0)} s`);
  process.exitCode = failures.length === 0 ? 0 : 1;
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
