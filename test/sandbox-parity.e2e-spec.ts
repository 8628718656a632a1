import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  SANDBOX_CASES,
  SANDBOX_COMPANIES,
  SANDBOX_PEOPLE,
  SANDBOX_ROUTES,
  type CompanyResultItem,
  type PersonResultItem,
  type ResultItem,
  type SourceReport,
} from '@dossier/contracts';
import { Api, Stack, ownDatabase, runCli, switchDatabase, underivedAges } from '@dossier/testing';

interface Envelope {
  status: string;
  results: ResultItem[];
  sources: SourceReport[];
}

type Search = readonly [what: string, kind: 'person' | 'company', path: string, body: Record<string, string>];

/**
 * Every documented person and company case, and searches by the other fields a live search takes (a person in
 * a country through `POST /v1/search`, which takes one): the sandbox must answer each of them as the live
 * search does over the same records.
 */
const SEARCHES: readonly Search[] = [
  ...SANDBOX_CASES.flatMap((c): Search[] =>
    c.kind === 'person' || c.kind === 'company'
      ? [[`${c.kind}: ${c.answer}`, c.kind, SANDBOX_ROUTES[c.kind], c.body]]
      : [],
  ),
  ['person: by phone', 'person', SANDBOX_ROUTES.person, { phone: '+1 555-555-0101' }],
  ['person: by username', 'person', SANDBOX_ROUTES.person, { username: 'alex.sandbox92' }],
  ['person: by name and age range', 'person', SANDBOX_ROUTES.person, { name: 'Alex Sandbox', age_range: '40-55' }],
  ['person: by name in a country', 'person', '/v1/search', { query: 'alex sandbox', type: 'person', country: 'US' }],
  [
    'person: in a country of none of them',
    'person',
    '/v1/search',
    { query: 'Alex Sandbox', type: 'person', country: 'GB' },
  ],
  [
    'company: by part of a name in a country',
    'company',
    SANDBOX_ROUTES.company,
    { company_name: 'Sandbox Dissolved', country: 'GB' },
  ],
  [
    'company: by name and number',
    'company',
    SANDBOX_ROUTES.company,
    { company_name: 'Sandbox Widgets', registration_number: '1' },
  ],
];

/**
 * What both modes must agree on in an answer: every field but `id` and `sources` (which name the source:
 * `local` and the import's source, or `sandbox`) and `age` (derived from `birth_year` in the year each lookup
 * ran, checked on its own); best first, and within one score in one order — live orders a tie by id, and
 * the ids differ by source.
 */
function semantics(items: readonly ResultItem[]): Record<string, unknown>[] {
  const rest = items.map((item) =>
    Object.fromEntries(
      Object.entries(item)
        .filter(([field]) => !['id', 'sources', 'age'].includes(field))
        // Which fields a record is credited with: the records are the source's own (ADR 0068).
        .map(([field, value]) => [field, field === 'field_sources' ? Object.keys(value as object).sort() : value]),
    ),
  );
  return rest.sort((a, b) => Number(b['match_score']) - Number(a['match_score']) || cmp(a, b));
}

const cmp = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));
const year = () => new Date().getUTCFullYear();

/**
 * One set of assertions for both modes (issue 39, ADR 0045): the sandbox's synthetic people and companies
 * imported into the live local index with the CLI importer, under a source of this test's own, in a database
 * of its own (so that no other file's records meet its searches); each search is then sent with a live key
 * and with a test key, through the gateway and worker processes, and the answers must mean the same.
 */
describe('the sandbox answers as live does over the same records (gateway + worker processes)', () => {
  let database: { url: string; drop: () => Promise<void> };
  let restore: () => void;
  let stack: Stack;
  let api: Api;
  let live: string;
  let test: string;
  let dir: string;
  const source = `sandbox-parity-${randomUUID()}`;

  beforeAll(async () => {
    database = await ownDatabase('sandbox_parity');
    restore = switchDatabase(database.url);
    dir = mkdtempSync(join(tmpdir(), 'dossier-sandbox-parity-'));
    for (const [kind, records] of [
      ['person', SANDBOX_PEOPLE],
      ['company', SANDBOX_COMPANIES],
    ] as const) {
      const file = join(dir, `${kind}.jsonl`);
      writeFileSync(file, records.map((r) => JSON.stringify({ ...r, source })).join('\n'));
      const imported = await runCli(['import', kind, file]);
      expect([kind, imported.code]).toEqual([kind, 0]);
      expect(`${imported.stdout}${imported.stderr}`).toContain(`imported ${records.length}, `);
      expect(`${imported.stdout}${imported.stderr}`).toContain('rejected 0');
    }
    stack = await Stack.start({ label: 'sandbox-parity', env: { SIGNUP_CREDITS: '100' } });
    api = new Api(stack.baseUrl);
    ({ key: live } = await api.register(100));
    const created = await api.post<{ api_key: string }>('/v1/auth/keys', { mode: 'test' }, { key: live });
    test = created.body.api_key;
  });
  afterAll(async () => {
    await stack?.stop();
    restore?.();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each(SEARCHES)('%s: the same items, scores and matched_on with either key', async (_what, kind, path, body) => {
    const years = [year()];
    const [asLive, asTest] = await Promise.all([live, test].map((key) => api.post<Envelope>(path, body, { key })));
    years.push(year());
    expect([asLive!.status, asTest!.status]).toEqual([200, 200]);
    const liveItems = asLive!.body.results as (PersonResultItem | CompanyResultItem)[];
    const testItems = asTest!.body.results as (PersonResultItem | CompanyResultItem)[];

    expect(semantics(testItems)).toEqual(semantics(liveItems));
    for (const items of [liveItems, testItems]) {
      const scores = items.map((i) => i.match_score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      if (kind === 'person') expect(underivedAges(items as PersonResultItem[], years)).toEqual([]);
    }
    expect(liveItems.map((i) => i.sources)).toEqual(liveItems.map(() => ['local']));
    expect(testItems.map((i) => i.sources)).toEqual(testItems.map(() => ['sandbox']));
    // Each company field credited to a record of the item's one source (ADR 0068).
    const credited = (items: readonly (PersonResultItem | CompanyResultItem)[]) => [
      ...new Set(
        items
          .flatMap((i) => ('field_sources' in i ? Object.values(i.field_sources).flat() : []))
          .map((s) => s!.provider),
      ),
    ];
    if (kind === 'company') {
      expect(credited(liveItems)).toEqual(liveItems.length > 0 ? ['local'] : []);
      expect(credited(testItems)).toEqual(testItems.length > 0 ? ['sandbox'] : []);
    }
    // The local index's outcome is the sandbox's: found when there are items, not_found when there are none.
    const outcome = (res: Envelope, provider: string) => res.sources.find((s) => s.provider === provider)?.outcome;
    expect(outcome(asTest!.body, 'sandbox')).toBe(outcome(asLive!.body, 'local'));
    expect(outcome(asTest!.body, 'sandbox')).toBe(testItems.length > 0 ? 'found' : 'not_found');
  });

  it('answers the documented phone numbers and addresses with one item of the live fields', async () => {
    for (const c of SANDBOX_CASES) {
      if (c.kind !== 'phone' && c.kind !== 'email') continue;
      const [asLive, asTest] = await Promise.all(
        [live, test].map((key) => api.post<Envelope>(SANDBOX_ROUTES[c.kind], c.body, { key })),
      );
      const fields = (res: Envelope) => res.results.map((item) => Object.keys(item).sort());
      expect([c.answer, fields(asTest!.body)]).toEqual([c.answer, fields(asLive!.body)]);
      expect(asTest!.body.results).toHaveLength(1);
    }
  });
});
