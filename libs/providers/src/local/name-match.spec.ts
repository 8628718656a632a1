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

  it("matches a name with an apostrophe inside a word (O'Brien) written without it, spaced, or with another apostrophe", () => {
    for (const recorded of [
      "Conan O'Brien",
      'Conan OBrien',
      'Conan O Brien',
      'Conan O\u2019Brien',
      'Conan O\u02bcBrien',
    ]) {
      for (const searched of [
        "Conan O'Brien",
        'Conan OBrien',
        'Conan O Brien',
        'O\u2019Brien Conan',
        'conan o\u02bcbrien',
      ]) {
        expect([searched, recorded, score(searched, recorded) >= 0.95]).toEqual([searched, recorded, true]);
      }
    }
    expect(score("D'Angelo Russell", 'Dangelo Russell')).toBe(1);
    expect(score('N Diaye Fatou', "Fatou N'Diaye")).toBeCloseTo(0.95, 3);
    // Written the same way is still the better match.
    expect(score('Conan O Brien', 'Conan O Brien')).toBeGreaterThan(score('Conan O Brien', 'Conan OBrien'));
    // A typo in the spaced form is forgiven as one in the word.
    expect(score('Conan O Brian', "Conan O'Brien")).toBeGreaterThan(0.85);
  });

  it('matches a CJK name with its pinyin, spaced or not, in either order', () => {
    for (const searched of ['Wang Xiaoming', 'Xiaoming Wang', 'WANG Xiao-ming', 'Wang Xiao Ming', 'Wangxiaoming']) {
      expect([searched, score(searched, '王小明') >= 0.95]).toEqual([searched, true]);
    }
    expect(score('王小明', 'Wang Xiaoming')).toBe(1);
    expect(score('Li Na', '李娜')).toBe(1);
    expect(score('Lina', '李娜')).toBeCloseTo(0.95, 3);
  });

  it('matches a nickname or variant of a given name below the name itself, in either direction', () => {
    expect(score('Bob Chen', 'Robert Chen')).toBe(0.95);
    expect(score('Robert Chen', 'Bob Chen')).toBe(0.95);
    expect(score('Pepe García', 'José García')).toBe(0.95);
    expect(score('Bob Chen', 'Robert Chen')).toBeLessThan(score('Bob Chen', 'Bob Chen'));
    // Bill is William's, not Robert's; a name's nickname is not every name.
    expect(score('Bill Chen', 'Robert Chen')).toBeLessThan(0.6);
    expect(score('Bill Chen', 'William Chen')).toBe(0.95);
  });

  it('does not make different people match by joining or splitting words', () => {
    // Joining is one side's words against the other's, every word of both accounted for.
    expect(score('Ki Anderson', 'Kian Derson')).toBeLessThan(0.6);
    expect(score('Li Na', 'Lina Smith')).toBeLessThan(0.6);
    expect(score('Lina Smith', 'Li Na')).toBeLessThan(0.6);
    expect(score('Mary Ann', 'Maryann Jones')).toBeLessThan(0.6);
    expect(score('Conan O Brien', 'Conan Obi')).toBeLessThan(score('Conan O Brien', 'Conan OBrien'));
    expect(score('Wang Xiaoming', '王小红')).toBeLessThan(score('Wang Xiaoming', '王小明'));
    expect(score('Wang Xiaoming', 'Li Xiaoming')).toBeLessThan(0.6);
    expect(score('Brien Conan', "Conan O'Brien")).toBeLessThan(score('Conan O Brien', "Conan O'Brien"));
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
