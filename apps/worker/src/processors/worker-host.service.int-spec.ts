import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Worker } from 'bullmq';
import { loadWorkerConfig } from '@dossier/config';
import { createRootLogger } from '@dossier/runtime';
import { Api, Stack, sql, waitFor } from '@dossier/testing';
import { WorkerModule } from '../worker.module';
import { WorkerHostService } from './worker-host.service';

const PHONE = { phone: '+14155552671' };
const OTHER_PHONE = { phone: '+14155552672' };

interface Envelope {
  status: string;
  search_id: string;
}

/** The BullMQ worker the host runs for its one queue now (private state: only this test looks). */
function queueWorker(host: WorkerHostService): Worker {
  return (host as unknown as { consumers: { worker: Worker }[] }).consumers[0]!.worker;
}

/**
 * The restart path of ADR 0016: a BullMQ worker that stops fetching while it still looks running and
 * connected (here: its next fetch never returns) is found by the host's own
 * timer — a job waits past WORKER_READY_STALL_MS, none finished — and replaced in the same process.
 * A real gateway process enqueues; the worker module runs in this process so its worker can be stopped.
 */
describe('WorkerHostService: a queue worker that silently stops fetching is restarted (real Redis and Postgres)', () => {
  let stack: Stack;
  let api: Api;
  let app: INestApplicationContext;

  beforeAll(async () => {
    stack = await Stack.start({ label: 'host-restart', noWorker: true });
    api = new Api(stack.baseUrl);
    const config = loadWorkerConfig({
      ...stack.env,
      NODE_ENV: 'test',
      LOOKUP_QUEUES: 'phone',
      WORKER_READY_STALL_MS: '1000',
      WORKER_MAINTENANCE: 'false',
    });
    app = await NestFactory.createApplicationContext(
      WorkerModule.forRoot(config, createRootLogger('worker', 'error', { format: 'json' })),
      {
        logger: false,
      },
    );
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
    await stack?.stop();
  });

  it('replaces the stopped worker by itself, and the waiting job completes', async () => {
    const host = app.get(WorkerHostService);
    const { key } = await api.register();
    const first = await api.post<Envelope>('/v1/verify/phone', PHONE, { key });
    expect([first.status, first.body.status]).toEqual([200, 'success']);

    const stopped = queueWorker(host);
    // Its next fetch never returns (the class of hang BullMQ #4479 describes, on the command
    // connection): the worker stays running and connected, and says nothing.
    (stopped as unknown as { moveToActive: () => Promise<never> }).moveToActive = () => new Promise<never>(() => {});
    expect(stopped.isRunning()).toBe(true);
    expect(await host.health()).toEqual({ connected: true, stalled: [] });

    const waiting = await api.post<Envelope>('/v1/verify/phone', OTHER_PHONE, {
      key,
      headers: { prefer: 'respond-async' },
    });
    expect(waiting.status).toBe(202);
    await waitFor(
      () => sql<{ status: string }>(`SELECT status FROM searches WHERE id = $1`, [waiting.body.search_id]),
      (rows) => rows[0]?.status === 'succeeded',
      { timeoutMs: 20_000, what: 'the waiting lookup to be taken by a restarted worker' },
    );
    const replacement = queueWorker(host);
    expect(replacement).not.toBe(stopped);
    expect(stopped.closing).toBeTruthy();
    expect(replacement.isRunning()).toBe(true);
    expect(await host.health()).toEqual({ connected: true, stalled: [] });
  });
});
