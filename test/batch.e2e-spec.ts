import { createHmac } from 'node:crypto';
import { Api, Stack, ledgerState, receiver, settled, sql, waitFor } from '@dossier/testing';

type Item =
  | { status: 'success'; search_id: string; results: unknown[]; credits_remaining: number; sources: unknown[] }
  | { status: 'pending'; search_id: string; credits_remaining: number }
  | {
      status: 'error';
      error: { code: string; message: string; details?: { field: string; issue: string }[] };
      search_id?: string;
    };
type Batch = { status: 'success' | 'pending'; batch_id: string; items: Item[]; credits_remaining: number };
type ErrorBody = { status: string; error: { code: string; details?: { field: string; issue: string }[] } };

const SIGNUP = 100;
const PHONE = { kind: 'phone', input: { phone: '+1 650 253 0000' } };
const phones = (n: number) => Array.from({ length: n }, () => PHONE);

async function batchRows(accountId: string): Promise<number> {
  const [row] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM batches WHERE account_id = $1`, [accountId]);
  return row!.n;
}

/**
 * Batch end to end (ADR 0019): the gateway and the worker as separate processes, real Redis and Postgres.
 * Every item is validated, charged and answered on its own; the ledger is checked after each case.
 */
describe('POST /v1/batch and GET /v1/batches/{id} (gateway + worker processes, real Redis and Postgres)', () => {
  let stack: Stack;
  let api: Api;

  beforeAll(async () => {
    stack = await Stack.start({
      label: 'batch',
      env: { SIGNUP_CREDITS: String(SIGNUP), WEBHOOK_ALLOW_PRIVATE: 'true' },
      workerEnv: { WEBHOOK_RETRY_BASE_MS: '100' },
    });
    api = new Api(stack.baseUrl);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers every item in order: results for valid ones, each invalid one its own error, charging only what ran', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const res = await api.post<Batch>(
      '/v1/batch',
      {
        requests: [
          PHONE,
          { kind: 'phone', input: { phone: 'not a number' } },
          { kind: 'pet', input: { name: 'Rex' } },
          { kind: 'company', input: {} },
          { kind: 'email', input: { email: 'jane@example.com', shoe_size: 9 } },
          { kind: 'phone' },
          'not an object',
          { kind: 'phone', input: { phone: '+44 20 7946 0958' } },
        ],
      },
      { key },
    );
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('success');
    expect(res.body.batch_id).toMatch(/^bat_[0-9A-Za-z]{24}$/);
    const [first, badPhone, badKind, emptyCompany, unknownField, noInput, notObject, last] = res.body.items;
    expect(first).toMatchObject({ status: 'success', search_id: expect.stringMatching(/^srch_/) });
    expect((first as { results: unknown[] }).results).toHaveLength(1);
    expect(last).toMatchObject({ status: 'success' });
    expect(badPhone).toEqual({
      status: 'error',
      error: expect.objectContaining({
        code: 'validation_error',
        details: [expect.objectContaining({ field: 'phone' })],
      }),
    });
    expect(badKind).toMatchObject({
      status: 'error',
      error: { code: 'validation_error', details: [expect.objectContaining({ field: 'kind' })] },
    });
    expect(emptyCompany).toMatchObject({ status: 'error', error: { code: 'validation_error' } });
    expect(unknownField).toMatchObject({
      status: 'error',
      error: { code: 'validation_error', details: [{ field: 'shoe_size', issue: 'is not a known field' }] },
    });
    expect(noInput).toMatchObject({
      status: 'error',
      error: { code: 'validation_error', details: [{ field: 'input', issue: 'is required' }] },
    });
    expect(notObject).toMatchObject({ status: 'error', error: { code: 'validation_error' } });
    expect(res.body.credits_remaining).toBe(SIGNUP - 2);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 2, { reserves: 2, captures: 2, releases: 0 }));

    const got = await api.get<Batch>(`/v1/batches/${res.body.batch_id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('names the item, not the body, when an item is not a JSON object (the batch itself is fine)', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const res = await api.post<Batch>('/v1/batch', { requests: [PHONE, null, 42, [PHONE], 'x'] }, { key });
    expect(res.status).toBe(200);
    expect(res.body.items[0]).toMatchObject({ status: 'success' });
    res.body.items.slice(1).forEach((item, k) => {
      const field = `requests.${k + 1}`;
      expect(item).toEqual({
        status: 'error',
        error: {
          code: 'validation_error',
          message: `${field} must be a JSON object`,
          details: [{ field, issue: 'must be a JSON object' }],
        },
      });
    });
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });

  it('gives an item with text Postgres cannot store (NUL, an unpaired surrogate) its own error, and runs the others', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    // JSON.stringify writes these as the escapes a client sends: \u0000, \ud800, \udfff.
    const res = await api.post<Batch>(
      '/v1/batch',
      {
        requests: [
          { kind: 'person', input: { name: 'Jane\u0000Doe' } },
          PHONE,
          { kind: 'phone', input: { phone: '+1 650 253 0000\ud800' } },
          { kind: 'email', input: { email: 'jane@example.com', ['sh\udfffoe']: 1 } },
          { kind: 'company\u0000', input: { company_name: 'Acme' } },
          { kind: 'phone', input: PHONE.input, ['x\u0000']: 1 },
        ],
      },
      { key },
    );
    expect(res.status).toBe(200);
    const fields = res.body.items.map((i) =>
      i.status === 'error' ? `${i.error.code} ${JSON.stringify(i.error.details?.map((d) => d.field))}` : i.status,
    );
    expect(fields).toEqual([
      'validation_error ["name"]',
      'success',
      'validation_error ["phone"]',
      // A bad field name is named with U+FFFD in its bad text's place: the batch stores its items' errors.
      `validation_error ${JSON.stringify(['sh\ufffdoe'])}`,
      'validation_error ["kind"]',
      `validation_error ${JSON.stringify(['x\ufffd'])}`,
    ]);
    expect((await api.get<Batch>(`/v1/batches/${res.body.batch_id}`, { key })).body).toEqual(res.body);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 1, { reserves: 1, captures: 1, releases: 0 }));
  });

  it("names each refused item's balance at its own turn: an expensive item the balance does not cover, then a cheap one it does", async () => {
    const dear = new Api((await stack.startGateway({ SIGNUP_CREDITS: '2', COST_PERSON: '3' })).baseUrl);
    const { key, accountId } = await dear.register(2);
    const res = await dear.post<Batch>(
      '/v1/batch',
      {
        requests: [
          { kind: 'person', input: { name: 'Grace Hopper' } },
          PHONE,
          { kind: 'person', input: { name: 'Ada' } },
        ],
      },
      { key, headers: { prefer: 'wait=30' } },
    );
    expect(res.status).toBe(200);
    expect(res.body.items.map((i) => (i.status === 'error' ? i.error.message : i.status))).toEqual([
      'this lookup costs 3 credit(s) and the balance is 2; nothing was charged',
      'success',
      'this lookup costs 3 credit(s) and the balance is 1; nothing was charged',
    ]);
    expect(res.body.credits_remaining).toBe(1);
    expect(await ledgerState(accountId)).toEqual(settled(1, { reserves: 1, captures: 1, releases: 0 }));
  });

  it('refuses a batch that is not 1–100 requests with 400, charging nothing and recording nothing', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const cases: [unknown, string][] = [
      [{ requests: phones(101) }, 'must hold at most 100 requests'],
      [{ requests: [] }, 'must hold at least one request'],
      [{ requests: PHONE }, 'must be an array of requests'],
      [{}, 'is required'],
      [{ requests: [PHONE], extra: 1 }, 'is not a known field'],
    ];
    for (const [body, issue] of cases) {
      const res = await api.post<ErrorBody>('/v1/batch', body, { key });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details?.map((d) => d.issue)).toContain(issue);
    }
    const notJson = await api.request<ErrorBody>('POST', '/v1/batch', {
      key,
      raw: '{"requests": [',
      contentType: 'application/json',
    });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe('invalid_json');
    const anonymous = await api.post<ErrorBody>('/v1/batch', { requests: [PHONE] });
    expect(anonymous.status).toBe(401);
    expect(await batchRows(accountId)).toBe(0);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP, { reserves: 0, captures: 0, releases: 0 }));
  });

  it('takes a full batch of 100 and gives an item the balance does not cover insufficient_credits in its place', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const full = await api.post<Batch>('/v1/batch', { requests: phones(99) }, { key, headers: { prefer: 'wait=60' } });
    expect(full.status).toBe(200);
    expect(full.body.items.every((i) => i.status === 'success')).toBe(true);
    expect(full.body.credits_remaining).toBe(1);

    const over = await api.post<Batch>('/v1/batch', { requests: phones(3) }, { key });
    expect(over.status).toBe(200);
    expect(over.body.items.map((i) => (i.status === 'error' ? i.error.code : i.status))).toEqual([
      'success',
      'insufficient_credits',
      'insufficient_credits',
    ]);
    expect(over.body.credits_remaining).toBe(0);
    expect(await ledgerState(accountId)).toEqual(settled(0, { reserves: 100, captures: 100, releases: 0 }));

    const broke = await api.post<Batch>('/v1/batch', { requests: phones(100) }, { key });
    expect(broke.status).toBe(200);
    expect(broke.body.items).toHaveLength(100);
    expect(new Set(broke.body.items.map((i) => i.status === 'error' && i.error.code))).toEqual(
      new Set(['insufficient_credits']),
    );
    expect(await ledgerState(accountId)).toEqual(settled(0, { reserves: 100, captures: 100, releases: 0 }));
  });

  it('answers 202 with Location under Prefer: respond-async, and GET serves the batch once it is done', async () => {
    const { key } = await api.register(SIGNUP);
    const res = await api.post<Batch>(
      '/v1/batch',
      { requests: phones(3) },
      { key, headers: { prefer: 'respond-async' } },
    );
    expect(res.status).toBe(202);
    expect(res.headers.get('preference-applied')).toBe('respond-async');
    expect(res.headers.get('location')).toBe(`/v1/batches/${res.body.batch_id}`);
    expect(res.body.status).toBe('pending');
    // at once, however fast the items run: each as just queued
    expect(res.body.items.map((i) => i.status)).toEqual(['pending', 'pending', 'pending']);
    const done = await waitFor(
      () => api.get<Batch>(`/v1/batches/${res.body.batch_id}`, { key }),
      (r) => r.status === 200,
      { timeoutMs: 20_000, what: 'the batch to complete' },
    );
    expect(done.body.status).toBe('success');
    expect(done.body.items.map((i) => i.status)).toEqual(['success', 'success', 'success']);
    expect(done.body.credits_remaining).toBe(SIGNUP - 3);
  });

  it('replays the whole batch for the same Idempotency-Key — also in parallel — and refuses it with another body', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const body = { requests: [...phones(2), { kind: 'phone', input: { phone: 'nope' } }] };
    const headers = { 'idempotency-key': 'batch-replay-1' };
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => api.post<Batch>('/v1/batch', body, { key, headers })),
    );
    expect(new Set(answers.map((a) => a.body.batch_id)).size).toBe(1);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(5);
    const again = await api.post<Batch>('/v1/batch', body, { key, headers });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // settled by now: the stored items, each with the balance read now
    expect(again.body.items).toEqual(answers[0]!.body.items);
    expect(await batchRows(accountId)).toBe(1);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 2, { reserves: 2, captures: 2, releases: 0 }));

    const other = await api.post<ErrorBody>('/v1/batch', { requests: phones(1) }, { key, headers });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('idempotency_conflict');
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 2, { reserves: 2, captures: 2, releases: 0 }));

    // Keys are per account across lookups and batches: a batch's key is a conflict for a lookup, and the reverse.
    const lookup = await api.post<ErrorBody>('/v1/verify/phone', PHONE.input, { key, headers });
    expect(lookup.status).toBe(409);
    expect(lookup.body.error.code).toBe('idempotency_conflict');
    const single = { 'idempotency-key': 'lookup-first' };
    expect((await api.post('/v1/verify/phone', PHONE.input, { key, headers: single })).status).toBe(200);
    const batchAfter = await api.post<ErrorBody>('/v1/batch', { requests: phones(1) }, { key, headers: single });
    expect(batchAfter.status).toBe(409);
    expect(batchAfter.body.error.code).toBe('idempotency_conflict');
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP - 3, { reserves: 3, captures: 3, releases: 0 }));
  });

  it('lets only one of a lookup and a batch sent at the same moment with the same Idempotency-Key run', async () => {
    const { key, accountId } = await api.register(SIGNUP);
    const rounds = 12;
    const answers = await Promise.all(
      Array.from({ length: rounds }, (_, r) => {
        const headers = { 'idempotency-key': `race-${r}` };
        return Promise.all([
          api.post('/v1/verify/phone', PHONE.input, { key, headers }),
          api.post<Batch>('/v1/batch', { requests: phones(2) }, { key, headers }),
        ]);
      }),
    );
    for (const [lookup, batch] of answers) {
      // exactly one of the two ran; the other is the key's conflict, and nothing was charged for it
      expect([lookup.status, batch.status].sort()).toEqual([200, 409]);
    }
    const lookupsRan = answers.filter(([lookup]) => lookup.status === 200).length;
    const spent = lookupsRan + 2 * (rounds - lookupsRan);
    expect(await ledgerState(accountId)).toEqual(
      settled(SIGNUP - spent, { reserves: spent, captures: spent, releases: 0 }),
    );
  });

  it('shows a batch only to its own account', async () => {
    const owner = await api.register(SIGNUP);
    const stranger = await api.register(SIGNUP);
    const res = await api.post<Batch>('/v1/batch', { requests: phones(1) }, { key: owner.key });
    const peek = await api.get<ErrorBody>(`/v1/batches/${res.body.batch_id}`, { key: stranger.key });
    expect(peek.status).toBe(404);
    expect(peek.body.error.code).toBe('not_found');
    const search = res.body.items[0] as { search_id: string };
    expect((await api.get(`/v1/searches/${search.search_id}`, { key: stranger.key })).status).toBe(404);
    expect((await api.get(`/v1/batches/bat_nope`, { key: owner.key })).status).toBe(404);
  });

  it('runs a test key’s batch free from the sandbox data set', async () => {
    const { key: live, accountId } = await api.register(SIGNUP);
    const created = await api.post<{ api_key: string }>('/v1/auth/keys', { mode: 'test' }, { key: live });
    const res = await api.post<Batch>('/v1/batch', { requests: phones(2) }, { key: created.body.api_key });
    expect(res.status).toBe(200);
    expect(res.body.items.map((i) => i.status)).toEqual(['success', 'success']);
    expect(res.body.credits_remaining).toBe(SIGNUP);
    expect(await ledgerState(accountId)).toEqual(settled(SIGNUP, { reserves: 0, captures: 0, releases: 0 }));
  });

  it('sends batch.completed, signed, with the batch as GET /v1/batches/{id} gives it, once its last item settled', async () => {
    const { key } = await api.register(SIGNUP);
    const hook = await receiver([]);
    try {
      const created = await api.post<{ secret: string }>(
        '/v1/webhooks',
        { url: hook.url, events: ['batch.completed'] },
        { key },
      );
      expect(created.status).toBe(201);
      const res = await api.post<Batch>(
        '/v1/batch',
        { requests: [...phones(3), { kind: 'phone', input: { phone: 'nope' } }] },
        { key, headers: { prefer: 'respond-async' } },
      );
      expect(res.status).toBe(202);
      const event = (await hook.events<Batch>(1, 'the batch.completed delivery'))[0]!;
      expect(event.type).toBe('batch.completed');
      expect(event.id).toBe(`evt_${res.body.batch_id.slice('bat_'.length)}`);
      const got = await api.get<Batch>(`/v1/batches/${res.body.batch_id}`, { key });
      expect(event.data).toEqual(got.body);
      expect(event.data.items.map((i) => i.status)).toEqual(['success', 'success', 'success', 'error']);
      const [t, v1] = hook.received[0]!.signature.split(',').map((p) => p.split('=')[1]);
      expect(v1).toBe(createHmac('sha256', created.body.secret).update(`${t}.${hook.received[0]!.raw}`).digest('hex'));
      // only the batch's event: this webhook did not subscribe to search events
      await new Promise((r) => setTimeout(r, 500));
      expect(hook.received).toHaveLength(1);
    } finally {
      await hook.close();
    }
  });
});
