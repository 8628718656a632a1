import { Api, Stack, ledgerState, sql, type LedgerState } from '@dossier/testing';

interface Item {
  search_id: string;
  kind: string;
  status: string;
  created_at: string;
  completed_at: string | null;
  credits_spent: number;
  permissible_purpose: string | null;
  result_count: number | null;
}
interface Page {
  status: string;
  searches: Item[];
  next_cursor: string | null;
}
interface ErrorBody {
  status: 'error';
  error: { code: string; details?: { field: string; issue: string }[] };
  request_id: string;
}

const PHONE = { phone: '+14155552671' };
/** Nobody in the (empty) local index: the search succeeds with no results and is released. */
const NOBODY = { name: 'Nemo Nobody-Atall', permissible_purpose: 'employment' };

describe('GET /v1/searches: search history (gateway + worker processes, real Redis and Postgres)', () => {
  let stack: Stack;
  let api: Api;

  beforeAll(async () => {
    stack = await Stack.start({ label: 'history', env: { SIGNUP_CREDITS: '100' } });
    api = new Api(stack.baseUrl);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** Runs lookups one after another (so created_at follows the order); returns their search ids. */
  async function lookups(key: string, count: number, path = '/v1/verify/phone', body: unknown = PHONE) {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const res = await api.post<{ search_id: string }>(path, body, { key });
      expect([path, res.status]).toEqual([path, 200]);
      ids.push(res.body.search_id);
    }
    return ids;
  }

  const list = (key: string, query = '') => api.get<Page>(`/v1/searches${query ? `?${query}` : ''}`, { key });

  /** Every page, following next_cursor; `between` runs after each page but the last. */
  async function walk(key: string, query: string, between?: () => Promise<void>): Promise<Item[]> {
    const items: Item[] = [];
    let cursor: string | null = null;
    for (;;) {
      const params = [query, cursor ? `cursor=${encodeURIComponent(cursor)}` : ''].filter(Boolean).join('&');
      const res = await list(key, params);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('success');
      items.push(...res.body.searches);
      cursor = res.body.next_cursor;
      if (cursor === null) return items;
      await between?.();
    }
  }

  it('pages newest first without repeats or gaps while new searches are made, and ends with next_cursor null', async () => {
    const { key } = await api.register(100);
    const made = await lookups(key, 11);
    const during: string[] = [];
    const seen = await walk(key, 'limit=4', async () => {
      during.push(...(await lookups(key, 1)));
    });
    expect(seen.map((s) => s.search_id)).toEqual([...made].reverse());
    expect(during).toHaveLength(2); // 3 pages: 4 + 4 + 3
    const again = await walk(key, 'limit=100');
    expect(again.map((s) => s.search_id)).toEqual([...made, ...during].reverse());

    const first = await list(key, 'limit=13');
    expect(first.body.searches).toHaveLength(13);
    expect(first.body.next_cursor).toBeNull(); // exactly one page: no empty page to fetch
    expect((await list(key)).body.searches).toHaveLength(13); // default limit 20
  });

  it('agrees with GET /v1/searches/{id} on status, credits spent and result count', async () => {
    const { key } = await api.register(100);
    const [found] = await lookups(key, 1);
    const [nothing] = await lookups(key, 1, '/v1/search/person', NOBODY);
    const page = await list(key);
    expect(page.body.searches.map((s) => s.search_id)).toEqual([nothing, found]);
    for (const item of page.body.searches) {
      const one = await api.get<{ status: string; results: unknown[] }>(`/v1/searches/${item.search_id}`, { key });
      expect(one.status).toBe(200);
      expect(item).toEqual({
        search_id: item.search_id,
        kind: item.search_id === found ? 'phone' : 'person',
        status: 'succeeded',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        completed_at: expect.stringMatching(/Z$/),
        credits_spent: Number(one.headers.get('x-credits-spent')),
        permissible_purpose: item.search_id === found ? null : 'employment',
        result_count: one.body.results.length,
      });
    }
    expect(page.body.searches.map((s) => [s.credits_spent, s.result_count])).toEqual([
      [0, 0],
      [1, 1],
    ]);
  });

  it('filters by kind and by since (inclusive) and until (exclusive)', async () => {
    const { key } = await api.register(100);
    const phones = await lookups(key, 3);
    const [person] = await lookups(key, 1, '/v1/search/person', NOBODY);
    expect((await walk(key, 'kind=person')).map((s) => s.search_id)).toEqual([person]);
    expect((await walk(key, 'kind=phone&limit=2')).map((s) => s.search_id)).toEqual([...phones].reverse());
    expect(await walk(key, 'kind=company')).toEqual([]);

    const all = await walk(key, '');
    const middle = all[2]!; // phones[1]
    expect(middle.search_id).toBe(phones[1]);
    // The bound is middle's time to the millisecond: the searches either side are more than a millisecond away.
    expect(Date.parse(all[1]!.created_at) - Date.parse(middle.created_at)).toBeGreaterThanOrEqual(2);
    expect(Date.parse(middle.created_at) - Date.parse(all[3]!.created_at)).toBeGreaterThanOrEqual(2);
    const at = encodeURIComponent(middle.created_at);
    expect((await walk(key, `since=${at}`)).map((s) => s.search_id)).toEqual([person, phones[2], phones[1]]);
    expect((await walk(key, `until=${at}`)).map((s) => s.search_id)).toEqual([phones[0]]);
    // The same wall-clock time at UTC-2 is two hours later: every phone search is before it.
    const minusTwo = encodeURIComponent(middle.created_at.replace('Z', '-02:00'));
    expect((await walk(key, `until=${minusTwo}&kind=phone`)).map((s) => s.search_id)).toEqual([...phones].reverse());
  });

  it('compares since and until with created_at to the microsecond it is stored to, whatever precision they are sent in', async () => {
    const { key } = await api.register(100);
    const [id] = await lookups(key, 1);
    await sql(`UPDATE searches SET created_at = '2026-03-01T10:00:00.123456Z' WHERE id = $1`, [id]);
    const found = async (query: string) => {
      const res = await list(key, query);
      expect([query, res.status]).toEqual([query, 200]);
      return res.body.searches.some((s) => s.search_id === id);
    };
    const at = (fraction: string) => encodeURIComponent(`2026-03-01T10:00:00.${fraction}Z`);
    // since is inclusive, until exclusive: a bound one microsecond either side of the search decides.
    expect(await found(`since=${at('123456')}`)).toBe(true);
    expect(await found(`since=${at('123457')}`)).toBe(false);
    expect(await found(`until=${at('123457')}`)).toBe(true);
    expect(await found(`until=${at('123456')}`)).toBe(false);
    // Past the microsecond (nanoseconds, as Go's RFC3339Nano writes): the search is before either bound.
    expect(await found(`since=${at('1234561')}`)).toBe(false);
    expect(await found(`until=${at('123456001')}`)).toBe(true);
    expect(await found(`since=${at('123455999')}&until=${at('1234560001')}`)).toBe(true);
    // Bounds before year 1 and after year 9999 (an offset moves them there) bound nothing.
    expect(await found(`since=${encodeURIComponent('0000-01-01T00:00:00+01:00')}`)).toBe(true);
    expect(await found(`until=${encodeURIComponent('9999-12-31T23:59:59-23:59')}`)).toBe(true);
    expect(await found(`until=${encodeURIComponent('0000-01-01T00:00:00Z')}`)).toBe(false);
  });

  it("never shows another account's searches, and pages of one account's cursor stay in that account", async () => {
    const a = await api.register(100);
    const b = await api.register(100);
    const mine = await lookups(a.key, 3);
    const theirs = await lookups(b.key, 2);
    expect((await walk(a.key, 'limit=2')).map((s) => s.search_id)).toEqual([...mine].reverse());
    expect((await walk(b.key, 'limit=1')).map((s) => s.search_id)).toEqual([...theirs].reverse());
    // B's cursor sent with A's key: a place in A's own list, never B's searches.
    const bPage = await list(b.key, 'limit=1');
    const crossed = await list(a.key, `cursor=${bPage.body.next_cursor!}`);
    expect(crossed.status).toBe(200);
    for (const s of crossed.body.searches) expect(mine).toContain(s.search_id);
    const fresh = await api.register(100);
    expect((await list(fresh.key)).body).toEqual({ status: 'success', searches: [], next_cursor: null });
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=5&limit=6', 'limit'],
    ['kind=username', 'kind'],
    ['since=yesterday', 'since'],
    ['until=2026-13-01T00:00:00Z', 'until'],
    ['since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', 'until'],
    ['cursor=not-a-cursor', 'cursor'],
    [
      `cursor=${Buffer.from('{"v":1,"at":"2026-02-30T00:00:00.000000Z","id":"srch_x"}').toString('base64url')}`,
      'cursor',
    ],
    [
      `cursor=${Buffer.from('{"v":1,"at":"0000-01-01T00:00:00.000000Z","id":"srch_x"}').toString('base64url')}`,
      'cursor',
    ],
    ['page=2', 'page'],
    ['=x', 'query'],
  ])('answers ?%s with 400 validation_error naming %s', async (query, field) => {
    const { key } = await api.register(100);
    const res = await api.get<ErrorBody>(`/v1/searches?${query}`, { key });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', error: { code: 'validation_error' } });
    expect(res.body.error.details?.map((d) => d.field)).toEqual([field]);
    expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
  });

  it.each([
    ['page=2', 'page', 'is not a known parameter'],
    ['=x', 'query', 'has a parameter with an empty name, which is not a known parameter'],
  ])('says what is wrong with ?%s in the words of a query string, naming %s', async (query, field, issue) => {
    const { key } = await api.register(100);
    const res = await api.get<ErrorBody>(`/v1/searches?${query}`, { key });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'validation_error',
      message: `${field} ${issue}`,
      details: [{ field, issue }],
    });
  });

  it.each([
    ['limit=5&limit=6', 'limit', 'must be given once, as a whole number'],
    ['kind=phone&kind=email', 'kind', 'must be given once, as one of person, company, email, phone'],
    ['since=2026-01-01T00:00:00Z&since=2026-01-02T00:00:00Z', 'since', 'must be given once, as an RFC 3339 timestamp'],
  ])('says of a filter given twice (?%s) that it must be given once', async (query, field, issue) => {
    const { key } = await api.register(100);
    const res = await api.get<ErrorBody>(`/v1/searches?${query}`, { key });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field, issue }]);
  });

  it('needs a key, and charges nothing however often it is called', async () => {
    const unauthenticated = await api.get<ErrorBody>('/v1/searches');
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.body.error.code).toBe('unauthorized');

    const { key, accountId } = await api.register(100);
    await lookups(key, 2);
    const before: LedgerState = await ledgerState(accountId);
    for (let i = 0; i < 5; i++) {
      const res = await list(key, 'limit=1');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-credits-spent')).toBeNull();
    }
    expect(await ledgerState(accountId)).toEqual(before);
    expect(before.balance).toBe(98);
  });
});
