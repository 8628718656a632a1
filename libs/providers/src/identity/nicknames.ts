import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Given names read as one: "Bob" and "Robert", "Peggy" and "Margaret", "Pepe" and "José", "Sasha" and
 * "Aleksandr". From the nicknames project's curated list with Dossier's additions, less its removals
 * (`nicknames/README.md` says what each file holds and why). Two names are variants of each other when
 * one is listed as a nickname of the other, in either direction — never through a third name: Robert and
 * William share "Bill" in some lists, and Joseph and Josephine share "Joey", but neither pair is one name.
 */

/** The folder shipped beside the compiled code (nest-cli.json assets); Jest runs the sources from the repository. */
const DIR = join(typeof __dirname === 'string' ? __dirname : resolve('libs/providers/src/identity'), 'nicknames');

let variants: ReadonlyMap<string, ReadonlySet<string>> | undefined;

/** The rows of one of the CSV files: its columns after the header, lines split at commas. */
function rowsOf(file: string): string[][] {
  return readFileSync(join(DIR, file), 'utf8')
    .split(/\r?\n/)
    .slice(1)
    .filter((line) => line.trim() !== '')
    .map((line) => line.split(',').map((v) => v.trim()));
}

function load(): ReadonlyMap<string, ReadonlySet<string>> {
  const removed = new Set(rowsOf('removals.csv').flatMap(([a, b]) => [`${a},${b}`, `${b},${a}`]));
  const map = new Map<string, Set<string>>();
  const link = (a: string, b: string) => {
    if (a === b || removed.has(`${a},${b}`)) return;
    map.set(a, (map.get(a) ?? new Set()).add(b));
    map.set(b, (map.get(b) ?? new Set()).add(a));
  };
  for (const [name, , nickname] of [...rowsOf('names.csv'), ...rowsOf('additions.csv')]) {
    if (name && nickname) link(name, nickname);
  }
  return map;
}

const NONE: ReadonlySet<string> = new Set();

/** The names `name` (one folded word: "bob") is read as besides itself: its nicknames and what it is a nickname of. */
export function nameVariants(name: string): ReadonlySet<string> {
  variants ??= load();
  return variants.get(name) ?? NONE;
}

/** Whether two folded given names are nicknames or variants of each other (not whether they are equal). */
export function areVariants(a: string, b: string): boolean {
  return nameVariants(a).has(b);
}
