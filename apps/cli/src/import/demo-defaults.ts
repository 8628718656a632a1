/** How many records `demo:seed` writes when not told. */
export const DEMO_DEFAULTS = { people: 10_000, companies: 2_000 };
