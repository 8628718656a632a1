import { z } from 'zod';
import {
  countryCodeOfName,
  countryNameOf,
  isInCountry,
  locationKeysOf,
  mayBeInCountry,
  normalizeEmailAddress,
  normalizePhoneNumber,
  searchedLocationParts,
  subjectId,
} from '@dossier/domain';
import type { PersonInput, PersonRecordItem } from '@dossier/contracts';
import { baseUrlOf, checkBaseUrl, expectJson, integerSetting, parsesAs, request, type UpstreamResponse } from '../http';
import { ProviderError, type Provider, type ProviderAnswer, type ProviderContext } from '../provider';
import { ageOf, birthYearsOf } from '../local/local.provider';
import { placeAndAgeOf, scoreOf } from '../subject-score';

const ID = 'pdl';
const DEFAULT_BASE_URL = 'https://api.peopledatalabs.com';
const MIN_LIKELIHOOD_KEY = 'PDL_MIN_LIKELIHOOD';
/** PDL's likelihood below which a match is not answered, unless `PDL_MIN_LIKELIHOOD` says otherwise. */
export const DEFAULT_MIN_LIKELIHOOD = 6;

/**
 * On a plan that does not include a field, PDL answers `true` in its place ("we have it") instead of the
 * value: such a field reads as absent.
 */
const text = z.union([z.string(), z.boolean()]).nullish();
const list = <T extends z.ZodTypeAny>(item: T) => z.union([z.array(item), z.boolean()]).nullish();

/** The parts of a person record (PDL's person schema, v5) that Dossier reads. */
const personSchema = z.object({
  id: z.string().min(1),
  full_name: text,
  first_name: text,
  last_name: text,
  birth_year: z.union([z.number().int(), z.boolean()]).nullish(),
  /** `YYYY-MM-DD`, or `YYYY-MM` where PDL knows no day. */
  birth_date: text,
  emails: list(z.object({ address: z.string(), type: z.string().nullish() })),
  work_email: text,
  personal_emails: list(z.string()),
  mobile_phone: text,
  phone_numbers: list(z.string()),
  location_locality: text,
  location_region: text,
  location_country: text,
  profiles: list(
    z.object({ network: z.string(), username: z.string().nullish(), url: z.string().nullish(), id: z.unknown() }),
  ),
});

/** A Person Enrichment API answer (`GET /v5/person/enrich`, 200). */
const enrichSchema = z.object({
  status: z.literal(200),
  likelihood: z.number().int().min(1).max(10),
  data: personSchema,
  /** With `include_if_matched=true`: the request's parameters that matched the profile. */
  matched: z.array(z.string()).nullish(),
});
type Person = z.output<typeof personSchema>;

/** The request fields PDL's matched parameters stand for (its `location` parts all are `location`). */
const MATCHED_FIELDS: Readonly<Record<string, string>> = {
  name: 'name',
  first_name: 'name',
  last_name: 'name',
  email: 'email',
  phone: 'phone',
  location: 'location',
  locality: 'location',
  region: 'location',
  // Sent only for the search's `country`.
  country: 'country',
};

/**
 * The PDL parameters a person search sends — what PDL can match on: an e-mail, a phone, or a name with a
 * place, the searched location or country (a name goes along with an e-mail or phone too); null when the
 * search has none of them. The country goes by its English name, as PDL writes countries ("United
 * States"), whenever PDL is asked.
 */
function enrichParams(input: PersonInput): Record<string, string> | null {
  const email = input.email ? normalizeEmailAddress(input.email) : null;
  const phone = input.phone ? normalizePhoneNumber(input.phone, input.country) : null;
  const name = input.name?.trim() || null;
  const location = input.location?.trim() || null;
  const country = input.country ? countryNameOf(input.country) : null;
  const params: Record<string, string> = {};
  if (email) params['email'] = email;
  if (phone) params['phone'] = phone;
  if (name && (location || country || email || phone)) params['name'] = name;
  if (location && name) params['location'] = location;
  if (!email && !phone && !params['name']) return null;
  if (country) params['country'] = country;
  return params;
}

/**
 * Whether a profile is of someone in the searched age range: PDL is not asked for one (it takes a birth
 * date), so its answer is held to the range as the local index holds its records — a birth year outside
 * it is no match; an unknown one stays (unknown is not "outside").
 */
function inAgeRange(birthYear: number | null, ageRange: string | undefined, thisYear: number): boolean {
  if (!ageRange || birthYear === null) return true;
  const { min, max } = birthYearsOf(ageRange, thisYear);
  return (min === null || birthYear >= min) && (max === null || birthYear <= max);
}

/** `PDL_MIN_LIKELIHOOD` as an integer 1–10; throws naming it otherwise. */
function minLikelihoodOf(settings: Readonly<Record<string, string | undefined>>): number {
  return integerSetting(settings, MIN_LIKELIHOOD_KEY, DEFAULT_MIN_LIKELIHOOD, 1, 10);
}

/**
 * PDL's likelihood (1–10: how sure it is that the profile is the person asked for) as `match_score`:
 * likelihood ÷ 10, so PDL's certainty (10) is 1.0 and the default floor (6) is 0.6; the order is kept
 * (ADR 0012). The searched location and age range then weigh on it as on the local index's records
 * (placeAndAgeOf).
 */
export function matchScoreOf(likelihood: number): number {
  return likelihood / 10;
}

const str = (v: string | boolean | null | undefined): string | null => (typeof v === 'string' && v.trim()) || null;
const arr = <T>(v: T[] | boolean | null | undefined): T[] => (Array.isArray(v) ? v : []);

/** A person's birth year: PDL's `birth_year`, else the year of its `birth_date`; null when it gives neither. */
function birthYearOf(person: Person): number | null {
  if (typeof person.birth_year === 'number') return person.birth_year;
  const year = /^(\d{4})(-|$)/.exec(str(person.birth_date) ?? '')?.[1];
  return year ? Number(year) : null;
}

/** A profile's network URL as a link: PDL writes them without a scheme (`linkedin.com/in/…`). */
function linkOf(url: string | null | undefined): string | null {
  const u = url?.trim();
  if (!u) return null;
  return /^https?:\/\//i.test(u) ? u : `https://${u}`;
}

/** PDL's person as a person item, scored for the search as the local index scores its records. */
function personItem(
  person: Person,
  likelihood: number,
  matchedOn: string[],
  input: PersonInput,
  thisYear: number,
): PersonRecordItem {
  const first = str(person.first_name);
  const last = str(person.last_name);
  const emails = [
    ...arr(person.emails).map((e) => e.address),
    ...[str(person.work_email)].filter((e): e is string => e !== null),
    ...arr(person.personal_emails),
  ]
    .map((e) => normalizeEmailAddress(e))
    .filter((e): e is string => e !== null);
  const phones = [str(person.mobile_phone), ...arr(person.phone_numbers)]
    .map((p) => (p ? normalizePhoneNumber(p) : null))
    .filter((p): p is string => p !== null);
  const profiles = arr(person.profiles);
  const city = str(person.location_locality);
  const region = str(person.location_region);
  const countryName = str(person.location_country);
  const country = countryName ? (countryCodeOfName(countryName) ?? countryName) : null;
  const birthYear = birthYearOf(person);
  const locations = city || region || country ? [{ city, region, country }] : [];
  const { evidence, factor } = placeAndAgeOf(
    input.location ? searchedLocationParts(input.location) : [],
    input.age_range,
    { locations, location_keys: locationKeysOf(locations), birth_year: birthYear },
  );
  return {
    id: subjectId('person', ID, person.id),
    full_name: str(person.full_name) ?? ([first, last].filter(Boolean).join(' ') || null),
    first_name: first,
    last_name: last,
    aliases: [],
    emails: [...new Set(emails)],
    phones: [...new Set(phones)],
    usernames: [...new Set(profiles.map((p) => p.username?.trim()).filter((u): u is string => Boolean(u)))],
    accounts: profiles.map((p) => ({ service: p.network, username: p.username?.trim() || null, url: linkOf(p.url) })),
    locations,
    age: ageOf(birthYear, thisYear),
    birth_year: birthYear,
    match_score: scoreOf(evidence, factor, matchScoreOf(likelihood)),
    matched_on: [
      ...new Set([
        ...matchedOn,
        ...evidence.map(([field]) => field),
        ...(input.country && isInCountry(input.country, locations) ? ['country'] : []),
      ]),
    ],
    sources: [ID],
  };
}

/**
 * The request fields a match was made on: the ones PDL names in `matched` (`include_if_matched`), mapped
 * onto Dossier's fields; where PDL names none, every field sent — a match at or above the floor is PDL's
 * judgement of the request as a whole.
 */
function matchedOnOf(sent: Record<string, string>, matched: string[] | null | undefined): string[] {
  const fields = (list: string[]) => [...new Set(list.map((m) => MATCHED_FIELDS[m]).filter((f): f is string => !!f))];
  const named = fields(matched ?? []).filter((f) => f in sent);
  return named.length > 0 ? named : fields(Object.keys(sent));
}

/**
 * PDL's error envelope: `{ "status": 403, "error": { "type": "forbidden", "message": … } }` — its 404 (no
 * match at the likelihood asked for) too, with `"type": "not_found"`.
 */
const errorSchema = z.object({ status: z.number(), error: z.object({ type: z.string() }) });

/**
 * PDL's own statuses before the usual mapping: 402 (the account's credits or its plan's matches are
 * used up) is a quota, `rate_limited`; its 403 with its error envelope refuses the key this API — a
 * request it rejects, not a bot wall (a 403 page without the envelope stays `blocked`). Its 429 names the
 * end of the window in `x-ratelimit-reset` (a UTC time), not in `Retry-After`: expectJson's `reset`.
 */
function throwIfRefused(res: UpstreamResponse): void {
  if (res.status === 402) throw new ProviderError('rate_limited', `${ID}: the account's credits are used up (402)`);
  if (res.status === 403 && parsesAs(res.text, errorSchema))
    throw new ProviderError('unrecoverable', `${ID}: the key may not use the Person Enrichment API (403)`);
}

/**
 * People Data Labs' Person Enrichment API (v5, `GET /v5/person/enrich`, the key in `X-Api-Key`): the one
 * profile PDL matches to the e-mail, phone, or name with location asked for, at or above
 * `PDL_MIN_LIKELIHOOD` (PDL answers 404 with its error envelope below it: `not_found`, free; a 404 without
 * it is an error). PDL bills per match, so Dossier
 * asks once per search, never the Person Search API. Not called for a search PDL cannot match (a name
 * without a place, a username alone). Licensed: off until `PDL_API_KEY` is set.
 */
export const pdlProvider: Provider<'person'> = {
  id: ID,
  kinds: ['person'],
  configKeys: ['PDL_API_KEY', 'PDL_BASE_URL', MIN_LIKELIHOOD_KEY],
  defaultTimeoutMs: 10_000,
  transport: 'http',
  // PDL's default for free accounts is 100 enrichments a minute (paying ones 1,000: PDL_RATE_LIMIT=200/12s).
  // A full bucket of 20 plus 20 every 15 s never exceeds 100 in any minute.
  rateLimit: { max: 20, perMs: 15_000 },
  // A vendor's profile: the operator's own records (local) win where they disagree.
  precedence: 0,
  validateSettings(settings) {
    checkBaseUrl(settings, 'PDL_BASE_URL');
    minLikelihoodOf(settings);
  },
  isConfigured: (settings) => Boolean(settings['PDL_API_KEY']) || 'not configured: set PDL_API_KEY',
  appliesTo: (input) => enrichParams(input) !== null,

  async lookup(_kind, input: PersonInput, ctx: ProviderContext): Promise<ProviderAnswer<'person'>> {
    const sent = enrichParams(input);
    if (!sent) return { outcome: 'not_found', items: [] };
    const minLikelihood = minLikelihoodOf(ctx.settings);
    const query = new URLSearchParams({
      ...sent,
      min_likelihood: String(minLikelihood),
      include_if_matched: 'true',
      titlecase: 'true',
    });
    const res = await request(
      ID,
      {
        url: `${baseUrlOf(ctx.settings, 'PDL_BASE_URL', DEFAULT_BASE_URL)}/v5/person/enrich?${query.toString()}`,
        headers: { accept: 'application/json', 'x-api-key': ctx.settings['PDL_API_KEY'] ?? '' },
      },
      ctx.signal,
    );
    throwIfRefused(res);
    const answer = expectJson(ID, res, enrichSchema, {
      notFound: { status: [404], body: errorSchema },
      reset: 'x-ratelimit-reset',
    });
    const thisYear = new Date().getUTCFullYear();
    if (
      !answer ||
      answer.likelihood < minLikelihood ||
      !inAgeRange(birthYearOf(answer.data), input.age_range, thisYear)
    )
      return { outcome: 'not_found', items: [] };
    const item = personItem(answer.data, answer.likelihood, matchedOnOf(sent, answer.matched), input, thisYear);
    // PDL matches on a country, it does not filter by it: a profile known only elsewhere is not the person
    // searched for there, as the local index leaves such records out (PDL has billed the match; the
    // search is not charged for it).
    if (input.country && !mayBeInCountry(input.country, item.locations)) return { outcome: 'not_found', items: [] };
    return { outcome: 'found', items: [item], identities: [[`${ID}:${answer.data.id}`]] };
  },
};
