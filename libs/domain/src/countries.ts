import { JURISDICTION_CODE, countryKey, foldText, jurisdictionKey } from './normalize';

/** ISO 3166-1 alpha-2 codes (officially assigned). */
export const ISO_COUNTRIES: ReadonlySet<string> = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
    'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR ' +
    'GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP ' +
    'KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT ' +
    'MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW ' +
    'SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG ' +
    'UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
  ).split(' '),
);

export function isIsoCountry(code: string): boolean {
  return ISO_COUNTRIES.has(code);
}

/** English country names (as Unicode CLDR writes them, folded) → ISO code, built once from Intl. */
let codesByName: ReadonlyMap<string, string> | undefined;

/**
 * Names commonly written for a country that CLDR does not give it (folded; "U.S.A." folds to `usa`, and
 * "U.S." to the code `us`). England, Scotland, Wales and Northern Ireland (and England and Wales, one
 * jurisdiction of company law), written where a country is, are the United Kingdom's parts: GB.
 */
const COUNTRY_NAME_ALIASES: ReadonlyMap<string, string> = new Map([
  ['usa', 'US'],
  ['united states of america', 'US'],
  ['great britain', 'GB'],
  ['england and wales', 'GB'],
  ['england', 'GB'],
  ['scotland', 'GB'],
  ['wales', 'GB'],
  ['northern ireland', 'GB'],
]);

/**
 * The ISO 3166-1 alpha-2 code of a country written out in English ("United States", "united kingdom",
 * "Côte d'Ivoire", and the common names CLDR does not give: "USA", "Great Britain", "England") or
 * already as a code ("us", "U.S.", and "UK" as countryKey reads it: `GB`); null when the name is not one
 * of these.
 */
export function countryCodeOfName(name: string): string | null {
  const key = foldText(name);
  if (key === '') return null;
  if (key.length === 2) {
    const code = countryKey(key);
    return ISO_COUNTRIES.has(code) ? code : null;
  }
  if (!codesByName) {
    const names = new Intl.DisplayNames(['en'], { type: 'region' });
    const map = new Map<string, string>();
    for (const code of ISO_COUNTRIES) {
      const display = names.of(code);
      if (display && display !== code) map.set(foldText(display), code);
    }
    codesByName = map;
  }
  return codesByName.get(key) ?? COUNTRY_NAME_ALIASES.get(key) ?? null;
}

/**
 * A record's country as stored: the ISO code of a country written as a code or a name as countryCodeOfName
 * reads it ("USA", "United States", "U.S.", "United Kingdom", "UK" → `US`, `US`, `US`, `GB`, `GB`), or two
 * letters ISO does not assign (`XK`, as some data sets write Kosovo) as countryKey writes them; null when
 * it is neither ("Deutschland": English names only).
 */
export function recordCountryOf(value: string): string | null {
  const code = countryCodeOfName(value);
  if (code !== null) return code;
  return /^\s*[A-Za-z]{2}\s*$/.test(value) ? countryKey(value) : null;
}

/** A country's English name as Unicode CLDR writes it (`GB` → "United Kingdom"); the code itself if Intl has none. */
export function countryNameOf(code: string): string {
  const key = countryKey(code);
  return new Intl.DisplayNames(['en'], { type: 'region' }).of(key) ?? key;
}

/** The fifty states and the District of Columbia: USPS code → name. */
export const US_STATES: ReadonlyMap<string, string> = new Map([
  ['AL', 'Alabama'],
  ['AK', 'Alaska'],
  ['AZ', 'Arizona'],
  ['AR', 'Arkansas'],
  ['CA', 'California'],
  ['CO', 'Colorado'],
  ['CT', 'Connecticut'],
  ['DE', 'Delaware'],
  ['DC', 'District of Columbia'],
  ['FL', 'Florida'],
  ['GA', 'Georgia'],
  ['HI', 'Hawaii'],
  ['ID', 'Idaho'],
  ['IL', 'Illinois'],
  ['IN', 'Indiana'],
  ['IA', 'Iowa'],
  ['KS', 'Kansas'],
  ['KY', 'Kentucky'],
  ['LA', 'Louisiana'],
  ['ME', 'Maine'],
  ['MD', 'Maryland'],
  ['MA', 'Massachusetts'],
  ['MI', 'Michigan'],
  ['MN', 'Minnesota'],
  ['MS', 'Mississippi'],
  ['MO', 'Missouri'],
  ['MT', 'Montana'],
  ['NE', 'Nebraska'],
  ['NV', 'Nevada'],
  ['NH', 'New Hampshire'],
  ['NJ', 'New Jersey'],
  ['NM', 'New Mexico'],
  ['NY', 'New York'],
  ['NC', 'North Carolina'],
  ['ND', 'North Dakota'],
  ['OH', 'Ohio'],
  ['OK', 'Oklahoma'],
  ['OR', 'Oregon'],
  ['PA', 'Pennsylvania'],
  ['RI', 'Rhode Island'],
  ['SC', 'South Carolina'],
  ['SD', 'South Dakota'],
  ['TN', 'Tennessee'],
  ['TX', 'Texas'],
  ['UT', 'Utah'],
  ['VT', 'Vermont'],
  ['VA', 'Virginia'],
  ['WA', 'Washington'],
  ['WV', 'West Virginia'],
  ['WI', 'Wisconsin'],
  ['WY', 'Wyoming'],
]);

/** Folded state names and codes → USPS code, built once from US_STATES. */
let statesByKey: ReadonlyMap<string, string> | undefined;

/**
 * The USPS code of a US state or DC written as its code or its name ("va", "Virginia", "district of
 * columbia", "D.C." → `VA`, `DC`); null otherwise. Only meaningful for a region of a place in the US.
 */
export function usStateCodeOf(value: string): string | null {
  statesByKey ??= new Map(
    [...US_STATES].flatMap(([code, name]) => [
      [foldText(code), code],
      [foldText(name), code],
    ]),
  );
  return statesByKey.get(foldText(value)) ?? null;
}

/** Canada's ten provinces and three territories: ISO 3166-2 code (after `CA-`, as Canada Post writes them) → name. */
export const CANADIAN_PROVINCES: ReadonlyMap<string, string> = new Map([
  ['AB', 'Alberta'],
  ['BC', 'British Columbia'],
  ['MB', 'Manitoba'],
  ['NB', 'New Brunswick'],
  ['NL', 'Newfoundland and Labrador'],
  ['NS', 'Nova Scotia'],
  ['NT', 'Northwest Territories'],
  ['NU', 'Nunavut'],
  ['ON', 'Ontario'],
  ['PE', 'Prince Edward Island'],
  ['QC', 'Quebec'],
  ['SK', 'Saskatchewan'],
  ['YT', 'Yukon'],
]);

/**
 * Folded names of the sub-national jurisdictions that register companies on their own → ISO 3166-2 code,
 * as OpenCorporates names its jurisdictions (`us_de`, `ca_on`): the US states and DC (ISO's codes are
 * the USPS ones), Canada's provinces and territories. Built once from US_STATES and CANADIAN_PROVINCES.
 */
let subdivisionsByName: ReadonlyMap<string, string> | undefined;

function subdivisionNamed(key: string): string | null {
  subdivisionsByName ??= new Map([
    ...[...US_STATES].map(([code, name]) => [foldText(name), `US-${code}`] as const),
    ['washington dc', 'US-DC'],
    ...[...CANADIAN_PROVINCES].map(([code, name]) => [foldText(name), `CA-${code}`] as const),
    ['newfoundland', 'CA-NL'],
  ]);
  // "State of New York", "Commonwealth of Massachusetts", "Province of Ontario", "New York State"
  const bare = key.replace(/^(state|commonwealth|province) of /, '').replace(/ (state|province)$/, '');
  return subdivisionsByName.get(key) ?? subdivisionsByName.get(bare) ?? null;
}

/** Every jurisdiction a folded name may be: a country and a US state both, for "Georgia". */
function jurisdictionsNamed(key: string): string[] {
  return [countryCodeOfName(key), subdivisionNamed(key)].filter((c): c is string => c !== null);
}

/**
 * A company's jurisdiction as an ISO code, the way the registries write theirs: one written as a code as
 * jurisdictionKey reads it (`us_de` → `US-DE`, `uk` → `GB`); one written out, a country by its English
 * name (countryCodeOfName: "Germany" → `DE`, and the UK's nations — "England and Wales", "Scotland",
 * "Northern Ireland" — as `GB`), a US state or Canadian province by its name, ISO 3166-2 ("Delaware",
 * "State of New York", "Ontario" → `US-DE`, `US-NY`, `CA-ON`), optionally followed by its country
 * ("Delaware, USA", "Georgia (United States)"). Null when the name is none of these, or could be more
 * than one ("Georgia" alone: the country or the state): a state is never read as its country alone, so
 * Delaware's and New York's companies stay apart.
 */
export function jurisdictionOf(value: string): string | null {
  const written = value.trim();
  if (written === '') return null;
  if (JURISDICTION_CODE.test(written)) return jurisdictionKey(written);
  const parts = written
    .split(/[,()]/)
    .map(foldText)
    .filter((p) => p !== '');
  const within = parts.length === 2 ? countryCodeOfName(parts[1]!) : null;
  const codes = within
    ? jurisdictionsNamed(parts[0]!).filter((c) => c === within || c.startsWith(`${within}-`))
    : jurisdictionsNamed(foldText(written));
  return codes.length === 1 ? codes[0]! : null;
}

/**
 * The register a company's number is unique in, from its jurisdiction (or its country): the jurisdiction
 * as jurisdictionOf reads it, with the UK's parts as GB — Companies House numbers are unique across the
 * UK, its SC and NI prefixes telling Scotland's and Northern Ireland's — and one it cannot read folded as
 * written; empty when there is none. Two records of one number are one company only in one register.
 */
export function registerOf(jurisdiction: string): string {
  const code = jurisdictionOf(jurisdiction);
  if (code === null) return foldText(jurisdiction);
  return code.startsWith('GB-') ? 'GB' : code;
}
