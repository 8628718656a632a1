import { jest } from '@jest/globals';
import { LOOKUP_KINDS, jurisdictionKey, personRowOf, type LookupKind } from '@dossier/domain';
import {
  PROVIDER_ITEM_SCHEMAS,
  SANDBOX_CASES,
  SANDBOX_PEOPLE,
  SANDBOX_UNLISTED,
  type CompanyInput,
  type LookupInputByKind,
  type PersonInput,
  type SandboxFind,
} from '@dossier/contracts';
import { sandboxFindsOf } from '@dossier/testing';
import { emailItem } from '../email-item';
import { libphonenumberProvider } from '../libphonenumber/libphonenumber.provider';
import { unguardedContext } from '../provider';
import { PROVIDERS, providersFor } from '../registry';
import { sandboxProvider } from './sandbox.provider';

/** The year the clock says in these tests: a person's age is this year's, as live derives it. */
const YEAR = 2030;

const ctx = () => unguardedContext(new AbortController().signal);
const lookup = <K extends LookupKind>(kind: K, input: LookupInputByKind[K]) =>
  sandboxProvider.lookup(kind, input, ctx());

/** What a person or company search found, as the data set writes it. */
async function finds(kind: 'person' | 'company', input: PersonInput | CompanyInput): Promise<SandboxFind[]> {
  const answer = await lookup(kind, input);
  return sandboxFindsOf(kind, answer.items as { id: string; match_score: number; matched_on: string[] }[]);
}

describe('sandbox provider', () => {
  beforeAll(() => {
    jest.useFakeTimers({ now: Date.UTC(YEAR, 5, 15), doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  });
  afterAll(() => {
    jest.useRealTimers();
  });

  it.each(SANDBOX_CASES.map((c) => [`${c.kind}: ${c.answer}`, c] as const))(
    'answers %s as documented, with items that keep the result contract',
    async (_name, c) => {
      const answer = await lookup(c.kind, c.body as LookupInputByKind[LookupKind]);
      for (const item of answer.items) {
        const checked = PROVIDER_ITEM_SCHEMAS[c.kind].safeParse(item);
        expect(checked.success ? [] : checked.error.issues).toEqual([]);
        expect(item.sources).toEqual(['sandbox']);
      }
      if (c.kind === 'phone' || c.kind === 'email') {
        const detail = c.outcome === 'unknown' ? { detail: SANDBOX_UNLISTED } : {};
        expect(answer).toEqual({ outcome: c.outcome, items: c.items, ...detail });
      } else {
        expect([answer.outcome, await finds(c.kind, c.body)]).toEqual([c.outcome, c.finds]);
      }
    },
  );

  it('documents, for every kind, an answer with results, and what any input not listed gets', () => {
    for (const kind of LOOKUP_KINDS) {
      const cases = SANDBOX_CASES.filter((c) => c.kind === kind);
      const found = cases.map((c) => ('items' in c ? c.items.length : c.finds.length));
      expect([kind, cases.some((c, i) => c.outcome === 'found' && found[i]! > 0)]).toEqual([kind, true]);
      // API.md: a phone or e-mail lookup always answers exactly one item; a person or company may find nobody.
      const oneItem = kind === 'phone' || kind === 'email';
      expect([kind, found.every((n) => n === 1 || !oneItem)]).toEqual([kind, true]);
      expect([kind, cases.some((c) => c.outcome === (oneItem ? 'unknown' : 'not_found'))]).toEqual([kind, true]);
    }
  });

  it('gives its listed phone and e-mail items the fields of the live ones', async () => {
    for (const c of SANDBOX_CASES) {
      if (c.kind !== 'phone' && c.kind !== 'email') continue;
      const live =
        c.kind === 'phone'
          ? (await libphonenumberProvider.lookup('phone', { phone: c.items[0]!.e164! }, ctx())).items[0]!
          : emailItem(c.items[0]!.email, 'email');
      expect([c.answer, Object.keys(c.items[0]!).sort()]).toEqual([c.answer, Object.keys(live).sort()]);
    }
  });

  it('answers ANY phone number or address not in the data set with exactly one item, as a live key does', async () => {
    const inputs: [LookupKind, LookupInputByKind[LookupKind]][] = [
      ['phone', { phone: '+1 650 253 0000' }],
      ['phone', { phone: '030 123456', country: 'DE' }],
      ['phone', { phone: '+1 555 0100' }],
      ['email', { email: 'Someone.Else@Gmail.com' }],
      ['email', { email: 'not an address' }],
    ];
    for (const [kind, input] of inputs) {
      const answer = await lookup(kind, input);
      expect([input, answer.outcome, answer.detail, answer.items.length]).toEqual([
        input,
        'unknown',
        SANDBOX_UNLISTED,
        1,
      ]);
      const item = answer.items[0]!;
      const checked = PROVIDER_ITEM_SCHEMAS[kind].safeParse(item);
      expect(checked.success ? [] : checked.error.issues).toEqual([]);
      expect(item.sources).toEqual(['sandbox']);
      // Deterministic: the same input, the same answer.
      await expect(lookup(kind, input)).resolves.toEqual(answer);
    }
    const national = await lookup('phone', { phone: '030 123456', country: 'DE' });
    expect(national.items[0]).toMatchObject({ input: '030 123456', e164: '+4930123456', region: 'DE', carrier: null });
    const other = await lookup('email', { email: 'Someone.Else@Gmail.com' });
    expect(other.items[0]).toMatchObject({ email: 'Someone.Else@Gmail.com', deliverability: 'unknown', accounts: [] });
  });

  it('finds its people by every field a live person search takes, scored as live', async () => {
    expect(await finds('person', { phone: '+1 555-555-0101' })).toEqual([
      { record: 'alex-portland', match_score: 0.9, matched_on: ['phone'] },
    ]);
    expect(await finds('person', { username: 'Alex.Sandbox92' })).toEqual([
      { record: 'alex-austin', match_score: 0.7, matched_on: ['username'] },
    ]);
    expect(await finds('person', { name: 'Alex Sandbox', email: 'asandbox@example.com' })).toEqual([
      { record: 'alex-portland', match_score: 0.988, matched_on: ['name', 'email'] },
      { record: 'alex-austin', match_score: 0.75, matched_on: ['name'] },
      { record: 'alex-springfield', match_score: 0.75, matched_on: ['name'] },
    ]);
    // Born 1974 to 1990 in 2030: the one born in 1992 is left out, as the index leaves out those outside the range.
    expect(await finds('person', { name: 'alex sandbox', age_range: '40-55' })).toEqual([
      { record: 'alex-portland', match_score: 0.8, matched_on: ['name', 'age_range'] },
      { record: 'alex-springfield', match_score: 0.8, matched_on: ['name', 'age_range'] },
    ]);
    // An initial for the name, a state for the place: the one known there first, the others known only elsewhere.
    expect(await finds('person', { name: 'A. Sandbox', location: 'Oregon' })).toEqual([
      { record: 'alex-portland', match_score: 0.786, matched_on: ['name', 'location'] },
      { record: 'alex-austin', match_score: 0.59, matched_on: ['name'] },
      { record: 'alex-springfield', match_score: 0.59, matched_on: ['name'] },
    ]);
    expect((await finds('person', { name: 'Alex Sandbox', country: 'US' })).map((f) => f.matched_on)).toEqual([
      ['name', 'country'],
      ['name', 'country'],
      ['name', 'country'],
    ]);
    expect(await finds('person', { name: 'Alex Sandbox', country: 'GB' })).toEqual([]);
  });

  it('answers each person with the age live derives from the birth year, this year', async () => {
    const { items } = await lookup('person', { name: 'Alex Sandbox' });
    const ages = items.map((i) => ('birth_year' in i ? [i.birth_year, i.age] : [])).sort();
    expect(ages).toEqual([
      [1975, YEAR - 1975],
      [1980, YEAR - 1980],
      [1992, YEAR - 1992],
    ]);
  });

  it('finds its companies by name, registration number (however written) and domain, in the country asked for', async () => {
    expect(await finds('company', { registration_number: '1', country: 'GB' })).toEqual([
      { record: 'widgets', match_score: 0.95, matched_on: ['registration_number', 'country'] },
    ]);
    expect(await finds('company', { domain: 'https://www.widgets.example.com/about' })).toEqual([
      { record: 'widgets', match_score: 0.9, matched_on: ['domain'] },
    ]);
    expect(await finds('company', { company_name: 'Sandbox Dissolved', registration_number: '00000002' })).toEqual([
      { record: 'dissolved', match_score: 0.988, matched_on: ['company_name', 'registration_number'] },
    ]);
    expect(await finds('company', { company_name: 'Sandbox Widgets Ltd', country: 'US' })).toEqual([]);
    const [dissolved] = (await lookup('company', { company_name: 'Sandbox Dissolved Ltd' })).items;
    expect(dissolved).toMatchObject({
      name: 'Sandbox Dissolved Ltd',
      status: 'dissolved',
      registration_number: '00000002',
    });
  });

  it('holds records whose every e-mail address and phone number is searchable', () => {
    const unsearchable: string[] = [];
    for (const record of SANDBOX_PEOPLE)
      personRowOf(record, { onInvalid: (_field, value) => unsearchable.push(value) });
    expect(unsearchable).toEqual([]);
  });

  it("writes its companies' jurisdiction and country as the live providers do (ISO style, upper-case)", async () => {
    const { items } = await lookup('company', { company_name: 'Sandbox' });
    const companies = items.map((item) => PROVIDER_ITEM_SCHEMAS.company.parse(item));
    expect(companies.length).toBeGreaterThan(1);
    for (const item of companies) {
      expect(item.jurisdiction).toBe(jurisdictionKey(item.jurisdiction ?? ''));
      expect(item.country).toMatch(/^[A-Z]{2}$/);
    }
  });

  it("credits its companies' fields to itself, each to its synthetic record (ADR 0068)", async () => {
    const { items } = await lookup('company', { company_name: 'Sandbox' });
    const credited = items.flatMap((item) => ('field_sources' in item ? Object.values(item.field_sources).flat() : []));
    expect(credited.length).toBeGreaterThan(0);
    for (const source of credited)
      expect(source).toEqual({ provider: 'sandbox', record_id: expect.stringMatching(/^sandbox:/) });
  });

  it('matches the same input written differently (national format, case, spaces)', async () => {
    const national = await lookup('phone', { phone: '(555) 555-0100', country: 'US' });
    expect(national.items).toEqual([expect.objectContaining({ e164: '+15555550100', valid: true })]);
    const shouted = await lookup('email', { email: ' Deliverable@Example.com ' });
    expect(shouted.items).toEqual([expect.objectContaining({ deliverability: 'deliverable' })]);
    const spaced = await lookup('person', { name: 'alex   SANDBOX' });
    expect(spaced.items).toHaveLength(3);
  });

  it('answers copies: what the fan-out does to one answer is not in the next', async () => {
    const first = await lookup('person', { name: 'Alex Sandbox' });
    (first.items[0] as { emails: string[] }).emails.push('changed@example.com');
    const again = await lookup('person', { name: 'Alex Sandbox' });
    expect(JSON.stringify(again)).not.toContain('changed@example.com');
  });

  it('is the only provider of test lookups and never one of live ones', () => {
    for (const kind of LOOKUP_KINDS) {
      expect(providersFor(kind, PROVIDERS, 'test')).toEqual([sandboxProvider]);
      expect(providersFor(kind, PROVIDERS)).not.toContain(sandboxProvider);
      expect(providersFor(kind, PROVIDERS).length).toBeGreaterThan(0);
    }
  });
});
