/**
 * What Linux says about a process and the machine (/proc): resident memory and CPU time, read
 * from outside the process, so the benchmarks can charge memory and CPU to Carina's replicas
 * without instrumenting them.
 */
import { readFileSync } from 'node:fs';

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

/** Busy and total CPU time of the whole machine, ms summed over cores (from /proc/stat). */
export function machineCpuMs(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = ticks[3] + (ticks[4] ?? 0);
  return { busy: ((total - idle) * 1000) / USER_HZ, total: (total * 1000) / USER_HZ };
}
