import { z } from 'zod';
import { jurisdictionKey } from '@dossier/domain';
import type { CompanyInput } from '@dossier/contracts';
import {
  hasNameOrNumber,
  isoDate,
  joinAddress,
  searchByNumberThenName,
  statusOf,
  type RegistryCompany,
} from '../company-item';
import { baseUrlOf, checkBaseUrl, expectJson, parsesAs, request, type UpstreamResponse } from '../http';
import { ProviderError, type Provider, type ProviderAnswer, type ProviderContext } from '../provider';

const ID = 'opencorporates';
const DEFAULT_BASE_URL = 'https://api.opencorporates.com/v0.4';
/** Companies asked for per search: the best of them are scored and answered. */
const PAGE_SIZE = 10;

/** The parts of a company in OpenCorporates' search results (API v0.4) that Dossier reads. */
const companySchema = z.object({
  name: z.string(),
  company_number: z.string(),
  jurisdiction_code: z.string().regex(/^[a-z]{2}(_[a-z0-9]+)?$/),
  incorporation_date: z.string().nullish(),
  current_status: z.string().nullish(),
  inactive: z.boolean().nullish(),
  registered_address_in_full: z.string().nullish(),
  previous_names: z.array(z.object({ company_name: z.string() })).nullish(),
  industry_codes: z
    .array(z.object({ industry_code: z.object({ code: z.string().nullish(), description: z.string().nullish() }) }))
    .nullish(),
});
const searchSchema = z.object({
  results: z.object({ companies: z.array(z.object({ company: companySchema })) }),
});
type Company = z.output<typeof companySchema>;

/** OpenCorporates' error envelope: `{ "error": { "message": … } }`. */
const errorSchema = z.object({ error: z.object({ message: z.string() }) });

function registryCompany(company: Company): RegistryCompany {
  // OpenCorporates' codes the ISO way: `us_de` → `US-DE`, `gb` → `GB`.
  const jurisdiction = jurisdictionKey(company.jurisdiction_code);
  const industry = company.industry_codes?.[0]?.industry_code;
  return {
    // Company numbers are unique within a jurisdiction only: OpenCorporates' own id is both.
    externalId: `${company.jurisdiction_code}/${company.company_number}`,
    // The path of its `opencorporates_url` (`https://opencorporates.com/companies/gb/00102498`).
    recordId: `/companies/${company.jurisdiction_code}/${company.company_number}`,
    identities: [`${ID}:${company.jurisdiction_code}/${company.company_number}`],
    names: [company.name, ...(company.previous_names ?? []).map((p) => p.company_name)],
    registration_number: company.company_number,
    jurisdiction,
    country: jurisdiction.slice(0, 2),
    status: statusOf(company.current_status) ?? (company.inactive ? 'inactive' : null),
    incorporated_on: isoDate(company.incorporation_date),
    address: joinAddress([company.registered_address_in_full]),
    industry: industry?.description?.trim() || industry?.code?.trim() || null,
  };
}

/**
 * OpenCorporates documents a 403 with its error envelope as an exhausted call allowance (per day or
 * month, by plan); a 403 page without one is a bot wall (`blocked`, as usual).
 */
function throwIfOverAllowance(res: UpstreamResponse): void {
  if (res.status === 403 && parsesAs(res.text, errorSchema))
    throw new ProviderError('rate_limited', `${ID}: the plan's call allowance is used up (403)`);
}

/**
 * Companies from OpenCorporates' aggregation of the world's registers (API v0.4,
 * `GET /companies/search`; the token in the query string as OpenCorporates documents it, never in a
 * message): by registration number first (`q` matches company numbers, and names), else — or when
 * none of what that finds matches the search — by name (current and previous names); a country narrows both (`country_code`). The
 * jurisdiction is written the ISO way (`us_de` → `US-DE`). Licensed: off until
 * `OPENCORPORATES_API_TOKEN` is set.
 */
export const opencorporatesProvider: Provider<'company'> = {
  id: ID,
  kinds: ['company'],
  configKeys: ['OPENCORPORATES_API_TOKEN', 'OPENCORPORATES_BASE_URL'],
  defaultTimeoutMs: 8000,
  transport: 'http',
  // OpenCorporates publishes its allowances per plan, per day and per month, not a call rate: one call a
  // second by default; set OPENCORPORATES_RATE_LIMIT to the plan's (e.g. 10000/720h).
  rateLimit: { max: 1, perMs: 1000 },
  // An aggregator's copy of a register: below the registers themselves (Companies House, GLEIF).
  precedence: 12,
  validateSettings: (settings) => checkBaseUrl(settings, 'OPENCORPORATES_BASE_URL'),
  isConfigured: (settings) =>
    Boolean(settings['OPENCORPORATES_API_TOKEN']) || 'not configured: set OPENCORPORATES_API_TOKEN',
  appliesTo: hasNameOrNumber,

  async lookup(_kind, input: CompanyInput, ctx: ProviderContext): Promise<ProviderAnswer<'company'>> {
    const base = baseUrlOf(ctx.settings, 'OPENCORPORATES_BASE_URL', DEFAULT_BASE_URL);
    return searchByNumberThenName(
      ID,
      input,
      async (by) => {
        const query = new URLSearchParams({ q: 'number' in by ? by.number : by.name, per_page: String(PAGE_SIZE) });
        if (input.country) query.set('country_code', input.country.toLowerCase());
        query.set('api_token', ctx.settings['OPENCORPORATES_API_TOKEN'] ?? '');
        const res = await request(
          ID,
          { url: `${base}/companies/search?${query.toString()}`, headers: { accept: 'application/json' } },
          ctx.signal,
        );
        throwIfOverAllowance(res);
        return expectJson(ID, res, searchSchema)!.results.companies.map((c) => registryCompany(c.company));
      },
      PAGE_SIZE,
    );
  },
};
