import { validate } from '@readme/openapi-parser';
import Ajv2020 from 'ajv/dist/2020';
import fc from 'fast-check';
import { z } from 'zod';
import { STORABLE_TEXT_PATTERN, isStorableText, normalizeDomain, parseEmail, type ErrorCode } from '@dossier/domain';
import type { ApiDocOptions } from './api-doc.decorator';
import { documentRoutes, type FoundRoute } from './documented-route';
import { buildOpenApiDocument } from './openapi-document';
import { emailField, loginBody, registerBody } from '../auth/auth.schema';
import { trimmedPattern } from '../http/validation';
import {
  DOMAIN_PATTERN,
  HANDLE,
  PERSON_EMAIL_PATTERN,
  personBody,
  phoneSuccessEnvelope,
  screenBody,
  searchBody,
  verifyPhoneBody,
} from '../lookups/lookups.schema';

// These tests start from what route-discovery reads out of Nest's metadata; the e2e tests cover the
// document the real gateway serves (and send every example in it).

const widgetBody = z
  .object({ name: z.string().min(1), note: z.string().optional() })
  .strict()
  .meta({ examples: [{ name: 'sprocket' }] });
const optionalBody = z
  .object({ label: z.string().optional() })
  .strict()
  .meta({ examples: [{}] });

/** What the JSON body parser answers on every route with a body. */
const BODY_ERRORS: ErrorCode[] = ['invalid_json', 'validation_error', 'unsupported_media_type', 'payload_too_large'];

const route = (
  method: string,
  path: string,
  handler: string,
  doc: ApiDocOptions | undefined,
  isPublic = false,
): FoundRoute => ({
  controller: 'WidgetsController',
  handler,
  method,
  path,
  isPublic,
  doc,
});

const FOUND: FoundRoute[] = [
  route('POST', '/v1/widgets', 'create', {
    tag: 'lookups',
    summary: 'Make a widget',
    body: widgetBody,
    status: 200,
    response: phoneSuccessEnvelope,
    lookup: true,
    errors: [...BODY_ERRORS, 'unauthorized', 'rate_limited', 'unavailable'],
  }),
  route('PUT', '/v1/widgets/:id/label', 'label', {
    tag: 'lookups',
    summary: 'Label a widget',
    body: optionalBody,
    status: 200,
    pathParams: { id: 'widget id' },
    errors: [...BODY_ERRORS, 'not_found'],
  }),
  route('GET', '/v1/widgets', 'list', {
    tag: 'lookups',
    summary: 'List widgets',
    query: z
      .object({
        color: z.enum(['red', 'blue']).describe('only widgets of this color'),
        limit: z.string().regex(/^\d+$/).optional().describe('widgets per page'),
      })
      .strict(),
    status: 200,
    errors: ['validation_error'],
  }),
  route(
    'GET',
    '/ops/ping',
    'ping',
    { tag: 'operations', summary: 'Ping', auth: false, status: 200, contentType: 'text/plain', errors: [] },
    true,
  ),
];

// The document is walked freely here; every shape that matters is asserted by expect().
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** Every `$ref` in the document that does not point at anything. */
function danglingRefs(doc: Json): string[] {
  const dangling: string[] = [];
  const resolve = (ref: string): unknown =>
    ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>(
        (at, seg) =>
          at && typeof at === 'object' ? (at as Json)[seg.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined,
        doc,
      );
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') {
          if (resolve(value) === undefined) dangling.push(value);
        } else walk(value);
      }
    }
  };
  walk(doc);
  return dangling;
}

describe('documentRoutes', () => {
  it('names operations after controller and handler', () => {
    expect(documentRoutes(FOUND).map((r) => [r.method, r.path, r.operationId])).toEqual([
      ['post', '/v1/widgets', 'widgetsCreate'],
      ['put', '/v1/widgets/:id/label', 'widgetsLabel'],
      ['get', '/v1/widgets', 'widgetsList'],
      ['get', '/ops/ping', 'widgetsPing'],
    ]);
  });

  it('refuses every route without @ApiDoc, naming each', () => {
    expect(() =>
      documentRoutes([
        ...FOUND,
        route('GET', '/v1/forgotten', 'forgotten', undefined),
        route('DELETE', '/v1/also', 'also', undefined),
      ]),
    ).toThrow(
      /GET \/v1\/forgotten \(WidgetsController.forgotten\) has no @ApiDoc\n\s+DELETE \/v1\/also \(WidgetsController.also\) has no @ApiDoc/,
    );
  });

  it('refuses an auth flag that disagrees with @Public()', () => {
    const doc: ApiDocOptions = { tag: 'operations', summary: 'x', status: 200, errors: [] };
    expect(() => documentRoutes([route('GET', '/open', 'open', doc, true)])).toThrow(
      'auth flag disagrees with @Public()',
    );
    expect(() => documentRoutes([route('GET', '/closed', 'closed', { ...doc, auth: false }, false)])).toThrow(
      'auth flag disagrees',
    );
  });
});

describe('buildOpenApiDocument', () => {
  const doc = buildOpenApiDocument(documentRoutes(FOUND), { version: '9.9.9' }) as Json;

  it('is a valid OpenAPI 3.1 document whose every $ref resolves', async () => {
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(danglingRefs(doc)).toEqual([]);
    expect(doc['openapi']).toMatch(/^3\.1\.\d+$/);
    expect(doc['info']).toMatchObject({ title: 'Dossier', version: '9.9.9' });
  });

  it('describes a lookup: bearer auth, headers, body, success and error answers', () => {
    const op = doc['paths']['/v1/widgets']['post'] as Json;
    expect(op['security']).toEqual([{ bearerAuth: [] }]);
    expect(op['requestBody']).toMatchObject({
      required: true,
      content: { 'application/json': { schema: { required: ['name'], additionalProperties: false } } },
    });
    expect(op['parameters'].map((p: Json) => p['$ref'])).toEqual([
      '#/components/parameters/Prefer',
      '#/components/parameters/Idempotency-Key',
      '#/components/parameters/X-Request-Id',
    ]);
    expect(Object.keys(op['responses']).sort()).toEqual([
      '200',
      '400',
      '401',
      '405',
      '408',
      '413',
      '415',
      '429',
      '503',
      'default',
    ]);
    expect(op['responses']['200']['content']['application/json']['schema']).toEqual({
      $ref: '#/components/schemas/PhoneSuccessEnvelope',
    });
    // "Try it out" pre-fills from these: the schemas' own examples.
    expect(op['requestBody']['content']['application/json']['example']).toEqual({ name: 'sprocket' });
    expect(op['responses']['200']['content']['application/json']['example']).toMatchObject({
      status: 'success',
      results: [expect.objectContaining({ e164: '+14155552671' })],
    });
    expect(Object.keys(op['responses']['200']['headers'])).toEqual(
      expect.arrayContaining(['X-Request-Id', 'RateLimit-Limit', 'X-Credits-Spent', 'X-Credits-Remaining']),
    );
    expect(Object.keys(op['responses']['503']['headers'])).toEqual(expect.arrayContaining(['Retry-After']));
    expect(op['responses']['401']['content']['application/json']['schema']).toEqual({
      $ref: '#/components/schemas/ErrorEnvelope',
    });
  });

  it('makes a body optional exactly when {} is valid, and describes path parameters', () => {
    const op = doc['paths']['/v1/widgets/{id}/label']['put'] as Json;
    expect(op['requestBody']['required']).toBe(false);
    expect(op['parameters'][0]).toEqual({
      name: 'id',
      in: 'path',
      required: true,
      description: 'widget id',
      schema: { type: 'string' },
    });
    expect(doc['paths']['/ops/ping']['get']).toMatchObject({
      security: [],
      responses: { '200': { content: { 'text/plain': {} } } },
    });
  });

  it("describes query parameters from the handler's query schema, and refuses one without a description", () => {
    const op = doc['paths']['/v1/widgets']['get'] as Json;
    expect(op['parameters'].slice(0, 2)).toEqual([
      {
        name: 'color',
        in: 'query',
        required: true,
        description: 'only widgets of this color',
        schema: { type: 'string', enum: ['red', 'blue'] },
      },
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: 'widgets per page',
        schema: { type: 'string', pattern: '^\\d+$', allOf: [{ pattern: STORABLE_TEXT_PATTERN }] },
      },
    ]);
    const list = documentRoutes(FOUND).find((r) => r.operationId === 'widgetsList')!;
    const undescribed = { ...list, doc: { ...list.doc, query: z.object({ page: z.string() }) } };
    expect(() => buildOpenApiDocument([undescribed], { version: '1' })).toThrow(
      'widgetsList: query parameter page has no description',
    );
  });

  it('puts the shared schemas in components, with the full error code enum', () => {
    const schemas = doc['components']['schemas'] as Json;
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining([
        'ErrorEnvelope',
        'PersonSuccessEnvelope',
        'CompanySuccessEnvelope',
        'EmailSuccessEnvelope',
        'PhoneSuccessEnvelope',
        'PendingEnvelope',
        'PersonResult',
        'CompanyResult',
        'EmailResult',
        'PhoneResult',
        'SourceReport',
      ]),
    );
    expect(schemas['ErrorEnvelope']['properties']['error']['properties']['code']['enum']).toContain(
      'idempotency_conflict',
    );
    expect(JSON.stringify(schemas)).not.toContain('$defs');
  });

  it('refuses a body without an example, or with one its own schema rejects', () => {
    const [create] = documentRoutes(FOUND);
    const withBody = (body: z.ZodType) => [{ ...create!, doc: { ...create!.doc, body } }];
    expect(() => buildOpenApiDocument(withBody(z.object({ name: z.string() })), { version: '1' })).toThrow(
      'widgetsCreate: the request body schema has no example',
    );
    expect(() =>
      buildOpenApiDocument(withBody(z.object({ name: z.string() }).meta({ examples: [{ name: 42 }] })), {
        version: '1',
      }),
    ).toThrow('widgetsCreate: the request body example does not validate');
  });

  it("lists named request examples after the schema's own, and refuses one the schema rejects", async () => {
    const [create] = documentRoutes(FOUND);
    const withExamples = (bodyExamples: ApiDocOptions['bodyExamples']) => [
      { ...create!, doc: { ...create!.doc, bodyExamples } },
    ];
    const doc = buildOpenApiDocument(
      withExamples({ test_key_gear: { summary: 'Test key: a gear', value: { name: 'gear' } } }),
      { version: '1' },
    );
    const content = (doc['paths'] as Json)['/v1/widgets']['post']['requestBody']['content'];
    expect(content['application/json']['example']).toBeUndefined();
    expect(content['application/json']['examples']).toEqual({
      default: { summary: 'Example', value: { name: 'sprocket' } },
      test_key_gear: { summary: 'Test key: a gear', value: { name: 'gear' } },
    });
    await expect(validate(structuredClone(doc) as never)).resolves.toMatchObject({ valid: true });
    expect(() =>
      buildOpenApiDocument(withExamples({ bad: { summary: 'Bad', value: { name: '' } } }), { version: '1' }),
    ).toThrow('widgetsCreate: the request body example bad does not validate');
  });

  it('adds to each route what the HTTP layer answers before its handler, whatever the route lists', () => {
    const statuses = (path: string, method: string) => Object.keys(doc['paths'][path][method]['responses']).sort();
    // Public, not under /v1, no body: another method (405) or a request too slow (408) only.
    expect(statuses('/ops/ping', 'get')).toEqual(['200', '405', '408', 'default']);
    // A PUT listing only not_found: the body parser's answers, the key guard's, the rate limiter's.
    expect(statuses('/v1/widgets/{id}/label', 'put')).toEqual([
      '200',
      '400',
      '401',
      '404',
      '405',
      '408',
      '413',
      '415',
      '429',
      '503',
      'default',
    ]);
    const label = doc['paths']['/v1/widgets/{id}/label']['put']['responses'] as Json;
    expect(label['400']['description']).toContain('`invalid_json`');
    expect(label['400']['description']).toContain('`validation_error`');
    expect(Object.keys(label['401']['headers'])).toContain('WWW-Authenticate');
  });

  it('states in a request schema what the server checks beyond it, and leaves answers as they are', () => {
    const checked = z
      .object({
        phone: z
          .string()
          .meta({ 'x-server-check': 'a number that is not one', examples: ['+14155552671'] })
          .describe('a phone number'),
        kind: z.enum(['a', 'b']),
      })
      .strict()
      .meta({ examples: [{ phone: '+14155552671', kind: 'a' }] });
    const [create] = documentRoutes(FOUND);
    const built = buildOpenApiDocument([{ ...create!, doc: { ...create!.doc, body: checked } }], {
      version: '1',
    }) as Json;
    const op = built['paths']['/v1/widgets']['post'];
    const properties = op['requestBody']['content']['application/json']['schema']['properties'];
    expect(properties['phone']).toEqual({
      type: 'string',
      description: 'a phone number The server also refuses (400 validation_error) a number that is not one.',
      'x-server-check': 'a number that is not one',
      examples: ['+14155552671'],
      allOf: [{ pattern: STORABLE_TEXT_PATTERN }],
    });
    // An enum's strings are the server's own; an answer's strings are not checked by it at all.
    expect(properties['kind']).toEqual({ type: 'string', enum: ['a', 'b'] });
    expect(JSON.stringify(built['components'])).not.toContain(JSON.stringify(STORABLE_TEXT_PATTERN));
    expect(JSON.stringify(op['requestBody'])).toContain(JSON.stringify(STORABLE_TEXT_PATTERN));
  });

  it('refuses path parameters that are not described', () => {
    const [, label] = documentRoutes(FOUND);
    expect(() =>
      buildOpenApiDocument([{ ...label!, doc: { ...label!.doc, pathParams: {} } }], { version: '1' }),
    ).toThrow('pathParams must describe exactly ["id"]');
  });
});

/**
 * The patterns the document states for checks the server makes in code, each compared with that code on
 * generated text (fast-check, seeded): the document refuses exactly what the server refuses.
 */
describe('the patterns the document states for the server’s checks', () => {
  const RUNS = { seed: 54, numRuns: 2_000 };
  /** Text around the edges these checks care about: blanks, case, NUL, surrogate halves, ligatures. */
  const tricky = fc.string({
    unit: fc.oneof(
      fc.constantFrom(' ', '\t', '\n', '\u00a0', '\u0000', '\ud800', '\udc00', '😀', 'ﬆ', 'ſ', '.', '@', '/', '-'),
      fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
    ),
    maxLength: 12,
  });
  const documented = (pattern: string) => (text: string) => new RegExp(pattern, 'u').test(text);
  const inputOf = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;

  it('storable text: exactly what parseBody keeps', () => {
    fc.assert(
      fc.property(tricky, (text) => documented(STORABLE_TEXT_PATTERN)(text) === isStorableText(text)),
      RUNS,
    );
  });

  it.each([
    // fast-check cannot generate from a lookahead: handles from the expression without it, and . and ..
    ['a handle', HANDLE, fc.oneof(fc.stringMatching(/^@?[^\s@/]{1,3}$/), fc.constantFrom('.', '..', '@..', '...'))],
    [
      'an age range',
      /^(\d{1,3}-\d{1,3}|\d{1,3}\+|-\d{1,3})$/,
      fc.stringMatching(/^(\d{1,3}-\d{1,3}|\d{1,3}\+|-\d{1,3})$/),
    ],
  ])('%s, trimmed: the expression around blanks', (_what, re, matching) => {
    const blanks = fc.stringMatching(/^\s{0,2}$/);
    const padded = fc.tuple(blanks, fc.oneof(tricky, matching), blanks).map(([a, b, c]) => a + b + c);
    fc.assert(
      fc.property(padded, (text) => documented(trimmedPattern(re))(text) === re.test(text.trim())),
      RUNS,
    );
  });

  it('a country: the assigned ISO codes in either case around blanks, as the schema reads them', () => {
    const country = verifyPhoneBody.shape.country.unwrap();
    const pattern = inputOf(verifyPhoneBody)['properties']['country']['pattern'] as string;
    const codes = fc
      .tuple(
        fc.stringMatching(/^\s{0,1}$/),
        fc.oneof(tricky, fc.stringMatching(/^[A-Za-z]{2}$/), fc.constantFrom('ﬆ', 'ſe', 'AA', 'us', 'Gb')),
        fc.stringMatching(/^\s{0,1}$/),
      )
      .map(([a, b, c]) => a + b + c);
    fc.assert(
      fc.property(codes, (text) => documented(pattern)(text) === country.safeParse(text).success),
      RUNS,
    );
    expect(['AA', 'ﬆ', 'ſe'].map(documented(pattern))).toEqual([false, false, false]);
    expect([' us ', 'DE', 'gB'].map(documented(pattern))).toEqual([true, true, true]);
  });

  it("an account's e-mail address: zod's e-mail pattern around blanks, within 254 characters", () => {
    const { email } = inputOf(registerBody)['properties'] as Json;
    const patterns = [email['pattern'], ...(email['allOf'] as Json[]).map((p) => p['pattern'])] as string[];
    const addresses = fc.oneof(
      tricky,
      fc.emailAddress(),
      fc.tuple(fc.stringMatching(/^\s{0,2}$/), fc.emailAddress()).map(([a, b]) => a + b + a),
    );
    fc.assert(
      fc.property(
        addresses,
        (text) => patterns.every((p) => documented(p)(text)) === emailField.safeParse(text).success,
      ),
      RUNS,
    );
    expect(['0', ' 0', 'a@b'].map((t) => patterns.every((p) => documented(p)(t)))).toEqual([false, false, false]);
  });
});

/**
 * ADR 0069: a request the document allows is one the server takes. Where a pattern states less than the
 * server takes (a domain, a person's e-mail address), every text it matches passes the server's check; where
 * a rule joins fields (`oneOf`, `dependentRequired`, `dependentSchemas`), every body the document's schema
 * accepts, the zod schema accepts too.
 */
describe('what the document allows, the server takes', () => {
  const RUNS = { seed: 54, numRuns: 2_000 };
  const ajv = new Ajv2020({ strict: false });
  const documentOf = (schema: z.ZodType) =>
    ajv.compile(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json);
  /** Text from `pattern` without its lookaheads (fast-check cannot generate from one), kept when it matches. */
  const matching = (pattern: string) =>
    fc
      .stringMatching(new RegExp(pattern.replace(/\(\?[=!][^)]*\)/g, ''), 'u'), { size: 'small' })
      .filter((t) => new RegExp(pattern, 'u').test(t));

  it('a company domain: every text its pattern matches is one normalizeDomain reads', () => {
    fc.assert(
      fc.property(matching(DOMAIN_PATTERN), (text) => normalizeDomain(text) !== null),
      RUNS,
    );
    const documented = (t: string) => new RegExp(DOMAIN_PATTERN, 'u').test(t);
    expect(
      ['example.com', ' https://www.Example.co.uk/about?x=1 ', 'a-b.c0m.', 'acme.com:8080/x'].map(documented),
    ).toEqual([true, true, true, true]);
    // A numeric top-level label (an address), one label, punycode, a user@ part: not stated, if taken at all.
    expect(['1.2.3.4', 'localhost', 'xn--zz.com', 'me@example.com', 'exa mple.com'].map(documented)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it("a person's e-mail address: every text its pattern matches is one parseEmail calls syntax-valid", () => {
    fc.assert(
      fc.property(fc.oneof(matching(PERSON_EMAIL_PATTERN), fc.emailAddress()), (text) =>
        new RegExp(PERSON_EMAIL_PATTERN, 'u').test(text) ? parseEmail(text).syntaxValid : true,
      ),
      RUNS,
    );
    const documented = (t: string) => new RegExp(PERSON_EMAIL_PATTERN, 'u').test(t);
    expect(['grace.hopper@example.com', ' a+b@x.io ', `${'a'.repeat(64)}@x.io`].map(documented)).toEqual([
      true,
      true,
      true,
    ]);
    expect(['0', 'a@b', '.a@x.io', 'a..b@x.io', `${'a'.repeat(65)}@x.io`, 'a@1.2'].map(documented)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('password or passwort: the document allows exactly one; the server takes each of those bodies', () => {
    for (const body of [registerBody, loginBody]) {
      const documented = documentOf(body);
      const email = 'grace@example.com';
      const pw = 'correct horse battery';
      expect(documented({ email, password: pw })).toBe(true);
      expect(documented({ email, passwort: pw })).toBe(true);
      expect(documented({ email })).toBe(false);
      // Both are taken when they agree, which JSON Schema cannot compare; the document allows neither.
      expect(documented({ email, password: pw, passwort: pw })).toBe(false);
      expect(body.safeParse({ email, password: pw, passwort: `${pw}!` }).success).toBe(false);
      expect(body.safeParse({ email, passwort: pw }).success).toBe(true);
    }
  });

  /** Bodies over a few fields, each present or not: Ajv on the document's schema accepts ⇒ zod accepts. */
  const impliesTaken = (schema: z.ZodType, fields: Record<string, fc.Arbitrary<unknown>>) => {
    const documented = documentOf(schema);
    let allowed = 0;
    fc.assert(
      fc.property(fc.record(fields, { requiredKeys: [] }), (body) => {
        if (!documented(body)) return true;
        allowed++;
        return schema.safeParse(body).success;
      }),
      { seed: 54, numRuns: 500 },
    );
    return allowed;
  };

  it('sites, tags and top: the document allows them only with a username to check, as the server does', () => {
    const selection = { sites: fc.constant(['GitHub']), tags: fc.constant(['coding']), top: fc.constant(5) };
    expect(
      impliesTaken(personBody, {
        ...selection,
        name: fc.constant('Grace Hopper'),
        username: fc.constantFrom('gracehopper', '@gh'),
      }),
    ).toBeGreaterThan(50);
    expect(
      impliesTaken(searchBody, {
        ...selection,
        type: fc.constantFrom('person', 'username', 'company', 'email', 'phone'),
        query: fc.constantFrom('@gracehopper', ' @gh ', 'Grace Hopper', '@a/b', '@..', 'grace@example.com'),
      }),
    ).toBeGreaterThan(20);
    expect(documentOf(personBody)({ name: 'Grace Hopper', sites: ['GitHub'] })).toBe(false);
    expect(documentOf(searchBody)({ query: 'Grace Hopper', type: 'person', top: 5 })).toBe(false);
    expect(documentOf(searchBody)({ query: '@gracehopper', type: 'person', top: 5 })).toBe(true);
  });

  it('birth_year: the document allows it only for a person, as the server does', () => {
    expect(
      impliesTaken(screenBody, {
        name: fc.constant('Rustam Karimov'),
        type: fc.constantFrom('person', 'company'),
        birth_year: fc.constant(1961),
      }),
    ).toBeGreaterThan(50);
    expect(documentOf(screenBody)({ name: 'Acme', type: 'company', birth_year: 1961 })).toBe(false);
  });
});
