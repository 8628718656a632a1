import { countryKey, foldText } from './normalize';

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
 * The ISO 3166-1 alpha-2 code of a country written out in English ("United States", "united kingdom",
 * "Côte d'Ivoire") or already as a code ("us", and "UK" as countryKey reads it: `GB`); null when the
 * name is not one CLDR knows.
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
  return codesByName.get(key) ?? null;
}
