import { QUEUE_NAMES } from '@dossier/contracts';
import { BatchesRepository, SearchesRepository, openDataSource } from '@dossier/persistence';
import { newId } from '@dossier/domain';
import {
  CRASH_PHONE,
  CrashStack,
  ledgerState,
  newSearch,
  type Api,
  type QueueProbe,
  type Stack,
  settled,
  sql,
  testEnv,
  waitFor,
  withFaults,
} from '@dossier/testing';

const PHONE = CRASH_PHONE;
const SIGNUP = 10;
const PHONE_QUEUE = QUEUE_NAMES.phone;
/** Fast stalled-job redelivery: a dead worker's lock expires in 2 s, checked every second. */
const FAST_STALL = { WORKER_LOCK_MS: '2000', WORKER_STALLED_INTERVAL_MS: '1000' };
const ONLY_PHONE = { LOOKUP_QUEUES: 'phone' };

interface Envelope {
  status: string;
  search_id: string;
  results: unknown[];
  credits_remaining: number;
}

describe('worker crashes and the reconciler (gateway + worker processes, real Redis and Postgres)', () => {
  let fixture: CrashStack;
  let stack: Stack;
  let api: Api;
  let queues: QueueProbe;
  let submitAsync: (key: string) => Promise<string>;

  beforeAll(async () => {
    fixture = await CrashStack.start({
      label: 'crash',
      env: { SIGNUP_CREDITS: String(SIGNUP) },
      workerEnv: FAST_STALL,
    });
    ({ stack, api, queues } = fixture);
    submitAsync = (key) => fixture.submitAsync(key);
  });
  // Each test starts the workers it needs; none may leak into the next.
  afterEach(() => fixture.killWorkers());
  afterAll(() => fixture?.close());

  /** A connection as a gateway of this stack has: its outbox rows are this stack's relay's (ADR 0067). */
  const openAsStack = (applicationName: string) =>
    openDataSource({ url: testEnv.databaseUrl, poolSize: 1, applicationName, relay: stack.env['QUEUE_PREFIX']! });

  /** The relay marks a batch completed when it sends its batch.completed, just after the last settle. */
  const waitForBatchCompleted = (batchId: string, timeoutMs: number, what: string) =>
    waitFor(
      () => sql<{ completed_at: Date | null }>(`SELECT completed_at FROM batches WHERE id = $1`, [batchId]),
      (rows) => (rows[0]?.completed_at ?? null) !== null,
      { timeoutMs, what },
    );

  const waitForJob = (id: string, state: string, timeoutMs = 15_000) =>
    waitFor(
      () => queues.job(PHONE_QUEUE, id),
      (j) => j.state === state,
      { timeoutMs, what: `job ${id} to be ${state}` },
    );

  const waitForSearch = (id: string, key: string) =>
    waitFor(
      () => api.get<Envelope>(`/v1/searches/${id}`, { key }),
      (r) => r.status !== 202,
      { timeoutMs: 20_000, what: `search ${id} to finish` },
    );

  it('redelivers a job whose worker was SIGKILLed mid-lookup, and charges it once', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const doomed = await stack.startWorker({
      ...ONLY_PHONE,
      ...withFaults({ holdLookups: { at: 'before', ms: 3000 } }),
    });
    const id = await submitAsync(key);
    await waitForJob(id, 'active');
    expect(await doomed.stop('SIGKILL')).toBeNull();
    expect(await ledgerState(accountId)).toMatchObject({ reserves: 1, captures: 0, releases: 0, pending: 1 });

    await stack.startWorker(ONLY_PHONE);
    const done = await waitForSearch(id, key);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'success', search_id: id, credits_remaining: SIGNUP - 1 });
    expect(done.body.results).toHaveLength(1);
    const job = await waitForJob(id, 'completed');
    expect(job.stalledCounter).toBeGreaterThanOrEqual(1);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });

  it('does not charge twice nor release when the worker dies after settling and the job is redelivered', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const doomed = await stack.startWorker({
      ...ONLY_PHONE,
      ...withFaults({ holdLookups: { at: 'after', ms: 3000 } }),
    });
    const id = await submitAsync(key);
    await waitFor(
      () => ledgerState(accountId),
      (s) => s.captures === 1,
      { timeoutMs: 15_000, what: 'the first worker to settle' },
    );
    expect((await queues.job(PHONE_QUEUE, id)).state).toBe('active');
    expect(await doomed.stop('SIGKILL')).toBeNull();

    await stack.startWorker(ONLY_PHONE);
    const job = await waitForJob(id, 'completed');
    expect(job.stalledCounter).toBeGreaterThanOrEqual(1);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
    const done = await api.get<Envelope>(`/v1/searches/${id}`, { key });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'success', search_id: id, credits_remaining: SIGNUP - 1 });
    expect(done.body.results).toHaveLength(1);
  });

  it('fails and releases, when a worker next takes it, a job that killed its worker more often than maxStalledCount allows', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const id = await submitAsync(key);
    // maxStalledCount is 2: each doomed worker's stalled checker finds the last one's job; the fourth
    // worker finds it stalled a third time and BullMQ fails it when that worker takes it, and the worker
    // releases it then (the reconciler leaves searches with a live job alone).
    for (let kill = 1; kill <= 3; kill++) {
      const doomed = await stack.startWorker({
        ...ONLY_PHONE,
        ...withFaults({ holdLookups: { at: 'before', ms: 60000 } }),
      });
      await waitFor(
        () => queues.job(PHONE_QUEUE, id),
        (j) => j.state === 'active' && j.stalledCounter >= kill - 1,
        // A liveness bound: the lock expires in 2 s and the check runs every second, on a machine that may be busy.
        { timeoutMs: 60_000, what: `job ${id} to be active for doomed worker ${kill}` },
      );
      expect(await doomed.stop('SIGKILL')).toBeNull();
    }
    expect(await ledgerState(accountId)).toMatchObject({ reserves: 1, captures: 0, releases: 0, pending: 1 });

    await stack.startWorker({ ...ONLY_PHONE, ...withFaults({ holdLookups: { at: 'before', ms: 60000 } }) });
    const job = await waitForJob(id, 'failed');
    expect(job.failedReason).toMatch(/stalled more than allowable limit/);
    // A failed search is answered with the error envelope (API.md), saying nothing was charged.
    const done = await waitForSearch(id, key);
    expect(done.status).toBe(503);
    expect(done.body).toMatchObject({ error: { code: 'unavailable' } });
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP, { reserves: 1, captures: 0, releases: 1 }));
  }, 240_000); // four workers started in turn, three killed: minutes on a busy machine

  it('finishes the active job on SIGTERM before exiting cleanly', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const worker = await stack.startWorker({
      ...ONLY_PHONE,
      ...withFaults({ holdLookups: { at: 'before', ms: 1500 } }),
    });
    const id = await submitAsync(key);
    await waitForJob(id, 'active');
    const exitCode = await worker.stop('SIGTERM');
    expect(exitCode).toBe(0);

    // No other worker runs: the job can only be complete because the stopping worker finished it.
    const job = await queues.job(PHONE_QUEUE, id);
    expect(job).toMatchObject({ state: 'completed', stalledCounter: 0 });
    const done = await api.get<Envelope>(`/v1/searches/${id}`, { key });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'success', search_id: id, credits_remaining: SIGNUP - 1 });
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });

  it('exits at WORKER_SHUTDOWN_GRACE_MS with a job still active, which the next worker runs and charges once', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const worker = await stack.startWorker({
      ...ONLY_PHONE,
      ...withFaults({ holdLookups: { at: 'before', ms: 60000 } }),
      WORKER_SHUTDOWN_GRACE_MS: '1000',
    });
    const id = await submitAsync(key);
    await waitForJob(id, 'active');
    // stop() SIGKILLs after 15 s (exit code null): 0 means the worker left by itself, long before the hold ended.
    expect(await worker.stop('SIGTERM', 15_000)).toBe(0);
    expect(await ledgerState(accountId)).toMatchObject({ captures: 0, releases: 0, pending: 1 });

    await stack.startWorker(ONLY_PHONE);
    const done = await waitForSearch(id, key);
    expect(done.status).toBe(200);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });

  it('reconciles a batch whose gateway died after reserving it: its items fail, are released, and the batch completes', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    // A batch as a gateway that died between the commit and the enqueue leaves it: reserved, recorded, no job.
    const db = await openAsStack('crash-e2e-batch');
    const batchId = newId.batch();
    try {
      const [apiKey] = await sql<{ id: string }>(`SELECT id FROM api_keys WHERE account_id = $1`, [accountId]);
      const search = (id: string) => ({
        search: {
          id,
          accountId,
          keyId: apiKey!.id,
          kind: 'phone' as const,
          input: PHONE,
          cost: 1,
          idempotencyKey: null,
          requestHash: null,
          requestId: 'req_crashe2ebatch',
          permissiblePurpose: null,
        },
      });
      const created = await new BatchesRepository(db).create(
        {
          id: batchId,
          accountId,
          keyId: apiKey!.id,
          idempotencyKey: null,
          requestHash: null,
          requestId: 'req_crashe2ebatch',
        },
        [search(newId.search()), { error: { code: 'validation_error', message: 'bad item' } }, search(newId.search())],
      );
      expect(created).toMatchObject({ kind: 'created', balance: SIGNUP - 2 });
    } finally {
      await db.destroy();
    }
    const pending = await api.get<{ status: string; items: { status: string }[] }>(`/v1/batches/${batchId}`, { key });
    expect(pending.status).toBe(202);
    expect(pending.body.items.map((i) => i.status)).toEqual(['pending', 'error', 'pending']);

    await stack.startWorker({ LOOKUP_QUEUES: 'person', RECONCILE_AFTER_S: '5', RECONCILE_INTERVAL_MS: '500' });
    const done = await waitFor(
      () =>
        api.get<{ status: string; items: { status: string; error?: { code: string } }[] }>(`/v1/batches/${batchId}`, {
          key,
        }),
      (r) => r.status === 200,
      { timeoutMs: 20_000, what: 'the reconciler to settle the batch' },
    );
    expect(done.body.items.map((i) => i.error?.code)).toEqual(['unavailable', 'validation_error', 'unavailable']);
    await waitForBatchCompleted(batchId, 10_000, 'the relay to mark the batch completed');
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP, { reserves: 2, captures: 0, releases: 2 }));
  });

  it('completes a batch whose last searches a gateway released (no completion check after them)', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    // As a gateway leaves a batch when queueing failed after another item's job had settled: every search
    // settled, the last ones by the gateway's release, which runs no completion check.
    const db = await openAsStack('crash-e2e-open');
    const batchId = newId.batch();
    try {
      const [apiKey] = await sql<{ id: string }>(`SELECT id FROM api_keys WHERE account_id = $1`, [accountId]);
      const ids = [newId.search(), newId.search()];
      const created = await new BatchesRepository(db).create(
        { id: batchId, accountId, keyId: apiKey!.id, idempotencyKey: null, requestHash: null, requestId: 'req_open' },
        ids.map((id) => ({ search: newSearch(accountId, { id, keyId: apiKey!.id }) })),
      );
      expect(created).toMatchObject({ kind: 'created' });
      const searches = new SearchesRepository(db);
      for (const id of ids) {
        await searches.settle(id, {
          status: 'failed',
          error: { code: 'unavailable', message: 'the lookup could not be queued; nothing was charged' },
          sources: [],
        });
      }
    } finally {
      await db.destroy();
    }
    const open = await api.get<{ status: string }>(`/v1/batches/${batchId}`, { key });
    expect(open.body.status).not.toBe('pending');
    expect(await sql(`SELECT completed_at FROM batches WHERE id = $1`, [batchId])).toEqual([{ completed_at: null }]);

    await stack.startWorker({ LOOKUP_QUEUES: 'person', RECONCILE_AFTER_S: '5', RECONCILE_INTERVAL_MS: '500' });
    await waitForBatchCompleted(batchId, 20_000, 'the reconciler to complete the batch');
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP, { reserves: 2, captures: 0, releases: 2 }));
  });

  it('reconciles a search left pending with no job: fails it and releases the reservation, but leaves live jobs alone', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    // A live search: its job waits on the phone queue, which no worker consumes yet.
    const live = await submitAsync(key);

    // An orphan: reserved through the real repository code, as a gateway that died before enqueueing would leave it.
    const db = await openAsStack('crash-e2e');
    const orphan = newId.search();
    try {
      const [apiKey] = await sql<{ id: string }>(`SELECT id FROM api_keys WHERE account_id = $1`, [accountId]);
      const reserved = await new SearchesRepository(db).reserve({
        id: orphan,
        accountId,
        keyId: apiKey!.id,
        kind: 'phone',
        input: PHONE,
        cost: 1,
        idempotencyKey: null,
        requestHash: null,
        requestId: 'req_crashe2e',
        permissiblePurpose: null,
      });
      expect(reserved).toEqual({ kind: 'reserved', balance: SIGNUP - 2 });
    } finally {
      await db.destroy();
    }
    expect(await ledgerState(accountId)).toEqual({
      balance: SIGNUP - 2,
      ledger_sum: SIGNUP - 2,
      reserves: 2,
      captures: 0,
      releases: 0,
      pending: 2,
    });

    // A reconciling worker that consumes another queue, so the live phone job stays waiting.
    await stack.startWorker({ LOOKUP_QUEUES: 'person', RECONCILE_AFTER_S: '5', RECONCILE_INTERVAL_MS: '500' });
    await waitFor(
      () => sql<{ status: string }>(`SELECT status FROM searches WHERE id = $1`, [orphan]),
      (rows) => rows[0]?.status !== 'pending',
      { timeoutMs: 20_000, what: 'the reconciler to settle the orphan' },
    );
    const [row] = await sql<{ status: string; charged: boolean; error: { code: string } }>(
      `SELECT status, charged, error FROM searches WHERE id = $1`,
      [orphan],
    );
    expect(row).toMatchObject({ status: 'failed', charged: false, error: { code: 'unavailable' } });
    const orphanLedger = await sql<{ phase: string; amount: string }>(
      `SELECT phase, amount FROM credit_ledger WHERE search_id = $1 ORDER BY id`,
      [orphan],
    );
    expect(orphanLedger).toEqual([
      { phase: 'reserve', amount: '-1' },
      { phase: 'release', amount: '1' },
    ]);
    const orphanView = await api.get<{ status: string; error: { code: string } }>(`/v1/searches/${orphan}`, { key });
    expect(orphanView.status).toBe(503);
    expect(orphanView.body).toMatchObject({ status: 'error', error: { code: 'unavailable' } });
    expect(orphanView.text).not.toMatch(/\bat\s|SELECT|\/work\/|\.ts:/);

    // The live search is older than RECONCILE_AFTER_S too, but its job is waiting: not touched.
    expect((await queues.job(PHONE_QUEUE, live)).state).toBe('waiting');
    expect(await ledgerState(accountId)).toEqual({
      balance: SIGNUP - 1,
      ledger_sum: SIGNUP - 1,
      reserves: 2,
      captures: 0,
      releases: 1,
      pending: 1,
    });

    await stack.startWorker(ONLY_PHONE);
    const done = await waitForSearch(live, key);
    expect(done.status).toBe(200);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 2, captures: 1, releases: 1 }));
  });
});
