import { validate } from '@readme/openapi-parser';
import { API_OPTIONAL_RESULT_FIELDS, API_RESULT_FIELDS, Api, Stack, metricValue } from '@dossier/testing';

// The document is walked freely here; every shape that matters is asserted by expect().
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const ADMIN = { user: 'ops-admin', password: 'board: correct horse battery' };
const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});

/** Every operation the contract (API.md) names, plus the operations endpoints. */
const EXPECTED_OPERATIONS = [
  'POST /v1/auth/register',
  'POST /v1/batch',
  'POST /v1/auth/login',
  'GET /v1/auth/keys',
  'GET /v1/batches/{id}',
  'POST /v1/auth/keys',
  'DELETE /v1/auth/keys/{id}',
  'GET /v1/account',
  'POST /v1/search',
  'POST /v1/search/person',
  'POST /v1/search/company',
  'POST /v1/verify/email',
  'POST /v1/verify/phone',
  // Sanctions screening (ADR 0064).
  'POST /v1/screen',
  'GET /v1/searches',
  'GET /v1/searches/{id}',
  'GET /v1/username/sites',
  'POST /v1/webhooks',
  'GET /v1/webhooks',
  'DELETE /v1/webhooks/{id}',
  'GET /v1/webhooks/{id}/deliveries',
  'GET /health/live',
  'GET /health/ready',
  'GET /metrics',
  'GET /v1/openapi.json',
  'GET /docs',
  'GET /docs/assets/{file}',
];
const PUBLIC_OPERATIONS = new Set([
  'POST /v1/auth/register',
  'POST /v1/auth/login',
  'GET /health/live',
  'GET /health/ready',
  'GET /metrics',
  'GET /v1/openapi.json',
  'GET /docs',
  'GET /docs/assets/{file}',
]);
const LOOKUPS = ['/v1/search', '/v1/search/person', '/v1/search/company', '/v1/verify/email', '/v1/verify/phone'];

const KIND_ENVELOPES = [
  'PersonSuccessEnvelope',
  'CompanySuccessEnvelope',
  'EmailSuccessEnvelope',
  'PhoneSuccessEnvelope',
];
/** Each lookup's 200 answer: its own kind's envelope; the generic search answers whichever kind it ran. */
const SUCCESS_SCHEMA: Record<string, Json> = {
  '/v1/search': { anyOf: KIND_ENVELOPES.map((id) => ({ $ref: `#/components/schemas/${id}` })) },
  '/v1/search/person': { $ref: '#/components/schemas/PersonSuccessEnvelope' },
  '/v1/search/company': { $ref: '#/components/schemas/CompanySuccessEnvelope' },
  '/v1/verify/email': { $ref: '#/components/schemas/EmailSuccessEnvelope' },
  '/v1/verify/phone': { $ref: '#/components/schemas/PhoneSuccessEnvelope' },
};

const LINE_TYPES = [
  'mobile',
  'fixed_line',
  'fixed_line_or_mobile',
  'toll_free',
  'premium_rate',
  'shared_cost',
  'voip',
  'personal_number',
  'pager',
  'uan',
  'voicemail',
  'unknown',
];

function operationsOf(doc: Json): [string, Json][] {
  return Object.entries(doc['paths'] as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(
      ([method, op]) => [`${method.toUpperCase()} ${path}`, op as Json] as [string, Json],
    ),
  );
}

/** Resolves a local JSON pointer (`#/components/…`) in the document. */
function resolve(doc: Json, ref: string): unknown {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>(
      (at, seg) =>
        at && typeof at === 'object' ? (at as Json)[seg.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined,
      doc,
    );
}

/** Follows a `{ $ref }` to what it names. */
const deref = (doc: Json, node: Json): Json =>
  typeof node['$ref'] === 'string' ? (resolve(doc, node['$ref']) as Json) : node;

function refsIn(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refsIn(n, found));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else refsIn(value, found);
    }
  }
  return found;
}

describe('operations: OpenAPI, docs, metrics and the queue board (gateway process, real Redis and Postgres)', () => {
  let stack: Stack;
  let api: Api;
  let doc: Json;

  beforeAll(async () => {
    // No worker: nothing here needs lookups to finish, and queued jobs stay put for the gauges.
    stack = await Stack.start({
      label: 'ops',
      noWorker: true,
      gatewayEnv: { ADMIN_USER: ADMIN.user, ADMIN_PASSWORD: ADMIN.password },
    });
    api = new Api(stack.baseUrl);
    const res = await api.get<Json>('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = res.body;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  describe('GET /v1/openapi.json', () => {
    it('is a valid OpenAPI 3.1 document, served without a key, whose every $ref resolves', async () => {
      expect(doc['openapi']).toMatch(/^3\.1\.\d+$/);
      expect(doc['info']).toMatchObject({ title: 'Dossier', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
      expect(doc['servers']).toEqual([{ url: '/' }]);
      const result = await validate(structuredClone(doc) as never);
      expect(result.valid ? [] : result.errors).toEqual([]);
      const refs = refsIn(doc);
      expect(refs.length).toBeGreaterThan(100);
      expect(refs.filter((r) => resolve(doc, r) === undefined)).toEqual([]);
    });

    it('documents exactly the routes the gateway serves, and every documented route is served', async () => {
      const documented = operationsOf(doc).map(([name]) => name);
      expect(documented.sort()).toEqual([...EXPECTED_OPERATIONS].sort());
      for (const name of documented) {
        const [method, path] = name.split(' ') as [string, string];
        const res = await api.request<Json>(method, path.replace(/\{[^}]+\}/g, 'x_1'));
        const unrouted =
          res.status === 405 || (res.status === 404 && res.body?.['error']?.['message'] === 'no such route');
        expect([name, unrouted]).toEqual([name, false]);
      }
    });

    it('gives every operation an id, summary, description, tag, security and the headers every answer carries', () => {
      const ids = new Set<string>();
      for (const [name, op] of operationsOf(doc)) {
        expect([
          name,
          typeof op['operationId'],
          typeof op['summary'],
          typeof op['description'],
          op['tags']?.length,
        ]).toEqual([name, 'string', 'string', 'string', 1]);
        ids.add(op['operationId']);
        expect([name, op['security']]).toEqual([name, PUBLIC_OPERATIONS.has(name) ? [] : [{ bearerAuth: [] }]]);
        for (const [status, response] of Object.entries(op['responses'] as Json)) {
          expect([name, status, Object.keys((response as Json)['headers'] ?? {})]).toEqual([
            name,
            status,
            expect.arrayContaining(['X-Request-Id']),
          ]);
        }
      }
      expect(ids.size).toBe(EXPECTED_OPERATIONS.length);
      expect(doc['components']['securitySchemes']['bearerAuth']).toMatchObject({ type: 'http', scheme: 'bearer' });
    });

    it('documents the error answers of each route, one per status, with the ErrorEnvelope and its code enum', () => {
      const envelope = doc['components']['schemas']['ErrorEnvelope'] as Json;
      expect(envelope['properties']['status']).toMatchObject({ const: 'error' });
      expect(envelope['properties']['error']['properties']['code']['enum']).toEqual(
        expect.arrayContaining([
          'invalid_json',
          'validation_error',
          'unauthorized',
          'invalid_credentials',
          'insufficient_credits',
          'not_found',
          'method_not_allowed',
          'email_taken',
          'idempotency_conflict',
          'payload_too_large',
          'unsupported_media_type',
          'rate_limited',
          'unavailable',
        ]),
      );
      const register = doc['paths']['/v1/auth/register']['post'] as Json;
      expect(register['responses']['409']['description']).toContain('email_taken');
      for (const [name, op] of operationsOf(doc)) {
        for (const [status, response] of Object.entries(op['responses'] as Json)) {
          if (Number(status) < 400 && status !== 'default') continue;
          if (name === 'GET /health/ready' && status === '503') continue; // health's own body, not an error
          expect([name, status, (response as Json)['content']['application/json']['schema']]).toEqual([
            name,
            status,
            { $ref: '#/components/schemas/ErrorEnvelope' },
          ]);
        }
      }
      const login = doc['paths']['/v1/auth/login']['post'] as Json;
      expect(login['responses']['401']['description']).toContain('invalid_credentials');
      expect(doc['paths']['/v1/account']['get']['responses']['401']['headers']).toHaveProperty('WWW-Authenticate');
    });

    it.each(LOOKUPS)('documents the lookup %s: statuses, Prefer and Idempotency-Key, and its headers', (path) => {
      const op = doc['paths'][path]['post'] as Json;
      expect(Object.keys(op['responses'])).toEqual(
        expect.arrayContaining(['200', '202', '400', '401', '402', '409', '429', '503']),
      );
      const headerParams = (op['parameters'] as Json[])
        .map((p) => deref(doc, p))
        .filter((p) => p['in'] === 'header')
        .map((p) => p['name']);
      expect(headerParams).toEqual(expect.arrayContaining(['Prefer', 'Idempotency-Key']));
      expect(op['requestBody']).toMatchObject({
        required: true,
        content: { 'application/json': { schema: { type: 'object' } } },
      });
      const ok = op['responses']['200'];
      expect(ok['content']['application/json']['schema']).toMatchObject(SUCCESS_SCHEMA[path]!);
      expect(Object.keys(ok['headers'])).toEqual(
        expect.arrayContaining([
          'X-Credits-Spent',
          'X-Credits-Remaining',
          'RateLimit-Limit',
          'RateLimit-Remaining',
          'RateLimit-Reset',
        ]),
      );
      const pending = op['responses']['202'];
      expect(pending['content']['application/json']['schema']).toEqual({
        $ref: '#/components/schemas/PendingEnvelope',
      });
      expect(Object.keys(pending['headers'])).toEqual(
        expect.arrayContaining(['Location', 'X-Credits-Remaining', 'Preference-Applied']),
      );
      expect(Object.keys(op['responses']['429']['headers'])).toEqual(expect.arrayContaining(['Retry-After']));
      expect(Object.keys(op['responses']['503']['headers'])).toEqual(expect.arrayContaining(['Retry-After']));
    });

    it('describes bodies from the handlers’ own schemas', () => {
      const body = (path: string) =>
        doc['paths'][path]['post']['requestBody']['content']['application/json']['schema'] as Json;
      expect(Object.keys(body('/v1/auth/register')['properties']).sort()).toEqual(['email', 'password', 'passwort']);
      expect(body('/v1/auth/register')['additionalProperties']).toBe(false);
      const search = body('/v1/search');
      expect(search['properties']['type']['enum']).toEqual(['person', 'company', 'email', 'phone', 'username']);
      expect(search['required']).toEqual(expect.arrayContaining(['query', 'type']));
      // 1 to 256 characters once trimmed (the gateway trims): a pattern, as maxLength would count the padding;
      // then text Postgres can store (no NUL, no unpaired surrogate), as in every string of a request.
      expect(search['properties']['query']).toMatchObject({
        minLength: 1,
        allOf: [{ pattern: '^\\s*\\S(?:[\\s\\S]{0,254}\\S)?\\s*$' }, { pattern: '^[^\\u0000\\ud800-\\udfff]*$' }],
      });
      expect(search['properties']['query']).not.toHaveProperty('maxLength');
      expect(Object.keys(body('/v1/search/person')['properties'])).toEqual(
        expect.arrayContaining(['name', 'email', 'phone', 'username', 'location', 'age_range']),
      );
      expect(Object.keys(body('/v1/verify/phone')['properties'])).toEqual(expect.arrayContaining(['phone', 'country']));
      expect(doc['paths']['/v1/auth/keys']['post']['requestBody']['required']).toBe(false);
      const history = (doc['paths']['/v1/searches']['get']['parameters'] as Json[]).filter((p) => p['in'] === 'query');
      expect(history.map((p) => [p['name'], p['required'], typeof p['description']])).toEqual(
        ['kind', 'since', 'until', 'limit', 'cursor'].map((name) => [name, false, 'string']),
      );
      expect(history[0]!['schema']['enum']).toEqual(['person', 'company', 'email', 'phone']);
      expect(doc['paths']['/v1/searches']['get']['responses']['200']['content']['application/json']).toMatchObject({
        schema: {
          properties: { next_cursor: {}, searches: { items: { required: expect.arrayContaining(['search_id']) } } },
        },
        example: { status: 'success', searches: [expect.objectContaining({ kind: 'person' }), expect.anything()] },
      });
      expect(doc['paths']['/v1/searches/{id}']['get']['parameters'][0]).toMatchObject({
        name: 'id',
        in: 'path',
        required: true,
      });
    });

    it('puts the envelopes and result items in components, with every field API.md lists', () => {
      const schemas = doc['components']['schemas'] as Json;
      for (const [id, fields] of Object.entries(API_RESULT_FIELDS)) {
        const optional = API_OPTIONAL_RESULT_FIELDS[id as keyof typeof API_RESULT_FIELDS] ?? [];
        expect([id, Object.keys(schemas[id]['properties']).sort()]).toEqual([id, [...fields, ...optional].sort()]);
      }
      expect(schemas['PhoneResult']['properties']['line_type']['enum'].sort()).toEqual([...LINE_TYPES].sort());
      expect(schemas['EmailResult']['properties']['deliverability']['enum'].sort()).toEqual([
        'deliverable',
        'risky',
        'undeliverable',
        'unknown',
      ]);
      for (const kind of ['Person', 'Company', 'Email', 'Phone']) {
        const success = schemas[`${kind}SuccessEnvelope`] as Json;
        expect(success['required']).toEqual(expect.arrayContaining(['status', 'results', 'credits_remaining']));
        expect(refsIn(success['properties']['results'])).toEqual([`#/components/schemas/${kind}Result`]);
      }
      expect(schemas['SourceReport']['properties']['outcome']['enum']).toEqual(
        expect.arrayContaining([
          'found',
          'not_found',
          'unknown',
          'rate_limited',
          'blocked',
          'timeout',
          'error',
          'skipped',
        ]),
      );
    });
  });

  describe('GET /docs', () => {
    it('renders Swagger UI from assets the gateway serves itself', async () => {
      const page = await api.get('/docs');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self';");
      const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
      expect(assets).toEqual(
        expect.arrayContaining(['/docs/assets/swagger-ui.css', '/docs/assets/swagger-ui-bundle.js']),
      );
      for (const asset of assets) {
        expect(asset.startsWith('/')).toBe(true); // nothing from another host
        const res = await fetch(stack.baseUrl + asset);
        expect([asset, res.status]).toEqual([asset, 200]);
        expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100);
      }
      const init = await api.get('/docs/assets/init.js');
      expect(init.text).toContain("url: '/v1/openapi.json'");
      expect((await api.get('/docs/assets/swagger-ui-bundle.js')).text).toContain('SwaggerUIBundle');
      expect((await api.get('/docs/assets/..%2Fpackage.json')).status).toBe(404);
    });
  });

  describe('GET /metrics', () => {
    it('counts requests by route pattern, never by raw URL, and times them', async () => {
      const { key } = await api.register();
      expect((await api.get('/v1/account', { key })).status).toBe(200);
      expect((await api.get('/v1/account', { key })).status).toBe(200);
      expect((await api.get('/v1/searches/srch_doesnotexist123', { key })).status).toBe(404);
      expect((await api.get('/v1/no-such-thing-4711')).status).toBe(404);

      const res = await api.get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(
        metricValue(res.text, 'http_requests_total{method="GET",route="/v1/account",status="200"}'),
      ).toBeGreaterThanOrEqual(2);
      expect(
        metricValue(res.text, 'http_requests_total{method="GET",route="/v1/searches/:id",status="404"}'),
      ).toBeGreaterThanOrEqual(1);
      expect(
        metricValue(res.text, 'http_requests_total{method="GET",route="unmatched",status="404"}'),
      ).toBeGreaterThanOrEqual(1);
      expect(
        metricValue(res.text, 'http_request_duration_seconds_count{method="GET",route="/v1/account",status="200"}'),
      ).toBeGreaterThanOrEqual(2);
      const buckets = res.text
        .split('\n')
        .filter(
          (l) =>
            l.startsWith('http_request_duration_seconds_bucket{') && l.includes('route="/v1/account",status="200"'),
        );
      expect(buckets.length).toBeGreaterThan(5);
      expect(Number(buckets.find((l) => l.includes('le="+Inf"'))?.split(' ')[1])).toBeGreaterThanOrEqual(2);
      expect(res.text).not.toContain('srch_doesnotexist123');
      expect(res.text).not.toContain('no-such-thing-4711');
      expect(res.text).toMatch(/^process_cpu_user_seconds_total \d/m);
      expect(res.text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    });

    it("reports each lookup queue's waiting, active, delayed and failed jobs", async () => {
      const { key } = await api.register();
      const queued = await api.post(
        '/v1/verify/phone',
        { phone: '+14155552671' },
        { key, headers: { prefer: 'respond-async' } },
      );
      expect(queued.status).toBe(202); // no worker runs: the job waits

      const text = (await api.get('/metrics')).text;
      for (const queue of ['person-lookup', 'company-lookup', 'email-lookup', 'phone-lookup']) {
        for (const state of ['waiting', 'active', 'delayed', 'failed']) {
          expect([queue, state, metricValue(text, `dossier_queue_jobs{queue="${queue}",state="${state}"}`)]).toEqual([
            queue,
            state,
            expect.any(Number),
          ]);
        }
      }
      expect(metricValue(text, 'dossier_queue_jobs{queue="phone-lookup",state="waiting"}')).toBe(1);
      expect(metricValue(text, 'dossier_queue_jobs{queue="email-lookup",state="waiting"}')).toBe(0);
    });
  });

  describe('the queue board at /admin/queues', () => {
    it('refuses no, wrong and API-key credentials with 401 and a Basic challenge', async () => {
      const { key } = await api.register();
      for (const headers of [
        {},
        basic(ADMIN.user, 'wrong password'),
        basic('someone', ADMIN.password),
        basic(ADMIN.user, ''),
        { authorization: `Bearer ${key}` },
      ]) {
        for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
          const res = await api.get<Json>(path, { headers });
          expect([path, headers, res.status]).toEqual([path, headers, 401]);
          expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
          expect(res.body).toMatchObject({
            status: 'error',
            error: { code: 'unauthorized' },
            request_id: res.headers.get('x-request-id'),
          });
        }
      }
    });

    it('limits guessing the admin password per address: wrong credentials spend its bucket, then 429; the right ones still open', async () => {
      const gateway = await stack.startGateway({
        QUEUE_PREFIX: `${stack.env['QUEUE_PREFIX']}-adminlimit`,
        ADMIN_USER: ADMIN.user,
        ADMIN_PASSWORD: ADMIN.password,
        RATE_LIMIT_BURST: '3',
        RATE_LIMIT_RPS: '0.1',
      });
      const own = new Api(gateway.baseUrl);
      const guesses = [];
      for (let i = 0; i < 4; i++)
        guesses.push(await own.get<Json>('/admin/queues', { headers: basic(ADMIN.user, `guess-${i}`) }));
      expect(guesses.map((g) => g.status)).toEqual([401, 401, 401, 429]);
      expect(guesses.map((g) => g.headers.get('ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
      expect(Number(guesses[3]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(guesses[3]!.body).toMatchObject({ status: 'error', error: { code: 'rate_limited' } });
      // no credentials (a browser's first request) spends nothing and gets the challenge; the right ones open
      const bare = await own.get('/admin/queues');
      expect([bare.status, bare.headers.get('ratelimit-remaining')]).toEqual([401, null]);
      expect((await own.get('/admin/queues', { headers: basic(ADMIN.user, ADMIN.password) })).status).toBe(200);
    });

    it('opens the board, its API and its static files to the admin credentials', async () => {
      const headers = basic(ADMIN.user, ADMIN.password);
      const page = await api.get('/admin/queues', { headers });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const script = /src="(static\/js\/main[^"]+\.js)"/.exec(page.text)?.[1];
      expect(script).toBeDefined();
      expect((await api.get(`/admin/queues/${script}`, { headers })).status).toBe(200);
      expect((await api.get(`/admin/queues/${script}`)).status).toBe(401);

      const queues = await api.get<{ queues: { name: string }[] }>('/admin/queues/api/queues', { headers });
      expect(queues.status).toBe(200);
      expect(queues.body.queues.map((q) => q.name).sort()).toEqual([
        'company-lookup',
        'email-lookup',
        'maintenance',
        'person-lookup',
        'phone-lookup',
        'webhook-delivery',
      ]);
      expect((await api.get('/admin/queues/queue/phone-lookup', { headers })).status).toBe(200);
    });

    it('cannot be framed, and no answer is kept in a cache: the page, its API, the suppressions and a refusal alike', async () => {
      const headers = basic(ADMIN.user, ADMIN.password);
      const answers: [string, Awaited<ReturnType<Api['get']>>][] = [
        ['page', await api.get('/admin/queues', { headers })],
        ['api', await api.get('/admin/queues/api/queues', { headers })],
        ['suppressions', await api.get('/admin/suppressions', { headers })],
        ['refusal', await api.get('/admin/queues')],
      ];
      for (const [what, res] of answers) {
        expect([what, res.headers.get('x-frame-options')]).toEqual([what, 'DENY']);
        expect([what, res.headers.get('content-security-policy')]).toEqual([what, "frame-ancestors 'none'"]);
        expect([what, res.headers.get('cache-control')]).toEqual([what, 'no-store']);
        expect([what, res.headers.get('x-content-type-options')]).toEqual([what, 'nosniff']);
      }
      expect(answers.map(([, res]) => res.status)).toEqual([200, 200, 200, 401]);
    });

    it("refuses a cross-site form's POST to the board (no CORS, JSON bodies only): nothing is queued", async () => {
      const headers = { ...basic(ADMIN.user, ADMIN.password), origin: 'https://evil.example' };
      const before = await api.get<{ queues: { name: string; counts: Record<string, number> }[] }>(
        '/admin/queues/api/queues',
        { headers },
      );
      for (const contentType of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
      ]) {
        const res = await api.request('POST', '/admin/queues/api/queues/phone-lookup/add', {
          raw: '{"name":"x","data":{}}',
          contentType,
          headers,
        });
        expect([contentType, res.status]).toEqual([contentType, 415]);
        expect(res.headers.get('access-control-allow-origin')).toBeNull();
      }
      const after = await api.get<typeof before.body>('/admin/queues/api/queues', { headers });
      const phone = (b: typeof before.body) => b.queues.find((q) => q.name === 'phone-lookup')!.counts;
      expect(phone(after.body)).toEqual(phone(before.body));
    });

    it('leaves the /v1 body parser and the 404/405 handling as they were', async () => {
      const wrongType = await api.request('POST', '/v1/auth/register', {
        raw: 'email=a@b.c',
        contentType: 'application/x-www-form-urlencoded',
      });
      expect(wrongType.status).toBe(415);
      expect(wrongType.body).toMatchObject({ error: { code: 'unsupported_media_type' } });
      const badJson = await api.request('POST', '/v1/auth/register', {
        raw: '{"email":',
        contentType: 'application/json',
      });
      expect(badJson.body).toMatchObject({ error: { code: 'invalid_json' } });
      const wrongMethod = await api.request('PATCH', '/v1/account');
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.get('allow')).toContain('GET');
      expect((await api.get('/v1/nothing-here')).body).toMatchObject({ status: 'error', error: { code: 'not_found' } });
      expect((await api.register()).key).toMatch(/^dsk_/);
    });

    it('refuses everyone when ADMIN_USER and ADMIN_PASSWORD are not set', async () => {
      const closed = await Stack.start({ label: 'ops-closed', noWorker: true });
      try {
        const closedApi = new Api(closed.baseUrl);
        for (const headers of [{}, basic(ADMIN.user, ADMIN.password), basic('admin', 'admin'), basic('', '')]) {
          for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
            const res = await closedApi.get<Json>(path, { headers });
            expect([path, headers, res.status]).toEqual([path, headers, 401]);
            expect(res.body).toMatchObject({
              status: 'error',
              error: { code: 'unauthorized', message: expect.stringContaining('ADMIN_USER') },
            });
          }
        }
        expect((await closedApi.get('/health/live')).status).toBe(200);
      } finally {
        await closed.stop();
      }
    });
  });
});
