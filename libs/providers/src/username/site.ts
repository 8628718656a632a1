/** A username site, as either list format (Sherlock's, Maigret's) gives it once read: what a check needs. */

export type ErrorType = 'status_code' | 'message' | 'response_url';

/** A site, ready to check: its rules normalised (lists for one-or-many fields, the regex compiled). */
export interface Site {
  name: string;
  /** The profile's address: `{}` is the username. Reported in `accounts[].url`. */
  url: string;
  /** The address asked instead, where the site has one (an API, a lighter page). */
  urlProbe: string | null;
  errorTypes: readonly ErrorType[];
  /** Page text that means no such profile (Sherlock's errorMsg, Maigret's absenceStrs). */
  errorMsgs: readonly string[];
  errorUrl: string | null;
  errorCodes: readonly number[];
  /** Signs of a profile (Maigret's presenseStrs, for its message and response_url checks): a page is found only with one. */
  presenceStrs: readonly string[];
  /** Page text that means the check itself failed (Maigret's `errors`: a captcha, a ban, a login wall), and what. */
  failureSigns: readonly { text: string; meaning: string }[];
  /** A 403 is judged by the site's rules, as a 2xx is, not taken for a wall (Maigret's ignore403). */
  ignore403: boolean;
  /** Redirects are not followed: any redirect means no such profile (Maigret's response_url). */
  redirectIsAbsence: boolean;
  /** Usernames the site can have (its Python pattern, read as Python reads it); others are not checked there. */
  regexCheck: RegExp | null;
  method: 'GET' | 'POST' | 'HEAD' | 'PUT';
  payload: Record<string, unknown> | null;
  headers: Readonly<Record<string, string>>;
  nsfw: boolean;
  /** Its categories and countries, lower case: its own `tags`, else (Sherlock's list) those site-meta gives its name. */
  tags: readonly string[];
  /** Its popularity rank (1 is the most visited): Maigret's alexaRank, from site-meta for Sherlock's; null: unranked. */
  rank: number | null;
}
