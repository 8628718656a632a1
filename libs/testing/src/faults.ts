import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { QUEUE_NAMES, WEBHOOK_QUEUE } from '@dossier/contracts';
import { FAULTS_ENV, type FaultSpec } from './fault-spec';
import { REPO_ROOT } from './repo-root';

/** The compiled preload that injects a process's faults (`npm run build`): loaded by withFaults' environment only. */
export const FAULT_PRELOAD = resolve(REPO_ROOT, 'dist/libs/testing/src/fault-preload.js');

/** Faults a test injects into one gateway or worker process, at the edges they happen at (ADR 0059). */
export interface TestFaults {
  /**
   * Worker: each lookup job held this long `before` it calls its providers (running, not settled), or
   * `after` it settled, before BullMQ is told it completed (a worker dying then leaves a settled job active).
   */
  holdLookups?: { at: 'before' | 'after'; ms: number };
  /** Gateway: each lookup job's queue add held this long before it is sent (reserved, not yet queued). */
  holdEnqueueMs?: number;
  /** Gateway: each lookup job's add reaches Redis, then fails this long after, as a reply lost to a timeout would. */
  loseEnqueueReplyMs?: number;
  /** Gateway: a batch voided after its adds failed, held this long between its releases and its delete (one transaction). */
  holdBatchVoidMs?: number;
  /** The process SIGKILLs itself when it first queues a webhook event (the worker's outbox relay, ADR 0062). */
  killBeforeWebhookEvents?: boolean;
  /** The webhook events this process queues get this many attempts instead of those spanning 24 hours. */
  webhookAttempts?: number;
}

/** The statement releaseUnqueued (libs/persistence/src/credits/credits.ts) deletes a voided batch with. */
const VOID_BATCH = 'DELETE FROM batches WHERE id = $1';

/** Environment to add to an app's (AppProcess.start, Stack.startWorker, …) to start it with these faults. */
export function withFaults(faults: TestFaults): Record<string, string> {
  if (!existsSync(FAULT_PRELOAD)) throw new Error(`${FAULT_PRELOAD} is missing: run npm run build`);
  const lookups = Object.values(QUEUE_NAMES);
  const enqueue = { holdMs: faults.holdEnqueueMs, loseReplyMs: faults.loseEnqueueReplyMs };
  const spec: FaultSpec = {
    ...(enqueue.holdMs !== undefined || enqueue.loseReplyMs !== undefined
      ? { adds: { queues: lookups, ...enqueue } }
      : {}),
    ...(faults.killBeforeWebhookEvents ? { killOnAdd: { queues: [WEBHOOK_QUEUE] } } : {}),
    ...(faults.webhookAttempts !== undefined
      ? { attempts: { queues: [WEBHOOK_QUEUE], attempts: faults.webhookAttempts } }
      : {}),
    ...(faults.holdBatchVoidMs !== undefined
      ? { statements: [{ startsWith: VOID_BATCH, ms: faults.holdBatchVoidMs }] }
      : {}),
    ...(faults.holdLookups ? { lookups: { queues: lookups, ...faults.holdLookups } } : {}),
  };
  return { NODE_OPTIONS: `--require ${JSON.stringify(FAULT_PRELOAD)}`, [FAULTS_ENV]: JSON.stringify(spec) };
}
