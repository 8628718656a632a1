import { MAX_OFFICERS } from '@dossier/contracts';
import { controllerKindOf, controllerOf, controllersOf, isPscKind, officersOf } from './company-people';

describe('Companies House officers and PSCs as company facts', () => {
  it("reads the register's kinds as four: individual, corporate, legal person, other", () => {
    expect(controllerKindOf('individual-person-with-significant-control')).toBe('individual');
    expect(controllerKindOf('individual-beneficial-owner')).toBe('individual');
    expect(controllerKindOf('corporate-entity-person-with-significant-control')).toBe('corporate');
    expect(controllerKindOf('legal-person-beneficial-owner')).toBe('legal_person');
    expect(controllerKindOf('super-secure-person-with-significant-control')).toBe('other');
    expect(isPscKind('super-secure-person-with-significant-control')).toBe(true);
    expect(isPscKind('persons-with-significant-control-statement')).toBe(false);
    expect(isPscKind('totals#persons-of-significant-control-snapshot')).toBe(false);
    expect(isPscKind(undefined)).toBe(false);
  });

  it(`keeps at most ${MAX_OFFICERS} officers, the serving ones first, then the latest appointed`, () => {
    const items = Array.from({ length: 80 }, (_, i) => ({
      name: `OFFICER ${i}`,
      officer_role: 'director',
      appointed_on: `20${String(10 + (i % 10)).padStart(2, '0')}-01-01`,
      resigned_on: i % 2 === 0 ? '2024-01-01' : null,
      date_of_birth: { month: 13, year: 1970 },
    }));
    const officers = officersOf('00000001', { items });
    expect(officers).toHaveLength(MAX_OFFICERS);
    expect(officers.slice(0, 40).every((o) => o.resigned_on === null)).toBe(true);
    expect(officers[0]!.appointed_on).toBe('2019-01-01');
    // A month that is none is not shown; the year is.
    expect(officers[0]).toMatchObject({ birth_year: 1970, birth_month: null });
    // Without a link, the record is named by its place in the company's list.
    expect(officers.every((o) => o.source.record_id.startsWith('/company/00000001/officers#'))).toBe(true);
  });

  it('names a PSC from its name elements when no name is written, and null when withheld', () => {
    const named = controllerOf(
      '00000001',
      { kind: 'individual-person-with-significant-control', name_elements: { forename: 'Ada', surname: 'Lovelace' } },
      0,
    );
    expect(named).toMatchObject({ name: 'Ada Lovelace', natures_of_control: [], notified_on: null });
    const secret = controllerOf('00000001', { kind: 'super-secure-person-with-significant-control' }, 3);
    expect(secret).toMatchObject({
      name: null,
      kind: 'other',
      source: { provider: 'companies-house', record_id: '/company/00000001/persons-with-significant-control#3' },
    });
    expect(controllersOf([{ ...named, ceased_on: '2020-01-01' }, secret]).map((c) => c.name)).toEqual([
      null,
      'Ada Lovelace',
    ]);
  });
});
