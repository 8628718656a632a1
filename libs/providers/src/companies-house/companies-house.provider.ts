import { z } from 'zod';
import { padUkPrefixedNumber } from '@dossier/domain';
import type { CompanyInput, CompanyResultItem } from '@dossier/contracts';
import { isoDate, joinAddress, searchByNumberThenName, statusOf, type RegistryCompany } from '../company-item';
import { baseUrlOf, checkBaseUrl, expectJson, request, type UpstreamResponse } from '../http';
import { rateLimitOf, type Provider, type ProviderAnswer, type ProviderContext } from '../provider';
import { controllerOf, controllersOf, officerListSchema, officersOf, pscListSchema } from './company-people';

const ID = 'companies-house';
const DEFAULT_BASE_URL = 'https://api.company-information.service.gov.uk';
/** Search results asked for: the best of them are scored and answered. */
const PAGE_SIZE = 10;
/** Officers and PSCs asked for (the API's largest page): the serving ones of them are answered first. */
const PEOPLE_PAGE_SIZE = 100;

const addressSchema = z.object({
  care_of: z.string().nullish(),
  po_box: z.string().nullish(),
  premises: z.string().nullish(),
  address_line_1: z.string().nullish(),
  address_line_2: z.string().nullish(),
  locality: z.string().nullish(),
  region: z.string().nullish(),
  postal_code: z.string().nullish(),
  country: z.string().nullish(),
});
type Address = z.output<typeof addressSchema>;

/** The parts of a company profile (`GET /company/{company_number}`) that Dossier reads. */
const profileSchema = z.object({
  company_name: z.string(),
  company_number: z.string(),
  company_status: z.string().nullish(),
  date_of_creation: z.string().nullish(),
  registered_office_address: addressSchema.nullish(),
  sic_codes: z.array(z.string()).nullish(),
});

/** The parts of a company search (`GET /search/companies`) that Dossier reads: `items` is absent when empty. */
const searchSchema = z.object({
  kind: z.literal('search#companies'),
  items: z
    .array(
      z.object({
        title: z.string(),
        company_number: z.string(),
        company_status: z.string().nullish(),
        date_of_creation: z.string().nullish(),
        address: addressSchema.nullish(),
        address_snippet: z.string().nullish(),
      }),
    )
    .nullish(),
});

/**
 * A company number as Companies House writes it — eight characters, upper-case, an all-digit number
 * padded with leading zeros (`102498` → `00102498`, `sc 123456` → `SC123456`), and the digits after a
 * two-letter prefix too (`SC12345` → `SC012345`, `NI1234` → `NI001234`: padUkPrefixedNumber, as the
 * index keys them); null for anything that cannot be one.
 */
export function companyNumberOf(value: string): string | null {
  const compact = value.toUpperCase().replace(/[\s.-]/g, '');
  const padded = /^\d{1,8}$/.test(compact) ? compact.padStart(8, '0') : padUkPrefixedNumber(compact);
  return /^[A-Z0-9]{8}$/.test(padded) ? padded : null;
}

/**
 * An address written as Companies House's own `address_snippet` writes it: a house number runs into the
 * street (`1 St James's Square`), a named building stands alone (`Boswell Cottage, North Leverton`).
 */
function addressOf(address: Address | null | undefined): string | null {
  if (!address) return null;
  const { premises, address_line_1: line1 } = address;
  const numbered = premises && line1 && /^\d[\w-]*$/.test(premises.trim());
  return joinAddress([
    address.care_of && `c/o ${address.care_of}`,
    address.po_box && `PO Box ${address.po_box}`,
    ...(numbered ? [`${premises.trim()} ${line1.trim()}`] : [premises, line1]),
    address.address_line_2,
    address.locality,
    address.region,
    address.postal_code,
    address.country,
  ]);
}

function registryCompany(fields: {
  name: string;
  number: string;
  status?: string | null;
  created?: string | null;
  address: string | null;
  sicCodes?: string[] | null;
}): RegistryCompany {
  return {
    externalId: fields.number,
    // The profile's own link (`links.self`), as the register's API names it.
    recordId: `/company/${fields.number}`,
    identities: [`${ID}:${fields.number}`],
    names: [fields.name],
    registration_number: fields.number,
    jurisdiction: 'GB',
    country: 'GB',
    status: statusOf(fields.status),
    incorporated_on: isoDate(fields.created),
    address: fields.address,
    industry: fields.sicCodes?.length ? `SIC ${fields.sicCodes.join(', ')}` : null,
  };
}

/** Its error body, which its 404 for a company it does not hold carries: `{"errors":[{"error":"company-profile-not-found",…}]}`. */
const errorsSchema = z.object({ errors: z.array(z.object({ error: z.string() })).min(1) });

/** Its 429 carries no Retry-After: the window's end is in `X-Ratelimit-Reset` (Unix seconds). */
const RESET = 'x-ratelimit-reset';

/**
 * The UK's register of companies, from the Companies House public data API (HTTP Basic auth with the
 * API key as user name): with a registration number, that company's profile (`GET /company/{number}`),
 * else — or when the register has no company by that number (404) — the company search by name
 * (`GET /search/companies`), as GLEIF and OpenCorporates fall back (searchByNumberThenName). Every item is
 * jurisdiction and country `GB`; its industry is the profile's SIC codes. Not called for a search in
 * another country, nor for one whose only identifier is a number that cannot be a company number or a
 * domain (the register has none). Licensed: off until `COMPANIES_HOUSE_API_KEY` is set.
 */
export const companiesHouseProvider: Provider<'company'> = {
  id: ID,
  kinds: ['company'],
  configKeys: ['COMPANIES_HOUSE_API_KEY', 'COMPANIES_HOUSE_BASE_URL'],
  defaultTimeoutMs: 8000,
  transport: 'http',
  // 600 requests per 5 minutes per key, as Companies House publishes: a full bucket of 100 plus 100 a
  // minute never exceeds 600 in any five minutes.
  rateLimit: { max: 100, perMs: 60_000 },
  // The register itself: its record wins over GLEIF's and OpenCorporates' copies of it.
  precedence: 20,
  validateSettings: (settings) => checkBaseUrl(settings, 'COMPANIES_HOUSE_BASE_URL'),
  isConfigured: (settings) =>
    Boolean(settings['COMPANIES_HOUSE_API_KEY']) || 'not configured: set COMPANIES_HOUSE_API_KEY',
  appliesTo: (input) =>
    (!input.country || input.country.toUpperCase() === 'GB') &&
    (companyNumberOf(input.registration_number ?? '') !== null || Boolean(input.company_name?.trim())),

  async lookup(_kind, input: CompanyInput, ctx: ProviderContext): Promise<ProviderAnswer<'company'>> {
    const base = baseUrlOf(ctx.settings, 'COMPANIES_HOUSE_BASE_URL', DEFAULT_BASE_URL);
    const auth = Buffer.from(`${ctx.settings['COMPANIES_HOUSE_API_KEY'] ?? ''}:`).toString('base64');
    const get = (path: string, signal = ctx.signal): Promise<UpstreamResponse> =>
      request(
        ID,
        { url: `${base}${path}`, headers: { accept: 'application/json', authorization: `Basic ${auth}` } },
        signal,
      );
    /** The company's profile; none for a number the register cannot hold or does not (its own 404). */
    const byNumber = async (value: string): Promise<RegistryCompany[]> => {
      const number = companyNumberOf(value);
      if (!number) return [];
      const profile = expectJson(ID, await get(`/company/${number}`), profileSchema, {
        notFound: { status: [404], body: errorsSchema },
        reset: RESET,
      });
      if (!profile) return [];
      return [
        registryCompany({
          name: profile.company_name,
          number: profile.company_number,
          status: profile.company_status,
          created: profile.date_of_creation,
          address: addressOf(profile.registered_office_address),
          sicCodes: profile.sic_codes,
        }),
      ];
    };
    const byName = async (name: string): Promise<RegistryCompany[]> => {
      const query = new URLSearchParams({ q: name, items_per_page: String(PAGE_SIZE) });
      const found = expectJson(ID, await get(`/search/companies?${query.toString()}`), searchSchema, { reset: RESET })!;
      return (found.items ?? []).map((item) =>
        registryCompany({
          name: item.title,
          number: item.company_number,
          status: item.company_status,
          created: item.date_of_creation,
          address: item.address_snippet?.trim() || addressOf(item.address),
        }),
      );
    };
    const answer = await searchByNumberThenName(
      ID,
      input,
      (by) => ('number' in by ? byNumber(by.number) : byName(by.name)),
      PAGE_SIZE,
    );
    const best = answer.items[0];
    if (best?.registration_number) answer.items[0] = await withPeople(best, best.registration_number, get, ctx);
    return answer;
  },
};

/**
 * The best match with its officers and persons with significant control (ADR 0066): two more calls, each
 * through the provider's shared rate limit and within the lookup's deadline. One that fails (or that the
 * limit or the deadline refuses) leaves its facts null — not known — and never fails the item; a company
 * with none (an empty list, or the API's own 404) has [].
 */
async function withPeople(
  item: CompanyResultItem,
  number: string,
  get: (path: string, signal: AbortSignal) => Promise<UpstreamResponse>,
  ctx: ProviderContext,
): Promise<CompanyResultItem> {
  const guarded = <S extends typeof officerListSchema | typeof pscListSchema>(
    path: string,
    schema: S,
  ): Promise<z.output<S> | null> =>
    ctx
      .upstream({ id: ID, rateLimit: rateLimitOf(companiesHouseProvider, ctx.settings) }, async (signal) => {
        const found = expectJson(ID, await get(path, signal), schema, {
          notFound: { status: [404], body: errorsSchema },
          reset: RESET,
        });
        return (found ?? { items: [] }) as z.output<S>;
      })
      .catch(() => null);
  const page = `items_per_page=${PEOPLE_PAGE_SIZE}`;
  const [officers, pscs] = await Promise.all([
    guarded(`/company/${number}/officers?${page}`, officerListSchema),
    guarded(`/company/${number}/persons-with-significant-control?${page}`, pscListSchema),
  ]);
  return {
    ...item,
    officers: officers && officersOf(number, officers),
    controllers: pscs && controllersOf((pscs.items ?? []).map((p, i) => controllerOf(number, p, i))),
  };
}
