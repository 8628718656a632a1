import { isInPlace, type PersonRow, type SearchedPlace } from '@dossier/domain';

/**
 * How person and company items are scored, by every provider that scores them itself (the local index,
 * the registries): each agreeing field is independent evidence, combined as 1 − Π(1 − wᵢ·sᵢ) — one exact
 * name alone is 0.75, a name in the right city 0.83, a name with a matching e-mail 0.99. An e-mail, phone
 * or registration number is a stronger identifier than a name; location and age only add to a match.
 * See ADR 0012.
 */
export const WEIGHTS = {
  name: 0.75,
  email: 0.95,
  phone: 0.9,
  username: 0.7,
  registration_number: 0.95,
  domain: 0.9,
  location: 0.3,
  age_range: 0.2,
} as const;

export type EvidenceField = keyof typeof WEIGHTS;
/** What agreed, and how strongly (1 for an exact identifier, a name's match score). */
export type Evidence = [field: EvidenceField, strength: number][];

/** A name scoring below this is no match (an index or a vendor may still have returned it). */
export const NAME_FLOOR = 0.6;

/**
 * The evidence as a match score in [0, 1], to three decimals. `prior` is a score the source gave itself
 * (PDL's likelihood ÷ 10), combined with the evidence as one more independent piece.
 */
export function scoreOf(evidence: Evidence, factor = 1, prior = 0): number {
  const miss = evidence.reduce((p, [field, s]) => p * (1 - WEIGHTS[field] * s), 1 - prior);
  return Math.round((1 - miss) * factor * 1000) / 1000;
}

/** `matched_on` of a company item: the request's field names (`company_name` for the name). */
export function companyMatchedOn(evidence: Evidence, byCountry: boolean): string[] {
  const fields = evidence.map(([field]) => (field === 'name' ? 'company_name' : field));
  return byCountry ? [...fields, 'country'] : fields;
}

/** A person whose known locations all differ from the searched one keeps this share of its score. */
export const ELSEWHERE = 0.85;

/**
 * What the searched location and age range say of a person, whatever its source, so that `match_score`
 * means one thing (ADR 0012): the share of the location's parts the person is in is `location` evidence;
 * a person known only elsewhere keeps ELSEWHERE of its score (one without locations keeps all); a known
 * birth year is `age_range` evidence — the source has already left out anyone born outside the range.
 */
export function placeAndAgeOf(
  places: readonly SearchedPlace[],
  ageRange: string | undefined,
  person: Pick<PersonRow, 'locations' | 'location_keys' | 'birth_year'>,
): { evidence: Evidence; factor: number } {
  const evidence: Evidence = [];
  let factor = 1;
  if (places.length > 0) {
    const here = places.filter((place) => isInPlace(place, person)).length;
    if (here > 0) evidence.push(['location', here / places.length]);
    else if (person.location_keys.length > 0) factor = ELSEWHERE;
  }
  if (ageRange && person.birth_year !== null) evidence.push(['age_range', 1]);
  return { evidence, factor };
}
