/**
 * Where a lookup's job spent its time, read back from the jobs BullMQ keeps after completion
 * (JOB_KEEP_COMPLETED_COUNT): `timestamp` (the gateway's add) → `processedOn` (a worker took it) →
 * `finishedOn` (its result stored). The newest jobs are the measured window's; nothing is timed in
 * the apps themselves.
 */
import { Queue } from 'bullmq';
import { failFastRedisOptions } from '@dossier/runtime';
import { lookupQueueOptions } from '@dossier/contracts';
import type { BenchContext } from './context';
import { percentile } from './drive';

/** How many of the newest completed jobs are read (well under one window's worth at 64 in flight). */
const SAMPLE = 2000;

/** One report line: queue wait and worker time, p50 / p90, of the newest completed jobs of `queueName`. */
export async function jobTimingLine(ctx: BenchContext, queueName: string): Promise<string> {
  const queue = new Queue(queueName, lookupQueueOptions(ctx.prefix, failFastRedisOptions(ctx.config.redisUrl)));
  try {
    const jobs = await queue.getJobs(['completed'], 0, SAMPLE - 1, false);
    const waits: number[] = [];
    const works: number[] = [];
    for (const job of jobs) {
      if (job.processedOn === undefined || job.finishedOn === undefined) continue;
      waits.push(job.processedOn - job.timestamp);
      works.push(job.finishedOn - job.processedOn);
    }
    if (waits.length === 0) return '  jobs: no completed job to read back';
    const fmt = (xs: number[]) => {
      const sorted = Float64Array.from(xs).sort();
      return `p50 ${percentile(sorted, 50).toFixed(0)} ms  p90 ${percentile(sorted, 90).toFixed(0)} ms`;
    };
    return `  jobs (newest ${waits.length} completed): queued (add → a worker takes it) ${fmt(waits)}; in the worker (taken → result stored) ${fmt(works)}`;
  } finally {
    await queue.close();
  }
}
