import { conflictOf, givenNamesAgree, type PersonNames } from './person-conflict';
import { areVariants, nameVariants } from './nicknames';

const named = (full_name: string | null, over: Partial<PersonNames> = {}): PersonNames => ({
  full_name,
  first_name: null,
  last_name: null,
  aliases: [],
  birth_year: null,
  ...over,
});

/** Whether the two can be one person (no conflict). */
const oneCanBe = (a: PersonNames, b: PersonNames) => conflictOf(a, b) === null;

describe('nicknames and variants of given names', () => {
  it("reads the curated list's nicknames both ways, and Dossier's additions outside US English", () => {
    for (const [a, b] of <[string, string][]>[
      ['robert', 'bob'],
      ['bill', 'william'],
      ['margaret', 'peggy'],
      ['benjamin', 'ben'],
      ['jose', 'pepe'],
      ['francisco', 'paco'],
      ['aleksandr', 'sasha'],
      ['alexander', 'aleksandr'],
      ['muhammad', 'mohammed'],
      ['giuseppe', 'beppe'],
    ])
      expect([a, b, areVariants(a, b), areVariants(b, a)]).toEqual([a, b, true, true]);
  });

  it('leaves out what removals.csv lists, and never links two names through a third', () => {
    // Bill is listed under Robert too; Robert and William share "Bill", Joseph and Josephine "Joey".
    expect(areVariants('robert', 'bill')).toBe(false);
    expect(areVariants('robert', 'william')).toBe(false);
    expect(areVariants('joseph', 'josephine')).toBe(false);
    // A man's and a woman's given name are not one.
    expect(areVariants('louis', 'louise')).toBe(false);
    expect(areVariants('andrew', 'andrea')).toBe(false);
    expect(nameVariants('zzyzx').size).toBe(0);
  });

  it('takes an initial, a nickname and a spelling across transliterations as the same given name', () => {
    expect(givenNamesAgree('j', 'john')).toBe(true);
    expect(givenNamesAgree('j', 'mary')).toBe(false);
    expect(givenNamesAgree('dmitriy', 'dmitri')).toBe(true);
    expect(givenNamesAgree('ana', 'anna')).toBe(true);
    expect(givenNamesAgree('joan', 'john')).toBe(false);
  });
});

describe('whether two person records can be one person', () => {
  it('keeps people whose family names differ apart, and says so', () => {
    const why = conflictOf(named('Grace Hopper'), named('Marquis Ortiz'));
    expect(why).toBe('family names differ (Hopper and Ortiz) and no alias links them');
  });

  it('lets an alias link family names (a maiden name)', () => {
    expect(oneCanBe(named('Jane Doe', { aliases: ['Jane Smith'] }), named('Jane Smith'))).toBe(true);
    expect(oneCanBe(named('Jane Doe'), named('Jane Smith'))).toBe(false);
  });

  it('keeps given names that are neither equal, an initial nor nicknames apart (a household)', () => {
    expect(conflictOf(named('John Smith'), named('Joan Smith'))).toBe(
      'given names differ (John and Joan, not nicknames of each other)',
    );
    expect(oneCanBe(named('Louis Martin'), named('Louise Martin'))).toBe(false);
    expect(oneCanBe(named('J. Smith'), named('John Smith'))).toBe(true);
    expect(oneCanBe(named('Bob Chen'), named('Robert Chen'))).toBe(true);
    expect(oneCanBe(named('Peggy Olson'), named('Margaret Olson'))).toBe(true);
    expect(oneCanBe(named('Pepe García'), named('José Garcia'))).toBe(true);
    expect(oneCanBe(named('Sasha Ivanova'), named('Aleksandra Ivanova'))).toBe(true);
  });

  it('keeps birth years more than a year apart apart (a father and son of one name), one year is slack', () => {
    expect(conflictOf(named('John Smith', { birth_year: 1960 }), named('John Smith', { birth_year: 1990 }))).toBe(
      'born 1960 and 1990, more than a year apart',
    );
    expect(oneCanBe(named('John Smith', { birth_year: 1960 }), named('John Smith', { birth_year: 1961 }))).toBe(true);
    expect(oneCanBe(named('John Smith', { birth_year: 1960 }), named('John Smith'))).toBe(true);
  });

  it('keeps Sr and Jr apart, and reads a name without a suffix as either', () => {
    expect(oneCanBe(named('John Smith Sr'), named('John Smith Jr.'))).toBe(false);
    expect(oneCanBe(named('John Smith'), named('John Smith Jr'))).toBe(true);
    expect(oneCanBe(named('Dr. John Smith'), named('John Smith'))).toBe(true);
  });

  it('reads names in any order, written apart or together, transliterated, and compound family names', () => {
    expect(oneCanBe(named('Smith John'), named('John Smith'))).toBe(true);
    expect(oneCanBe(named('王小明'), named('Xiaoming Wang'))).toBe(true);
    expect(oneCanBe(named('Wang Xiao Ming'), named('Wang Xiaoming'))).toBe(true);
    expect(oneCanBe(named('Jürgen Müller'), named('Juergen Mueller'))).toBe(true);
    expect(oneCanBe(named('Zoë Martínez-Ortega'), named('Zoe Martinez'))).toBe(true);
    expect(oneCanBe(named('John Adam Smith'), named('Adam Smith'))).toBe(true);
    expect(oneCanBe(named('John Adam Smith'), named('Mary Adam Smith'))).toBe(false);
  });

  it('uses the given and family name fields where a record has them', () => {
    const vendor = named('R. Chen', { first_name: 'Robert', last_name: 'Chen' });
    expect(oneCanBe(vendor, named('Bob Chen'))).toBe(true);
    expect(oneCanBe(vendor, named('Bob Lee'))).toBe(false);
  });

  it('finds nothing to conflict in a record without a name or a birth year', () => {
    expect(oneCanBe(named(null), named('Grace Hopper', { birth_year: 1906 }))).toBe(true);
  });
});
