import { normalizePersonName } from '@dossier/domain';
import { areVariants } from './nicknames';

/**
 * Whether two person records can describe one person (API.md, "Result items"): they cannot when their
 * names cannot be one person's — family names differ and no alias links them, or given names are neither
 * equal, an initial of each other, nor nicknames of each other — when their birth years are more than a
 * year apart, or when their generational suffixes differ (Sr and Jr). A shared identifier never outweighs
 * a conflict: households share phones, colleagues share role addresses, fathers and sons share names.
 */
export interface PersonNames {
  full_name: string | null;
  first_name: string | null;
  last_name: string | null;
  aliases: readonly string[];
  birth_year: number | null;
}

/** Birth years further apart than this are two people. */
const BIRTH_YEAR_SLACK = 1;

/** Words before a name that are not part of it. */
const TITLES: ReadonlySet<string> = new Set(['mr', 'mrs', 'ms', 'miss', 'mx', 'dr', 'prof', 'sir', 'dame']);
/** Generational suffixes after a name, as the generation they name. */
const GENERATIONS: ReadonlyMap<string, number> = new Map([
  ['sr', 1],
  ['senior', 1],
  ['jr', 2],
  ['junior', 2],
  ['ii', 2],
  ['iii', 3],
  ['iv', 4],
]);

/** One way a record writes a person's name: its folded words, and the generation a suffix names (null: none). */
interface NameForm {
  words: string[];
  generation: number | null;
}

function formOf(name: string): NameForm | null {
  const words = normalizePersonName(name).split(' ').filter(Boolean);
  while (words.length > 1 && TITLES.has(words[0]!)) words.shift();
  let generation: number | null = null;
  if (words.length > 2 && GENERATIONS.has(words[words.length - 1]!)) generation = GENERATIONS.get(words.pop()!)!;
  return words.length > 0 ? { words, generation } : null;
}

const forms = new WeakMap<PersonNames, NameForm[]>();

/** The record's names: its full name, its given and family name together, and each alias (read once per record). */
function formsOf(p: PersonNames): NameForm[] {
  let known = forms.get(p);
  if (!known) {
    const names = [p.full_name, p.first_name && p.last_name ? `${p.first_name} ${p.last_name}` : null, ...p.aliases];
    known = names.filter((n): n is string => n !== null && n.trim() !== '').flatMap((n) => formOf(n) ?? []);
    forms.set(p, known);
  }
  return known;
}

/**
 * A word as spellings of one name across transliterations compare: ue, oe, ae as u, o, a (Müller is
 * "mueller" or "muller"), ph as f, kh as h, ks as x, y as i, w as v, and a doubled letter once (Anna,
 * Ana; Dmitriy, Dmitri; Smyth, Smith).
 */
export function spellingKey(word: string): string {
  return word
    .replace(/ue/g, 'u')
    .replace(/oe/g, 'o')
    .replace(/ae/g, 'a')
    .replace(/ph/g, 'f')
    .replace(/kh/g, 'h')
    .replace(/ks/g, 'x')
    .replace(/y/g, 'i')
    .replace(/w/g, 'v')
    .replace(/(.)\1+/g, '$1');
}

function sameWord(a: string, b: string): boolean {
  return a === b || (a.length > 1 && b.length > 1 && spellingKey(a) === spellingKey(b));
}

/** Given names that can be one person's: the same (or spelt as one), an initial of the other, or nicknames. */
export function givenNamesAgree(a: string, b: string): boolean {
  if (sameWord(a, b)) return true;
  if (a.length === 1 || b.length === 1) return a[0] === b[0];
  return areVariants(a, b);
}

/**
 * Whether two ways of writing a name can be one person's, in any word order: some word of each is the
 * same family name, and what is left — the given names — agrees: the first given name of one agrees
 * with a given name of the other (a middle name goes by: "John Adam Smith" may be "Adam Smith"), or both
 * are the same letters written apart or together ("Wang Xiao Ming", "Wang Xiaoming"). A name of one word
 * agrees with any name that holds it.
 */
function formsAgree(a: readonly string[], b: readonly string[]): boolean {
  if (a.join('') === b.join('')) return true;
  for (const [i, fa] of a.entries()) {
    for (const [j, fb] of b.entries()) {
      if (!sameWord(fa, fb)) continue;
      const givenA = a.filter((_, k) => k !== i);
      const givenB = b.filter((_, k) => k !== j);
      if (givenA.length === 0 || givenB.length === 0 || givenA.join('') === givenB.join('')) return true;
      if (givenB.some((g) => givenNamesAgree(givenA[0]!, g)) || givenA.some((g) => givenNamesAgree(givenB[0]!, g)))
        return true;
    }
  }
  return false;
}

/** How a record's family and given name read in a reason: as recorded, or the name's last and first word. */
function partsOf(p: PersonNames): { family: string; given: string } {
  const words = (p.full_name ?? '').trim().split(/\s+/);
  return { family: p.last_name ?? words[words.length - 1] ?? '', given: p.first_name ?? words[0] ?? '' };
}

/**
 * Why two records cannot be one person, in words for the investigator reading the answer; null when
 * nothing about them conflicts (a record without a name or a birth year conflicts with no name or year).
 */
export function conflictOf(a: PersonNames, b: PersonNames): string | null {
  if (a.birth_year !== null && b.birth_year !== null && Math.abs(a.birth_year - b.birth_year) > BIRTH_YEAR_SLACK)
    return `born ${Math.min(a.birth_year, b.birth_year)} and ${Math.max(a.birth_year, b.birth_year)}, more than a year apart`;
  const formsA = formsOf(a);
  const formsB = formsOf(b);
  if (formsA.length === 0 || formsB.length === 0) return null;
  const generationsA = new Set(formsA.flatMap((f) => f.generation ?? []));
  const generationsB = new Set(formsB.flatMap((f) => f.generation ?? []));
  if (generationsA.size > 0 && generationsB.size > 0 && ![...generationsA].some((g) => generationsB.has(g)))
    return 'generational suffixes differ (Sr and Jr are two people)';
  if (formsA.some((fa) => formsB.some((fb) => formsAgree(fa.words, fb.words)))) return null;
  const pa = partsOf(a);
  const pb = partsOf(b);
  const sharesAWord = formsA.some((fa) =>
    formsB.some((fb) => fa.words.some((w) => fb.words.some((v) => sameWord(w, v)))),
  );
  return sharesAWord
    ? `given names differ (${pa.given} and ${pb.given}, not nicknames of each other)`
    : `family names differ (${pa.family} and ${pb.family}) and no alias links them`;
}
