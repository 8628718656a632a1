/** What the client asked for with `Prefer` (RFC 7240): wait up to N seconds, or answer async at once. */
export interface Preference {
  respondAsync: boolean;
  waitS: number | null;
}

export function parsePrefer(header: string | string[] | undefined): Preference {
  const raw = Array.isArray(header) ? header.join(',') : (header ?? '');
  const pref: Preference = { respondAsync: false, waitS: null };
  for (const token of raw.split(/[,;]/)) {
    const [name, given] = token.split('=').map((s) => s.trim().toLowerCase());
    // RFC 7240 allows a value as a token or a quoted string: wait=5 and wait="5" are the same preference.
    const value = given?.replace(/^"(.*)"$/, '$1');
    if (name === 'respond-async') pref.respondAsync = true;
    if (name === 'wait' && value !== undefined && /^\d{1,6}$/.test(value)) pref.waitS = Number(value);
  }
  return pref;
}
