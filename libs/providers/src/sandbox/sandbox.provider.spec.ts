import { LOOKUP_KINDS, jurisdictionKey, type LookupKind } from '@dossier/domain';
import { RESULT_SCHEMAS, SANDBOX_CASES, type LookupInputByKind } from '@dossier/contracts';
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
      expect(answer).toEqual({ outcome: c.items.length > 0 ? 'found' : 'not_found', items: c.items });
    },
  );

  it('documents, for every kind, at least one answer with results and one "not found"', () => {
    for (const kind of LOOKUP_KINDS) {
      const cases = SANDBOX_CASES.filter((c) => c.kind === kind);
      expect([kind, cases.some((c) => c.items.length > 0)]).toEqual([kind, true]);
      expect([kind, cases.some((c) => c.items.length === 0)]).toEqual([kind, true]);
    }
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
