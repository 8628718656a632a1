import { normalizePersonName } from '@dossier/domain';
import { birthYearsOf } from './local.provider';
import { nameMatchScore } from './name-match';

const score = (searched: string, recorded: string) =>
  nameMatchScore(normalizePersonName(searched).split(' '), normalizePersonName(recorded).split(' '));

describe('nameMatchScore', () => {
  it('is 1 for the same name in either order, accents and case aside', () => {
    expect(score('Zoë Martínez', 'zoe martinez')).toBe(1);
    expect(score('Martinez Zoe', 'Zoë Martínez')).toBe(1);
  });

  it('forgives an initial, a typo and a missing middle name, each a little', () => {
    expect(score('J. Smith', 'John Smith')).toBeCloseTo(0.925, 3);
    expect(score('Jon Smith', 'John Smith')).toBeGreaterThan(0.85);
    expect(score('Ada Lovelace', 'Augusta Ada Lovelace')).toBeCloseTo(0.95, 3);
    expect(score('Ada Lovelace', 'Augusta Ada Lovelace')).toBeLessThan(score('Ada Lovelace', 'Ada Lovelace'));
  });

  it('does not match different names', () => {
    expect(score('John Smith', 'Mary Jones')).toBe(0);
    expect(score('John Smith', 'John Doe')).toBeLessThan(0.6);
    expect(nameMatchScore([], ['john'])).toBe(0);
  });
});

describe('birthYearsOf', () => {
  it('gives the birth years of someone that age this year, either side of the birthday', () => {
    expect(birthYearsOf('30-40', 2026)).toEqual({ min: 1985, max: 1996 });
    expect(birthYearsOf('65+', 2026)).toEqual({ min: null, max: 1961 });
    expect(birthYearsOf('-25', 2026)).toEqual({ min: 2000, max: null });
  });
});
