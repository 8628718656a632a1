import { jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { loadGatewayConfig } from '@dossier/config';
import { RedisConnections } from '@dossier/runtime';
import { DomainError, LOOKUP_KINDS } from '@dossier/domain';
import type { LookupJob, LookupJobResult, LookupQueues } from '@dossier/contracts';
import { SearchesRepository, type NewSearch, type SearchView, type Settlement } from '@dossier/persistence';
import { GATEWAY_CONFIG, LOOKUP_QUEUES, REDIS_CONNECTIONS, STARTING } from '../infra/tokens';
import { parsePrefer } from '../http/prefer';
import { SubmissionService } from './submission.service';
import { LookupsService, type LookupCall, type LookupRequest } from './lookups.service';
import { UsernameSitesService } from './username-sites.service';
import { QueuePressureService } from './queue-pressure.service';
import { ResultWaiterService } from './result-waiter.service';

/** Postgres's side of the searches, in memory: the edge LookupsService talks to. */
class FakeSearches {
  balance = 10;
  readonly rows = new Map<string, SearchView & { idempotency_key: string | null }>();
  reads = 0;
  down = false;
  settleDown = false;

  async reserve(s: NewSearch) {
    if (s.idempotencyKey && [...this.rows.values()].some((r) => r.idempotency_key === s.idempotencyKey)) {
      return { kind: 'idempotency_race' as const };
    }
    if (this.balance < s.cost) return { kind: 'insufficient' as const };
    this.balance -= s.cost;
    this.rows.set(s.id, {
      id: s.id,
      account_id: s.accountId,
      kind: s.kind,
      status: 'pending',
      cost: s.cost,
      charged: null,
      results: null,
      result_total: null,
      progress: null,
      sources: null,
      error: null,
      request_hash: s.requestHash,
      created_at: new Date(),
      completed_at: null,
      balance: this.balance,
      idempotency_key: s.idempotencyKey,
    });
    return { kind: 'reserved' as const, balance: this.balance };
  }

  async settle(id: string, outcome: Settlement) {
    if (this.settleDown)
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const row = this.rows.get(id);
    if (row?.status !== 'pending') return { settled: false, charged: false, balance: null, notify: false };
    const charged = outcome.status === 'succeeded' && outcome.charge;
    if (!charged) this.balance += row.cost;
    Object.assign(row, {
      status: outcome.status,
      charged,
      results: outcome.status === 'succeeded' ? outcome.results : null,
      sources: outcome.sources,
      error: outcome.status === 'failed' ? outcome.error : null,
    });
    return { settled: true, charged, balance: this.balance, notify: false };
  }

  async releaseUnqueued(ids: readonly string[], error: { code: string; message: string }, whole: boolean) {
    const released = [];
    for (const id of ids) released.push((await this.settle(id, { status: 'failed', error, sources: [] })).settled);
    return { voided: whole && released.every(Boolean) };
  }

  async findManyForAccount(ids: readonly string[], accountId: string) {
    const rows = [];
    for (const id of ids) {
      const row = await this.findForAccount(id, accountId);
      if (row) rows.push(row);
    }
    return rows;
  }

  async findForAccount(id: string, accountId: string) {
    this.reads += 1;
    if (this.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const row = this.rows.get(id);
    return row && row.account_id === accountId ? { ...row, balance: this.balance } : null;
  }

  async findByIdempotencyKey(_accountId: string, key: string) {
    const row = [...this.rows.values()].find((r) => r.idempotency_key === key);
    return row ? { ...row, balance: this.balance } : null;
  }

  async forgetIdempotencyKey(id: string) {
    this.rows.get(id)!.idempotency_key = null;
  }

  async balanceOf() {
    return this.balance;
  }

  async findSettled(ids: string[]) {
    return ids.filter((id) => this.rows.get(id)?.status !== 'pending');
  }
}

/** What the worker does with a job, played by the test: settle in "Postgres", then publish the completion. */
type Worker = (job: LookupJob) => void;

describe('LookupsService', () => {
  let service: LookupsService;
  let waiter: ResultWaiterService;
  let searches: FakeSearches;
  let added: LookupJob[];
  let work: Worker;
  let queueDown: boolean;
  /** The add reaches Redis (the job is queued) but its reply is lost: it fails a little later. */
  let loseReply: boolean;
  /** Whether a worker takes a queued job at once (it then runs `work`) or none runs (the job waits). */
  let workerRuns: boolean;
  /** The queued jobs, by id (the search id), as BullMQ holds them. */
  let jobs: Map<string, 'waiting' | 'active'>;

  const auth = { keyId: 'key_test', accountId: 'acct_test', mode: 'live' as const };
  const phone: LookupRequest<'phone'> = { kind: 'phone', input: { phone: '+14155552671' }, purpose: null };
  const call = (over: Partial<LookupCall> = {}): LookupCall => ({
    auth,
    requestId: 'req_test',
    idempotencyKey: null,
    prefer: parsePrefer('wait=5'),
    route: '/v1/verify/phone',
    body: { phone: '+14155552671' },
    ...over,
  });

  /** The worker's completion, as a gateway sees it (the outcome inline when it is small). */
  const complete = (job: LookupJob, results: unknown[], inline: boolean) => {
    void searches
      .settle(job.search_id, { status: 'succeeded', results, sources: [], charge: results.length > 0 })
      .then((settled) => {
        const event: LookupJobResult = {
          v: 1,
          search_id: job.search_id,
          status: 'succeeded',
          ...(inline ? { outcome: { charged: settled.charged, balance: settled.balance!, results, sources: [] } } : {}),
        };
        waiter.replied(JSON.stringify(event));
      });
  };

  beforeEach(async () => {
    searches = new FakeSearches();
    added = [];
    queueDown = false;
    loseReply = false;
    workerRuns = true;
    jobs = new Map();
    work = (job) => complete(job, [{ e164: '+14155552671' }], true);
    const down = () => new Error("Stream isn't writeable and enableOfflineQueue options is false");
    const queue = {
      add: jest.fn(async (_name: string, job: LookupJob) => {
        if (queueDown) throw down();
        added.push(job);
        jobs.set(job.search_id, 'waiting');
        setImmediate(() => {
          if (!workerRuns || jobs.get(job.search_id) !== 'waiting') return;
          jobs.set(job.search_id, 'active');
          work(job);
        });
        if (loseReply) {
          await new Promise((r) => setTimeout(r, 20));
          throw new Error('Command timed out');
        }
      }),
      // BullMQ's: 0 for a job a worker holds (locked), else 1 (removed, or there was none).
      remove: jest.fn(async (id: string) => {
        if (queueDown) throw down();
        if (jobs.get(id) === 'active') return 0;
        jobs.delete(id);
        return 1;
      }),
    };
    const queues = Object.fromEntries(LOOKUP_KINDS.map((k) => [k, queue])) as unknown as LookupQueues;
    ({ service, waiter } = await compile({ SYNC_WAIT_DEFAULT_S: '5' }, queues));
  });

  async function compile(env: NodeJS.ProcessEnv, queues: LookupQueues) {
    const moduleRef = await Test.createTestingModule({
      providers: [
        LookupsService,
        SubmissionService,
        ResultWaiterService,
        QueuePressureService,
        { provide: GATEWAY_CONFIG, useValue: loadGatewayConfig(env) },
        // Not initialised: the waiter subscribes to no reply channel, so these connections are never made.
        { provide: REDIS_CONNECTIONS, useValue: new RedisConnections(loadGatewayConfig(env).redis, 'turn') },
        { provide: STARTING, useValue: new AbortController().signal },
        { provide: LOOKUP_QUEUES, useValue: queues },
        { provide: SearchesRepository, useValue: searches },
        // No worker has reported its username sites: every search's names go through.
        { provide: UsernameSitesService, useValue: { check: () => {} } },
      ],
    }).compile();
    return { service: moduleRef.get(LookupsService), waiter: moduleRef.get(ResultWaiterService) };
  }

  it('answers from the completion event without reading the search back', async () => {
    const outcome = await service.submit(phone, call());
    expect(outcome).toEqual({
      status: 'succeeded',
      searchId: added[0]!.search_id,
      results: [{ e164: '+14155552671' }],
      total: null, // a phone lookup counts nothing
      sources: [],
      spent: 1,
      balance: 9,
      replayed: false,
    });
    expect(searches.reads).toBe(0);
    expect(added[0]).toMatchObject({
      v: 4,
      mode: 'live',
      // the reply comes back on this gateway's own channel
      reply_to: waiter.replyTo,
      kind: 'phone',
      account_id: auth.accountId,
      input: phone.input,
    });
    // The caller waits 5 s: providers are told to answer 500 ms before, leaving the worker time to settle.
    const job = added[0]!;
    expect(Date.parse(job.deadline_at!) - Date.parse(job.submitted_at)).toBe(4500);
  });

  it('reads the search from Postgres when the event carries no outcome (too large to inline)', async () => {
    work = (job) => complete(job, [{ e164: '+14155552671' }], false);
    const outcome = await service.submit(phone, call());
    expect(outcome).toMatchObject({ status: 'succeeded', spent: 1, balance: 9, results: [{ e164: '+14155552671' }] });
    expect(searches.reads).toBe(1);
  });

  it('charges nothing when the lookup finds nothing', async () => {
    work = (job) => complete(job, [], true);
    await expect(service.submit(phone, call())).resolves.toMatchObject({ status: 'succeeded', spent: 0, balance: 10 });
  });

  it('answers pending, with the credits held, when the wait runs out', async () => {
    work = () => undefined; // the worker is busy
    const outcome = await service.submit(phone, call({ prefer: parsePrefer('wait=0') }));
    expect(outcome).toEqual({
      status: 'pending',
      searchId: added[0]!.search_id,
      reserved: 1,
      balance: 9,
      replayed: false,
      progress: null,
    });
  });

  it('answers pending at once for Prefer: respond-async, and still queues the lookup', async () => {
    work = () => undefined;
    const outcome = await service.submit(phone, call({ prefer: parsePrefer('respond-async') }));
    expect(outcome).toMatchObject({ status: 'pending', reserved: 1, balance: 9 });
    expect(added).toHaveLength(1);
    expect(added[0]!.deadline_at).toBeNull();
    expect(searches.reads).toBe(0);
  });

  it('replays a finished search for the same Idempotency-Key and body, reserving and queueing nothing', async () => {
    const first = await service.submit(phone, call({ idempotencyKey: 'k1' }));
    const again = await service.submit(phone, call({ idempotencyKey: 'k1' }));
    expect(again).toEqual({ ...first, replayed: true, balance: 9 });
    expect(added).toHaveLength(1);
    expect(searches.balance).toBe(9);
  });

  it('waits for a pending search when its Idempotency-Key is replayed', async () => {
    let release: () => void = () => undefined;
    work = (job) => (release = () => complete(job, [{ e164: '+14155552671' }], true));
    const first = await service.submit(phone, call({ idempotencyKey: 'k2', prefer: parsePrefer('respond-async') }));
    const replay = service.submit(phone, call({ idempotencyKey: 'k2' }));
    setImmediate(() => release());
    await expect(replay).resolves.toMatchObject({
      status: 'succeeded',
      searchId: first.searchId,
      replayed: true,
      spent: 1,
    });
    expect(added).toHaveLength(1);
  });

  it('refuses an Idempotency-Key reused with another body', async () => {
    await service.submit(phone, call({ idempotencyKey: 'k3' }));
    await expect(
      service.submit(phone, call({ idempotencyKey: 'k3', body: { phone: '+14155550000' } })),
    ).rejects.toMatchObject({ code: 'idempotency_conflict' });
  });

  it('turns a failed search into an unavailable error carrying the search and the released balance', async () => {
    work = (job) =>
      void searches
        .settle(job.search_id, {
          status: 'failed',
          error: { code: 'unavailable', message: 'upstreams down' },
          sources: [],
        })
        .then(() => waiter.replied(JSON.stringify({ v: 1, search_id: job.search_id, status: 'failed' })));
    const error = await service.submit(phone, call({ idempotencyKey: 'k4' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({
      code: 'unavailable',
      message: 'upstreams down',
      searchId: added[0]!.search_id,
      credits: { spent: 0, remaining: 10 },
      retryAfterS: 1,
    });
    // The same key runs the lookup again: a failure charged nothing and invited a retry.
    work = (job) => complete(job, [{ e164: '+14155552671' }], true);
    await expect(service.submit(phone, call({ idempotencyKey: 'k4' }))).resolves.toMatchObject({
      status: 'succeeded',
      replayed: false,
    });
    expect(added).toHaveLength(2);
  });

  it('refuses a lookup the balance cannot cover, naming the balance and charging nothing', async () => {
    searches.balance = 0;
    await expect(service.submit(phone, call())).rejects.toMatchObject({
      code: 'insufficient_credits',
      credits: { spent: 0, remaining: 0 },
    });
    expect(added).toHaveLength(0);
  });

  it('releases the reservation at once when the queue is unreachable', async () => {
    queueDown = true;
    await expect(service.submit(phone, call())).rejects.toMatchObject({ code: 'unavailable' });
    expect(searches.balance).toBe(10);
    expect([...searches.rows.values()][0]).toMatchObject({ status: 'failed', charged: false });
  });

  it('answers the lookup, not 503 ("nothing charged"), when the add reached Redis and its job settled first', async () => {
    loseReply = true;
    const outcome = await service.submit(phone, call());
    expect(outcome).toMatchObject({ status: 'succeeded', results: [{ e164: '+14155552671' }] });
    expect(searches.balance).toBe(9);
    expect([...searches.rows.values()]).toEqual([expect.objectContaining({ status: 'succeeded', charged: true })]);
  });

  it('takes back the job of an add whose reply was lost before releasing its search: 503, and the job never runs', async () => {
    loseReply = true;
    workerRuns = false;
    await expect(service.submit(phone, call())).rejects.toMatchObject({ code: 'unavailable' });
    // Left queued, the job would call the upstreams (billed) for a search already released.
    expect(jobs.size).toBe(0);
    expect(searches.balance).toBe(10);
    expect([...searches.rows.values()]).toEqual([expect.objectContaining({ status: 'failed', charged: false })]);
  });

  it('leaves a search whose job a worker runs when its add fails to that job, and answers its outcome, not 503', async () => {
    loseReply = true;
    // The worker took the job at once and is still calling the upstreams when the add "fails".
    work = (job) => setTimeout(() => complete(job, [{ e164: '+14155552671' }], true), 100);
    const outcome = await service.submit(phone, call());
    expect(outcome).toMatchObject({ status: 'succeeded', results: [{ e164: '+14155552671' }] });
    expect(searches.balance).toBe(9);
    expect([...searches.rows.values()]).toEqual([expect.objectContaining({ status: 'succeeded', charged: true })]);
  });

  it('answers pending, not 503, when the add fails and Postgres fails the release too (nobody can tell yet)', async () => {
    queueDown = true;
    searches.settleDown = true;
    searches.down = true;
    await expect(service.submit(phone, call({ prefer: parsePrefer('wait=1') }))).resolves.toMatchObject({
      status: 'pending',
      reserved: 1,
      balance: 9,
    });
    expect([...searches.rows.values()]).toEqual([expect.objectContaining({ status: 'pending' })]);
  });

  it('answers pending, not 503, when Postgres goes away while it waits (the lookup goes on)', async () => {
    work = (job) => {
      searches.down = true;
      waiter.replied(JSON.stringify({ v: 1, search_id: job.search_id, status: 'succeeded' }));
    };
    await expect(service.submit(phone, call())).resolves.toMatchObject({ status: 'pending', reserved: 1, balance: 9 });
  });

  it('requires a permissible purpose for person searches when the operator says so', async () => {
    const { service: strict } = await compile({ REQUIRE_PERMISSIBLE_PURPOSE: 'true' }, {} as LookupQueues);
    await expect(
      strict.submit({ kind: 'person', input: { name: 'Jane Doe' }, purpose: null }, call()),
    ).rejects.toMatchObject({ code: 'validation_error', details: [{ field: 'permissible_purpose' }] });
  });

  describe('get', () => {
    it('is not_found for a malformed id without asking Postgres, and for another account', async () => {
      await expect(service.get('srch_nope', auth)).rejects.toMatchObject({ code: 'not_found' });
      expect(searches.reads).toBe(0);
      const done = await service.submit(phone, call());
      await expect(service.get(done.searchId, { ...auth, accountId: 'acct_other' })).rejects.toMatchObject({
        code: 'not_found',
      });
    });

    it('does not invite a retry of a failed search', async () => {
      work = (job) =>
        void searches
          .settle(job.search_id, { status: 'failed', error: { code: 'unavailable', message: 'x' }, sources: [] })
          .then(() => waiter.replied(JSON.stringify({ v: 1, search_id: job.search_id, status: 'failed' })));
      await service.submit(phone, call()).catch(() => undefined);
      const error = await service.get(added[0]!.search_id, auth).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'unavailable', retryAfterS: undefined, searchId: added[0]!.search_id });
    });
  });
});
