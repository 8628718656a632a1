/**
 * The phone numbers the lookups send: valid numbers from several countries, varied so that no
 * per-number cache anywhere in the path can make the figure.
 */
import { isValidPhoneNumber, parsePhoneNumber, type CountryCode } from 'libphonenumber-js/max';

export interface BenchPhone {
  phone: string;
  /** Set for national numbers. */
  country?: CountryCode;
}

/** Valid numbers from several countries (E.164 and national with `country`); checked at start. */
export const BASE_PHONES: readonly BenchPhone[] = [
  { phone: '+12015550123' },
  { phone: '+14155552671' },
  { phone: '+447400123456' },
  { phone: '+442079460018' },
  { phone: '+4915123456789' },
  { phone: '030 12345678', country: 'DE' },
  { phone: '+33612345678' },
  { phone: '+918123456789' },
  { phone: '+5511961234567' },
  { phone: '+819012345678' },
  { phone: '0412 345 678', country: 'AU' },
  { phone: '+15062345678' },
  { phone: '+34612345678' },
  { phone: '+393123456789' },
  { phone: '+31612345678' },
  { phone: '+46701234567' },
  { phone: '+522221234567' },
  { phone: '+27711234567' },
  { phone: '+2348021234567' },
  { phone: '+821020000000' },
  { phone: '+6581234567' },
  { phone: '078 123 45 67', country: 'CH' },
  { phone: '+48512345678' },
];

/**
 * Each base number with its last two digits varied (00–99), the valid ones only — ~2,000 distinct
 * numbers — in a fixed interleaved order (no Math.random: the same sequence every run).
 */
function phoneVariants(): BenchPhone[] {
  const out: BenchPhone[] = [];
  for (const base of BASE_PHONES) {
    if (!isValidPhoneNumber(base.phone, base.country))
      throw new Error(`bench phone list: ${base.phone} (${base.country ?? '-'}) is not valid`);
    const m = /^(.*\d)\s*(\d)\s*(\d)$/.exec(base.phone);
    for (let n = 0; n < 100 && m; n++) {
      const phone = `${m[1]}${Math.floor(n / 10)}${n % 10}`;
      if (isValidPhoneNumber(phone, base.country)) out.push({ ...base, phone });
    }
  }
  return out
    .map((p, i) => ({ p, k: (i * 7919) % out.length }))
    .sort((a, b) => a.k - b.k)
    .map(({ p }) => p);
}

export const PHONES: readonly BenchPhone[] = phoneVariants();

/** How many countries the base numbers come from (for the settings line). */
export function phoneCountryCount(): number {
  return new Set(BASE_PHONES.map((p) => parsePhoneNumber(p.phone, p.country).country)).size;
}
