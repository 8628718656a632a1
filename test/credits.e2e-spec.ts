import { newId } from '@dossier/domain';
import { SearchesRepository, openDataSource } from '@dossier/persistence';
import { Api, Stack, ledgerState, settled, runCli, sql, testEnv, waitFor, type ApiResponse } from '@dossier/testing';
import { hashRequest } from '../apps/gateway/src/lookups/request-hash';

const PHONE = { phone: '+14155552671' };
const SIGNUP = 15;

interface Envelope {
  status: string;
  search_id: string;
  results: Record<string, unknown>[];
  credits_remaining: number;
  sources: { provider: string; outcome: string }[];
  error?: { code: string; message: string };
}

const headerOf = (res: ApiResponse<unknown>, name: string) => res.headers.get(name);

describe('credits (gateway + worker processes, real Redis and Postgres)', () => {
  let stack: Stack;
  let api: Api;

  beforeAll(async () => {
    stack = await Stack.start({ label: 'credits', env: { SIGNUP_CREDITS: String(SIGNUP) } });
    api = new Api(stack.baseUrl);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('never lets parallel lookups overdraw the balance: exactly the affordable ones succeed', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => api.post<Envelope>('/v1/verify/phone', PHONE, { key })),
    );

    const ok = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status === 402);
    expect({ ok: ok.length, refused: refused.length }).toEqual({ ok: SIGNUP, refused: 40 - SIGNUP });
    for (const r of ok) {
      expect(r.body).toMatchObject({
        status: 'success',
        results: [expect.objectContaining({ e164: '+14155552671', valid: true })],
      });
      expect(headerOf(r, 'x-credits-spent')).toBe('1');
    }
    for (const r of refused) {
      expect(r.body).toMatchObject({ status: 'error', error: { code: 'insufficient_credits' } });
      expect(headerOf(r, 'x-credits-spent')).toBe('0');
      expect(Number(headerOf(r, 'x-credits-remaining'))).toBeLessThan(SIGNUP);
    }
    expect(new Set(ok.map((r) => r.body.search_id)).size).toBe(SIGNUP);

    expect(await ledgerState(accountId)).toEqual(settled(0, { reserves: SIGNUP, captures: SIGNUP, releases: 0 }));
    const [searches] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM searches WHERE account_id = $1`, [
      accountId,
    ]);
    expect(searches!.n).toBe(SIGNUP);
  });

  it('reports what a charged phone lookup and an uncharged person lookup cost, in the body and the headers', async () => {
    const { key, accountId } = await api.register(SIGNUP);

    const phone = await api.post<Envelope>('/v1/verify/phone', PHONE, { key });
    expect(phone.status).toBe(200);
    expect(phone.body).toMatchObject({ status: 'success', credits_remaining: SIGNUP - 1 });
    expect(phone.body.results).toHaveLength(1);
    expect(phone.body.sources).toEqual([
      expect.objectContaining({ provider: 'libphonenumber', outcome: 'found' }),
      expect.objectContaining({ provider: 'twilio', outcome: 'skipped' }),
    ]);
    expect(headerOf(phone, 'x-credits-spent')).toBe('1');
    expect(headerOf(phone, 'x-credits-remaining')).toBe(String(SIGNUP - 1));
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));

    const person = await api.post<Envelope>('/v1/search/person', { name: 'Jane Q. Nobody' }, { key });
    expect(person.status).toBe(200);
    expect(person.body).toMatchObject({ status: 'success', results: [], credits_remaining: SIGNUP - 1 });
    expect(headerOf(person, 'x-credits-spent')).toBe('0');
    expect(headerOf(person, 'x-credits-remaining')).toBe(String(SIGNUP - 1));
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 2, captures: 1, releases: 1 }));
    const rows = await sql<{ phase: string; amount: string }>(
      `SELECT phase, amount FROM credit_ledger WHERE search_id = $1 ORDER BY id`,
      [person.body.search_id],
    );
    expect(rows).toEqual([
      { phase: 'reserve', amount: '-1' },
      { phase: 'release', amount: '1' },
    ]);

    const account = await api.get<{ credits_remaining: number }>('/v1/account', { key });
    expect(account.body.credits_remaining).toBe(SIGNUP - 1);
  });

  it('charges an Idempotency-Key once, even when it is replayed in parallel', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const idem = { 'idempotency-key': `order-${Date.now()}` };

    const burst = await Promise.all(
      Array.from({ length: 10 }, () => api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: idem })),
    );
    expect(burst.map((r) => r.status)).toEqual(Array(10).fill(200));
    const searchId = burst[0]!.body.search_id;
    expect(searchId).toMatch(/^srch_/);
    for (const r of burst)
      expect(r.body).toMatchObject({ status: 'success', search_id: searchId, credits_remaining: SIGNUP - 1 });
    const [first, ...replays] = [...burst].sort((a) => (headerOf(a, 'idempotent-replayed') === 'true' ? 1 : -1));
    expect(headerOf(first!, 'idempotent-replayed')).toBeNull();
    expect(headerOf(first!, 'x-credits-spent')).toBe('1');
    for (const r of replays) {
      expect(headerOf(r, 'idempotent-replayed')).toBe('true');
      expect(headerOf(r, 'x-credits-spent')).toBe('0');
    }
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));

    const later = await api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: idem });
    expect(later.status).toBe(200);
    expect(later.body).toMatchObject({ status: 'success', search_id: searchId });
    expect(headerOf(later, 'idempotent-replayed')).toBe('true');

    const conflict = await api.post<Envelope>('/v1/verify/phone', { phone: '+14155552672' }, { key, headers: idem });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ status: 'error', error: { code: 'idempotency_conflict' } });
    const otherRoute = await api.post<Envelope>(
      '/v1/search',
      { type: 'phone', query: PHONE.phone },
      { key, headers: idem },
    );
    expect(otherRoute.status).toBe(409);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));

    const other = await api.register(SIGNUP);
    const theirs = await api.post<Envelope>('/v1/verify/phone', PHONE, { key: other.key, headers: idem });
    expect(theirs.status).toBe(200);
    expect(theirs.body.search_id).not.toBe(searchId);
    expect(headerOf(theirs, 'idempotent-replayed')).toBeNull();
    expect(await ledgerState(other.accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });

  it('replays an Idempotency-Key sent in parallel when the balance covers only the one lookup, never a 402', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const spend = await api.post<{ items: { status: string }[] }>(
      '/v1/batch',
      { requests: Array.from({ length: SIGNUP - 1 }, () => ({ kind: 'phone', input: PHONE })) },
      { key },
    );
    expect(spend.body.items.map((i) => i.status)).toEqual(Array(SIGNUP - 1).fill('success'));
    expect(await ledgerState(accountId)).toEqual(
      settled(1, { reserves: SIGNUP - 1, captures: SIGNUP - 1, releases: 0 }),
    );
    const idem = { 'idempotency-key': `last-credit-${Date.now()}` };

    const burst = await Promise.all(
      Array.from({ length: 10 }, () => api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: idem })),
    );
    // One request ran and spent the last credit; every other is its replay (the same search), not "insufficient".
    expect(burst.map((r) => [r.status, r.body.error?.code])).toEqual(Array(10).fill([200, undefined]));
    expect(new Set(burst.map((r) => r.body.search_id)).size).toBe(1);
    expect(burst.filter((r) => headerOf(r, 'idempotent-replayed') === 'true')).toHaveLength(9);
    expect(await ledgerState(accountId)).toEqual(settled(0, { reserves: SIGNUP, captures: SIGNUP, releases: 0 }));
  });

  it('runs a lookup again when its Idempotency-Key belongs to a failed (uncharged) search', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const idem = `retry-${Date.now()}`;
    // A search that failed earlier under this key (e.g. its job was lost), reserved and released through the real repository.
    const db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 1, applicationName: 'credits-spec' });
    const failedId = newId.search();
    try {
      const repo = new SearchesRepository(db);
      const keyId = (await sql<{ id: string }>(`SELECT id FROM api_keys WHERE account_id = $1`, [accountId]))[0]!.id;
      await repo.reserve({
        id: failedId,
        accountId,
        keyId,
        kind: 'phone',
        input: PHONE,
        cost: 1,
        idempotencyKey: idem,
        requestHash: hashRequest('/v1/verify/phone', PHONE),
        requestId: 'req_earlier',
        permissiblePurpose: null,
      });
      await repo.settle(failedId, { status: 'failed', error: { code: 'unavailable', message: 'lost' }, sources: [] });
    } finally {
      await db.destroy();
    }

    const failed = await api.get<Envelope & { request_id: string }>(`/v1/searches/${failedId}`, { key });
    expect(failed.status).toBe(503);
    expect(failed.body).toMatchObject({ status: 'error', error: { code: 'unavailable' }, search_id: failedId });
    expect(failed.body.request_id).toBe(headerOf(failed, 'x-request-id'));
    expect(headerOf(failed, 'retry-after')).toBeNull(); // asking again will not change it
    expect(headerOf(failed, 'x-credits-spent')).toBe('0');

    const retry = await api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { 'idempotency-key': idem } });
    expect(retry.status).toBe(200);
    expect(retry.body.search_id).not.toBe(failedId);
    expect(headerOf(retry, 'idempotent-replayed')).toBeNull();
    const again = await api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { 'idempotency-key': idem } });
    expect(again.body.search_id).toBe(retry.body.search_id);
    expect(headerOf(again, 'idempotent-replayed')).toBe('true');
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 2, captures: 1, releases: 1 }));
  });

  it('answers Prefer: respond-async with 202 and a Location the owner can poll', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const accepted = await api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { prefer: 'respond-async' } });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({
      status: 'pending',
      search_id: expect.stringMatching(/^srch_/),
      credits_remaining: SIGNUP - 1,
    });
    const id = accepted.body.search_id;
    expect(headerOf(accepted, 'location')).toBe(`/v1/searches/${id}`);

    const done = await waitFor(
      () => api.get<Envelope>(`/v1/searches/${id}`, { key }),
      (r) => r.status !== 202,
      { timeoutMs: 15_000, what: `search ${id} to finish` },
    );
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'success', search_id: id, credits_remaining: SIGNUP - 1 });
    expect(done.body.results).toHaveLength(1);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));

    const stranger = await api.register(SIGNUP);
    const foreign = await api.get<Envelope>(`/v1/searches/${id}`, { key: stranger.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ status: 'error', error: { code: 'not_found' } });
    expect((await api.get(`/v1/searches/srch_doesnotexist`, { key })).status).toBe(404);
  });

  describe('credits:grant', () => {
    it('adds credits and records a grant in the ledger', async () => {
      const { key, email, accountId } = await api.register(SIGNUP);
      const res = await runCli(['credits:grant', email.toUpperCase(), '5']);
      expect(res.code).toBe(0);
      expect(res.stdout).toContain(`balance is now ${SIGNUP + 5}`);
      expect(await ledgerState(accountId)).toMatchObject({ balance: SIGNUP + 5, ledger_sum: SIGNUP + 5 });
      const grants = await sql<{ amount: string }>(
        `SELECT amount FROM credit_ledger WHERE account_id = $1 AND phase = 'grant' ORDER BY id`,
        [accountId],
      );
      expect(grants).toEqual([{ amount: String(SIGNUP) }, { amount: '5' }]);
      expect((await api.get<{ credits_remaining: number }>('/v1/account', { key })).body.credits_remaining).toBe(
        SIGNUP + 5,
      );
    });

    it.each([
      ['an unknown e-mail', ['credits:grant', 'nobody-at-all@example.com', '5'], 'nobody-at-all@example.com'],
      ['n = 0', ['credits:grant', '{email}', '0'], '<n>'],
      ['n = "abc"', ['credits:grant', '{email}', 'abc'], '<n>'],
      ['a negative n', ['credits:grant', '{email}', '-3'], '<n>'],
      ['a malformed e-mail', ['credits:grant', 'not-an-email', '5'], '<email>'],
      ['missing arguments', ['credits:grant', '{email}'], '<email> <n>'],
    ])('refuses %s, names the argument and changes nothing', async (_label, args, named) => {
      const { email, accountId } = await api.register(SIGNUP);
      const before = await ledgerState(accountId);
      const res = await runCli(args.map((a) => (a === '{email}' ? email : a)));
      expect(res.code).not.toBe(0);
      expect(res.code).not.toBeNull();
      expect(res.stderr).toContain(named);
      expect(await ledgerState(accountId)).toEqual(before);
      const [grants] = await sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM credit_ledger WHERE phase = 'grant' AND note = 'cli credits:grant' AND account_id = $1`,
        [accountId],
      );
      expect(grants!.n).toBe(0);
    });
  });
});

describe('credits with no worker running (gateway process only, then a worker)', () => {
  let stack: Stack;
  let api: Api;

  beforeAll(async () => {
    stack = await Stack.start({ label: 'credits-noworker', noWorker: true, env: { SIGNUP_CREDITS: String(SIGNUP) } });
    api = new Api(stack.baseUrl);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers 202 when Prefer: wait runs out, then completes and charges exactly once when a worker starts', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const started = Date.now();
    const pending = await api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { prefer: 'wait=1' } });
    const tookMs = Date.now() - started;
    expect(pending.status).toBe(202);
    expect(tookMs).toBeGreaterThanOrEqual(950);
    expect(tookMs).toBeLessThan(3000);
    const id = pending.body.search_id;
    expect(pending.body).toMatchObject({
      status: 'pending',
      search_id: expect.stringMatching(/^srch_/),
      credits_remaining: SIGNUP - 1,
    });
    expect(headerOf(pending, 'location')).toBe(`/v1/searches/${id}`);
    expect(await ledgerState(accountId)).toEqual({
      balance: SIGNUP - 1,
      ledger_sum: SIGNUP - 1,
      reserves: 1,
      captures: 0,
      releases: 0,
      pending: 1,
    });
    expect((await api.get(`/v1/searches/${id}`, { key })).status).toBe(202);

    await stack.startWorker();
    const done = await waitFor(
      () => api.get<Envelope>(`/v1/searches/${id}`, { key }),
      (r) => r.status !== 202,
      { timeoutMs: 15_000, what: `search ${id} to finish` },
    );
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'success', search_id: id, credits_remaining: SIGNUP - 1 });
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });
});
