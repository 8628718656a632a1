import { z } from 'zod';
import { ISO_COUNTRIES, isIsoCountry, normalizeDomain, parseEmail } from '@dossier/domain';
import {
  PERSON_LIMIT_DEFAULT,
  PERSON_LIMIT_MAX,
  companyResultSchema,
  emailResultSchema,
  personResultSchema,
  phoneResultSchema,
  searchProgressSchema,
  sourceReportSchema,
  sourceSummary,
  sourceSummarySchema,
} from '@dossier/contracts';
import { anyOfRequired, matchesTrimmed, serverCheck, trimmedPattern, trimmedText } from '../http/validation';

const COUNTRY_ISSUE = 'must be an ISO 3166-1 alpha-2 country code such as US or DE';

/**
 * The assigned ISO 3166-1 alpha-2 codes in either case, around blanks, as one pattern: a letter class per
 * first letter (`[Aa][DEFGILMOQRSTUWXZdefgilmoqrstuwxz]|…`), so that the document refuses `AA` as the server does.
 */
function isoCountryPattern(): string {
  const seconds = new Map<string, string>();
  for (const code of [...ISO_COUNTRIES].sort()) seconds.set(code[0]!, (seconds.get(code[0]!) ?? '') + code[1]!);
  const classes = [...seconds].map(([first, rest]) => `[${first}${first.toLowerCase()}][${rest}${rest.toLowerCase()}]`);
  return `^\\s*(?:${classes.join('|')})\\s*$`;
}

const country = z
  .string({ error: 'must be a string' })
  .trim()
  // Two ASCII letters before the case is folded: `toUpperCase()` makes `ﬆ` (one ligature) `ST`.
  .regex(/^[A-Za-z]{2}$/, { message: COUNTRY_ISSUE, abort: true })
  .toUpperCase()
  .refine(isIsoCountry, COUNTRY_ISSUE)
  .meta({ pattern: isoCountryPattern() })
  .describe('ISO 3166-1 alpha-2 country code');

const permissiblePurpose = matchesTrimmed(
  z.string({ error: 'must be a string' }).trim(),
  /^[a-z][a-z0-9_-]{1,63}$/,
  'must be a short code such as employment, tenant_screening or fraud_prevention',
).describe('Why this lookup is made; stored in the audit trail with the account, key, request id and time.');

const ageRange = matchesTrimmed(
  trimmedText(9),
  /^(\d{1,3}-\d{1,3}|\d{1,3}\+|-\d{1,3})$/,
  'must look like "30-40", "65+" or "-25"',
)
  .refine((v) => {
    const m = /^(\d+)-(\d+)$/.exec(v);
    return !m || Number(m[1]) <= Number(m[2]);
  }, 'must have its lower bound first')
  .meta(serverCheck('a range whose lower bound is above its upper one ("40-30")', ['30-40', '65+', '-25']))
  .describe('"30-40", "65+" or "-25"');

/**
 * What the document states a domain is: an ASCII domain name of two or more labels (letters, digits and
 * inner hyphens, at most 63 each; the top-level one starting with a letter), at most 253 characters, with
 * an optional trailing dot, optionally after a scheme (`https://`) and before a port under 10000 and a path,
 * query or fragment without blanks. Every such text is one normalizeDomain reads (a test holds it there);
 * the server also takes what the pattern leaves out — an internationalised name, a user@ part, blanks
 * inside a path — so a client may send more than the document shows, never less (ADR 0069).
 */
export const DOMAIN_PATTERN =
  '^\\s*(?:[A-Za-z][A-Za-z0-9+.-]*://)?(?![A-Za-z0-9.-]{254})' + hostPattern() + '(?::\\d{1,4})?(?:[/?#]\\S*)?\\s*$';

/**
 * An ASCII host name of two or more labels, as a pattern: letters, digits and inner hyphens, at most 63 each,
 * the top-level one starting with a letter (a numeric one is an address), an optional trailing dot. No label
 * starts `xn--`: that is punycode, which domainToASCII refuses when it does not decode.
 */
function hostPattern(): string {
  const label = (first: string) => `(?![Xx][Nn]--)${first}(?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?`;
  return `(?:${label('[A-Za-z0-9]')}\\.)+${label('[A-Za-z]')}\\.?`;
}

/** A domain, or a URL on it (`https://www.acme.com/about` searches `acme.com`). */
const domain = trimmedText(2048)
  .refine((v) => normalizeDomain(v) !== null, 'must be a domain name such as example.com, or a URL on it')
  .meta({ pattern: DOMAIN_PATTERN, examples: ['example.com', 'https://www.example.com/about'] })
  .describe('example.com, or a URL such as https://www.example.com/about');

/**
 * What the document states a person's e-mail address is: an ASCII dot-atom local part of at most 64
 * characters, an @ and a host name as a company `domain` has (254 characters in all, once trimmed). Every
 * such address is one parseEmail calls syntax-valid (a test holds it there); the server also takes what the
 * pattern leaves out — a quoted local part, non-ASCII text, an internationalised domain (ADR 0069).
 */
export const PERSON_EMAIL_PATTERN =
  "^\\s*(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@" +
  hostPattern() +
  '\\s*$';

/** An address a person search can match: what `POST /v1/verify/email` would call syntax-valid. */
const emailAddress = trimmedText(254)
  .refine((v) => parseEmail(v).syntaxValid, 'must be an e-mail address such as grace.hopper@example.com')
  .meta({ pattern: PERSON_EMAIL_PATTERN, examples: ['grace.hopper@example.com'] });

/** A company's registration number as registries write them: letters, digits, spaces and - . / */
const registrationNumber = matchesTrimmed(
  trimmedText(64),
  /^[A-Za-z0-9][A-Za-z0-9 ./-]*$/,
  'must be a registration number (letters, digits, spaces, - . /)',
);

/**
 * One handle, with or without its leading @: no spaces, slashes or other @. `.` and `..` would be read as path
 * steps in a site's profile address (/u/.. is /), not as a handle.
 */
export const HANDLE = /^@?(?!\.{1,2}$)[^\s@/]+$/;

export const SEARCH_TYPES = ['person', 'company', 'email', 'phone', 'username'] as const;

/** The most sites and tags a search may name, and the largest `top`: far beyond any site list. */
const MAX_SITES = 1000;
const MAX_TAGS = 100;
const TOP_MAX = 10_000;
const TOP_ISSUE = `must be a whole number from 1 to ${TOP_MAX}`;

/**
 * Username presence's choice of sites (ADR 0049), as Maigret chooses: the sites named, of those the ones
 * carrying any of the tags, of those the `top` most popular — each only when given. Names and tags the
 * worker's site list does not have are refused (`GET /v1/username/sites` lists them). Each needs a username
 * to check (selectionNeedsUsername), which the bodies' `dependentRequired`/`dependentSchemas` state.
 */
const siteSelection = {
  sites: z
    .array(trimmedText(100), { error: 'must be an array of site names' })
    .min(1, 'must name at least one site')
    .max(MAX_SITES, `must name at most ${MAX_SITES} sites`)
    .meta(serverCheck("a name no site of the person workers' list has (the workers' list, read at run time)"))
    .optional()
    .describe(
      'Username presence: check only these sites (names as `GET /v1/username/sites` lists them, in any case); ' +
        'a name no site has is a 400 naming it.',
    ),
  tags: z
    .array(trimmedText(50).toLowerCase(), { error: 'must be an array of tags' })
    .min(1, 'must name at least one tag')
    .max(MAX_TAGS, `must name at most ${MAX_TAGS} tags`)
    .meta(serverCheck("a tag no site of the person workers' list carries (the workers' list, read at run time)"))
    .optional()
    .describe(
      'Username presence: check only the sites carrying any of these tags — categories such as `coding`, ' +
        "`gaming`, `social`, or country codes such as `de`, `jp` (Maigret's); a tag no site carries is a 400.",
    ),
  top: z
    .number({ error: TOP_ISSUE })
    .int(TOP_ISSUE)
    .min(1, TOP_ISSUE)
    .max(TOP_MAX, TOP_ISSUE)
    .optional()
    .describe(
      "Username presence: check only the N most popular of the sites chosen (by Maigret's popularity rank; " +
        'unranked sites last). Without `sites`, `tags` or `top`, every site of the list is checked.',
    ),
};
const SITE_SELECTION_KEYS = ['sites', 'tags', 'top'] as const;

/**
 * The rule of selectionNeedsUsername as JSON Schema: the same dependency (`dependentRequired`,
 * `dependentSchemas`) for each of `sites`, `tags` and `top` — present, it needs a username to check.
 */
const selectionDependsOn = <T>(dependency: T): Record<string, T> =>
  Object.fromEntries(SITE_SELECTION_KEYS.map((key) => [key, dependency]));

/** A person search's query the person endpoint reads as its `username`: an @handle (query-shape.ts). */
export const AT_HANDLE = /^@(?!\.{1,2}$)[^\s@/]+$/;

/** `sites`, `tags` and `top` choose username sites: without a username to check they mean nothing, and are refused. */
const selectionNeedsUsername =
  (usernameGiven: (body: Record<string, unknown>) => boolean, issue: string) =>
  (body: Record<string, unknown>, ctx: z.RefinementCtx) => {
    if (usernameGiven(body)) return;
    for (const key of SITE_SELECTION_KEYS)
      if (body[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: issue });
  };

export const searchBody = z
  .object({
    query: trimmedText(256)
      .meta(
        serverCheck(
          'a query the field it goes to (by `type`, and for person and company by its shape) refuses as that ' +
            "field's own endpoint does: a phone that is not a possible number, an e-mail address that is not " +
            'syntax-valid, a handle with a space or slash, a registration number or domain that is not one, ' +
            "or text longer than that field's limit",
          ['Grace Hopper', '+14155552671', 'grace.hopper@example.com', '@gracehopper', 'example.com'],
        ),
      )
      .describe(
        'What to search for. For `person` and `company`, its shape picks the field it is searched as (see the ' +
          'operation); any other query is the name.',
      ),
    type: z.enum(SEARCH_TYPES, { error: `must be one of ${SEARCH_TYPES.join(', ')}` }),
    country: country
      .optional()
      .describe(
        'ISO 3166-1 alpha-2 country code. phone: the default region for a national number. company: keeps ' +
          'companies in that country. person, username: keeps people known there or of no known country ' +
          '(username presence on sites is not narrowed).',
      ),
    permissible_purpose: permissiblePurpose.optional(),
    ...siteSelection,
  })
  .strict()
  .superRefine(
    selectionNeedsUsername(
      (body) => body['type'] === 'username' || body['type'] === 'person',
      'applies only to a username search (type username, or person with an @handle as query)',
    ),
  )
  .meta({
    // A person query that is not an @handle goes to another field, and the person endpoint then refuses them.
    dependentSchemas: selectionDependsOn({
      anyOf: [
        { properties: { type: { const: 'username' } } },
        { properties: { type: { const: 'person' }, query: { pattern: trimmedPattern(AT_HANDLE) } } },
      ],
    }),
    examples: [{ query: '+14155552671', type: 'phone' }],
  });

const atLeastOne =
  <K extends string>(keys: readonly K[], field: K) =>
  (v: Partial<Record<K, unknown>>, ctx: z.RefinementCtx) => {
    if (keys.every((k) => v[k] === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [field],
        message: `is required (or give one of ${keys.filter((k) => k !== field).join(', ')})`,
      });
    }
  };

const PERSON_KEYS = ['name', 'email', 'phone', 'username'] as const;
const LIMIT_ISSUE = `must be a whole number from 1 to ${PERSON_LIMIT_MAX}`;
const MIN_SCORE_ISSUE = 'must be a number from 0 to 1';
const COMPANY_KEYS = ['company_name', 'domain', 'registration_number'] as const;

export const personBody = z
  .object({
    name: trimmedText(256).optional(),
    email: emailAddress.optional(),
    phone: trimmedText(64)
      .meta(
        serverCheck('a number libphonenumber cannot read as a possible one in the region it is read in', [
          '+14155552671',
          '(512) 555-0199',
        ]),
      )
      .optional()
      .describe(
        'In any format, as People Data Labs accepts it: E.164 (+14155552671), or national ((512) 555-0199) read ' +
          'in the region of `country`, else of the one country `location` names ("Austin, TX" is the US; ' +
          '"Los Angeles, CA" could be Canada, so it names none), else the operator\'s default region ' +
          '(DEFAULT_REGION, US unless set). The 400 names the region it was read in. Searched as its E.164 form.',
      ),
    username: matchesTrimmed(
      trimmedText(128),
      HANDLE,
      'must be a single handle such as grace_h (no spaces or slashes, not . or ..)',
    ).optional(),
    location: trimmedText(256).optional(),
    age_range: ageRange.optional(),
    country: country
      .optional()
      .describe(
        'ISO 3166-1 alpha-2 country code: keeps people known in that country or of no known country, and is ' +
          'the region a national `phone` is read in.',
      ),
    limit: z
      .number({ error: LIMIT_ISSUE })
      .int(LIMIT_ISSUE)
      .min(1, LIMIT_ISSUE)
      .max(PERSON_LIMIT_MAX, LIMIT_ISSUE)
      .optional()
      .describe(
        `How many items to answer at most, best first (default ${PERSON_LIMIT_DEFAULT}); \`total_results\` says ` +
          'how many there were.',
      ),
    min_score: z
      .number({ error: MIN_SCORE_ISSUE })
      .min(0, MIN_SCORE_ISSUE)
      .max(1, MIN_SCORE_ISSUE)
      .optional()
      .describe('Items whose `match_score` is below this are neither answered nor counted (default 0).'),
    permissible_purpose: permissiblePurpose.optional(),
    ...siteSelection,
  })
  .strict()
  .superRefine(atLeastOne(PERSON_KEYS, 'name'))
  .superRefine(
    selectionNeedsUsername(
      (body) => body['username'] !== undefined,
      'applies only to a search with username (it chooses the sites the username is checked on)',
    ),
  )
  .meta({
    ...anyOfRequired(PERSON_KEYS),
    dependentRequired: selectionDependsOn(['username']),
    examples: [{ name: 'Gonzalo Halvorson', location: 'South Jillville, NM', permissible_purpose: 'employment' }],
  });

export const companyBody = z
  .object({
    company_name: trimmedText(256).optional(),
    domain: domain.optional(),
    registration_number: registrationNumber.optional(),
    country: country.optional(),
    permissible_purpose: permissiblePurpose.optional(),
  })
  .strict()
  .superRefine(atLeastOne(COMPANY_KEYS, 'company_name'))
  .meta({
    ...anyOfRequired(COMPANY_KEYS),
    examples: [{ company_name: 'Balistreri Friesen and Franecki-Schroeder Ltd', country: 'GB' }],
  });

export const SCREEN_TYPES = ['person', 'company'] as const;
const BIRTH_YEAR_ISSUE = 'must be a year from 1900 to 2100';

/** `POST /v1/screen` (ADR 0064): a name screened against the imported sanctions lists alone. */
export const screenBody = z
  .object({
    name: trimmedText(256).describe("The subject's name: a person's, or an organisation's with `type: company`."),
    type: z
      .enum(SCREEN_TYPES, { error: `must be one of ${SCREEN_TYPES.join(', ')}` })
      .optional()
      .describe('`person` (default) or `company`: which entries of the lists the name is screened against.'),
    birth_year: z
      .number({ error: BIRTH_YEAR_ISSUE })
      .int(BIRTH_YEAR_ISSUE)
      .min(1900, BIRTH_YEAR_ISSUE)
      .max(2100, BIRTH_YEAR_ISSUE)
      .optional()
      .describe("A person's year of birth: a listed person born more than a year apart from it is no hit."),
    country: country
      .optional()
      .describe(
        'ISO 3166-1 alpha-2 country code: an entry of that country says so in `matched_on` (it narrows nothing).',
      ),
    permissible_purpose: permissiblePurpose.optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.type === 'company' && body.birth_year !== undefined)
      ctx.addIssue({ code: 'custom', path: ['birth_year'], message: 'applies only to a person (type person)' });
  })
  .meta({
    // Only a person has a year of birth: `type` absent (a person) or `person`.
    dependentSchemas: { birth_year: { properties: { type: { const: 'person' } } } },
    examples: [{ name: 'Rustam Karimov', birth_year: 1961, country: 'UZ' }],
  });

export const verifyEmailBody = z
  .object({ email: trimmedText(320), permissible_purpose: permissiblePurpose.optional() })
  .strict()
  .meta({ examples: [{ email: 'grace.hopper@example.com' }] });

export const verifyPhoneBody = z
  .object({
    phone: trimmedText(64)
      .meta(
        serverCheck(
          'a number libphonenumber cannot read as a possible one: E.164, or national in the region of `country`',
          ['+14155552671', '+442071838750'],
        ),
      )
      .describe('E.164 (+14155552671) or national format with `country`'),
    country: country.optional().describe('default region for national-format numbers'),
    permissible_purpose: permissiblePurpose.optional(),
  })
  .strict()
  .meta({ examples: [{ phone: '+14155552671' }, { phone: '(415) 555-2671', country: 'US' }] });

/** Ids and balances in the examples: what an integrator's first calls look like. */
const EXAMPLE_SEARCH_ID = 'srch_8cFq3xPzLk2mW9rT4vB7nY1d';

const sources = (providers: string[], tookMs: number) =>
  providers.map((provider) => ({ provider, outcome: 'found' as const, took_ms: tookMs }));

/** How many items a person search found before its `limit` cut them (ADR 0047). */
const totalResults = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe(
    'A person search: how many items passed `min_score` before `limit` cut them (each source considers at most ' +
      'its best 200 name matches).',
  );

/**
 * One success envelope per lookup kind: `results` holds that kind's items; the example names its providers.
 * `counted`: the kind's searches say how many items there were (`total_results`).
 */
function successEnvelopeOf<T extends z.ZodType>(
  item: T,
  example: z.output<T>,
  { counted = false }: { counted?: boolean },
  ...providers: string[]
) {
  return z
    .object({
      status: z.literal('success'),
      search_id: z.string(),
      results: z.array(item),
      ...(counted ? { total_results: totalResults } : {}),
      credits_remaining: z.number().int(),
      sources: z.array(sourceReportSchema),
      source_summary: sourceSummarySchema,
    })
    .meta({
      examples: [
        {
          status: 'success',
          search_id: EXAMPLE_SEARCH_ID,
          results: [example],
          ...(counted ? { total_results: 1 } : {}),
          credits_remaining: 99,
          sources: sources(providers, 3),
          source_summary: sourceSummary(sources(providers, 3)),
        },
      ],
    });
}

export const phoneSuccessEnvelope = successEnvelopeOf(
  phoneResultSchema,
  {
    input: '+14155552671',
    e164: '+14155552671',
    valid: true,
    validation_errors: [],
    possible: true,
    country_code: '1',
    region: 'US',
    location: 'San Francisco, CA',
    carrier: null,
    line_type: 'fixed_line_or_mobile',
    time_zones: ['America/Los_Angeles'],
    national_format: '(415) 555-2671',
    international_format: '+1 415 555 2671',
    sources: ['libphonenumber'],
  },
  {},
  'libphonenumber',
);

export const emailSuccessEnvelope = successEnvelopeOf(
  emailResultSchema,
  {
    email: 'Grace.Hopper@Example.org',
    normalized: 'Grace.Hopper@example.org',
    syntax_valid: true,
    domain: 'example.org',
    mx_records: ['mx1.example.org', 'mx2.example.org'],
    deliverability: 'deliverable',
    reason: 'mx1.example.org accepted the mailbox (250 2.1.5 OK)',
    disposable: false,
    free_provider: false,
    role_account: false,
    did_you_mean: null,
    accounts: [],
    sources: ['smtp', 'email'],
    is_catch_all: false,
    has_full_inbox: false,
    is_disabled: false,
    can_connect_smtp: true,
    score: 95,
    sub_status: 'accepted',
  },
  {},
  'email',
  'smtp',
);

// The walkthrough's answers (docs/walkthrough.md) from the demo set (`npm run cli -- demo:seed`).
export const personSuccessEnvelope = successEnvelopeOf(
  personResultSchema,
  {
    id: 'per_lVX-zyTY48dHOZOZ8HuC',
    full_name: 'Gonzalo Halvorson',
    first_name: 'Gonzalo',
    last_name: 'Halvorson',
    aliases: [],
    emails: ['gonzalo_halvorson@example.com'],
    phones: ['+12025550100'],
    usernames: ['gonzalo_halvorson'],
    accounts: [],
    locations: [{ city: 'South Jillville', region: 'NM', country: 'US' }],
    age: 62,
    birth_year: 1964,
    match_score: 0.825,
    matched_on: ['name', 'location'],
    sources: ['local'],
    linked_by: [],
    kept_apart: [],
  },
  { counted: true },
  'local',
);

// The records the example's fields came from (ADR 0068): the register's profile, the LEI record, the demo set's row.
const CH_PROFILE = { provider: 'companies-house', record_id: '/company/05689105' };
const GLEIF_RECORD = { provider: 'gleif', record_id: '/lei-records/213800LH1BZH3DI6G760' };
const LOCAL_RECORD = { provider: 'local', record_id: 'demo:demo-company-0000003' };

export const companySuccessEnvelope = successEnvelopeOf(
  companyResultSchema,
  {
    id: 'com_w97HRjNIg6ke5YxVIA7f',
    name: 'Balistreri Friesen and Franecki-Schroeder Limited',
    registration_number: '05689105',
    jurisdiction: 'GB',
    country: 'GB',
    domain: 'balistreri-friesen-and-franecki-schroeder.example',
    status: 'active',
    incorporated_on: '1971-11-14',
    address: '286 Stracke Gate, Hand-upon-Williamson',
    industry: 'Health',
    match_score: 0.75,
    matched_on: ['company_name', 'country'],
    sources: ['local', 'companies-house', 'gleif'],
    officers: [
      {
        name: 'HAND, Mireille Alessandra',
        role: 'director',
        appointed_on: '2019-03-01',
        resigned_on: null,
        nationality: 'British',
        country_of_residence: 'England',
        birth_year: 1968,
        birth_month: 7,
        source: {
          provider: 'companies-house',
          record_id: '/company/05689105/appointments/Zx3k1rM9qPaBcDeFgHiJkLmNoPq',
        },
      },
    ],
    controllers: [
      {
        name: 'Balistreri Holdings Limited',
        kind: 'corporate',
        natures_of_control: ['ownership-of-shares-75-to-100-percent', 'voting-rights-75-to-100-percent'],
        notified_on: '2016-04-06',
        ceased_on: null,
        source: {
          provider: 'companies-house',
          record_id: '/company/05689105/persons-with-significant-control/corporate-entity/Qm8yT2vLkAbCdEfGhIjKlMnOpQr',
        },
      },
    ],
    parents: {
      direct: {
        lei: '213800MBWEIJDM5CU638',
        name: 'BALISTRERI HOLDINGS LIMITED',
        source: {
          provider: 'gleif',
          record_id: '213800LH1BZH3DI6G760>IS_DIRECTLY_CONSOLIDATED_BY>213800MBWEIJDM5CU638',
        },
      },
      ultimate: null,
    },
    field_sources: {
      name: [CH_PROFILE, LOCAL_RECORD],
      registration_number: [CH_PROFILE, GLEIF_RECORD, LOCAL_RECORD],
      jurisdiction: [CH_PROFILE, GLEIF_RECORD, LOCAL_RECORD],
      country: [CH_PROFILE, GLEIF_RECORD, LOCAL_RECORD],
      domain: [LOCAL_RECORD],
      status: [CH_PROFILE, GLEIF_RECORD, LOCAL_RECORD],
      incorporated_on: [CH_PROFILE, LOCAL_RECORD],
      address: [CH_PROFILE],
      industry: [LOCAL_RECORD],
    },
  },
  {},
  'local',
);

/** `POST /v1/screen`: the listed entities the name matches, each with its hit (ADR 0064). */
export const screenSuccessEnvelope = successEnvelopeOf(
  z.union([personResultSchema, companyResultSchema]),
  {
    id: 'per_3m0xQ1m2cJmE6m8VtN0a',
    full_name: 'KARIMOV, Rustam Bakhtiyorovich',
    first_name: 'Rustam',
    last_name: 'KARIMOV',
    aliases: ['KARIMOV, Rustam', 'QARIMOV, Rostam'],
    emails: [],
    phones: [],
    usernames: [],
    accounts: [],
    locations: [{ city: null, region: null, country: 'UZ' }],
    age: 65,
    birth_year: 1961,
    match_score: 0.713,
    matched_on: ['name', 'birth_year', 'country'],
    sources: ['watchlists'],
    linked_by: [],
    kept_apart: [],
    watchlist_hits: [
      {
        list: 'ofac-sdn',
        entry_id: '9001',
        listed_name: 'KARIMOV, Rustam Bakhtiyorovich',
        programme: 'SDGT; IRGC',
        match_score: 0.95,
        matched_on: ['name', 'birth_year', 'country'],
      },
    ],
  },
  { counted: true },
  'watchlists',
);

/** `POST /v1/search` and `GET /v1/searches/{id}` answer the envelope of whichever kind the search is. */
export const anySuccessEnvelope = z
  .union([personSuccessEnvelope, companySuccessEnvelope, emailSuccessEnvelope, phoneSuccessEnvelope])
  .meta({ examples: z.globalRegistry.get(phoneSuccessEnvelope)?.examples ?? [] });

export const pendingEnvelope = z
  .object({
    status: z.literal('pending'),
    search_id: z.string(),
    credits_remaining: z.number().int(),
    progress: searchProgressSchema
      .optional()
      .describe(
        'What the search has found so far, while its sources answer (a username search: the accounts found on ' +
          'the sites that have answered); absent until the worker has written some, at most once a second.',
      ),
  })
  .meta({ examples: [{ status: 'pending', search_id: EXAMPLE_SEARCH_ID, credits_remaining: 99 }] });

/** `GET /v1/username/sites` (ADR 0049): the sites a username search can choose, as the person workers report them. */
export const usernameSitesResponse = z
  .object({
    status: z.literal('success'),
    sites: z
      .array(
        z.object({
          name: z.string().describe('what `sites` names it by (in any case), and its `site:<name>` in `sources`'),
          tags: z.array(z.string()).describe('categories and country codes `tags` chooses by'),
          rank: z
            .number()
            .int()
            .nullable()
            .describe("popularity rank, 1 the most visited (Maigret's), as `top` orders sites; null: unranked"),
        }),
      )
      .describe("the sites checked, in the list's order"),
    tags: z
      .array(z.object({ tag: z.string(), sites: z.number().int().describe('how many sites carry it') }))
      .describe('every tag some site carries, the most carried first'),
  })
  .meta({
    examples: [
      {
        status: 'success',
        sites: [
          { name: 'GitHub', tags: ['coding'], rank: 10 },
          { name: 'Steam', tags: ['gaming'], rank: 244 },
        ],
        tags: [
          { tag: 'coding', sites: 1 },
          { tag: 'gaming', sites: 1 },
        ],
      },
    ],
  });
export type UsernameSitesResponse = z.infer<typeof usernameSitesResponse>;
