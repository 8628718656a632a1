/** An RFC 3339 time as `z.iso.datetime({ offset: true })` takes it: seconds, any fraction, `Z` or an offset. */
const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/;

/**
 * An RFC 3339 time as UTC text to the microsecond, the precision Postgres keeps a `timestamptz` to — for a
 * bound compared with stored times (`GET /v1/searches?since=&until=`, the audit export's `--from`/`--to`). A
 * JavaScript Date keeps milliseconds only: `since=…00.000500Z` became `…00.000Z` and took in searches made
 * before it. Digits past the microsecond round the instant up to the next one, which keeps both comparisons
 * exact for stored times: one is at or after the instant exactly when it is at or after the rounded one, and
 * before it exactly when before the rounded one. An instant before year 1 is `-infinity`, after 9999
 * `infinity` (Postgres reads both; nothing stored is out there). The texts order as their instants do.
 * Null when `text` is not such a time.
 */
export function microsecondInstant(text: string): string | null {
  const parts = RFC3339.exec(text);
  if (!parts) return null;
  const [, seconds, fraction = '', zone] = parts;
  const wholeMs = Date.parse(`${seconds}${zone}`);
  if (Number.isNaN(wholeMs)) return null;
  const digits = fraction.padEnd(6, '0');
  const micros = Number(digits.slice(0, 6)) + (/[1-9]/.test(digits.slice(6)) ? 1 : 0); // up to 1,000,000
  const at = new Date(wholeMs + Math.floor(micros / 1000));
  const year = at.getUTCFullYear();
  if (year < 1) return '-infinity';
  if (year > 9999) return 'infinity';
  return `${at.toISOString().slice(0, -1)}${String(micros % 1000).padStart(3, '0')}Z`;
}
