import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { personRowOf } from '@dossier/domain';
import { openDataSource, writePeople } from '@dossier/persistence';
import {
  Api,
  FakeDns,
  FakeUpstream,
  REPO_ROOT,
  Stack,
  ledgerState,
  sql,
  testEnv,
  type FakeAnswer,
  type LedgerState,
} from '@dossier/testing';

interface Envelope {
  status: string;
  search_id: string;
  results: Record<string, unknown>[];
  credits_remaining: number;
  sources: { provider: string; outcome: string }[];
}
interface Entry {
  id: string;
  kind: string;
  hint: string;
  created_at: string;
}

const ADMIN = { user: 'privacy-admin', password: 'opt-out: staple battery' };
const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
const AS_ADMIN = basic(ADMIN.user, ADMIN.password);
const PDL_KEY = 'e2e-suppression-pdl-key';

/**
 * The suppression list end to end: subjects added through `/admin/suppressions` disappear from the local
 * index's and a fake People Data Labs' answers, before anything is stored or charged, while other
 * subjects are still answered; a listed address's e-mail verification loses its Gravatar accounts.
 * Gateway and worker as processes; PDL, Gravatar and DNS on loopback.
 */
describe('suppression list (admin endpoints, gateway + worker, local index and a fake PDL)', () => {
  let db: DataSource;
  let stack: Stack;
  let api: Api;
  let pdl: FakeUpstream;
  let gravatar: FakeUpstream;
  let dns: FakeDns;
  let key: string;
  let accountId: string;
  const source = `suppression-e2e-${randomUUID()}`;
  // Names and addresses no other test uses: the list and the local index are shared by the run.
  const tag = `Zq${randomUUID()
    .slice(0, 6)
    .replace(/[^a-z]/g, 'k')}`;
  const domain = `${tag.toLowerCase()}.example`;
  const optedOut = { name: `Lena ${tag} Marsh`, birth_year: 1982 };
  const neighbour = `Otto ${tag} Marsh`;
  const ivy = { name: `Ivy ${tag} Quill`, email: `ivy@${domain}` };
  const rex = { name: `Rex ${tag} Quill`, email: `rex@${domain}` };

  /** PDL's documented answer (the provider's fixture) about someone else. */
  const pdlProfile = (person: { name: string; email: string }, id: string): FakeAnswer => {
    const found = JSON.parse(
      readFileSync(join(REPO_ROOT, 'libs/providers/src/pdl/fixtures/ok/found.json'), 'utf8'),
    ) as { status: number; headers: Record<string, string>; body: { data: Record<string, unknown> } };
    const [first, , last] = person.name.split(' ');
    Object.assign(found.body.data, {
      id,
      full_name: person.name,
      first_name: first,
      last_name: last,
      work_email: person.email,
      personal_emails: [],
      recommended_personal_email: null,
      emails: [{ address: person.email, type: 'personal' }],
      mobile_phone: null,
      phone_numbers: [],
    });
    return found as FakeAnswer;
  };

  const admin = (method: string, path = '', json?: unknown, headers: Record<string, string> = AS_ADMIN) =>
    api.request<{ status: string; suppressions?: Entry[]; suppression?: Entry; error?: { code: string } }>(
      method,
      `/admin/suppressions${path}`,
      { headers, ...(json === undefined ? {} : { json }) },
    );

  /** A person search with the balance before and after, and the searches row it left. */
  async function search(body: Record<string, string>) {
    const before = await ledgerState(accountId);
    const res = await api.post<Envelope>('/v1/search/person', body, { key });
    expect(res.status).toBe(200);
    const after = await ledgerState(accountId);
    const [row] = await sql<{ status: string; charged: boolean; results: unknown }>(
      `SELECT status, charged, results FROM searches WHERE id = $1`,
      [res.body.search_id],
    );
    return { res, before, after, row: row!, spent: before.balance - after.balance };
  }

  /** An e-mail verification: its one item's accounts, and the credits it took. */
  async function verify(email: string) {
    const before = await ledgerState(accountId);
    const res = await api.post<Envelope>('/v1/verify/email', { email }, { key });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1);
    const after = await ledgerState(accountId);
    return { item: res.body.results[0]!, spent: before.balance - after.balance };
  }

  const names = (body: Envelope) => body.results.map((r) => r['full_name']);

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 2, applicationName: 'suppression-e2e' });
    await writePeople(db, [
      personRowOf({
        source,
        external_id: 'lena',
        full_name: optedOut.name,
        emails: [`lena@${domain}`],
        locations: [{ city: 'Leeds', region: null, country: 'GB' }],
        birth_year: optedOut.birth_year,
      }),
      personRowOf({
        source,
        external_id: 'otto',
        full_name: neighbour,
        locations: [{ city: 'Leeds', region: null, country: 'GB' }],
        birth_year: 1979,
      }),
    ]);
    [pdl, gravatar, dns] = await Promise.all([
      FakeUpstream.start(),
      FakeUpstream.start(),
      FakeDns.start({ [domain]: { mx: [[10, `mx.${domain}`]] }, [`mx.${domain}`]: { a: ['127.0.0.1'] } }),
    ]);
    // Ivy has a Gravatar profile (the provider's fixture).
    const ivyHash = createHash('sha256').update(ivy.email).digest('hex');
    const [profile, noProfile] = ['ok/found.json', 'ok/not-found.json'].map(
      (file) =>
        JSON.parse(readFileSync(join(REPO_ROOT, 'libs/providers/src/gravatar/fixtures', file), 'utf8')) as FakeAnswer,
    );
    gravatar.reply((req) => (req.url === `/v3/profiles/${ivyHash}` ? profile! : noProfile!));
    pdl.reply((req): FakeAnswer => {
      const email = new URL(req.url, 'http://fake').searchParams.get('email');
      if (email === ivy.email) return pdlProfile(ivy, 'ivy-0001');
      if (email === rex.email) return pdlProfile(rex, 'rex-0001');
      return { status: 404, body: { status: 404, error: { type: 'not_found', message: 'No records were found' } } };
    });
    stack = await Stack.start({
      label: 'suppression',
      env: {
        PDL_API_KEY: PDL_KEY,
        PDL_BASE_URL: pdl.url,
        GRAVATAR_ENABLED: 'true',
        GRAVATAR_BASE_URL: gravatar.url,
        DNS_SERVERS: dns.server,
      },
      gatewayEnv: { ADMIN_USER: ADMIN.user, ADMIN_PASSWORD: ADMIN.password },
    });
    api = new Api(stack.baseUrl);
    ({ key, accountId } = await api.register());
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([pdl?.close(), gravatar?.close(), dns?.close()]);
    await db?.query(`DELETE FROM people WHERE source = $1`, [source]);
    await db?.destroy();
  });

  describe('/admin/suppressions', () => {
    it('refuses no, wrong and API-key credentials with 401 and a Basic challenge, and adds nothing', async () => {
      for (const headers of [
        {},
        basic(ADMIN.user, 'wrong'),
        basic('someone', ADMIN.password),
        { authorization: `Bearer ${key}` },
      ]) {
        for (const [method, body] of [
          ['GET', undefined],
          ['POST', { email: ivy.email }],
        ] as const) {
          const res = await admin(method, '', body, headers);
          expect(res.status).toBe(401);
          expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
          expect(res.body).toMatchObject({ status: 'error', error: { code: 'unauthorized' } });
        }
      }
      expect((await admin('DELETE', '/sup_00000000000000000000', undefined, {})).status).toBe(401);
      const listed = await admin('GET');
      expect(listed.body.suppressions?.map((e) => e.hint)).not.toContain('i…@' + domain);
    });

    it('answers bad input with 400 and the error envelope naming the field', async () => {
      const cases: [unknown, { field: string; issue: string }[]][] = [
        [{}, [{ field: 'body', issue: 'give exactly one of email, phone, or name with birth_year' }]],
        [{ email: 'not-an-address' }, [{ field: 'email', issue: 'must be an e-mail address' }]],
        // A national number is read in the operator's DEFAULT_REGION (US here), where this one is none.
        [
          { phone: '0113 496 0000' },
          [{ field: 'phone', issue: "is not a phone number in US (read in the operator's default region)" }],
        ],
        [{ name: optedOut.name }, [{ field: 'birth_year', issue: expect.stringMatching(/^is required with name/) }]],
        [{ name: optedOut.name, birth_year: '1982' }, [{ field: 'birth_year', issue: expect.any(String) }]],
        [{ email: ivy.email, nickname: 'x' }, [{ field: 'nickname', issue: 'is not a known field' }]],
      ];
      const before = (await admin('GET')).body.suppressions!.length;
      for (const [body, details] of cases) {
        const res = await admin('POST', '', body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          status: 'error',
          error: { code: 'validation_error', message: expect.any(String), details },
          request_id: expect.any(String),
        });
      }
      const notJson = await api.request('POST', '/admin/suppressions', {
        headers: AS_ADMIN,
        raw: '{"email":',
        contentType: 'application/json',
      });
      expect(notJson.status).toBe(400);
      expect(notJson.body).toMatchObject({ status: 'error', error: { code: 'invalid_json' } });
      expect((await admin('GET')).body.suppressions).toHaveLength(before);
    });
  });

  describe('lookups', () => {
    let nameEntry: Entry;

    it('answers and charges as usual before anyone opts out', async () => {
      const local = await search({ name: `Marsh ${tag}`, location: 'Leeds' });
      expect(names(local.res.body).sort()).toEqual([optedOut.name, neighbour].sort());
      expect(local.spent).toBe(1);
      const upstream = await search({ email: ivy.email });
      expect(names(upstream.res.body)).toEqual([ivy.name]);
      expect(upstream.spent).toBe(1);
      const verified = await verify(ivy.email);
      expect(verified.item['accounts']).toEqual(
        expect.arrayContaining([expect.objectContaining({ service: 'gravatar', username: 'gracehopper' })]),
      );
      expect(verified.spent).toBe(1);
    });

    it('adds subjects once through the admin endpoint (201, then 200 with the same entry) and lists them masked', async () => {
      const added = await admin('POST', '', optedOut);
      expect(added.status).toBe(201);
      expect(added.body).toEqual({
        status: 'success',
        suppression: {
          id: expect.stringMatching(/^sup_/),
          kind: 'name',
          hint: 'L… Z… M…, 1982',
          created_at: expect.any(String),
        },
      });
      nameEntry = added.body.suppression!;
      const again = await admin('POST', '', { name: optedOut.name.toUpperCase(), birth_year: 1982 });
      expect(again.status).toBe(200);
      expect(again.body.suppression).toEqual(nameEntry);
      expect((await admin('POST', '', { email: ivy.email.toUpperCase() })).status).toBe(201);

      const list = await admin('GET');
      expect(list.status).toBe(200);
      expect(list.body.suppressions).toEqual(
        expect.arrayContaining([nameEntry, expect.objectContaining({ kind: 'email', hint: `i…@${domain}` })]),
      );
      expect(JSON.stringify(list.body)).not.toMatch(/lena|marsh|ivy@|quill/i);
    });

    it('drops a suppressed local-index person and still answers (and charges for) the other one', async () => {
      const { res, spent, row } = await search({ name: `Marsh ${tag}`, location: 'Leeds' });
      expect(names(res.body)).toEqual([neighbour]);
      expect(spent).toBe(1);
      expect(row).toMatchObject({ status: 'succeeded', charged: true });
      expect(JSON.stringify(row.results)).not.toContain('Lena');
    });

    it('answers a search that found only suppressed people with nothing, free, stored without them', async () => {
      const local = await search({ name: optedOut.name });
      const upstream = await search({ email: ivy.email });
      for (const { res, spent, before, after, row } of [local, upstream]) {
        expect(res.body.results).toEqual([]);
        expect(res.body.sources.map((s) => s.outcome)).not.toContain('found');
        expect(spent).toBe(0);
        expect(res.body.credits_remaining).toBe(after.balance);
        expect(res.headers.get('x-credits-spent')).toBe('0');
        // reserved and released, never captured
        expect(after).toEqual<LedgerState>({
          ...before,
          reserves: before.reserves + 1,
          releases: before.releases + 1,
        });
        expect(row).toMatchObject({ status: 'succeeded', charged: false, results: [] });
        const stored = await api.get<Envelope>(`/v1/searches/${res.body.search_id}`, { key });
        expect(stored.status).toBe(200);
        expect(stored.body.results).toEqual([]);
      }
      expect(upstream.res.body.sources).toEqual(
        expect.arrayContaining([expect.objectContaining({ provider: 'pdl', outcome: 'not_found' })]),
      );
      expect(pdl.requests.some((r) => r.url.includes(encodeURIComponent(ivy.email)))).toBe(true);
    });

    it('verifies a listed address as usual but without its associated accounts', async () => {
      const { item, spent } = await verify(ivy.email);
      expect(item).toMatchObject({
        normalized: ivy.email,
        syntax_valid: true,
        mx_records: [`mx.${domain}`],
        accounts: [],
      });
      expect(spent).toBe(1);
    });

    it("answers a fake upstream's other subjects as usual", async () => {
      const { res, spent } = await search({ email: rex.email });
      expect(names(res.body)).toEqual([rex.name]);
      expect(res.body.results[0]).toMatchObject({ emails: [rex.email], sources: ['pdl'] });
      expect(spent).toBe(1);
    });

    it('answers a subject again once removed; removing it twice is a 404', async () => {
      const removed = await admin('DELETE', `/${nameEntry.id}`);
      expect(removed.status).toBe(200);
      expect(removed.body).toEqual({ status: 'success', suppression: nameEntry });
      const gone = await admin('DELETE', `/${nameEntry.id}`);
      expect(gone.status).toBe(404);
      expect(gone.body).toMatchObject({ status: 'error', error: { code: 'not_found' } });
      expect((await admin('DELETE', '/not-an-id')).status).toBe(404);

      const { res, spent } = await search({ name: optedOut.name });
      expect(names(res.body)).toEqual([optedOut.name]);
      expect(spent).toBe(1);
    });
  });
});
