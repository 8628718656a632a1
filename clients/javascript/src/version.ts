/** The package version; kept equal to `version` in package.json (a unit test checks it). */
export const VERSION = '0.1.0';

/** Sent as `User-Agent` on every request. */
export const USER_AGENT = `dossier-javascript/${VERSION}`;
