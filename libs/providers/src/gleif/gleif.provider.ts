import { z } from 'zod';
import type { CompanyInput } from '@dossier/contracts';
import {
  hasNameOrNumber,
  isoDate,
  joinAddress,
  searchByNumberThenName,
  statusOf,
  type RegistryCompany,
} from '../company-item';
import { baseUrlOf, baseUrlReach, checkBaseUrl, checkSwitch, expectJson, request } from '../http';
import { rateLimitOf, type Provider, type ProviderAnswer, type ProviderContext } from '../provider';
import { parentsFromApi } from './gleif-parents';

const ID = 'gleif';
const DEFAULT_BASE_URL = 'https://api.gleif.org/api/v1';
/** Records asked for per search: the best of them are scored and answered. */
const PAGE_SIZE = 10;

const name = z.object({ name: z.string() });
const address = z.object({
  addressLines: z.array(z.string()).nullish(),
  city: z.string().nullish(),
  region: z.string().nullish(),
  country: z.string().nullish(),
  postalCode: z.string().nullish(),
});

/** The parts of a GLEIF LEI record (`lei-records`, API v1, JSON:API) that Dossier reads. */
const leiRecordSchema = z.object({
  attributes: z.object({
    lei: z.string().regex(/^[A-Z0-9]{20}$/),
    entity: z.object({
      legalName: name,
      otherNames: z.array(name).nullish(),
      transliteratedOtherNames: z.array(name).nullish(),
      legalAddress: address.nullish(),
      registeredAs: z.string().nullish(),
      jurisdiction: z.string().nullish(),
      status: z.string().nullish(),
      creationDate: z.string().nullish(),
    }),
  }),
});
const leiRecordsSchema = z.object({ data: z.array(leiRecordSchema) });
type LeiRecord = z.output<typeof leiRecordSchema>;

/** One LEI record as a registry company: its legal name first, the other and transliterated names after. */
function registryCompany(record: LeiRecord): RegistryCompany {
  const { lei, entity } = record.attributes;
  const legal = entity.legalAddress;
  const country = legal?.country?.trim().toUpperCase() || null;
  return {
    externalId: lei,
    recordId: `/lei-records/${lei}`,
    identities: [`lei:${lei}`],
    names: [
      entity.legalName.name,
      ...(entity.otherNames ?? []).map((n) => n.name),
      ...(entity.transliteratedOtherNames ?? []).map((n) => n.name),
    ],
    registration_number: entity.registeredAs?.trim() || null,
    jurisdiction: entity.jurisdiction?.trim().toUpperCase() || country,
    country,
    status: statusOf(entity.status),
    // The entity's own creation date; the LEI's registration date says nothing about the company's age.
    incorporated_on: isoDate(entity.creationDate),
    address: joinAddress([...(legal?.addressLines ?? []), legal?.city, legal?.postalCode, country]),
  };
}

/**
 * LEI records from GLEIF's public API (v1, keyless): by registration number first
 * (`filter[entity.registeredAs]`, as the registry writes it), else — or when none of what that finds
 * matches the search — by name (`filter[entity.names]`: the legal name and the other names GLEIF holds, previous and
 * transliterated ones included; `filter[fulltext]` would match addresses too). A country narrows both
 * (`filter[entity.legalAddress.country]`). Items carry `lei:<LEI>` as their identity, so the same company
 * from the local index (imported from GLEIF's golden copy) merges with them. No domains: a search by
 * domain alone does not reach GLEIF. On unless `GLEIF_ENABLED=false`.
 */
export const gleifProvider: Provider<'company'> = {
  id: ID,
  kinds: ['company'],
  configKeys: ['GLEIF_ENABLED', 'GLEIF_BASE_URL'],
  defaultTimeoutMs: 8000,
  transport: 'http',
  // GLEIF publishes 60 requests a minute per user. A full bucket of 10 plus a refill of 10 every 12 s:
  // never more than 60 in any minute.
  rateLimit: { max: 10, perMs: 12_000 },
  // A registry's own record, below the national register (Companies House) and above aggregators.
  precedence: 15,
  validateSettings(settings) {
    checkBaseUrl(settings, 'GLEIF_BASE_URL');
    checkSwitch(settings, 'GLEIF_ENABLED');
  },
  isConfigured: (settings) => settings['GLEIF_ENABLED'] !== 'false' || 'disabled (GLEIF_ENABLED=false)',
  checkReach: baseUrlReach(ID, DEFAULT_BASE_URL),
  appliesTo: hasNameOrNumber,

  async lookup(_kind, input: CompanyInput, ctx: ProviderContext): Promise<ProviderAnswer<'company'>> {
    const base = baseUrlOf(ctx.settings, 'GLEIF_BASE_URL', DEFAULT_BASE_URL);
    const get = (path: string, signal = ctx.signal) =>
      request(ID, { url: `${base}${path}`, headers: { accept: 'application/vnd.api+json' } }, signal);
    const answer = await searchByNumberThenName(
      ID,
      input,
      async (by) => {
        const query = new URLSearchParams(
          'number' in by ? { 'filter[entity.registeredAs]': by.number } : { 'filter[entity.names]': by.name },
        );
        query.set('page[size]', String(PAGE_SIZE));
        if (input.country) query.set('filter[entity.legalAddress.country]', input.country.toUpperCase());
        return expectJson(ID, await get(`/lei-records?${query.toString()}`), leiRecordsSchema)!.data.map(
          registryCompany,
        );
      },
      PAGE_SIZE,
    );
    // The best match's direct and ultimate parent (ADR 0066): two more calls through the shared rate limit,
    // within the deadline; a failure leaves `parents` null, never the item.
    const best = answer.items[0];
    const lei = answer.identities?.[0]?.find((i) => i.startsWith('lei:'))?.slice(4);
    if (best && lei) {
      const limit = { id: ID, rateLimit: rateLimitOf(gleifProvider, ctx.settings) };
      const parents = await parentsFromApi(lei, get, (call) => ctx.upstream(limit, call));
      answer.items[0] = { ...best, parents };
    }
    return answer;
  },
};
