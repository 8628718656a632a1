/**
 * CPU and memory of processes and of the machine, sampled from /proc (Linux).
 */
import { readFileSync } from 'node:fs';

const CLK_TCK = 100; // Linux USER_HZ

/** CPU seconds, user and system (kernel: syscalls, and on loopback the peer's TCP receive path). */
export interface Cpu {
  u: number;
  s: number;
}

export const NO_CPU: Cpu = { u: 0, s: 0 };
export const cpuSum = (xs: Cpu[]): Cpu => xs.reduce((a, b) => ({ u: a.u + b.u, s: a.s + b.s }), NO_CPU);
export const cpuDiff = (b: Cpu, a: Cpu): Cpu => ({ u: b.u - a.u, s: b.s - a.s });
export const cpuTotal = (c: Cpu): number => c.u + c.s;

/** utime and stime of a process, or null when it is gone or unreadable. */
export function procCpu(pid: number): Cpu | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { u: Number(fields[11]) / CLK_TCK, s: Number(fields[12]) / CLK_TCK };
  } catch {
    return null;
  }
}

/**
 * Resident memory of a process in MiB: VmRSS, and its anonymous and file-backed parts (the latter
 * mostly the `node` binary's own pages, shared by every process that runs it).
 */
export interface Rss {
  total: number;
  anon: number;
  file: number;
}

/** A process's `Rss`, or null when it is gone or unreadable. */
export function procRss(pid: number): Rss | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
    const rss = { total: kib('VmRSS'), anon: kib('RssAnon'), file: kib('RssFile') };
    return Number.isNaN(rss.total) ? null : rss;
  } catch {
    return null;
  }
}

/** A process's peak resident memory so far (`VmHWM`) in MiB, or null when it is gone or unreadable. */
export function procPeakRss(pid: number): number | null {
  try {
    const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? null : Number(kib) / 1024;
  } catch {
    return null;
  }
}

/** `150.3 MiB (anon 92.1, file 58.2)`, or `?`. */
export function formatRss(rss: Rss | null): string {
  return rss === null ? '?' : `${rss.total.toFixed(1)} MiB (anon ${rss.anon.toFixed(1)}, file ${rss.file.toFixed(1)})`;
}

/** Whole-machine busy and total CPU seconds from /proc/stat. */
export function machineCpuS(): { busy: number; total: number } {
  const [cpu] = readFileSync('/proc/stat', 'utf8').split('\n');
  const v = cpu!.trim().split(/\s+/).slice(1).map(Number);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  return { busy: (total - idle) / CLK_TCK, total: total / CLK_TCK };
}

/** This process's own CPU so far. */
export function selfCpu(): Cpu {
  const cu = process.cpuUsage();
  return { u: cu.user / 1e6, s: cu.system / 1e6 };
}
