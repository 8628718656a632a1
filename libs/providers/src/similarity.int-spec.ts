import { normalizeCompanyName, normalizePersonName } from '@dossier/domain';
import { sql } from '@dossier/testing';
import { trigramSimilarity, trigramsOf } from './similarity';

/**
 * The registries' candidates are scored with the measure the local index ranks by in SQL: pg_trgm's
 * `similarity()`. Held to the real extension in the run's database, on the normalised forms both sides
 * compare.
 */
const PAIRS: [string, string][] = [
  ['bp', 'bp'],
  ['bp', 'bp international'],
  ['acme', 'acme widgets'],
  ['acme widgets', 'widgets acme'],
  ['github', 'gitlab'],
  ['deutsche bank', 'deutsche bahn'],
  ['siemens', 'siemens healthineers'],
  ['a', 'a b'],
  ['x', 'y'],
  ['o neill smith', 'oneill smith'],
  ['jon smith', 'john smith'],
  ['123456', '0123456'],
  ['sao paulo alpargatas', 'alpargatas'],
];

describe('trigramSimilarity', () => {
  it.each(PAIRS)('agrees with pg_trgm similarity(%p, %p)', async (a, b) => {
    const [row] = await sql<{ s: number }>('SELECT similarity($1, $2)::float8 AS s', [a, b]);
    expect(trigramSimilarity(a, b)).toBeCloseTo(row!.s, 5);
  });

  it("extracts pg_trgm's trigrams of each word: two spaces before, one after", async () => {
    const [row] = await sql<{ t: string[] }>('SELECT show_trgm($1) AS t', ['Acme ltd']);
    expect([...trigramsOf('Acme ltd')].sort()).toEqual([...row!.t].sort());
  });

  it('scores names once normalised: legal forms, case, accents and punctuation do not count', () => {
    const company = (a: string, b: string) => trigramSimilarity(normalizeCompanyName(a), normalizeCompanyName(b));
    expect(company('ACME WIDGETS LIMITED', 'Acme Widgets Ltd.')).toBe(1);
    expect(company('Société Générale S.A.', 'SOCIETE GENERALE')).toBe(1);
    expect(company('BP p.l.c.', 'BP INTERNATIONAL LIMITED')).toBeLessThan(0.3);
    const person = (a: string, b: string) => trigramSimilarity(normalizePersonName(a), normalizePersonName(b));
    expect(person('Zoë O’Neill', 'zoe o neill')).toBe(1);
    expect(trigramSimilarity('', 'acme')).toBe(0);
  });
});
