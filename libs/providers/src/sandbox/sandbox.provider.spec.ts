import { LOOKUP_KINDS, jurisdictionKey, type LookupKind } from '@dossier/domain';
import { RESULT_SCHEMAS, SANDBOX_CASES, SANDBOX_UNLISTED, type LookupInputByKind } from '@dossier/contracts';
import { unguardedContext } from '../provider';
import { PROVIDERS, providersFor } from '../registry';
import { sandboxProvider } from './sandbox.provider';

describe('sandbox provider', () => {
  it.each(SANDBOX_CASES.map((c) => [`${c.kind}: ${c.answer}`, c] as const))(
    'answers %s as documented, with items that keep the result contract',
    async (_name, c) => {
      for (const item of c.items) {
        const checked = RESULT_SCHEMAS[c.kind].safeParse(item);
        expect(checked.success ? [] : checked.error.issues).toEqual([]);
      }
      const answer = await sandboxProvider.lookup(
        c.kind,
        c.body as LookupInputByKind[LookupKind],
        unguardedContext(AbortSignal.timeout(1000)),
      );
      expect(answer).toEqual({
        outcome: c.outcome,
        items: c.items,
        ...(c.outcome === 'unknown' ? { detail: SANDBOX_UNLISTED } : {}),
      });
    },
  );

  it('documents, for every kind, an answer with results, and what any input not listed gets', () => {
    for (const kind of LOOKUP_KINDS) {
      const cases = SANDBOX_CASES.filter((c) => c.kind === kind);
      expect([kind, cases.some((c) => c.outcome === 'found' && c.items.length > 0)]).toEqual([kind, true]);
      // API.md: a phone or e-mail lookup always answers exactly one item; a person or company may find nobody.
      const oneItem = kind === 'phone' || kind === 'email';
      expect([kind, cases.every((c) => c.items.length === 1 || !oneItem)]).toEqual([kind, true]);
      expect([kind, cases.some((c) => c.outcome === (oneItem ? 'unknown' : 'not_found'))]).toEqual([kind, true]);
    }
  });

  it('answers ANY phone number or address not in the data set with exactly one item, as a live key does', async () => {
    const ctx = unguardedContext(AbortSignal.timeout(1000));
    const inputs: [LookupKind, LookupInputByKind[LookupKind]][] = [
      ['phone', { phone: '+1 650 253 0000' }],
      ['phone', { phone: '030 123456', country: 'DE' }],
      ['phone', { phone: '+1 555 0100' }],
      ['email', { email: 'Someone.Else@Gmail.com' }],
      ['email', { email: 'not an address' }],
    ];
    for (const [kind, input] of inputs) {
      const answer = await sandboxProvider.lookup(kind, input, ctx);
      expect([input, answer.outcome, answer.detail, answer.items.length]).toEqual([
        input,
        'unknown',
        SANDBOX_UNLISTED,
        1,
      ]);
      const item = answer.items[0]!;
      const checked = RESULT_SCHEMAS[kind].safeParse(item);
      expect(checked.success ? [] : checked.error.issues).toEqual([]);
      expect(item.sources).toEqual(['sandbox']);
      // Deterministic: the same input, the same answer.
      await expect(sandboxProvider.lookup(kind, input, ctx)).resolves.toEqual(answer);
    }
    const national = await sandboxProvider.lookup('phone', { phone: '030 123456', country: 'DE' }, ctx);
    expect(national.items[0]).toMatchObject({ input: '030 123456', e164: '+4930123456', region: 'DE', carrier: null });
    const other = await sandboxProvider.lookup('email', { email: 'Someone.Else@Gmail.com' }, ctx);
    expect(other.items[0]).toMatchObject({ email: 'Someone.Else@Gmail.com', deliverability: 'unknown', accounts: [] });
  });

  it("writes its companies' jurisdiction and country as the live providers do (ISO style, upper-case)", () => {
    const companies = SANDBOX_CASES.flatMap((c) => (c.kind === 'company' ? c.items : [])).map((item) =>
      RESULT_SCHEMAS.company.parse(item),
    );
    expect(companies.length).toBeGreaterThan(0);
    for (const item of companies) {
      expect(item.jurisdiction).toBe(jurisdictionKey(item.jurisdiction ?? ''));
      expect(item.country).toMatch(/^[A-Z]{2}$/);
    }
  });

  it('matches the same input written differently (national format, case, spaces)', async () => {
    const ctx = unguardedContext(AbortSignal.timeout(1000));
    const national = await sandboxProvider.lookup('phone', { phone: '(555) 555-0100', country: 'US' }, ctx);
    expect(national.items).toEqual([expect.objectContaining({ e164: '+15555550100', valid: true })]);
    const shouted = await sandboxProvider.lookup('email', { email: ' Deliverable@Example.com ' }, ctx);
    expect(shouted.items).toEqual([expect.objectContaining({ deliverability: 'deliverable' })]);
    const spaced = await sandboxProvider.lookup('person', { name: 'alex   SANDBOX' }, ctx);
    expect(spaced.items).toHaveLength(3);
  });

  it('is the only provider of test lookups and never one of live ones', () => {
    for (const kind of LOOKUP_KINDS) {
      expect(providersFor(kind, PROVIDERS, 'test')).toEqual([sandboxProvider]);
      expect(providersFor(kind, PROVIDERS)).not.toContain(sandboxProvider);
      expect(providersFor(kind, PROVIDERS).length).toBeGreaterThan(0);
    }
  });
});
