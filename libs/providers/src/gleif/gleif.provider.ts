import { z } from 'zod';
import { normalizeCompanyName, registrationKey, subjectId } from '@dossier/domain';
import type { CompanyInput, CompanyResultItem } from '@dossier/contracts';
import { expectJson, request } from '../http';
import { nameMatchScore } from '../local/name-match';
import type { Provider, ProviderAnswer, ProviderContext } from '../provider';
import { NAME_FLOOR, companyMatchedOn, scoreOf, type Evidence } from '../subject-score';

const ID = 'gleif';
const DEFAULT_BASE_URL = 'https://api.gleif.org/api/v1';
/** Records asked for per search: GLEIF pages its answers; the first page holds the best full-text matches. */
const PAGE_SIZE = 20;

const nstr = z.string().nullish();
const addressSchema = z.object({
  addressLines: z.array(z.string()).nullish(),
  city: nstr,
  region: nstr,
  country: nstr,
  postalCode: nstr,
});

/** The parts of a GLEIF API v1 LEI record (JSON:API, `GET /lei-records`) that Dossier reads. */
const recordsSchema = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      attributes: z.object({
        lei: z.string().regex(/^[A-Z0-9]{20}$/),
        entity: z.object({
          legalName: z.object({ name: z.string().min(1) }),
          legalAddress: addressSchema.nullish(),
          registeredAs: nstr,
          jurisdiction: nstr,
          status: nstr,
          creationDate: nstr,
        }),
      }),
    }),
  ),
});
type LeiRecord = z.output<typeof recordsSchema>['data'][number]['attributes'];

function addressOf(a: z.output<typeof addressSchema> | null | undefined): string | null {
  if (!a) return null;
  const parts = [...(a.addressLines ?? []), a.city, a.region, a.postalCode, a.country].filter(
    (p): p is string => typeof p === 'string' && p.trim() !== '',
  );
  return parts.length > 0 ? parts.join(', ') : null;
}

/** A record's evidence: its legal name against the searched one, its registered number against the searched one. */
function evidenceOf(record: LeiRecord, input: CompanyInput): Evidence {
  const evidence: Evidence = [];
  if (input.company_name) {
    const s = nameMatchScore(
      normalizeCompanyName(input.company_name).split(' '),
      normalizeCompanyName(record.entity.legalName.name).split(' '),
    );
    if (s >= NAME_FLOOR) evidence.push(['name', s]);
  }
  const number = record.entity.registeredAs;
  if (input.registration_number && number && registrationKey(number) === registrationKey(input.registration_number))
    evidence.push(['registration_number', 1]);
  return evidence;
}

function itemOf(record: LeiRecord, evidence: Evidence, byCountry: boolean): CompanyResultItem {
  const e = record.entity;
  return {
    id: subjectId('company', ID, record.lei),
    name: e.legalName.name,
    registration_number: e.registeredAs ?? null,
    jurisdiction: e.jurisdiction?.toUpperCase() ?? null,
    country: e.legalAddress?.country?.toUpperCase() ?? null,
    domain: null,
    status: e.status ?? null,
    incorporated_on: e.creationDate ? e.creationDate.slice(0, 10) : null,
    address: addressOf(e.legalAddress),
    industry: null,
    match_score: scoreOf(evidence),
    matched_on: companyMatchedOn(evidence, byCountry),
    sources: [ID],
  };
}

/**
 * GLEIF's LEI records (API v1, keyless): by registration number (`filter[entity.registeredAs]`) when one is
 * given, else by name (`filter[fulltext]`, GLEIF's own ranking; Dossier keeps the records whose legal name
 * matches as the local index would), within `country` (`filter[entity.legalAddress.country]`). Each item
 * carries its LEI as an identity, so the same entity imported from the golden copy merges with it.
 */
export const gleifProvider: Provider<'company'> = {
  id: ID,
  kinds: ['company'],
  configKeys: ['GLEIF_ENABLED', 'GLEIF_BASE_URL'],
  defaultTimeoutMs: 10_000,
  transport: 'http',
  // GLEIF publishes 60 requests a minute per user.
  rateLimit: { max: 60, perMs: 60_000 },
  precedence: 15,
  validateSettings(settings) {
    const enabled = settings['GLEIF_ENABLED'];
    if (enabled !== undefined && !['true', 'false'].includes(enabled))
      throw new Error(`GLEIF_ENABLED: expected true or false, got "${enabled}"`);
    const base = settings['GLEIF_BASE_URL'];
    if (base !== undefined && !/^https?:\/\/[^\s/]+/.test(base))
      throw new Error(`GLEIF_BASE_URL: expected an http(s) URL, got "${base}"`);
  },
  isConfigured: (settings) => settings['GLEIF_ENABLED'] !== 'false' || 'switched off: GLEIF_ENABLED=false',
  // GLEIF knows no domains: a search by domain alone is not for it.
  appliesTo: (input) => Boolean(input.company_name || input.registration_number),

  async lookup(_kind, input: CompanyInput, ctx: ProviderContext): Promise<ProviderAnswer<'company'>> {
    const base = (ctx.settings['GLEIF_BASE_URL'] ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    const query = new URLSearchParams();
    if (input.registration_number) query.set('filter[entity.registeredAs]', input.registration_number.trim());
    else query.set('filter[fulltext]', input.company_name!.trim());
    if (input.country) query.set('filter[entity.legalAddress.country]', input.country.toUpperCase());
    query.set('page[size]', String(PAGE_SIZE));
    const res = await request(
      ID,
      { url: `${base}/lei-records?${query.toString()}`, headers: { accept: 'application/vnd.api+json' } },
      ctx.signal,
    );
    const answer = expectJson(ID, res, recordsSchema)!;
    const found = answer.data
      .map((r) => ({ record: r.attributes, evidence: evidenceOf(r.attributes, input) }))
      .filter((r) => r.evidence.length > 0)
      .map((r) => ({ item: itemOf(r.record, r.evidence, Boolean(input.country)), lei: r.record.lei }))
      .sort((a, b) => b.item.match_score - a.item.match_score);
    return {
      outcome: found.length > 0 ? 'found' : 'not_found',
      items: found.map((f) => f.item),
      identities: found.map((f) => [`lei:${f.lei}`]),
    };
  },
};
