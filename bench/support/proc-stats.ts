/**
 * What Linux says about a process and the machine (/proc): resident memory and CPU time, read
 * from outside the process, so the benchmarks can charge memory and CPU to Carina's replicas
 * without instrumenting them.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/** The process's resident set (VmRSS), bytes. */
export function residentBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`/proc/${pid}/status has no VmRSS`);
  return Number(match[1]) * 1024;
}

/** User + system CPU the process has used, ms (10 ms resolution). */
export function processCpuMs(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; the fields after it are counted from its ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
}

/**
 * CPU time the process's threads have been on a core, ms with nanosecond resolution: the sum of
 * /proc/<pid>/task/<tid>/schedstat's first field (the scheduler's runtime) over its live
 * threads. Finer than processCpuMs's 10 ms ticks (which made a 600-GET sample of 0.2 ms each
 * ±8%); a thread that exits takes its time with it, which Node's long-lived threads do not.
 */
export function processCpuMsFine(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread exited between the listing and the read.
    }
  }
  return ns / 1e6;
}

/** Busy and total CPU time of the whole machine, ms summed over cores (from /proc/stat). */
export function machineCpuMs(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = ticks[3] + (ticks[4] ?? 0);
  return { busy: ((total - idle) * 1000) / USER_HZ, total: (total * 1000) / USER_HZ };
}
