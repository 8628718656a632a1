import { Faker, base, en, en_GB, en_US } from '@faker-js/faker';
import type { DataSource } from 'typeorm';
import { companyRowOf, personRowOf, type CompanyRecord, type PersonRecord } from '@dossier/domain';
import { writeCompanies, writePeople, type WriteCounts } from '@dossier/persistence';
import { BatchWriter } from './batches';
import { DEMO_DEFAULTS } from './demo-defaults';

export { DEMO_DEFAULTS };

/**
 * The demo set: synthetic people and companies from a fixed-seed faker, `source: "demo"`, the same
 * records (byte for byte) for the same counts on every run and machine — so re-running changes nothing,
 * and the walkthrough (docs/walkthrough.md) can search for a person and a company it knows are there. Contact data is
 * fictional by construction: e-mail addresses on example.com/.org/.net, US numbers in 555-01xx and UK
 * numbers in Ofcom's drama range (07700 900xxx). No two people share an e-mail address or a phone number,
 * and no two companies a domain: the merge (API.md) would take them for one subject. The fictional phone
 * ranges hold 3,000 numbers; people after those have none.
 */
export const DEMO_SOURCE = 'demo';
const SEED = 20_260_101;
const REF_DATE = '2026-01-01T00:00:00.000Z';

function fakerFor(kind: 'people' | 'companies', locale: 'US' | 'GB'): Faker {
  const f = new Faker({ locale: locale === 'US' ? [en_US, en, base] : [en_GB, en, base] });
  f.seed(SEED + (kind === 'people' ? 0 : 1) + (locale === 'US' ? 0 : 2));
  f.setDefaultRefDate(REF_DATE);
  return f;
}

const pad = (i: number) => String(i).padStart(7, '0');

/** US area codes whose 555-0100…0199 numbers are fictional: 20 × 100 numbers. */
const US_AREAS = [
  '202',
  '206',
  '212',
  '213',
  '305',
  '312',
  '404',
  '415',
  '503',
  '512',
  '602',
  '617',
  '702',
  '703',
  '713',
  '718',
  '801',
  '808',
  '907',
  '919',
];

/** The n-th fictional number of a country (0-based), or null when the range is used up. */
function fictionalPhone(country: 'US' | 'GB', n: number): string | null {
  if (country === 'GB') return n < 1000 ? `+44 7700 900${String(n).padStart(3, '0')}` : null;
  const area = US_AREAS[Math.floor(n / 100)];
  return area ? `+1 ${area} 555 01${String(n % 100).padStart(2, '0')}` : null;
}

/** `value`, or — when it was given out before — `value` made unique with `i` by `tag`. */
function unique(seen: Set<string>, value: string, i: number, tag: (value: string, i: number) => string): string {
  const result = seen.has(value) ? tag(value, i) : value;
  seen.add(result);
  return result;
}

/** Person i of the demo set: three in four in the US, the rest in the UK. */
export function* demoPeople(count: number): Generator<PersonRecord> {
  const us = fakerFor('people', 'US');
  const gb = fakerFor('people', 'GB');
  const emails = new Set<string>();
  const phonesGiven = { US: 0, GB: 0 };
  for (let i = 1; i <= count; i++) {
    const inGb = i % 4 === 0;
    const f = inGb ? gb : us;
    const first = f.person.firstName();
    const last = f.person.lastName();
    const middle = f.number.int(9) < 3 ? f.person.middleName() : null;
    const domain = f.helpers.arrayElement(['example.com', 'example.org', 'example.net']);
    const country = inGb ? 'GB' : 'US';
    const phone = fictionalPhone(country, phonesGiven[country]++);
    const email = unique(
      emails,
      f.internet.email({ firstName: first, lastName: last, provider: domain }).toLowerCase(),
      i,
      (e, n) => e.replace('@', `.${n}@`),
    );
    yield {
      source: DEMO_SOURCE,
      external_id: `demo-person-${pad(i)}`,
      full_name: [first, middle, last].filter(Boolean).join(' '),
      first_name: first,
      last_name: last,
      aliases: f.number.int(9) < 2 ? [`${first} ${f.person.lastName()}`] : [],
      emails: [email],
      phones: phone ? [phone] : [],
      usernames: [f.internet.username({ firstName: first, lastName: last }).toLowerCase()],
      locations: [
        inGb
          ? { city: f.location.city(), region: f.location.county(), country: 'GB' }
          : { city: f.location.city(), region: f.location.state({ abbreviated: true }), country: 'US' },
      ],
      birth_year: f.number.int({ min: 1940, max: 2006 }),
    };
  }
}

const LEGAL_FORMS = { US: ['Inc.', 'LLC', 'Corp.'], GB: ['Ltd', 'Limited', 'PLC', 'LLP'] };

/** Company i of the demo set: US companies registered in a state, UK ones at Companies House. */
export function* demoCompanies(count: number): Generator<CompanyRecord> {
  const us = fakerFor('companies', 'US');
  const gb = fakerFor('companies', 'GB');
  const domains = new Set<string>();
  for (let i = 1; i <= count; i++) {
    const inGb = i % 3 === 0;
    const f = inGb ? gb : us;
    const stem = f.company.name().replace(/[,.]/g, '');
    const name = `${stem} ${f.helpers.arrayElement(LEGAL_FORMS[inGb ? 'GB' : 'US'])}`;
    const slug = stem
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '');
    yield {
      source: DEMO_SOURCE,
      external_id: `demo-company-${pad(i)}`,
      name,
      registration_number: inGb
        ? String(f.number.int({ min: 100_000, max: 15_999_999 })).padStart(8, '0')
        : String(f.number.int({ min: 1_000_000, max: 9_999_999 })),
      jurisdiction: inGb ? 'GB' : `US-${f.helpers.arrayElement(['DE', 'DE', 'DE', 'NY', 'CA', 'TX'])}`,
      country: inGb ? 'GB' : 'US',
      domain: unique(domains, `${slug}.example`, i, (d, n) => d.replace(/\.example$/, `-${n}.example`)),
      status: f.number.int(9) < 8 ? 'active' : 'dissolved',
      incorporated_on: f.date.past({ years: 60 }).toISOString().slice(0, 10),
      address: `${f.location.streetAddress()}, ${f.location.city()}`,
      industry: f.commerce.department(),
    };
  }
}

async function writeAll<R, Row extends { id: string }>(
  records: Iterable<R>,
  rowOf: (r: R) => Row,
  write: (rows: Row[]) => Promise<WriteCounts>,
): Promise<WriteCounts> {
  const writer = new BatchWriter(write);
  try {
    for (const r of records) await writer.push(rowOf(r));
    const { imported, updated, superseded } = await writer.finish();
    return { imported, updated, superseded };
  } catch (error) {
    await writer.settle(); // no write left running on a connection the caller is about to close
    throw error;
  }
}

/** Writes the demo set; its people's phones are read as an import reads them (personRowOf, `defaultRegion`). */
export async function seedDemo(
  db: DataSource,
  counts: { people: number; companies: number },
  defaultRegion: string,
): Promise<{ people: WriteCounts; companies: WriteCounts }> {
  return {
    people: await writeAll(
      demoPeople(counts.people),
      (r) => personRowOf(r, { defaultRegion }),
      (rows) => writePeople(db, rows),
    ),
    companies: await writeAll(demoCompanies(counts.companies), companyRowOf, (rows) => writeCompanies(db, rows)),
  };
}

/**
 * Whether the demo set is there: `demo:seed --if-absent` then does nothing. Its people are written first
 * and its companies last, so a seed cut off part-way (Ctrl-C during `npm start`) has no companies yet:
 * it is not there, and the next `--if-absent` completes it (its people come back unchanged). A set seeded
 * with `--companies 0` is seeded again at each `--if-absent`, changing nothing.
 */
export async function demoPresent(db: DataSource): Promise<boolean> {
  const [row] = (await db.query(
    `SELECT EXISTS (SELECT 1 FROM people WHERE source = $1) AND EXISTS (SELECT 1 FROM companies WHERE source = $1)
         AS present`,
    [DEMO_SOURCE],
  )) as { present: boolean }[];
  return row!.present;
}
